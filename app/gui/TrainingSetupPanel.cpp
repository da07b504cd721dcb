#include "gui/TrainingSetupPanel.h"

#include "session/RunDefaults.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QThread>
#include <QVBoxLayout>

#include "gui/RuntimeInfo.h"
#include "i18n/CoreText.h"
#include "strategy/rank_layout.h"
#include "nn/lora_targets.h"
#include "nn/transformer_spec.h"
#include "train/config.h"
#include "tensor/quantized_format.h"

namespace hrapp {

namespace {
QDoubleSpinBox* dspin(QWidget* parent, double lo, double hi, int decimals, double step) {
    auto* d = new QDoubleSpinBox(parent);
    d->setRange(lo, hi);
    d->setDecimals(decimals);
    d->setSingleStep(step);
    return d;
}
QSpinBox* spin(QWidget* parent, int lo, int hi) {
    auto* s = new QSpinBox(parent);
    s->setRange(lo, hi);
    return s;
}
QFormLayout* form(QGroupBox* box) {
    auto* f = new QFormLayout(box);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    f->setVerticalSpacing(4);
    f->setContentsMargins(8, 6, 8, 6);
    return f;
}
}  // namespace

TrainingSetupPanel::TrainingSetupPanel(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    outer->setSpacing(6);

    // Run.
    auto* runBox = new QGroupBox(tr("Run"), this);
    auto* rf = form(runBox);
    m_device = new QComboBox(runBox);
    m_device->setObjectName(QStringLiteral("deviceCombo"));
    for (const DeviceChoice& d : availableDevices()) m_device->addItem(d.label, d.id);
    m_device->setToolTip(tr("CUDA devices appear here when the CUDA backend reports them"));
    rf->addRow(tr("Device"), m_device);
    m_threads = spin(runBox, 0, 1024);
    m_threads->setSpecialValueText(tr("all cores"));
    rf->addRow(tr("CPU threads"), m_threads);
    m_ranks = new QComboBox(runBox);
    m_ranks->setObjectName(QStringLiteral("ranksCombo"));
    m_ranks->addItem(tr("One process (the device above)"), QString());
    {
        // (at least 4: the layouts of 2 replicas need 4 ranks; mpirun oversubscribes a smaller machine)
        const int cores = std::max(4, QThread::idealThreadCount());
        for (int n = 2; n <= cores; ++n) m_ranks->addItem(tr("CPU × %1 ranks").arg(n), QStringLiteral("cpu:%1").arg(n));
        QStringList gpus;
        for (const DeviceChoice& d : availableDevices())
            if (d.id.startsWith(QLatin1String("cuda:"))) gpus << d.id.mid(5);
        for (int n = 2; n <= gpus.size(); ++n) {  // the first n GPUs, one rank each
            const QStringList some = gpus.mid(0, n);
            m_ranks->addItem(tr("GPUs %1 (%2 ranks)").arg(some.join(QLatin1Char(','))).arg(n),
                             QStringLiteral("cuda:") + some.join(QLatin1Char(',')));
        }
    }
    m_ranks->setToolTip(tr("Train on several processes (ranks) of this machine, launched through mpirun; "
                           "each rank takes its share of every batch"));
    rf->addRow(tr("Ranks"), m_ranks);
    // the boxes stop at core's bounds (train/config.h), as the flags do
    m_batch = spin(runBox, 1, int(hr::kMaxBatch));
    m_batch->setObjectName(QStringLiteral("batchSpin"));
    rf->addRow(tr("Batch size"), m_batch);
    m_epochs = spin(runBox, 1, hr::kMaxEpochs);
    rf->addRow(tr("Epochs"), m_epochs);
    m_steps = spin(runBox, 0, int(hr::kMaxSteps));
    m_steps->setObjectName(QStringLiteral("stepsSpin"));
    m_steps->setSpecialValueText(tr("by epochs"));
    m_steps->setToolTip(tr("Train this many steps instead of whole epochs (0: use epochs)"));
    rf->addRow(tr("Steps"), m_steps);
    m_evaluate = new QCheckBox(tr("Evaluate on the test set after each epoch"), runBox);
    rf->addRow(m_evaluate);
    m_seed = spin(runBox, 0, 2147483647);
    rf->addRow(tr("Seed"), m_seed);
    outer->addWidget(runBox);

    // Optimizer.
    auto* optBox = new QGroupBox(tr("Optimizer"), this);
    auto* of = form(optBox);
    m_optimizer = new QComboBox(optBox);
    m_optimizer->addItem(tr("SGD"), "sgd");
    m_optimizer->addItem(tr("Adam"), "adam");
    m_optimizer->addItem(tr("AdamW"), "adamw");
    of->addRow(tr("Optimizer"), m_optimizer);
    m_lr = dspin(optBox, 1e-6, 10, 6, 0.001);
    of->addRow(tr("Learning rate"), m_lr);
    m_momentum = dspin(optBox, 0, 0.9999, 4, 0.05);
    m_momentumLabel = new QLabel(tr("Momentum"), optBox);
    of->addRow(m_momentumLabel, m_momentum);
    m_nesterov = new QCheckBox(optBox);
    m_nesterovLabel = new QLabel(tr("Nesterov"), optBox);
    of->addRow(m_nesterovLabel, m_nesterov);
    m_weightDecay = dspin(optBox, 0, 1, 6, 0.0001);
    of->addRow(tr("Weight decay"), m_weightDecay);
    m_beta1 = dspin(optBox, 0, 0.99999, 5, 0.01);
    m_beta1Label = new QLabel(tr("β₁"), optBox);
    of->addRow(m_beta1Label, m_beta1);
    m_beta2 = dspin(optBox, 0, 0.99999, 5, 0.001);
    m_beta2Label = new QLabel(tr("β₂"), optBox);
    of->addRow(m_beta2Label, m_beta2);
    outer->addWidget(optBox);

    // Schedule.
    auto* schBox = new QGroupBox(tr("Learning-rate schedule"), this);
    auto* sf = form(schBox);
    m_schedule = new QComboBox(schBox);
    m_schedule->addItem(tr("Constant"), "constant");
    m_schedule->addItem(tr("Step decay"), "step");
    m_schedule->addItem(tr("Cosine"), "cosine");
    sf->addRow(tr("Schedule"), m_schedule);
    m_warmup = spin(schBox, 0, 100000000);
    sf->addRow(tr("Warm-up steps"), m_warmup);
    m_stepSize = spin(schBox, 1, 100000000);
    m_stepSizeLabel = new QLabel(tr("Step size"), schBox);
    sf->addRow(m_stepSizeLabel, m_stepSize);
    m_gamma = dspin(schBox, 0.0001, 1, 4, 0.05);
    m_gammaLabel = new QLabel(tr("Decay factor γ"), schBox);
    sf->addRow(m_gammaLabel, m_gamma);
    m_minLr = dspin(schBox, 0, 10, 6, 0.0001);
    m_minLrLabel = new QLabel(tr("Minimum rate"), schBox);
    sf->addRow(m_minLrLabel, m_minLr);
    outer->addWidget(schBox);

    // Memory strategies: bound to TrainConfig::strategy.
    auto* memBox = new QGroupBox(tr("Memory strategies"), this);
    memBox->setObjectName(QStringLiteral("strategyBox"));
    auto* mf = form(memBox);
    m_precision = new QComboBox(memBox);
    m_precision->setObjectName(QStringLiteral("precisionCombo"));
    m_precision->addItem(tr("FP32 (full precision)"), "fp32");
    m_precision->addItem(tr("TF32 matmuls"), "tf32");
    m_precision->addItem(tr("BF16 mixed precision"), "bf16");
    m_precision->addItem(tr("FP16 mixed precision + loss scaling"), "fp16");
    mf->addRow(tr("Precision"), m_precision);
    auto* ckRow = new QHBoxLayout;
    m_checkpoint = new QComboBox(memBox);
    m_checkpoint->setObjectName(QStringLiteral("checkpointCombo"));
    m_checkpoint->addItem(tr("None"), "none");
    m_checkpoint->addItem(tr("All blocks"), "all");
    m_checkpoint->addItem(tr("Every 2nd block"), "every:2");
    m_checkpoint->addItem(tr("Every K-th block"), "every");
    m_checkpoint->addItem(tr("Automatic (fit the memory)"), "auto");
    m_checkpoint->addItem(tr("Chosen blocks…"), "list");
    m_checkpoint->setToolTip(tr("Checkpointed blocks keep only their input; backward recomputes them "
                                "(less activation memory, more compute)"));
    m_checkpointEvery = spin(memBox, 2, 1000);
    m_checkpointEvery->setPrefix(tr("K = "));
    ckRow->addWidget(m_checkpoint, 1);
    ckRow->addWidget(m_checkpointEvery);
    mf->addRow(tr("Gradient checkpointing"), ckRow);
    m_checkpointList = new QListWidget(memBox);
    m_checkpointList->setObjectName(QStringLiteral("checkpointBlockList"));
    m_checkpointList->setToolTip(tr("Tick the blocks to checkpoint"));
    m_checkpointList->setMaximumHeight(120);
    mf->addRow(QString(), m_checkpointList);
    m_microBatch = spin(memBox, 0, int(hr::kMaxBatch));
    m_microBatch->setObjectName(QStringLiteral("microBatchSpin"));
    m_microBatch->setSpecialValueText(tr("whole batch"));
    m_microBatch->setToolTip(tr("Samples per forward/backward pass; the batch is split into micro-batches "
                                "whose gradients are accumulated"));
    mf->addRow(tr("Micro-batch"), m_microBatch);
    m_accumulate = spin(memBox, 1, 4096);
    m_accumulate->setObjectName(QStringLiteral("accumulateSpin"));
    m_accumulate->setToolTip(tr("Micro-batches per optimizer step (with a micro-batch size: batch = micro-batch × steps)"));
    mf->addRow(tr("Gradient accumulation"), m_accumulate);
    m_offload = new QCheckBox(tr("Optimizer state in host memory"), memBox);
    m_offload->setObjectName(QStringLiteral("offloadCheck"));
    m_offload->setToolTip(tr("Optimizer state and master weights live in host memory; the update runs on the CPU"));
    mf->addRow(tr("Offload"), m_offload);
    m_offloadParams = new QCheckBox(tr("Parameters and gradients in host memory too"), memBox);
    m_offloadParams->setObjectName(QStringLiteral("offloadParamsCheck"));
    m_offloadParams->setToolTip(tr("ZeRO-Infinity style: the device keeps only the unit being computed and the next "
                                   "one, brought over from host memory while the current one runs; implies ZeRO-3 "
                                   "and the optimizer in host memory"));
    mf->addRow(QString(), m_offloadParams);
    m_loraRank = spin(memBox, 0, 4096);
    m_loraRank->setObjectName(QStringLiteral("loraRankSpin"));
    m_loraRank->setSpecialValueText(tr("off (train every weight)"));
    m_loraRank->setToolTip(tr("LoRA: train rank-R adapters on every linear layer and transformer projection and freeze the rest of the model "
                              "(no gradients or optimizer state for it); with initial weights from a trained model "
                              "this fine-tunes it, and the report gives the test accuracy before and after"));
    mf->addRow(tr("LoRA rank"), m_loraRank);
    m_loraBase = new QComboBox(memBox);
    m_loraBase->setObjectName(QStringLiteral("loraBaseCombo"));
    m_loraBase->addItem(tr("as trained (compute precision)"), QStringLiteral("none"));
    m_loraBase->addItem(tr("int8 (QLoRA, a scale per row)"), QStringLiteral("int8"));
    m_loraBase->addItem(tr("int4 (QLoRA, a scale per 64 values)"), QStringLiteral("int4"));
    m_loraBase->addItem(tr("nf4 (QLoRA's NormalFloat, the scales quantised too)"), QStringLiteral("nf4"));
    m_loraBase->setToolTip(tr("QLoRA: the frozen weight of every projection of the base (adapted or not; not the "
                              "embeddings, norms or head) is stored quantised while the adapters train, and "
                              "dequantised each time a layer uses it; the plan "
                              "shows the smaller parameters and the one dequantised projection in the workspace"));
    mf->addRow(tr("LoRA base"), m_loraBase);
    // peft's LoraConfig: lora_alpha (the adapters' output scaled by alpha / rank), lora_dropout and, in a
    // LLaMA-family block, target_modules (--lora-alpha, --lora-dropout, --lora-targets)
    m_loraAlpha = new QDoubleSpinBox(memBox);
    m_loraAlpha->setObjectName(QStringLiteral("loraAlphaSpin"));
    m_loraAlpha->setRange(0, 1e6);
    m_loraAlpha->setDecimals(1);
    m_loraAlpha->setSpecialValueText(tr("the rank"));
    m_loraAlpha->setToolTip(tr("LoRA alpha: the adapters' output is scaled by alpha / rank (peft's lora_alpha; "
                               "the rank when not set)"));
    mf->addRow(tr("LoRA alpha"), m_loraAlpha);
    m_loraDropout = new QDoubleSpinBox(memBox);
    m_loraDropout->setObjectName(QStringLiteral("loraDropoutSpin"));
    m_loraDropout->setRange(0, 0.95);
    m_loraDropout->setDecimals(2);
    m_loraDropout->setSingleStep(0.05);
    m_loraDropout->setSpecialValueText(tr("none"));
    m_loraDropout->setToolTip(tr("LoRA dropout: while training, each adapter's input is dropped with this probability "
                                 "(peft's lora_dropout); the plan counts the dropped input and its mask as workspace"));
    mf->addRow(tr("LoRA dropout"), m_loraDropout);
    m_loraTargets = new QWidget(memBox);
    m_loraTargets->setObjectName(QStringLiteral("loraTargets"));
    auto* tg = new QGridLayout(m_loraTargets);
    tg->setContentsMargins(0, 0, 0, 0);
    tg->setHorizontalSpacing(8);
    tg->setVerticalSpacing(2);
    for (const std::string& name : hr::lora_target_names()) {
        auto* box = new QCheckBox(QString::fromStdString(name), m_loraTargets);
        box->setObjectName(QStringLiteral("loraTarget_") + QString::fromStdString(name));
        const bool attention = name == "q_proj" || name == "k_proj" || name == "v_proj" || name == "o_proj";
        box->setToolTip(attention ? tr("Adapters on the attention's %1 of every block").arg(QString::fromStdString(name))
                                  : tr("Adapters on the MLP's %1 of every block").arg(QString::fromStdString(name)));
        box->setChecked(name == "q_proj" || name == "v_proj");  // peft's default for the family
        // the attention's four projections on the first row, the MLP's three on the second
        const int i = int(m_loraTargetBoxes.size());
        tg->addWidget(box, i < 4 ? 0 : 1, i < 4 ? i : i - 4);
        m_loraTargetBoxes.push_back(box);
        connect(box, &QCheckBox::toggled, this, [this, box](bool on) {
            // at least one projection: the last box cannot be cleared
            if (on) return;
            for (QCheckBox* b : m_loraTargetBoxes)
                if (b->isChecked()) return;
            const QSignalBlocker block(box);
            box->setChecked(true);
        });
    }
    m_loraTargets->setToolTip(tr("The projections of each block that get LoRA adapters (peft's target_modules); the "
                                 "others stay frozen"));
    m_loraTargetsLabel = new QLabel(tr("LoRA on"), memBox);
    mf->addRow(m_loraTargetsLabel, m_loraTargets);
    connect(m_loraRank, &QSpinBox::valueChanged, this, [this] { updateLoraFields(); });
    updateLoraFields();
    connect(m_offloadParams, &QCheckBox::toggled, this, [this](bool on) {
        if (on) m_offload->setChecked(true);
        m_offload->setEnabled(!on);
        updateRankFields();
    });
    m_memoryLimit = spin(memBox, 0, 1 << 30);
    m_memoryLimit->setObjectName(QStringLiteral("memoryLimitSpin"));
    m_memoryLimit->setSuffix(tr(" MiB"));
    m_memoryLimit->setSpecialValueText(tr("the device's own"));
    m_memoryLimit->setToolTip(tr("Cap the device memory the run may use, like a smaller card; "
                                 "a run that needs more fails with an out-of-memory error"));
    mf->addRow(tr("Memory limit"), m_memoryLimit);
    m_sharding = new QComboBox(memBox);
    m_sharding->setObjectName(QStringLiteral("shardingCombo"));
    // the layouts of a run over ranks, core's list (strategy/rank_layout.h: the choices and what each sets)
    for (const std::string& choice : hr::layout_choices())
        m_sharding->addItem(layoutChoiceText(choice), QString::fromStdString(choice));
    mf->addRow(tr("Sharding"), m_sharding);
    m_layoutText = new QLabel(memBox);
    m_layoutText->setObjectName(QStringLiteral("layoutDescription"));
    m_layoutText->setWordWrap(true);
    mf->addRow(QString(), m_layoutText);
    connect(m_sharding, &QComboBox::currentIndexChanged, this, &TrainingSetupPanel::updateLayoutText);
    outer->addWidget(memBox);

    // What-if after training: the written weights evaluated again pruned and/or quantised (the report's section).
    m_whatIfBox = new QGroupBox(tr("What-if after training"), this);
    m_whatIfBox->setObjectName(QStringLiteral("whatIfBox"));
    auto* wf = form(m_whatIfBox);
    m_prune = dspin(m_whatIfBox, 0, 99, 1, 5);
    m_prune->setObjectName(QStringLiteral("pruneSpin"));
    m_prune->setSuffix(tr(" %"));
    m_prune->setSpecialValueText(tr("no pruning"));
    m_prune->setToolTip(tr("Set this share of each weight tensor's smallest values to zero (magnitude pruning) and "
                           "measure the test accuracy again (a language model's validation loss); the weights file is not "
                           "changed"));
    wf->addRow(tr("Prune"), m_prune);
    m_quantize = new QComboBox(m_whatIfBox);
    m_quantize->setObjectName(QStringLiteral("quantizeCombo"));
    m_quantize->addItem(tr("No quantisation"), 0);
    m_quantize->addItem(tr("int8 (a scale per output row)"), 8);
    m_quantize->addItem(tr("int4 (a scale per 64 values)"), 4);
    m_quantize->addItem(tr("nf4 (NormalFloat, a scale per 64 values, the scales quantised too)"), hr::kQuantNf4);
    m_quantize->setToolTip(tr("Store the weight tensors at this width and measure the test accuracy again (a language "
                              "model's validation loss)"));
    wf->addRow(tr("Quantise"), m_quantize);
    outer->addWidget(m_whatIfBox);
    outer->addStretch(1);

    connect(m_optimizer, &QComboBox::currentIndexChanged, this, &TrainingSetupPanel::updateOptimizerFields);
    connect(m_schedule, &QComboBox::currentIndexChanged, this, &TrainingSetupPanel::updateScheduleFields);
    connect(m_checkpoint, &QComboBox::currentIndexChanged, this, &TrainingSetupPanel::updateCheckpointFields);
    connect(m_ranks, &QComboBox::currentIndexChanged, this, &TrainingSetupPanel::updateRankFields);
    connect(m_checkpointList, &QListWidget::itemChanged, this, &TrainingSetupPanel::changed);
    for (QCheckBox* b : findChildren<QCheckBox*>()) connect(b, &QCheckBox::toggled, this, &TrainingSetupPanel::changed);
    for (QSpinBox* s : findChildren<QSpinBox*>()) connect(s, &QSpinBox::valueChanged, this, &TrainingSetupPanel::changed);
    for (QDoubleSpinBox* s : findChildren<QDoubleSpinBox*>())
        connect(s, &QDoubleSpinBox::valueChanged, this, &TrainingSetupPanel::changed);
    for (QComboBox* c : findChildren<QComboBox*>()) {
        connect(c, &QComboBox::currentIndexChanged, this, &TrainingSetupPanel::changed);
        // as wide as the panel gives, not as its longest choice asks (the list shows each in full): the
        // panel fits its dock beside the builder at 1366 x 768
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(16);
    }

    setFrom(defaultTrainConfig());  // the defaults `headroom train` has too (session/RunDefaults.h)
}

QString TrainingSetupPanel::deviceLabel() const {
    return m_ranks->currentData().toString().isEmpty() ? m_device->currentText() : m_ranks->currentText();
}

void TrainingSetupPanel::updateOptimizerFields() {
    const bool sgd = m_optimizer->currentData() == QLatin1String("sgd");
    for (QWidget* w : std::initializer_list<QWidget*>{m_momentum, m_momentumLabel, m_nesterov, m_nesterovLabel})
        w->setVisible(sgd);
    for (QWidget* w : std::initializer_list<QWidget*>{m_beta1, m_beta1Label, m_beta2, m_beta2Label}) w->setVisible(!sgd);
}

void TrainingSetupPanel::updateScheduleFields() {
    const QString k = m_schedule->currentData().toString();
    m_stepSize->setVisible(k == QLatin1String("step"));
    m_stepSizeLabel->setVisible(k == QLatin1String("step"));
    m_gamma->setVisible(k == QLatin1String("step"));
    m_gammaLabel->setVisible(k == QLatin1String("step"));
    m_minLr->setVisible(k == QLatin1String("cosine"));
    m_minLrLabel->setVisible(k == QLatin1String("cosine"));
}

void TrainingSetupPanel::applyTo(hr::TrainConfig& c) const {
    c.device = m_device->currentData().toString().toStdString();
    c.threads = m_threads->value();
    c.batch = m_batch->value();
    c.epochs = m_epochs->value();
    const std::int64_t steps_before = c.steps;
    c.steps = m_steps->value();
    hr::follow_eval_interval(c, steps_before);  // a preset's four evaluations a run follow the new length
    c.evaluate_each_epoch = m_evaluate->isChecked();
    c.seed = std::uint64_t(m_seed->value());
    c.optimizer.kind = m_optimizer->currentData().toString().toStdString();
    c.optimizer.lr = m_lr->value();
    c.optimizer.momentum = m_momentum->value();
    c.optimizer.nesterov = m_nesterov->isChecked();
    c.optimizer.weight_decay = m_weightDecay->value();
    c.optimizer.beta1 = m_beta1->value();
    c.optimizer.beta2 = m_beta2->value();
    c.schedule.kind = m_schedule->currentData().toString().toStdString();
    c.schedule.warmup_steps = m_warmup->value();
    c.schedule.step_size = m_stepSize->value();
    c.schedule.gamma = m_gamma->value();
    c.schedule.min_lr = m_minLr->value();
    // Memory strategies.
    c.strategy.precision = m_precision->currentData().toString().toStdString();
    c.strategy.checkpoint = checkpointText().toStdString();
    c.strategy.micro_batch = m_microBatch->value();
    c.strategy.accumulate = m_accumulate->value();
    c.strategy.offload_optimizer = m_offload->isChecked();
    c.strategy.offload_parameters = m_offloadParams->isChecked();
    c.strategy.lora_rank = m_loraRank->value();
    c.strategy.quantize_base = c.strategy.lora_rank > 0 ? m_loraBase->currentData().toString().toStdString() : "none";
    // alpha, dropout and the targets apply with LoRA only (core refuses them without it); the targets in a
    // LLaMA-family model only
    c.strategy.lora_alpha = c.strategy.lora_rank > 0 ? m_loraAlpha->value() : 0;
    c.strategy.lora_dropout = c.strategy.lora_rank > 0 ? m_loraDropout->value() : 0;
    c.strategy.lora_targets = c.strategy.lora_rank > 0 && m_llama ? loraTargetsText().toStdString() : std::string();
    c.memory_limit = std::size_t(m_memoryLimit->value()) << 20;
    // several ranks: their device kind (or GPU list) and the sharding stage; one process: no sharding
    const QString r = m_ranks->currentData().toString();
    if (r.startsWith(QLatin1String("cpu:"))) c.device = "cpu";
    else if (r.startsWith(QLatin1String("cuda:"))) c.device = r.toStdString();
    // the layout: the Sharding choice on the chosen ranks (one process: none), as core maps it
    hr::apply_layout_choice(c.strategy, r.isEmpty() ? "none" : m_sharding->currentData().toString().toStdString(),
                            ranks());
    if (c.strategy.offload_parameters) {  // the parameters are brought over unit by unit, as zero3 gathers them
        c.strategy.shard = "zero3";
        c.strategy.tp_head = 1;
        c.strategy.pipeline = 1;
        c.strategy.pipeline_split.clear();
    }
    // a language model has no what-if (validate_train_config refuses one): the box is disabled then
    c.what_if.prune = m_prune->value() / 100.0;
    c.what_if.bits = m_quantize->currentData().toInt();
}

void TrainingSetupPanel::setFrom(const hr::TrainConfig& c) {
    auto setCombo = [](QComboBox* box, const QString& v) {
        const int i = box->findData(v);
        if (i >= 0) box->setCurrentIndex(i);
    };
    setCombo(m_device, QString::fromStdString(c.device));
    m_threads->setValue(c.threads);
    m_batch->setValue(int(c.batch));
    m_epochs->setValue(c.epochs);
    m_steps->setValue(int(c.steps));
    m_evaluate->setChecked(c.evaluate_each_epoch);
    m_seed->setValue(int(c.seed));
    setCombo(m_optimizer, QString::fromStdString(c.optimizer.kind));
    m_lr->setValue(c.optimizer.lr);
    m_momentum->setValue(c.optimizer.momentum);
    m_nesterov->setChecked(c.optimizer.nesterov);
    m_weightDecay->setValue(c.optimizer.weight_decay);
    m_beta1->setValue(c.optimizer.beta1);
    m_beta2->setValue(c.optimizer.beta2);
    setCombo(m_schedule, QString::fromStdString(c.schedule.kind));
    m_warmup->setValue(int(c.schedule.warmup_steps));
    m_stepSize->setValue(int(c.schedule.step_size));
    m_gamma->setValue(c.schedule.gamma);
    m_minLr->setValue(c.schedule.min_lr);
    setStrategy(c.strategy);
    setMemoryLimit(c.memory_limit);
    m_prune->setValue(100.0 * c.what_if.prune);
    m_quantize->setCurrentIndex(std::max(0, m_quantize->findData(c.what_if.bits)));
    if (c.device.find(',') != std::string::npos) setRanks(int(std::count(c.device.begin(), c.device.end(), ',')) + 1);
    updateRankFields();
    updateOptimizerFields();
    updateScheduleFields();
}

}  // namespace hrapp

