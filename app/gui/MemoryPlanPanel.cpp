#include "gui/MemoryPlanPanel.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QSaveFile>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QStringList>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "nn/lora_targets.h"
#include "charts/MemoryCompareChart.h"
#include "charts/PlanBarChart.h"
#include "charts/StepTimelineChart.h"
#include "builder/ModelBuilder.h"
#include "gui/OutOfMemoryDialog.h"
#include "gui/PlanSearchTask.h"
#include "i18n/CoreText.h"
#include "memory/allocator.h"
#include "nn/compression.h"
#include "nn/transformer_spec.h"
#include "train/trainer.h"

namespace hrapp {

namespace {


QTableWidgetItem* cell(const QString& text, bool right = false) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QTableWidget* table(const QStringList& headers, QWidget* parent) {
    auto* t = new QTableWidget(0, int(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->setVisible(false);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setAlternatingRowColors(true);
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->horizontalHeader()->setHighlightSections(false);
    return t;
}

bool isCpu(const std::string& device) { return device == "cpu" || device == "auto"; }

}  // namespace

// A strategy in words for the tables ("BF16 + checkpoint 2/4 blocks + micro-batch 16 × 4 + offload").
static QString describeStrategy(const hr::ResolvedStrategy& r, std::size_t blockCount) {
    QStringList parts;
    parts << QString::fromStdString(r.precision).toUpper();
    if (!r.checkpoint_blocks.empty())
        parts << MemoryPlanPanel::tr("checkpoint %1/%2 blocks").arg(r.checkpoint_blocks.size()).arg(blockCount);
    if (r.accumulate > 1) parts << MemoryPlanPanel::tr("micro-batch %1 × %2").arg(r.micro_batch).arg(r.accumulate);
    if (r.lora_rank > 0 && r.lora_base_bits > 0)
        parts << MemoryPlanPanel::tr("LoRA rank %1 on an %2 base").arg(r.lora_rank).arg(QString::fromLatin1(hr::quantize_name(r.lora_base_bits)));
    else if (r.lora_rank > 0)
        parts << MemoryPlanPanel::tr("LoRA rank %1").arg(r.lora_rank);
    // the projections chosen (peft's names; none listed: every linear layer, or q_proj,v_proj by default)
    if (r.lora_rank > 0 && r.lora_targets != 0)
        parts.last() += QStringLiteral(" (%1)").arg(QString::fromStdString(hr::lora_targets_text(r.lora_targets)));
    if (r.offload_parameters)
        parts << MemoryPlanPanel::tr("parameter offload");
    else if (r.offload_optimizer)
        parts << MemoryPlanPanel::tr("optimizer offload");
    return parts.join(QStringLiteral(" + "));
}

MemoryPlanPanel::MemoryPlanPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("memoryPlanView"));
    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(150);
    connect(m_debounce, &QTimer::timeout, this, &MemoryPlanPanel::updateNow);

    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    outer->addWidget(scroll);
    auto* body = new QWidget(scroll);
    scroll->setWidget(body);
    auto* v = new QVBoxLayout(body);
    v->setContentsMargins(10, 8, 10, 8);
    v->setSpacing(6);

