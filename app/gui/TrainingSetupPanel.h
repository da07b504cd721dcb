#pragma once
// Training setup: device, batch size, epochs/steps, optimizer and its hyperparameters, LR schedule,
// seed, threads, the ranks (one process, CPU x N ranks, or several GPUs: a multi-rank run of child
// processes, RunOptions::ranks) and the memory strategies (bound to TrainConfig::strategy; the sharding
// stage is enabled when the run has more than one rank).
#include <QWidget>

#include "train/config.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QListWidget;
class QSpinBox;

namespace hrapp {

class TrainingSetupPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainingSetupPanel(QWidget* parent = nullptr);

    void applyTo(hr::TrainConfig& config) const;
    void setFrom(const hr::TrainConfig& config);
    QString deviceLabel() const;
    // Processes the run trains on (1: one, on the session thread; more: RunOptions::ranks).
    int ranks() const;
    // Picks the ranks entry for n ranks (CPU x n, or n GPUs when the config lists n of them).
    void setRanks(int n);
    // The model whose checkpoint blocks the "Chosen blocks" list offers (hr::checkpoint_blocks).
    void setModelSpec(const hr::ModelSpec& spec);
    // Only the memory strategies and the memory limit (Fit to device, out-of-memory advice).
    void setStrategy(const hr::StrategyConfig& strategy);
    void setMemoryLimit(std::size_t bytes);

signals:
    void changed();

private:
    void updateOptimizerFields();
    void updateScheduleFields();
    void updateCheckpointFields();
    void updateRankFields();
    void updateLoraFields();
    QString loraTargetsText() const;  // the boxes as peft's comma list
    // The layout the Sharding choice gives on the chosen ranks, described (hr::describe_rank_layout_message, in
    // the interface language), or rank_layout's refusal of it.
    void updateLayoutText();
    QString layoutChoiceText(const std::string& choice) const;
    QString checkpointText() const;
    void setCheckpointText(const QString& text);

    QComboBox* m_device = nullptr;
    QSpinBox* m_threads = nullptr;
    QComboBox* m_ranks = nullptr;  // data: "" (one process), "cpu:N" or "cuda:0,1,..." 
    QSpinBox* m_batch = nullptr;
    QSpinBox* m_epochs = nullptr;
    QSpinBox* m_steps = nullptr;
    QCheckBox* m_evaluate = nullptr;
    QSpinBox* m_seed = nullptr;
    QComboBox* m_optimizer = nullptr;
    QDoubleSpinBox* m_lr = nullptr;
    QDoubleSpinBox* m_momentum = nullptr;
    QCheckBox* m_nesterov = nullptr;
    QDoubleSpinBox* m_weightDecay = nullptr;
    QDoubleSpinBox* m_beta1 = nullptr;
    QDoubleSpinBox* m_beta2 = nullptr;
    QComboBox* m_schedule = nullptr;
    QSpinBox* m_warmup = nullptr;
    QSpinBox* m_stepSize = nullptr;
    QDoubleSpinBox* m_gamma = nullptr;
    QDoubleSpinBox* m_minLr = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_checkpoint = nullptr;
    QSpinBox* m_checkpointEvery = nullptr;
    QListWidget* m_checkpointList = nullptr;
    QSpinBox* m_memoryLimit = nullptr;  // MiB, 0: the device's own
    QSpinBox* m_microBatch = nullptr;
    QSpinBox* m_accumulate = nullptr;
    QCheckBox* m_offload = nullptr;
    QCheckBox* m_offloadParams = nullptr;
    QComboBox* m_loraBase = nullptr;  // QLoRA: the frozen base's storage (none, int8, int4)
    QSpinBox* m_loraRank = nullptr;  // LoRA adapters' rank, 0: off
    QDoubleSpinBox* m_loraAlpha = nullptr;    // peft's lora_alpha (0: the rank)
    QDoubleSpinBox* m_loraDropout = nullptr;  // peft's lora_dropout
    QWidget* m_loraTargets = nullptr;         // a box per projection kind of a LLaMA-family block (peft's names)
    QLabel* m_loraTargetsLabel = nullptr;
    std::vector<QCheckBox*> m_loraTargetBoxes;  // in hr::lora_target_names()'s order
    bool m_llama = false;                     // the model has llama_block layers: --lora-targets applies
    QComboBox* m_sharding = nullptr;  // data: a layout choice (hr::layout_choices)
    QLabel* m_layoutText = nullptr;
    // What-if after training (TrainConfig::what_if): pruning and quantisation of the written weights
    QGroupBox* m_whatIfBox = nullptr;
    QDoubleSpinBox* m_prune = nullptr;  // percent
    QComboBox* m_quantize = nullptr;
    QLabel* m_momentumLabel = nullptr;
    QLabel* m_nesterovLabel = nullptr;
    QLabel* m_beta1Label = nullptr;
    QLabel* m_beta2Label = nullptr;
    QLabel* m_stepSizeLabel = nullptr;
    QLabel* m_gammaLabel = nullptr;
    QLabel* m_minLrLabel = nullptr;
};

}  // namespace hrapp