namespace hrapp {

QString TrainingSetupPanel::loraTargetsText() const {
    QStringList names;
    for (QCheckBox* b : m_loraTargetBoxes)
        if (b->isChecked()) names << b->text();
    return names.join(QLatin1Char(','));
}

void TrainingSetupPanel::updateLoraFields() {
    const bool on = m_loraRank->value() > 0;
    m_loraBase->setEnabled(on);
    m_loraAlpha->setEnabled(on);
    m_loraDropout->setEnabled(on);
    m_loraTargets->setEnabled(on);
    // a box per projection kind the model has: LLaMA-family blocks (GPT blocks and linear layers adapt all)
    m_loraTargets->setVisible(m_llama);
    m_loraTargetsLabel->setVisible(m_llama);
}

void TrainingSetupPanel::setModelSpec(const hr::ModelSpec& spec) {
    bool llama = false;
    for (const auto& l : spec.layers) llama = llama || l.type == "llama_block";
    if (llama != m_llama) {
        m_llama = llama;
        updateLoraFields();
    }
    const QString keep = checkpointText();
    std::vector<hr::CheckpointBlock> blocks;
    try {
        blocks = hr::checkpoint_blocks(spec);
    } catch (const std::exception&) {
        // an invalid model has no blocks to offer; the memory plan says what is wrong
    }
    const QSignalBlocker block(m_checkpointList);
    m_checkpointList->clear();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        auto* item = new QListWidgetItem(tr("Block %1: layers %2").arg(i).arg(QString::fromStdString(blocks[i].label)),
                                         m_checkpointList);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
    }
    if (keep.startsWith(QLatin1String("list:"))) setCheckpointText(keep);
}