    // Summary line and Fit to device.
    auto* top = new QHBoxLayout;
    m_summary = new QLabel(body);
    m_summary->setObjectName(QStringLiteral("planSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    top->addWidget(m_summary, 1);
    m_fit = new QPushButton(tr("Fit to device"), body);
    m_fit->setObjectName(QStringLiteral("fitToDeviceButton"));
    m_fit->setToolTip(tr("Search precision, checkpointing, micro-batches and optimizer offload for the fastest "
                         "configuration that fits the memory limit (or the device's free memory) and apply it"));
    top->addWidget(m_fit, 0, Qt::AlignTop);
    v->addLayout(top);
    m_strategyLabel = new QLabel(body);
    m_strategyLabel->setObjectName(QStringLiteral("planStrategy"));
    m_strategyLabel->setWordWrap(true);
    v->addWidget(m_strategyLabel);

    m_bar = new hrw::PlanBarChart(body);
    m_bar->setObjectName(QStringLiteral("planBarChart"));
    m_bar->setMinimumHeight(170);
    v->addWidget(m_bar);
    m_stepLabel = new QLabel(body);
    m_stepLabel->setObjectName(QStringLiteral("planStepTime"));
    m_stepLabel->setWordWrap(true);
    v->addWidget(m_stepLabel);
    m_whatIfLabel = new QLabel(body);
    m_whatIfLabel->setObjectName(QStringLiteral("planWhatIf"));
    m_whatIfLabel->setWordWrap(true);
    m_whatIfLabel->hide();
    v->addWidget(m_whatIfLabel);

    // Fit to device: its outcome and the ranking (collapsible).
    auto* fitRow = new QHBoxLayout;
    m_fitStatus = new QLabel(body);
    m_fitStatus->setObjectName(QStringLiteral("fitStatus"));
    m_fitStatus->setWordWrap(true);
    fitRow->addWidget(m_fitStatus, 1);
    m_allCandidates = new QCheckBox(tr("All candidates"), body);
    m_allCandidates->setObjectName(QStringLiteral("planAllCandidates"));
    m_allCandidates->setToolTip(tr("Also list the configurations that another one beats (no larger and no "
                                   "slower) and those that do not fit"));
    m_allCandidates->setVisible(false);
    fitRow->addWidget(m_allCandidates, 0, Qt::AlignTop);
    m_rankingToggle = new QPushButton(tr("Show the ranking"), body);
    m_rankingToggle->setCheckable(true);
    m_rankingToggle->setVisible(false);
    fitRow->addWidget(m_rankingToggle, 0, Qt::AlignTop);
    v->addLayout(fitRow);
    m_searchTask = new PlanSearchTask(this);
    connect(m_searchTask, &PlanSearchTask::finished, this, &MemoryPlanPanel::searchFinished);
    connect(m_allCandidates, &QCheckBox::toggled, this, [this] { fillRanking(m_search); });
    m_ranking = table({tr("Strategy"), tr("Device memory"), tr("Host memory"), tr("Step time"), tr("Verdict")}, body);
    m_ranking->setObjectName(QStringLiteral("planRanking"));
    m_ranking->setMinimumHeight(200);
    m_ranking->setVisible(false);
    m_ranking->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ranking->horizontalHeader()->setStretchLastSection(true);
    v->addWidget(m_ranking);
    connect(m_rankingToggle, &QPushButton::toggled, this, [this](bool on) {
        m_ranking->setVisible(on);
        m_allCandidates->setVisible(on);
        m_rankingToggle->setText(on ? tr("Hide the ranking") : tr("Show the ranking"));
    });

    // Language models: the fine-tuning table (full / LoRA / QLoRA x checkpointing x ZeRO-3 on 1-8 cards), the
    // one `headroom plan --budget` prints, computed on a worker thread when the setup or the budget changes.
    m_tuneBox = new QGroupBox(tr("Fine-tuning on 1 to 8 cards"), body);
    m_tuneBox->setObjectName(QStringLiteral("planFineTuning"));
    auto* ftv = new QVBoxLayout(m_tuneBox);
    m_tuneLabel = new QLabel(m_tuneBox);
    m_tuneLabel->setObjectName(QStringLiteral("planFineTuningNote"));
    m_tuneLabel->setWordWrap(true);
    ftv->addWidget(m_tuneLabel);
    m_tune = table({}, m_tuneBox);
    m_tune->setObjectName(QStringLiteral("planFineTuningTable"));
    m_tune->setSelectionMode(QAbstractItemView::NoSelection);
    m_tune->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_tune->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_tune->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    ftv->addWidget(m_tune, 0, Qt::AlignLeft);
    m_tuneBox->setVisible(false);
    v->addWidget(m_tuneBox);
    m_tuneTask = new FineTuningTableTask(this);
    connect(m_tuneTask, &FineTuningTableTask::finished, this, &MemoryPlanPanel::fineTuningFinished);

    // One step's memory timeline: the plan's, redrawn with every edit; after a run the measured one beside it.
    m_timelineBox = new QGroupBox(tr("One training step"), body);
    m_timelineBox->setObjectName(QStringLiteral("planTimeline"));
    auto* tv = new QVBoxLayout(m_timelineBox);
    auto* trow = new QHBoxLayout;
    m_timelineLabel = new QLabel(m_timelineBox);
    m_timelineLabel->setWordWrap(true);
    m_timelineLabel->setObjectName(QStringLiteral("planTimelinePeak"));
    trow->addWidget(m_timelineLabel, 1);
    m_timelineExport = new QPushButton(tr("Export trace…"), m_timelineBox);
    m_timelineExport->setObjectName(QStringLiteral("planTimelineExport"));
    m_timelineExport->setToolTip(tr("Save the step's timeline as a Chrome trace file for Perfetto or chrome://tracing"));
    trow->addWidget(m_timelineExport, 0, Qt::AlignTop);
    tv->addLayout(trow);
    auto* tcharts = new QHBoxLayout;
    m_timelinePredicted = new hrw::StepTimelineChart(m_timelineBox);
    m_timelinePredicted->setObjectName(QStringLiteral("planTimelinePredicted"));
    m_timelinePredicted->setMinimumHeight(230);
    tcharts->addWidget(m_timelinePredicted, 1);
    m_timelineMeasured = new hrw::StepTimelineChart(m_timelineBox);
    m_timelineMeasured->setObjectName(QStringLiteral("planTimelineMeasured"));
    m_timelineMeasured->setMinimumHeight(230);
    m_timelineMeasured->setVisible(false);
    tcharts->addWidget(m_timelineMeasured, 1);
    tv->addLayout(tcharts);
    v->addWidget(m_timelineBox);
    connect(m_timelineExport, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export the step's timeline"),
                                                          QStringLiteral("headroom-step.trace.json"),
                                                          tr("Chrome trace (*.json)"));
        if (path.isEmpty()) return;
        QString error;
        if (!exportTimelineTrace(path, &error)) m_timelineLabel->setText(error);
    });

