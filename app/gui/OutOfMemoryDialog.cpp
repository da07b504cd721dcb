#include "gui/OutOfMemoryDialog.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

#include "gui/MemoryPlanPanel.h"
#include "gui/PlanSearchTask.h"
#include "i18n/CoreText.h"
#include "memory/allocator.h"
#include "session/OutOfMemoryAdvice.h"
#include "session/RunText.h"

namespace hrapp {

OutOfMemoryDialog::OutOfMemoryDialog(const hr::TrainConfig& config, const hr::TrainResult& r, QWidget* parent)
    : QDialog(parent) {
    setObjectName(QStringLiteral("outOfMemoryDialog"));
    setWindowTitle(tr("Out of memory"));
    auto* v = new QVBoxLayout(this);
    auto* head = new QHBoxLayout;
    auto* icon = new QLabel(this);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical).pixmap(32, 32));
    head->addWidget(icon, 0, Qt::AlignTop);
    const std::size_t limit = r.oom_limit;
    auto* intro = new QLabel(tr("<b>The run ran out of memory</b> (%1 available on the device%2). The trainer "
                                "reported:")
                                 .arg(coreBytesText(limit),
                                      config.memory_limit ? tr(", the memory limit") : QString()),
                             this);
    intro->setWordWrap(true);
    head->addWidget(intro, 1);
    v->addLayout(head);
    auto* error = new QPlainTextEdit(resultError(r), this);
    error->setObjectName(QStringLiteral("oomError"));
    error->setReadOnly(true);
    error->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    error->setMinimumSize(620, 150);
    v->addWidget(error);

    m_config = config;
    m_limit = limit;
    m_advice = new QLabel(this);
    m_advice->setObjectName(QStringLiteral("oomSuggestion"));
    m_advice->setWordWrap(true);
    m_advice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_advice->setText(tr("Searching for a configuration that fits in %1…").arg(coreBytesText(limit)));
    v->addWidget(m_advice);

    auto* buttons = new QDialogButtonBox(this);
    m_applyRestart = buttons->addButton(tr("Apply and restart"), QDialogButtonBox::AcceptRole);
    m_applyRestart->setObjectName(QStringLiteral("oomApplyRestart"));
    m_apply = buttons->addButton(tr("Apply"), QDialogButtonBox::ApplyRole);
    m_apply->setObjectName(QStringLiteral("oomApply"));
    buttons->addButton(QDialogButtonBox::Close);
    m_applyRestart->setEnabled(false);
    m_apply->setEnabled(false);
    v->addWidget(buttons);
    connect(m_applyRestart, &QPushButton::clicked, this, [this] {
        emit applyRequested(m_suggestion, true);
        accept();
    });
    connect(m_apply, &QPushButton::clicked, this, [this] {
        emit applyRequested(m_suggestion, false);
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    m_task = new PlanSearchTask(this);
    connect(m_task, &PlanSearchTask::finished, this, &OutOfMemoryDialog::showSearch);
    try {
        // the request `headroom train` searches with (session/OutOfMemoryAdvice), off the GUI thread
        m_task->start(outOfMemoryRequest(config, r), limit);
    } catch (const std::exception& e) {
        showSearch({}, coreText(e));
    }
}

bool OutOfMemoryDialog::isSearching() const { return m_task->isRunning(); }

void OutOfMemoryDialog::showSearch(const hr::PlanSearch& search, const QString& error) {
    // The one out-of-memory advice (session/OutOfMemoryAdvice): what `headroom train` prints too.
    const OutOfMemoryAdvice a = adviceFromSearch(m_config, m_limit, search, error);
    m_search = a.search;
    if (a.found()) {
        m_suggestion = MemoryPlanPanel::normalized(a.bestCandidate().strategy, m_config.batch);
        m_advice->setText(tr("<p>%1</p><p><b>%2</b></p><p>Command line: <code>headroom train %3</code></p>")
                              .arg(a.summary().toHtmlEscaped(), a.changes().join(QStringLiteral(", ")).toHtmlEscaped(),
                                   a.flags().toHtmlEscaped()));
    } else {
        m_search.best = -1;
        m_advice->setText(a.summary().toHtmlEscaped());
    }
    m_applyRestart->setEnabled(hasSuggestion());
    m_apply->setEnabled(hasSuggestion());
    if (hasSuggestion()) m_applyRestart->setDefault(true);
    emit searchFinished();
}

}  // namespace hrapp