void TrainingSetupPanel::setStrategy(const hr::StrategyConfig& s) {
    auto setCombo = [](QComboBox* box, const QString& v) {
        const int i = box->findData(v);
        if (i >= 0) box->setCurrentIndex(i);
    };
    setCombo(m_precision, QString::fromStdString(s.precision));
    setCheckpointText(QString::fromStdString(s.checkpoint));
    m_microBatch->setValue(int(s.micro_batch));
    m_accumulate->setValue(int(s.accumulate));
    m_offload->setChecked(s.offload_optimizer);
    m_offloadParams->setChecked(s.offload_parameters);
    m_loraRank->setValue(s.lora_rank);
    setCombo(m_loraBase, QString::fromStdString(s.quantize_base));
    m_loraAlpha->setValue(s.lora_alpha);
    m_loraDropout->setValue(s.lora_dropout);
    {
        int mask = 0;
        try {
            mask = hr::parse_lora_targets(s.lora_targets);
        } catch (const std::exception&) {
            // a list the run refuses with its reason; the boxes keep peft's default
        }
        if (mask == 0) mask = hr::parse_lora_targets("q_proj,v_proj");
        std::vector<QSignalBlocker> blocks;
        for (QCheckBox* b : m_loraTargetBoxes) blocks.emplace_back(b);
        for (std::size_t i = 0; i < m_loraTargetBoxes.size(); ++i) m_loraTargetBoxes[i]->setChecked(mask & (1 << i));
    }
    updateLoraFields();
    setCombo(m_sharding, QString::fromStdString(hr::layout_choice_of(s)));
}

