#pragma once
// The Headroom workbench window: model builder (left), data and training setup (right; tabbed with the
// builder in a window under 1600 px wide), monitor and log (centre), run controls in a toolbar and the
// Run menu, live status in the status bar; never larger than its screen. A run's lifecycle (history,
// telemetry, notifications, outputs, the session thread) is the RunController's, the same one
// `headroom train` uses; the window configures it, draws its events and shows its outcome.
#include <QMainWindow>
#include <QPointer>
#include <QStringList>

#include <optional>

#include "session/RunController.h"
#include "session/RunDefaults.h"
#include "session/TrainingSession.h"
#include "telemetry/telemetry.h"
#include "train/model_folder.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QTabWidget;
class QThread;

namespace hrw {
class LiveChart;
class ModelBuilder;
}

namespace hrapp {

class DataPanel;
class ModelFolderOpener;
class MemoryPlanPanel;
class MonitorView;
class TrainingSetupPanel;

class DesktopNotifier;
class HardwareView;
class RunStore;
class RunsView;
class TelemetryMonitor;
class WebhookNotifier;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    hrw::ModelBuilder* builder() const { return m_builder; }
    DataPanel* dataPanel() const { return m_data; }
    TrainingSetupPanel* setupPanel() const { return m_setup; }
    MonitorView* monitor() const { return m_monitor; }
    QWidget* monitorTab() const { return m_monitorTab; }  // the Monitor's page of tabs(): it and the hardware
    MemoryPlanPanel* memoryPlan() const { return m_plan; }
    RunController* runController() const { return m_runs; }
    TrainingSession* session() const { return m_runs->session(); }
    QAction* startAction() const { return m_startAction; }
    QAction* pauseAction() const { return m_pauseAction; }
    QAction* resumeAction() const { return m_resumeAction; }
    QAction* stopAction() const { return m_stopAction; }
    bool isRunning() const { return m_runs->isRunning(); }
    const hr::TrainResult& lastResult() const { return m_lastResult; }
    RunStore* runStore() const { return m_store; }
    RunsView* runsView() const { return m_runsView; }
    HardwareView* hardwareView() const { return m_hardware; }
    TelemetryMonitor* telemetry() const { return m_telemetry; }
    WebhookNotifier* webhook() const { return m_runs->webhook(); }
    QTabWidget* tabs() const { return m_tabs; }
    QAction* exportAction() const { return m_exportAction; }
    qint64 currentRunId() const { return m_runs->runId(); }  // the run in progress (0: none)
    qint64 lastRunId() const { return m_lastRunId; }   // the last run started from this window
    // The history database: $HEADROOM_DB when set, else RunStore::defaultPath().
    static QString runStorePath();
    // Where the next run started here writes model.safetensors and run.json:
    // runs/run-<date>-<time> beside the history database.
    QString outputFolder() const;
    // The options the window starts its runs with (history, outputs, telemetry from its monitor).
    RunOptions runOptions() const;
    QString currentFile() const { return m_file; }

