#pragma once
// The "Memory plan" view (issue 5): before Start, the planner's prediction for the current model and
// training setup as a stacked bar by category against the device's capacity (or the memory limit),
// the host bar of offloaded state, the predicted step-time factor and a per-layer table; it follows
// the user's edits (debounced). "Fit to device" searches the strategies (on a worker thread) for the
// fastest configuration that fits and applies it; its ranking shows the Pareto front of memory and
// step time (every candidate on request). After a run, predicted and measured bytes per category.
#include <QWidget>
#include <functional>
#include <optional>

#include "plan/planner.h"
#include "train/config.h"
#include "train/trainer.h"

class QCheckBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QTableWidget;
class QTimer;

namespace hrw {
class MemoryCompareChart;
class PlanBarChart;
class StepTimelineChart;
}

namespace hrapp {

class PlanSearchTask;
class FineTuningTableTask;
struct FineTuningCells;

class MemoryPlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit MemoryPlanPanel(QWidget* parent = nullptr);

    // Where the configuration to plan for comes from (the window's trainConfig()).
    void setConfigSource(std::function<hr::TrainConfig()> source) { m_source = std::move(source); }
    // The planner's request for a configuration (the CLI's, so the GUI and `headroom plan` agree).
    static hr::PlanRequest requestFor(const hr::TrainConfig& config);
    // A planner candidate's strategy as the setup panel shows it (micro-batch x accumulation = batch).
    static hr::StrategyConfig normalized(const hr::StrategyConfig& strategy, std::int64_t batch);

    bool hasPlan() const { return m_plan.has_value(); }
    const hr::MemoryPlan& plan() const { return *m_plan; }
    QString errorText() const { return m_error; }       // why there is no plan ("" when there is one)
    std::size_t capacity() const { return m_capacity; }  // the memory limit, else the device's free memory
    const hr::PlanSearch& lastSearch() const { return m_search; }
    bool isSearching() const;  // Fit to device is running

    hrw::PlanBarChart* barChart() const { return m_bar; }
    hrw::MemoryCompareChart* compareChart() const { return m_compareChart; }
    // One step's memory timeline (docs/timeline.md): the plan's, and after a run the measured one beside it.
    hrw::StepTimelineChart* predictedTimelineChart() const { return m_timelinePredicted; }
    hrw::StepTimelineChart* measuredTimelineChart() const { return m_timelineMeasured; }
    QLabel* timelineLabel() const { return m_timelineLabel; }
    // The timelines shown (predicted, and measured after a run) as one Chrome trace file; false with *error.
    bool exportTimelineTrace(const QString& path, QString* error) const;
    QTableWidget* layerTable() const { return m_layers; }
    QTableWidget* rankingTable() const { return m_ranking; }
    QTableWidget* comparisonTable() const { return m_compare; }
    QPushButton* fitButton() const { return m_fit; }
    QCheckBox* allCandidatesBox() const { return m_allCandidates; }
    QLabel* summaryLabel() const { return m_summary; }
    QLabel* whatIfLabel() const;  // hidden unless the Training setup asks for a what-if
    // Language models: the fine-tuning table (report/plan_table.h, what `headroom plan --budget` prints) for
    // the memory limit (else the device's free memory) per card, computed on a worker thread.
    QGroupBox* fineTuningBox() const { return m_tuneBox; }
    QTableWidget* fineTuningView() const { return m_tune; }
    QLabel* fineTuningLabel() const { return m_tuneLabel; }
    bool isFineTuningBusy() const;  // computing, or another computation waits
    std::size_t fineTuningBudget() const { return m_tuneBudget; }  // the per-card budget of the table shown

    // Runs: the plan for the configuration a run starts with, then its measured peaks.
    void setRunStarted(const hr::TrainConfig& config);
    // Re-predicts with the run's real sample counts (the data loader buffers) and fills the comparison.
    void setRunResult(const hr::TrainResult& result);
    bool hasRunPlan() const { return m_runPlan.has_value(); }
    const hr::MemoryPlan& runPlan() const { return *m_runPlan; }
    const hr::TrainConfig& runConfig() const { return m_runConfig; }
    // Out of memory: a dialog with the error and the planner's fastest configuration that fits.
    void showOutOfMemory(const hr::TrainResult& result);

    void setDark(bool dark);

public slots:
    void scheduleUpdate();  // debounced (150 ms)
    void updateNow();
    void fitToDevice();

signals:
    // Apply this strategy to the setup panel.
    void strategyChosen(const hr::StrategyConfig& strategy);
    // Start the run again (after strategyChosen).
    void restartRequested();
    void planUpdated();
    // Fit to device ended (lastSearch() holds its result; nothing applied when nothing fits).
    void fitFinished();
    // The predicted-against-measured comparison of a finished run is shown.
    void comparisonReady();
    // The fine-tuning table is filled (or says why it could not be).
    void fineTuningUpdated();

private:
    void showPlan(const hr::TrainConfig& config, const hr::MemoryPlan& plan);
    void showWhatIf(const hr::TrainConfig& config);
    void showError(const QString& message);
    void fillRanking(const hr::PlanSearch& search);
    void searchFinished(const hr::PlanSearch& search, const QString& error);
    void updateFineTuning(const hr::TrainConfig& config, const hr::PlanRequest& request);
    void startFineTuning();
    void fineTuningFinished(const FineTuningCells& cells, const QString& error);

    std::function<hr::TrainConfig()> m_source;
    QTimer* m_debounce = nullptr;
    std::optional<hr::MemoryPlan> m_plan;
    QString m_error;
    std::size_t m_capacity = 0;
    hr::PlanSearch m_search;
    PlanSearchTask* m_searchTask = nullptr;
    hr::TrainConfig m_searchConfig;  // the configuration the running search is for
    hr::TrainConfig m_runConfig;
    std::optional<hr::MemoryPlan> m_runPlan;

    QLabel* m_summary = nullptr;
    QLabel* m_strategyLabel = nullptr;
    QLabel* m_stepLabel = nullptr;
    QLabel* m_whatIfLabel = nullptr;  // What-if after training: the weights' stored bytes (nn/compression.h)
    QLabel* m_fitStatus = nullptr;
    QPushButton* m_fit = nullptr;
    QPushButton* m_rankingToggle = nullptr;
    QCheckBox* m_allCandidates = nullptr;
    hrw::PlanBarChart* m_bar = nullptr;
    QGroupBox* m_layersBox = nullptr;
    QTableWidget* m_layers = nullptr;
    QTableWidget* m_ranking = nullptr;
    QGroupBox* m_compareBox = nullptr;
    QLabel* m_compareLabel = nullptr;
    QTableWidget* m_compare = nullptr;
    hrw::MemoryCompareChart* m_compareChart = nullptr;
    QGroupBox* m_timelineBox = nullptr;
    QLabel* m_timelineLabel = nullptr;
    hrw::StepTimelineChart* m_timelinePredicted = nullptr;
    hrw::StepTimelineChart* m_timelineMeasured = nullptr;
    QPushButton* m_timelineExport = nullptr;
    void showTimelines();

    QGroupBox* m_tuneBox = nullptr;
    QLabel* m_tuneLabel = nullptr;
    QTableWidget* m_tune = nullptr;
    FineTuningTableTask* m_tuneTask = nullptr;
    QString m_tuneKey;                 // the configuration and budget of the table shown or computing
    std::size_t m_tuneBudget = 0;      // the budget of the table shown or computing
    std::optional<hr::PlanRequest> m_tunePending;  // the next one, once the running one ends
    std::size_t m_tunePendingBudget = 0;
    QString m_tunePendingKey;
};

}  // namespace hrapp