QString TrainingSetupPanel::layoutChoiceText(const std::string& c) const {
    if (c == "none") return tr("None");
    if (c == "dp") return tr("Data parallel (replicated)");
    if (c == "zero1") return tr("ZeRO-1 (optimizer state)");
    if (c == "zero2") return tr("ZeRO-2 (+ gradients)");
    if (c == "zero3") return tr("ZeRO-3 (+ parameters)");
    // the last layer's columns split over the ranks, the body whole on each (strategy/tp_head.h)
    if (c == "tp-head") return tr("Tensor-parallel head (last layer split)");
    // the head split over half the ranks, on 2 data-parallel replicas (an even number of ranks, 4 or more)
    if (c == "tp-head-dp") return tr("Tensor-parallel head × 2 data-parallel replicas");
    if (c == "tp-head-zero1") return tr("Tensor-parallel head × 2 replicas, ZeRO-1");
    // the layers in stages, one per rank (strategy/pipeline.h)
    if (c == "pipeline") return tr("Pipeline stages (layers split)");
    // half as many stages, each on 2 data-parallel replicas (an even number of ranks, 4 or more)
    if (c == "pipeline-dp") return tr("Pipeline stages × 2 data-parallel replicas");
    if (c == "pipeline-zero1") return tr("Pipeline stages × 2 replicas, ZeRO-1");
    return QString::fromStdString(c);
}