    // The configuration Start would run now.
    hr::TrainConfig trainConfig() const;
    // A configuration override for tests and screenshots (applied to the panels).
    void setTrainConfig(const hr::TrainConfig& config);
    bool openModel(const QString& path);
    // File > Open model folder… (and a folder or .safetensors file dropped on the window): opens it on a
    // worker (ModelFolderOpener); when done the builder holds its model and runs start from its weights as
    // `headroom train --init-from` does. False when an opening is under way.
    bool openModelFolder(const QString& path);
    ModelFolderOpener* modelFolderOpener() const { return m_opener; }
    QAction* openFolderAction() const { return m_openFolderAction; }
    // The folder the builder's model and the next run's weights come from (none: not opened from one).
    const std::optional<hr::ModelFolder>& modelFolder() const { return m_folder; }
    // A LLaMA-family model from a Hugging Face config.json (Model > From a Hugging Face config…).
    bool openHfConfig(const QString& path);
    bool saveModel(const QString& path);
    // The person's choice of a preset (the Presets menu): kept whatever data is chosen afterwards.
    void loadPreset(const QString& name);
    // An unedited preset model is redrawn for the Data panel's samples and classes. Until the person chooses
    // a model (a preset, a file, a new model, a stored run, an edit in the builder), the preset follows the
    // data as `headroom train` without --preset picks it (hr::default_preset_for_data: a table tabular-mlp,
    // text gpt-tiny, images seed-cnn), said in the status bar.
    void followData();
    void followSequenceLength();  // the Data panel counts instruction rows against the run's --seq
    // Whether the model in the builder is the person's choice (false: the data's default preset).
    bool modelChosen() const { return m_modelChosen; }
    // Writes the report of a run; the format follows the suffix (.html, .pdf, .json, .csv; none: HTML).
    bool exportReport(qint64 runId, const QString& path, QString* error = nullptr);
    // The model and training settings of a stored run back into the builder and setup panels.
    bool loadRun(qint64 runId);
    // When false, closing during a run stops it without asking (tests, screenshots).
    void setAskBeforeClose(bool ask) { m_askBeforeClose = ask; }
    // When false, geometry and dock state are neither restored nor saved.
    void setPersistState(bool persist) { m_persistState = persist; }
    // The geometry of a window that wants `wanted` on a screen whose free area (taskbars left out) is
    // `available`: no larger than that area less the window manager's frame, and moved inside it (the
    // top-left corner, where the title bar is, last), so nothing of it is off the screen.
    static QRect fitToScreen(const QRect& wanted, const QRect& available, const QMargins& frame = QMargins());

public slots:
    void start();
    void pause();
    void resume();
    void stop();
    // The Runs tab's Continue training: resumes the run's folder to the new total length (steps > 0,
    // else epochs > 0, else the run's own), recorded as continuing runId.
    void continueRun(qint64 runId, qint64 totalSteps, int totalEpochs);
    // The Runs tab's Fine-tune from this run: the run's model and settings (loadRun), and the next run
    // starts from the weights it wrote (its folder's model.safetensors, or for a LoRA run its adapters on
    // their base, as `headroom train --init-from FOLDER` takes them). False when it cannot.
    bool fineTuneFromRun(qint64 runId);
    // File > Export report…: runId 0 picks the run selected in the Runs tab, else the last run.
    void exportReportDialog(qint64 runId = 0);

signals:
    void runFinished(const hr::TrainResult& result);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void buildActions();
    void buildMenus();
    void buildDocks();
    void buildStatusBar();
    void updateRunActions();
    void startRun(const hr::TrainConfig& config, const RunOptions& options);
    void updateTitle();
    void updateRecentMenu();
    void addRecent(const QString& path);
    void saveChart(hrw::LiveChart* chart);
    void showSettings();
    void showAbout();
    void applyChartTheme();
    bool maybeSave();
    void newModel();
    // Loads a preset's model and training settings; keepData: the Data panel's data, target and tokenizer
    // stay (the data chose the preset). False when the preset cannot be drawn (said in a message box).
    bool applyPreset(const QString& name, bool keepData);
    void openModelDialog();
    bool saveModelAs();
    void onRunStarted(qint64 runId, const QString& name);
    void onDevice(const hr::DeviceEvent& device);
    void onSteps(const QVector<hr::StepEvent>& steps);
    void onEpoch(const hr::EpochEvent& epoch);
    void onFinished(const RunOutcome& outcome);
    void onMemory(const hr::MemoryEvent& memory);
    void onTelemetry(const hr::TelemetrySample& sample);
    void applyNotifySettings();
    QWidget* buildMonitorTab();
    void buildMemoryPlan();  // MainWindowMemoryPlan.cpp
    // MainWindowModelFolder.cpp
    void buildModelFolderActions();
    void applyModelFolder(const hr::ModelFolder& folder);
    void forgetInitialWeights();  // the model changes: runs no longer start from the opened weights
    void updateWeightsNote();
    void onLog(int level, const QString& message);
    void stopAndWait();
    void installLogSink();
    // Fits the window to the screen it is on (fitToScreen); `move`: also moves it there (a restored or
    // placed window; a new one is placed by the window system).
    void fitIntoScreen(bool move);
    // The docks' first places and widths (no saved state): the builder left, the setup and data right,
    // or, in a window narrower than 1600 px (a 1366 x 768 screen), all three tabbed on the left.
    void arrangeDocks();

    hrw::ModelBuilder* m_builder = nullptr;
    DataPanel* m_data = nullptr;
    TrainingSetupPanel* m_setup = nullptr;
    MonitorView* m_monitor = nullptr;
    QWidget* m_monitorTab = nullptr;
    MemoryPlanPanel* m_plan = nullptr;
    HardwareView* m_hardware = nullptr;
    RunsView* m_runsView = nullptr;
    RunStore* m_store = nullptr;
    TelemetryMonitor* m_telemetry = nullptr;
    DesktopNotifier* m_desktop = nullptr;
    RunController* m_runs = nullptr;
    qint64 m_lastRunId = 0;
    int m_runGpu = -1;  // the run's GPU for the ledger lines (-1: a CPU run)
    QPlainTextEdit* m_log = nullptr;
    QTabWidget* m_tabs = nullptr;
    QDockWidget* m_builderDock = nullptr;
    QDockWidget* m_dataDock = nullptr;
    QDockWidget* m_setupDock = nullptr;

    bool m_shutDown = false;
    bool m_askBeforeClose = true;
    bool m_persistState = true;
    hr::TrainResult m_lastResult;
    QString m_file;
    QString m_modelSource = QStringLiteral("builder");
    bool m_modelChosen = false;     // the person chose the model: the data no longer picks the preset
    bool m_applyingPreset = false;  // applyPreset is setting the panels: followData waits for it
    // The run's settings the panels do not show (tokenizer, gradient clipping, validation interval, ...):
    // the defaults, a loaded preset's or a loaded run's; trainConfig() starts from it.
    hr::TrainConfig m_config = defaultTrainConfig();

    QAction* m_newAction = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_openFolderAction = nullptr;
    ModelFolderOpener* m_opener = nullptr;
    std::optional<hr::ModelFolder> m_folder;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
    QAction* m_quitAction = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    QAction* m_startAction = nullptr;
    QAction* m_pauseAction = nullptr;
    QAction* m_resumeAction = nullptr;
    QAction* m_stopAction = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_presetMenu = nullptr;

    QLabel* m_stateLabel = nullptr;
    QLabel* m_deviceLabel = nullptr;
    QLabel* m_stepLabel = nullptr;
    QLabel* m_epochLabel = nullptr;
    QLabel* m_lossLabel = nullptr;
    QLabel* m_speedLabel = nullptr;
    QLabel* m_etaLabel = nullptr;
};

}  // namespace hrapp
