#include "gui/OutOfMemoryDialog.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

#include "gui/MemoryPlanPanel.h"
#include "memory/allocator.h"
#include "session/OutOfMemoryAdvice.h"
#include "session/RunText.h"

namespace hrapp {

namespace {
QString bytesText(std::size_t b) { return QString::fromStdString(hr::format_bytes(b)); }
}  // namespace

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
                                 .arg(bytesText(limit),
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

    auto* advice = new QLabel(this);
    advice->setObjectName(QStringLiteral("oomSuggestion"));
    advice->setWordWrap(true);
    advice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(advice);
    // The one out-of-memory advice (session/OutOfMemoryAdvice): what `headroom train` prints too.
    const OutOfMemoryAdvice a = adviseOutOfMemory(config, r);
    m_search = a.search;
    if (a.found()) {
        m_suggestion = MemoryPlanPanel::normalized(a.bestCandidate().strategy, config.batch);
        advice->setText(tr("<p>%1</p><p><b>%2</b></p><p>Command line: <code>headroom train %3</code></p>")
                            .arg(a.summary().toHtmlEscaped(), a.changes().join(QStringLiteral(", ")).toHtmlEscaped(),
                                 a.flags().toHtmlEscaped()));
    } else {
        advice->setText(a.summary().toHtmlEscaped());
    }

    auto* buttons = new QDialogButtonBox(this);
    m_applyRestart = buttons->addButton(tr("Apply and restart"), QDialogButtonBox::AcceptRole);
    m_applyRestart->setObjectName(QStringLiteral("oomApplyRestart"));
    m_apply = buttons->addButton(tr("Apply"), QDialogButtonBox::ApplyRole);
    m_apply->setObjectName(QStringLiteral("oomApply"));
    buttons->addButton(QDialogButtonBox::Close);
    m_applyRestart->setEnabled(hasSuggestion());
    m_apply->setEnabled(hasSuggestion());
    if (hasSuggestion()) m_applyRestart->setDefault(true);
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
}

}  // namespace hrapp