void TrainingSetupPanel::updateLayoutText() {
    if (!m_layoutText || !m_quantize) return;  // (while the panel is being built)
    hr::TrainConfig c;
    applyTo(c);
    try {
        m_layoutText->setText(coreText(hr::describe_rank_layout_message(hr::rank_layout(c.strategy, ranks()))));
    } catch (const hr::InputError& e) {
        m_layoutText->setText(coreText(e));
    }
}

int TrainingSetupPanel::ranks() const {
    const QString r = m_ranks->currentData().toString();
    if (r.startsWith(QLatin1String("cpu:"))) return r.mid(4).toInt();
    if (r.startsWith(QLatin1String("cuda:"))) return int(r.count(QLatin1Char(','))) + 1;
    return 1;
}

void TrainingSetupPanel::setRanks(int n) {
    if (n <= 1) return m_ranks->setCurrentIndex(0);
    const QString device = m_device->currentData().toString();
    int fallback = -1;
    for (int i = 1; i < m_ranks->count(); ++i) {
        const QString d = m_ranks->itemData(i).toString();
        const bool gpus = d.startsWith(QLatin1String("cuda:"));
        const int count = gpus ? int(d.count(QLatin1Char(','))) + 1 : d.mid(4).toInt();
        if (count != n) continue;
        if (gpus == device.startsWith(QLatin1String("cuda"))) return m_ranks->setCurrentIndex(i);
        if (fallback < 0) fallback = i;
    }
    if (fallback > 0) m_ranks->setCurrentIndex(fallback);
}