    // After a run: predicted against measured.
    m_compareBox = new QGroupBox(tr("Last run: predicted against measured"), body);
    m_compareBox->setObjectName(QStringLiteral("planComparison"));
    auto* cv = new QVBoxLayout(m_compareBox);
    m_compareLabel = new QLabel(m_compareBox);
    m_compareLabel->setWordWrap(true);
    cv->addWidget(m_compareLabel);
    auto* ch = new QHBoxLayout;
    m_compare = table({tr("Category"), tr("Predicted"), tr("Measured"), tr("Difference")}, m_compareBox);
    m_compare->setObjectName(QStringLiteral("planComparisonTable"));
    m_compare->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_compare->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_compare->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    ch->addWidget(m_compare, 0, Qt::AlignTop);
    m_compareChart = new hrw::MemoryCompareChart(m_compareBox);
    m_compareChart->setObjectName(QStringLiteral("planComparisonChart"));
    ch->addWidget(m_compareChart, 1);
    cv->addLayout(ch);
    m_compareBox->setVisible(false);
    v->addWidget(m_compareBox);

    // Per layer.
    m_layersBox = new QGroupBox(tr("Per layer"), body);
    auto* lv = new QVBoxLayout(m_layersBox);
    m_layers = table({tr("Layer"), tr("Type"), tr("Block"), tr("Checkpointed"), tr("Activations"), tr("Parameters")},
                     m_layersBox);
    m_layers->setObjectName(QStringLiteral("planLayers"));
    m_layers->setMinimumHeight(220);
    m_layers->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_layers->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    lv->addWidget(m_layers);
    v->addWidget(m_layersBox, 1);

