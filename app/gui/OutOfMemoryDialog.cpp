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
    auto* error = new QPlainTextEdit(r.error_messages.empty() ? QString::fromStdString(r.error) : coreText(r.error_messages), this);
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
    m_advice->setText(tr("Searching for a configuration that fits in %1…").arg(bytesText(limit)));
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
        hr::PlanRequest req = MemoryPlanPanel::requestFor(config);
        req.train_samples = r.train_samples;
        req.test_samples = r.test_samples;
        m_task->start(req, limit);
    } catch (const std::exception& e) {
        showSearch({}, coreText(e));
    }
}

bool OutOfMemoryDialog::isSearching() const { return m_task->isRunning(); }

void OutOfMemoryDialog::showSearch(const hr::PlanSearch& search, const QString& error) {
    m_search = search;
    const std::size_t limit = m_limit;
    const hr::TrainConfig& config = m_config;
    if (!error.isEmpty()) {
        m_search = {};
        m_advice->setText(tr("The planner could not search for a configuration: %1").arg(error));
    } else if (m_search.best >= 0) {
        const hr::PlanCandidate& best = m_search.candidates[std::size_t(m_search.best)];
        m_suggestion = MemoryPlanPanel::normalized(best.strategy, config.batch);
        const hr::ResolvedStrategy& s = best.plan.strategy;
        QStringList what;
        what << tr("precision %1").arg(QString::fromStdString(s.precision).toUpper());
        what << (s.checkpoint_blocks.empty() ? tr("no checkpointing")
                                             : tr("checkpointing %n block(s)", nullptr, int(s.checkpoint_blocks.size())));
        what << (s.accumulate > 1 ? tr("micro-batch %1 × %2 accumulation steps").arg(s.micro_batch).arg(s.accumulate)
                                  : tr("the whole batch at once"));
        what << (s.offload_optimizer ? tr("optimizer state in host memory") : tr("optimizer state on the device"));
        m_advice->setText(tr("<p>The planner's fastest configuration that fits in %1 at batch %2 is predicted to need "
                             "<b>%3</b> at <b>%4×</b> the step time:</p><p><b>%5</b></p>"
                             "<p>Command line: <code>headroom train --batch %2 %6</code></p>")
                              .arg(bytesText(limit))
                              .arg(config.batch)
                              .arg(bytesText(best.plan.device_total))
                              .arg(best.plan.relative_step_time, 0, 'f', 2)
                              .arg(what.join(QStringLiteral(", ")).toHtmlEscaped(),
                                   QString::fromStdString(hr::strategy_flags(best.strategy)).toHtmlEscaped()));
    } else {
        m_advice->setText(tr("No combination of precision, checkpointing, micro-batches and offload fits in %1 at "
                             "batch %2. Lower the batch size, make the model smaller or raise the memory limit.")
                              .arg(bytesText(limit))
                              .arg(config.batch));
    }
    m_applyRestart->setEnabled(hasSuggestion());
    m_apply->setEnabled(hasSuggestion());
    if (hasSuggestion()) m_applyRestart->setDefault(true);
    emit searchFinished();
}

}  // namespace hrapp