void TrainingSetupPanel::updateRankFields() {
    const QString r = m_ranks->currentData().toString();
    const bool several = !r.isEmpty();
    const bool offloaded = m_offloadParams && m_offloadParams->isChecked();  // zero3, whatever the box says
    m_sharding->setEnabled(several && !offloaded);
    // with several ranks, the choices rank_layout admits on them ("None" is for one process only; a layout
    // of 2 replicas needs an even number of ranks, 4 or more); one that no longer fits falls back to its layout
    // without replicas, or to data parallel
    if (auto* model = qobject_cast<QStandardItemModel*>(m_sharding->model())) {
        const int n = ranks();
        auto fits = [&](const QString& choice) {
            if (!several) return choice == QLatin1String("none");
            hr::StrategyConfig s;
            hr::apply_layout_choice(s, choice.toStdString(), n);
            try {
                (void)hr::rank_layout(s, n);
                return true;
            } catch (const hr::InputError&) {
                return false;
            }
        };
        for (int i = 0; i < m_sharding->count(); ++i) model->item(i)->setEnabled(!several || fits(m_sharding->itemData(i).toString()));
        const QString now = m_sharding->currentData().toString();
        if (several && !fits(now)) {
            const QString part = now.section(QLatin1Char('-'), 0, now.startsWith(QLatin1String("tp-head")) ? 1 : 0);
            m_sharding->setCurrentIndex(m_sharding->findData(part != now && fits(part) ? part : QStringLiteral("dp")));
        }
    }
    if (!several) m_sharding->setCurrentIndex(0);
    if (offloaded) m_sharding->setCurrentIndex(m_sharding->findData(QStringLiteral("zero3")));  // (one rank too)
    m_sharding->setToolTip(several ? tr("How the ranks share the model: data parallel replicates it; ZeRO-1/2/3 "
                                        "split the optimizer state, then the gradients, then the parameters; a "
                                        "tensor-parallel head splits the last layer's output columns over the "
                                        "ranks, which all train on the whole batch; pipeline stages give each rank "
                                        "consecutive layers, the micro-batches (Gradient accumulation) flowing "
                                        "through them; with 2 data-parallel replicas, the head's parts or the stages "
                                        "are half as many and run twice, each copy on half the batch")
                                   : tr("Sharding spreads a run over several ranks: choose more than one in Ranks"));
    m_device->setEnabled(!several);  // the ranks entry says where they train
    updateLayoutText();
}