    connect(m_fit, &QPushButton::clicked, this, &MemoryPlanPanel::fitToDevice);
    showError(tr("No model yet."));
}

hr::PlanRequest MemoryPlanPanel::requestFor(const hr::TrainConfig& c) {
    return hr::plan_request(c);
}

hr::StrategyConfig MemoryPlanPanel::normalized(const hr::StrategyConfig& s, std::int64_t batch) {
    hr::StrategyConfig out = s;
    if (out.micro_batch >= batch) {
        out.micro_batch = 0;
        out.accumulate = 1;
    } else if (out.micro_batch > 0 && out.accumulate <= 1 && batch % out.micro_batch == 0) {
        out.accumulate = batch / out.micro_batch;
    }
    return out;
}

void MemoryPlanPanel::scheduleUpdate() { m_debounce->start(); }

void MemoryPlanPanel::updateNow() {
    m_debounce->stop();
    if (!m_source) return;
    const hr::TrainConfig c = m_source();
    if (c.model.layers.empty()) {
        showError(tr("The model has no layers yet: add some in the model builder to see its memory plan."));
        return;
    }
    const hr::SpecReport rep = hr::analyze_model_spec(c.model);
    if (!rep.ok) {
        showError(tr("The model is not valid, so there is no memory plan: %1").arg(hrw::ModelBuilder::specErrorText(rep)));
        return;
    }
    try {
        const hr::PlanRequest req = requestFor(c);
        hr::MemoryPlan p = hr::predict_memory(req);
        std::size_t free = 0;
        try {
            free = hr::device_free_bytes(req.device);
        } catch (const std::exception&) {
            free = 0;  // a device this build cannot see: no capacity to draw
        }
        m_capacity = c.memory_limit ? c.memory_limit : free;
        showPlan(c, p);
        updateFineTuning(c, req);
    } catch (const std::exception& e) {
        showError(tr("No memory plan for these settings: %1").arg(coreText(e)));
    }
}

bool MemoryPlanPanel::isFineTuningBusy() const { return m_tuneTask->isRunning() || m_tunePending.has_value(); }

void MemoryPlanPanel::updateFineTuning(const hr::TrainConfig& c, const hr::PlanRequest& req) {
    if (!hr::is_token_model(c.model) || m_capacity == 0) {
        m_tuneBox->setVisible(false);
        m_tunePending.reset();
        return;
    }
    m_tuneBox->setVisible(true);
    const QString key = QString::fromStdString(hr::train_config_to_json(c).dump()) + QLatin1Char('|') + QString::number(m_capacity);
    if (m_tuneTask->isRunning()) {
        if (key == m_tuneKey) {
            m_tunePending.reset();  // the one computing is this one
        } else {
            m_tunePending = req;
            m_tunePendingBudget = m_capacity;
            m_tunePendingKey = key;
        }
        return;
    }
    if (key == m_tuneKey) return;  // shown already
    m_tunePending = req;
    m_tunePendingBudget = m_capacity;
    m_tunePendingKey = key;
    startFineTuning();
}

void MemoryPlanPanel::startFineTuning() {
    if (!m_tunePending || m_tuneTask->isRunning()) return;
    const hr::PlanRequest req = *m_tunePending;
    m_tunePending.reset();
    m_tuneKey = m_tunePendingKey;
    m_tuneBudget = m_tunePendingBudget;
    m_tuneLabel->setText(tr("Computing the fine-tuning table for %1 per card…").arg(coreBytesText(m_tuneBudget)));
    m_tuneTask->start(req, m_tuneBudget);
}

void MemoryPlanPanel::fineTuningFinished(const FineTuningCells& cells, const QString& error) {
    if (m_tunePending) {  // the setup changed meanwhile: this table is not for it
        startFineTuning();
        return;
    }
    if (!error.isEmpty()) {
        m_tune->setRowCount(0);
        m_tuneLabel->setText(tr("No fine-tuning table for these settings: %1").arg(error));
        emit fineTuningUpdated();
        return;
    }
    m_tuneLabel->setText(tr("Per card, the memory at this batch, sequence and precision, with only the method, "
                            "checkpointing and ZeRO-3 changed (ZeRO-3 on one card keeps the parameters in host memory); “(over)”: more than %1 (the memory limit, else the "
                            "device's free memory); “-”: no such configuration. The same search as Fit to device "
                            "and `headroom plan --budget`.")
                             .arg(coreBytesText(m_tuneBudget)));
    m_tune->clear();
    m_tune->setColumnCount(int(cells.header.size()));
    m_tune->setHorizontalHeaderLabels(cells.header);
    m_tune->setRowCount(int(cells.rows.size()));
    for (int r = 0; r < int(cells.rows.size()); ++r)
        for (int k = 0; k < int(cells.rows[std::size_t(r)].size()); ++k)
            m_tune->setItem(r, k, cell(cells.rows[std::size_t(r)][k], k >= 3));
    // every row shown, no scrolling inside the table (the tab scrolls)
    m_tune->resizeColumnsToContents();
    int width = 2 * m_tune->frameWidth();
    for (int k = 0; k < m_tune->columnCount(); ++k) width += m_tune->columnWidth(k);
    int height = 2 * m_tune->frameWidth() + m_tune->horizontalHeader()->sizeHint().height();
    for (int r = 0; r < m_tune->rowCount(); ++r) height += m_tune->rowHeight(r);
    m_tune->setFixedSize(width + 4, height + 2);
    emit fineTuningUpdated();
}

void MemoryPlanPanel::showError(const QString& message) {
    m_plan.reset();
    m_error = message;
    m_summary->setText(QStringLiteral("<span style='color:#d62728'>%1</span>").arg(message.toHtmlEscaped()));
    m_strategyLabel->clear();
    m_stepLabel->clear();
    m_whatIfLabel->clear();
    m_whatIfLabel->hide();
    m_bar->clearPlan();
    m_timelinePredicted->clearTimeline();
    showTimelines();
    m_layers->setRowCount(0);
    m_fit->setEnabled(false);
    m_tuneBox->setVisible(false);
    emit planUpdated();
}

void MemoryPlanPanel::showPlan(const hr::TrainConfig& c, const hr::MemoryPlan& p) {
    m_plan = p;
    m_error.clear();
    m_fit->setEnabled(!m_searchTask->isRunning());
    const bool cpu = isCpu(c.device);
    std::size_t total = 0, free = 0;
    try {
        total = hr::device_total_bytes(cpu ? "cpu" : c.device);
        free = hr::device_free_bytes(cpu ? "cpu" : c.device);
    } catch (const std::exception&) {
    }
    const QString where = cpu ? tr("the CPU (main memory)") : QString::fromStdString(c.device);
    QString capacityText;
    QString capacityName;
    if (c.memory_limit) {
        capacityText = tr("the memory limit of %1").arg(coreBytesText(c.memory_limit));
        capacityName = tr("Memory limit");
    } else if (cpu) {
        capacityText = tr("%1 free RAM (of %2)").arg(coreBytesText(free), coreBytesText(total));
        capacityName = tr("Free RAM");
    } else {
        capacityText = tr("%1 free (of %2)").arg(coreBytesText(free), coreBytesText(total));
        capacityName = tr("Free memory");
    }
    // what must fit: the ledger's peak on the CPU; on a GPU the process as the driver sees it, with the
    // margin (hr::plan_fit_bytes, the same test Fit to device applies)
    const std::size_t need = hr::plan_fit_bytes(p);
    QString verdict;
    if (m_capacity == 0) {
        verdict = tr("the device's capacity is unknown");
    } else if (need <= m_capacity) {
        verdict = tr("<span style='color:#2ca02c'><b>fits</b></span> in %1").arg(capacityText.toHtmlEscaped());
    } else {
        verdict = tr("<span style='color:#d62728'><b>does not fit</b></span> in %1: %2 too much. "
                     "Try <i>Fit to device</i>.")
                      .arg(capacityText.toHtmlEscaped(), coreBytesText(need - m_capacity));
    }
    QString summary = tr("Predicted peak on %1: <b>%2</b> — %3").arg(where.toHtmlEscaped(), coreBytesText(p.device_total), verdict);
    if (p.device_overhead > 0) {
        const QString outside = p.communication_overhead > 0
                                    ? tr("CUDA context and handles %1, NCCL %2 %3")
                                          .arg(coreBytesText(p.device_overhead - p.communication_overhead),
                                               coreBytesText(p.communication_overhead),
                                               p.communication_overhead_measured
                                                   ? tr("as an earlier run on this GPU measured it")
                                                   : tr("estimated from NCCL's default buffers until a run measures it"))
                                    : tr("CUDA context and handles %1").arg(coreBytesText(p.device_overhead));
        summary += QStringLiteral("<br>") +
                   tr("The driver will see %1 per process: %2 reserved by the caching allocator and %3 outside the "
                      "ledger (%4); %5 with the 5 % margin must fit.")
                       .arg(coreBytesText(p.process_total), coreBytesText(p.device_reserved), coreBytesText(p.device_overhead),
                            outside.toHtmlEscaped(), coreBytesText(need));
    }
    m_summary->setText(summary);
    const std::size_t blocks = [&] {
        try {
            return hr::checkpoint_blocks(c.model).size();
        } catch (const std::exception&) {
            return std::size_t(0);
        }
    }();
    const QString kind = QString::fromStdString(c.optimizer.kind);
    const QString optimizer = kind == QLatin1String("adam")    ? QStringLiteral("Adam")
                              : kind == QLatin1String("adamw") ? QStringLiteral("AdamW")
                                                               : kind.toUpper();
    QString strategy = tr("%1 · batch %2 · %3 optimizer").arg(describeStrategy(p.strategy, blocks)).arg(c.batch).arg(optimizer);
    if (p.host_total)
        strategy += p.strategy.offload_parameters
                        ? tr(" · %1 of parameters, gradients and optimizer state in host memory").arg(coreBytesText(p.host_total))
                        : tr(" · %1 of optimizer state in host memory").arg(coreBytesText(p.host_total));
    if (p.dataset_bytes) strategy += tr(" · the data set takes %1 of RAM").arg(coreBytesText(p.dataset_bytes));
    m_strategyLabel->setText(strategy);
    m_bar->setPlan(p.device, p.host, p.host_total > 0, m_capacity, capacityName);
    m_timelinePredicted->setTimeline(p.timeline, tr("Predicted"));
    showTimelines();

    QString step = tr("Predicted step time: <b>%1×</b> the FP32 step without strategies (about %2 ms here)")
                       .arg(p.relative_step_time, 0, 'f', 2)
                       .arg(p.predicted_step_seconds * 1e3, 0, 'f', 1);
    if (p.recompute_flops > 0)
        step += tr("; recomputation adds %1% forward work").arg(
            p.forward_flops > 0 ? 100.0 * p.recompute_flops / p.forward_flops : 0.0, 0, 'f', 0);
    if (p.offload_bytes > 0)
        step += tr("; offload moves %1 per step, about %2 ms over the host link (%3/s)")
                    .arg(coreBytesText(std::size_t(p.offload_bytes)))
                    .arg(p.offload_seconds * 1e3, 0, 'f', 2)
                    .arg(coreBytesText(std::size_t(p.host_link)));
    if (p.recompute_arena > 0) step += tr("; recompute buffer %1").arg(coreBytesText(p.recompute_arena));
    m_stepLabel->setText(step + QLatin1Char('.'));
    showWhatIf(c);

    m_layers->setRowCount(int(p.layers.size()));
    for (int i = 0; i < int(p.layers.size()); ++i) {
        const hr::LayerPlan& l = p.layers[std::size_t(i)];
        m_layers->setItem(i, 0, cell(QString::fromStdString(l.path)));
        m_layers->setItem(i, 1, cell(QString::fromStdString(l.label)));
        m_layers->setItem(i, 2, cell(l.block >= 0 ? QString::number(l.block) : QString(), true));
        m_layers->setItem(i, 3, cell(l.checkpointed ? tr("yes") : QString()));
        auto* act = cell(l.checkpointed && !l.activation_bytes ? tr("recomputed") : coreBytesText(l.activation_bytes), true);
        m_layers->setItem(i, 4, act);
        m_layers->setItem(i, 5, cell(l.parameter_bytes ? coreBytesText(l.parameter_bytes) : QStringLiteral("—"), true));
    }
    emit planUpdated();
}

void MemoryPlanPanel::showWhatIf(const hr::TrainConfig& c) {
    // What-if after training (the Training setup's box): what the weights would take stored pruned or
    // quantised, counted from the shapes; the run measures the accuracy before and after
    if (!c.what_if.active()) {
        m_whatIfLabel->clear();
        m_whatIfLabel->hide();
        return;
    }
    try {
        const hr::CompressionReport r = hr::compression_bytes(c.model, c.what_if);
        QStringList how;
        if (c.what_if.prune > 0) how << tr("%1 % pruned").arg(c.what_if.prune * 100, 0, 'g', 3);
        if (c.what_if.bits == 8) how << tr("int8 with a scale per row");
        if (c.what_if.bits == 4) how << tr("int4 with a scale per %1 values").arg(c.what_if.group);
        if (c.what_if.bits == hr::kQuantNf4)
            how << tr("nf4 (NormalFloat) with a scale per %1 values, the scales quantised too").arg(c.what_if.group);
        m_whatIfLabel->setText(tr("What-if after training (%1): the %2 weight tensors would be stored in at most "
                                  "<b>%3</b> instead of %4 (%5 of other tensors as they are); the run measures the "
                                  "test accuracy (a language model's validation loss) before and after.")
                                   .arg(how.join(tr(", ", "between the parts of a list")).toHtmlEscaped())
                                   .arg(r.tensors)
                                   .arg(coreBytesText(r.stored_bytes), coreBytesText(r.dense_bytes), coreBytesText(r.other_bytes)));
    } catch (const std::exception& e) {
        m_whatIfLabel->setText(tr("What-if after training: %1").arg(coreText(e).toHtmlEscaped()));
    }
    m_whatIfLabel->show();
}

QLabel* MemoryPlanPanel::whatIfLabel() const { return m_whatIfLabel; }

bool MemoryPlanPanel::isSearching() const { return m_searchTask->isRunning(); }

void MemoryPlanPanel::fitToDevice() {
    if (!m_source || m_searchTask->isRunning()) return;
    const hr::TrainConfig c = m_source();
    hr::PlanRequest req;
    std::size_t budget = 0;
    try {
        req = requestFor(c);
        budget = c.memory_limit ? c.memory_limit : hr::device_free_bytes(req.device);
    } catch (const std::exception& e) {
        m_fitStatus->setText(tr("Fit to device failed: %1").arg(coreText(e)));
        emit fitFinished();
        return;
    }
    m_searchConfig = c;
    m_fit->setEnabled(false);
    m_fitStatus->setText(tr("Searching precision, checkpointing, micro-batches and offload for %1…")
                             .arg(coreBytesText(budget)));
    m_searchTask->start(req, budget);
}

void MemoryPlanPanel::searchFinished(const hr::PlanSearch& search, const QString& error) {
    m_fit->setEnabled(m_plan.has_value());
    if (!error.isEmpty()) {
        m_fitStatus->setText(tr("Fit to device failed: %1").arg(error));
        emit fitFinished();
        return;
    }
    const hr::TrainConfig& c = m_searchConfig;
    m_search = search;
    fillRanking(m_search);
    m_rankingToggle->setVisible(true);
    if (m_search.best < 0) {
        m_fitStatus->setText(
            m_search.ranks_needed > 0  // sharded over more ranks it would: the Ranks box (Training setup)
                ? tr("Nothing fits in %1 at batch %2 as set up; sharded, it %3. Choose the ranks in Training setup, "
                     "or lower the batch size.")
                      .arg(coreBytesText(m_search.budget))
                      .arg(c.batch)
                      .arg(coreText(m_search.ranks_reason))
                : tr("Nothing fits in %1 at batch %2: lower the batch size or raise the memory limit.")
                      .arg(coreBytesText(m_search.budget))
                      .arg(c.batch));
        m_allCandidates->setChecked(true);
        m_rankingToggle->setChecked(true);
        emit fitFinished();
        return;
    }
    const hr::PlanCandidate& best = m_search.candidates[std::size_t(m_search.best)];
    std::size_t blocks = 0;
    try {
        blocks = hr::checkpoint_blocks(c.model).size();
    } catch (const std::exception&) {
    }
    int front = 0;
    for (const hr::PlanCandidate& x : m_search.candidates) front += x.pareto;
    m_fitStatus->setText(tr("Applied the fastest configuration that fits in %1: %2 (predicted %3, %4× step time). "
                            "%n other configuration(s) trade speed for memory.", nullptr, front - 1)
                             .arg(coreBytesText(m_search.budget), describeStrategy(best.plan.strategy, blocks),
                                  coreBytesText(best.plan.device_total))
                             .arg(best.plan.relative_step_time, 0, 'f', 2));
    emit strategyChosen(normalized(best.strategy, c.batch));
    updateNow();
    emit fitFinished();
}

void MemoryPlanPanel::fillRanking(const hr::PlanSearch& s) {
    std::size_t blocks = 0;
    try {
        blocks = hr::checkpoint_blocks(m_searchConfig.model).size();
    } catch (const std::exception&) {
    }
    const bool all = m_allCandidates->isChecked();
    std::vector<int> rows;
    for (int i = 0; i < int(s.candidates.size()); ++i)
        if (all || s.candidates[std::size_t(i)].pareto) rows.push_back(i);
    m_ranking->setRowCount(int(rows.size()));
    const double bestSeconds =
        s.best >= 0 ? s.candidates[std::size_t(s.best)].plan.predicted_step_seconds : 0.0;
    for (int r = 0; r < int(rows.size()); ++r) {
        const int i = rows[std::size_t(r)];
        const hr::PlanCandidate& c = s.candidates[std::size_t(i)];
        const double slower = bestSeconds > 0 ? 100.0 * (c.plan.predicted_step_seconds / bestSeconds - 1.0) : 0.0;
        QString verdict;
        if (i == s.best) verdict = tr("best: fits, fastest");
        else if (c.pareto) verdict = tr("fits in less memory, %1% slower than the best").arg(slower, 0, 'f', 0);
        else if (c.fits && c.dominated_by >= 0)
            verdict = tr("fits, %1% slower; %2 needs no more memory and is no slower")
                          .arg(slower, 0, 'f', 0)
                          .arg(describeStrategy(s.candidates[std::size_t(c.dominated_by)].plan.strategy, blocks));
        else if (c.fits) verdict = tr("fits, %1% slower than the best").arg(slower, 0, 'f', 0);
        else verdict = tr("does not fit: %1 over the budget").arg(coreBytesText(c.plan.device_total - s.budget));
        QTableWidgetItem* items[] = {cell(describeStrategy(c.plan.strategy, blocks)), cell(coreBytesText(c.plan.device_total), true),
                                     cell(c.plan.host_total ? coreBytesText(c.plan.host_total) : QStringLiteral("—"), true),
                                     cell(QStringLiteral("%1×").arg(c.plan.relative_step_time, 0, 'f', 2), true),
                                     cell(verdict)};
        items[0]->setToolTip(QStringLiteral("headroom train %1").arg(QString::fromStdString(hr::strategy_flags(c.strategy))));
        items[0]->setData(Qt::UserRole, i);  // index into lastSearch().candidates
        for (int col = 0; col < 5; ++col) {
            if (i == s.best) {
                QFont f = items[col]->font();
                f.setBold(true);
                items[col]->setFont(f);
            }
            if (!c.pareto) items[col]->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            m_ranking->setItem(r, col, items[col]);
        }
    }
}

void MemoryPlanPanel::setRunStarted(const hr::TrainConfig& config) {
    m_runConfig = config;
    m_runPlan.reset();
    try {
        m_runPlan = hr::predict_memory(requestFor(config));
    } catch (const std::exception&) {
        // the run itself reports what is wrong
    }
}

void MemoryPlanPanel::setRunResult(const hr::TrainResult& r) {
    if (!m_runPlan) return;
    if (r.train_samples > 0 || r.test_samples > 0) {
        // the data loaders' buffers depend on the dataset's size, known now
        hr::PlanRequest req = requestFor(m_runConfig);
        req.train_samples = r.train_samples;
        req.test_samples = r.test_samples;
        try {
            m_runPlan = hr::predict_memory(req);
        } catch (const std::exception&) {
        }
    }
    if (!r.step_timeline.empty()) {
        m_timelineMeasured->setTimeline(r.step_timeline, tr("Measured, step %1").arg(r.step_timeline.step));
        m_timelineMeasured->setVisible(true);
        showTimelines();
    }
    if (r.ledger.peak_total == 0) return;  // nothing was measured (the run failed before allocating)
    const hr::MemoryPlan& p = *m_runPlan;
    struct Row {
        QString name;
        std::size_t predicted, measured;
    };
    std::vector<Row> rows;
    std::size_t tp = 0, tm = 0;
    for (hr::MemCategory c : hr::all_categories()) {
        const std::size_t pb = hr::at(p.device, c), mb = hr::at(r.ledger.peak, c);
        tp += pb, tm += mb;
        if (pb || mb) rows.push_back({hrw::PlanBarChart::categoryName(c), pb, mb});
    }
    rows.push_back({tr("Total"), tp, tm});
    if (r.host_ledger.peak_total || p.host_total)
        for (hr::MemCategory c : hr::all_categories()) {
            const std::size_t pb = hr::at(p.host, c), mb = hr::at(r.host_ledger.peak, c);
            if (pb || mb) rows.push_back({tr("%1 (host)").arg(hrw::PlanBarChart::categoryName(c)), pb, mb});
        }
    m_compare->setRowCount(int(rows.size()));
    for (int i = 0; i < int(rows.size()); ++i) {
        const Row& row = rows[std::size_t(i)];
        QString diff = QStringLiteral("—");
        if (row.measured) diff = QStringLiteral("%1%").arg(100.0 * (double(row.predicted) - double(row.measured)) / double(row.measured), 0, 'f', 2);
        QTableWidgetItem* items[] = {cell(row.name), cell(coreBytesText(row.predicted), true), cell(coreBytesText(row.measured), true),
                                     cell(diff, true)};
        for (int col = 0; col < 4; ++col) {
            if (row.name == tr("Total")) {
                QFont f = items[col]->font();
                f.setBold(true);
                items[col]->setFont(f);
            }
            m_compare->setItem(i, col, items[col]);
        }
    }
    // the whole table in view, no scroll bars
    m_compare->resizeColumnsToContents();
    int h = m_compare->horizontalHeader()->height() + 2 * m_compare->frameWidth();
    for (int i = 0; i < m_compare->rowCount(); ++i) h += m_compare->rowHeight(i);
    m_compare->setFixedHeight(h);
    int w = 2 * m_compare->frameWidth() + 4;
    for (int col = 0; col < m_compare->columnCount(); ++col)
        w += std::max(m_compare->columnWidth(col), m_compare->horizontalHeader()->sectionSizeHint(col));
    m_compare->setFixedWidth(w);
    m_compareChart->setBytes(p.device, r.ledger.peak);
    std::size_t blocks = 0;
    try {
        blocks = hr::checkpoint_blocks(m_runConfig.model).size();
    } catch (const std::exception&) {
    }
    const QString status = r.status == "finished" ? tr("finished")
                           : r.status == "stopped" ? tr("stopped")
                                                   : tr("failed");
    m_compareLabel->setText(tr("Run with %1: the planner's prediction at Start against the ledger's measured peaks "
                               "(%2 steps, %3).")
                                .arg(describeStrategy(p.strategy, blocks))
                                .arg(r.steps)
                                .arg(status));
    m_compareBox->setVisible(true);
    emit comparisonReady();
}

void MemoryPlanPanel::showOutOfMemory(const hr::TrainResult& r) {
    auto* dlg = new OutOfMemoryDialog(m_runConfig, r, window());
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    connect(dlg, &OutOfMemoryDialog::applyRequested, this, [this](const hr::StrategyConfig& s, bool restart) {
        emit strategyChosen(s);
        updateNow();
        if (restart) emit restartRequested();
    });
    dlg->open();
}

void MemoryPlanPanel::showTimelines() {
    QStringList lines;
    const hr::StepTimeline& pt = m_timelinePredicted->timeline();
    if (!pt.empty()) lines << tr("Predicted: %1").arg(hrapp::peakText(pt).toHtmlEscaped());
    if (!m_timelineMeasured->isHidden() && !m_timelineMeasured->timeline().empty())
        lines << tr("Measured in step %1: %2")
                     .arg(m_timelineMeasured->timeline().step)
                     .arg(hrapp::peakText(m_timelineMeasured->timeline()).toHtmlEscaped());
    m_timelineLabel->setText(lines.join(QStringLiteral("<br>")));
    m_timelineExport->setEnabled(!pt.empty() || !m_timelineMeasured->timeline().empty());
}

bool MemoryPlanPanel::exportTimelineTrace(const QString& path, QString* error) const {
    // both timelines in one file: the prediction as process 1, the measured step as process 2
    nlohmann::json all = nlohmann::json::array();
    nlohmann::json other = nlohmann::json::object();
    int pid = 1;
    for (const hrw::StepTimelineChart* chart : {m_timelinePredicted, m_timelineMeasured}) {
        const hr::StepTimeline& t = chart->timeline();
        if (t.empty() || (chart == m_timelineMeasured && chart->isHidden())) continue;
        const bool measured = chart == m_timelineMeasured;
        nlohmann::json j = hr::step_timeline_trace_json(
            t, measured ? tr("measured step %1").arg(t.step).toStdString() : tr("predicted").toStdString());
        for (auto& e : j["traceEvents"]) {
            e["pid"] = pid;
            all.push_back(e);
        }
        other[measured ? "measured_peak" : "predicted_peak"] = hrapp::peakText(t).toStdString();
        ++pid;
    }
    const std::string text = nlohmann::json{{"traceEvents", all}, {"displayTimeUnit", "ms"}, {"otherData", other}}.dump() + "\n";
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) != qint64(text.size()) || !f.commit()) {
        if (error) *error = tr("Could not write %1 (%2); choose another file.").arg(path, f.errorString());
        return false;
    }
    return true;
}

void MemoryPlanPanel::setDark(bool dark) {
    m_timelinePredicted->setDark(dark);
    m_timelineMeasured->setDark(dark);
    m_bar->setDark(dark);
    m_compareChart->setDark(dark);
}

}  // namespace hrapp