void TrainingSetupPanel::setMemoryLimit(std::size_t bytes) {
    m_memoryLimit->setValue(int(std::min<std::size_t>((bytes + (1u << 20) - 1) >> 20, std::size_t(1) << 30)));
}

QString TrainingSetupPanel::checkpointText() const {
    const QString k = m_checkpoint->currentData().toString();
    if (k == QLatin1String("every")) return QStringLiteral("every:%1").arg(m_checkpointEvery->value());
    if (k == QLatin1String("list")) {
        QStringList picked;
        for (int i = 0; i < m_checkpointList->count(); ++i)
            if (m_checkpointList->item(i)->checkState() == Qt::Checked) picked << QString::number(i);
        return picked.isEmpty() ? QStringLiteral("none") : QStringLiteral("list:") + picked.join(QLatin1Char(','));
    }
    return k;
}

void TrainingSetupPanel::setCheckpointText(const QString& ck) {
    auto setCombo = [this](const QString& v) {
        const int i = m_checkpoint->findData(v);
        if (i >= 0) m_checkpoint->setCurrentIndex(i);
    };
    if (ck == QLatin1String("every:2")) {
        setCombo(ck);
    } else if (ck.startsWith(QLatin1String("every:"))) {
        setCombo(QStringLiteral("every"));
        m_checkpointEvery->setValue(ck.mid(6).toInt());
    } else if (ck.startsWith(QLatin1String("list:"))) {
        setCombo(QStringLiteral("list"));
        const QSignalBlocker block(m_checkpointList);
        for (int i = 0; i < m_checkpointList->count(); ++i) m_checkpointList->item(i)->setCheckState(Qt::Unchecked);
        for (const QString& part : ck.mid(5).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const int i = part.trimmed().toInt();
            if (i >= 0 && i < m_checkpointList->count()) m_checkpointList->item(i)->setCheckState(Qt::Checked);
        }
        emit changed();
    } else {
        setCombo(ck);
    }
    updateCheckpointFields();
}

void TrainingSetupPanel::updateCheckpointFields() {
    const QString k = m_checkpoint->currentData().toString();
    m_checkpointEvery->setVisible(k == QLatin1String("every"));
    m_checkpointList->setVisible(k == QLatin1String("list"));
}

}  // namespace hrapp
