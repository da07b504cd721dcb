#include "gui/MainWindow.h"
#include "nn/hf_config.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QPointer>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QShowEvent>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QSysInfo>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolTip>
#include <QUndoStack>

#include <cmath>

#include "base/error.h"
#include "base/log.h"
#include "plan/planner.h"
#include "train/device.h"
#include "builder/ModelBuilder.h"
#include "charts/LiveChart.h"
#include "gui/AppSettings.h"
#include "gui/DataPanel.h"
#include "nn/transformer_spec.h"
#include "gui/ForegroundCpu.h"
#include "gui/SamplePanel.h"
#include "gui/HardwareView.h"
#include "gui/MemoryPlanPanel.h"
#include "gui/RunsView.h"
#include "gui/SettingsDialog.h"
#include "gui/TelemetryMonitor.h"
#include "gui/DesktopNotifier.h"
#include "notify/webhook_notifier.h"
#include "report/report_writer.h"
#include "session/RunText.h"
#include "store/run_store.h"
#include "gui/MonitorView.h"
#include "gui/RuntimeInfo.h"
#include "gui/TrainingSetupPanel.h"

namespace hrapp {

namespace {
constexpr int kMaxRecent = 8;
constexpr int kThreeColumnWidth = 1600;  // a window narrower than this opens with its docks in one column
// A status bar text that gives way before the window does: elided at the right (the whole text in its
// tooltip), so a long device description never makes the window wider than the screen.
class ElidingLabel : public QLabel {
public:
    using QLabel::QLabel;
    QSize minimumSizeHint() const override {
        return QSize(fontMetrics().horizontalAdvance(QStringLiteral("Mmmm…")), QLabel::minimumSizeHint().height());
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const QRect r = contentsRect();
        style()->drawItemText(&p, r, int(alignment() | Qt::AlignVCenter), palette(), isEnabled(),
                              fontMetrics().elidedText(text(), Qt::ElideRight, r.width()), foregroundRole());
    }
    bool event(QEvent* e) override {
        if (e->type() == QEvent::ToolTip && toolTip().isEmpty()) {
            if (fontMetrics().horizontalAdvance(text()) > contentsRect().width())
                QToolTip::showText(static_cast<QHelpEvent*>(e)->globalPos(), text(), this);
            else QToolTip::hideText();
            return true;
        }
        return QLabel::event(e);
    }
};

QScrollArea* scrolled(QWidget* w) {
    auto* s = new QScrollArea;
    s->setWidget(w);
    s->setWidgetResizable(true);
    s->setFrameShape(QFrame::NoFrame);
    return s;
}
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setObjectName(QStringLiteral("MainWindow"));
    installForegroundCpuHook();  // CPU runs leave a core to this thread while it works (gui/ForegroundCpu.h)
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
    m_monitor = new MonitorView;
    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);

    // Run history: every run started here is recorded (on this, the GUI thread).
    m_store = new RunStore(this);
    const bool storeOpen = m_store->open(runStorePath());
    m_runsView = new RunsView(m_store);
    m_runsView->setObjectName(QStringLiteral("runsView"));
    // Telemetry: always on, run or no run.
    m_telemetry = new TelemetryMonitor(nullptr, this);
    m_hardware = new HardwareView;
    m_hardware->setObjectName(QStringLiteral("hardwareView"));
    m_hardware->setGpuState(m_telemetry->gpuAvailable(), m_telemetry->gpuStatus());

    m_tabs = new QTabWidget;
    m_monitorTab = buildMonitorTab();
    m_tabs->addTab(m_monitorTab, tr("Monitor"));
    m_tabs->addTab(m_runsView, tr("Runs"));
    m_tabs->addTab(m_log, tr("Log"));
    setCentralWidget(m_tabs);

    buildDocks();
    buildActions();
    buildMenus();
    buildStatusBar();

    // Runs: the controller `headroom train` uses too; the window draws its events.
    m_runs = new RunController(this);
    connect(m_runs, &RunController::runStarted, this, &MainWindow::onRunStarted);
    connect(m_runs, &RunController::deviceChosen, this, &MainWindow::onDevice);
    connect(m_runs, &RunController::stepsReady, this, &MainWindow::onSteps);
    connect(m_runs, &RunController::epochFinished, this, &MainWindow::onEpoch);
    connect(m_runs, &RunController::evaluated, m_monitor, &MonitorView::addEval);
    connect(m_runs, &RunController::memoryUpdated, this, &MainWindow::onMemory);
    connect(m_runs, &RunController::logMessage, this,
            [this](const hr::LogEvent& e) { onLog(int(e.level), logText(e)); });  // in the UI language
    connect(m_runs, &RunController::runFinished, this, &MainWindow::onFinished);
    // a multi-rank run's ranks, on this machine or others: their memory, their machines' GPUs
    connect(m_runs, &RunController::rankTelemetry, this, [this](const RankTelemetry& t) {
        m_hardware->addRankTelemetry(m_telemetry->secondsNow(), t, QSysInfo::machineHostName());
    });
    // the Monitor redraws at the settings' rate, or less often when drawing costs; steps come no faster
    m_monitor->setRefreshIntervalMs(1000 / AppSettings::load().chartRefreshHz);
    connect(m_monitor, &MonitorView::refreshIntervalChanged, this, [this](int ms) {
        if (TrainingSession* s = m_runs->session()) s->setBatchIntervalMs(ms);  // null once shut down
        if (m_runs->isRunning()) m_hardware->setRefreshIntervalMs(ms);
    });
    // language models: text from the current weights during a run and from the saved ones after it
    m_tabs->insertTab(1, new SamplePanel(m_runs), tr("Sample"));

    connect(m_monitor, &MonitorView::saveChartRequested, this, &MainWindow::saveChart);
    connect(m_hardware, &HardwareView::saveChartRequested, this, &MainWindow::saveChart);
    connect(m_runsView, &RunsView::saveChartRequested, this, &MainWindow::saveChart);
    connect(m_runsView, &RunsView::loadRequested, this, &MainWindow::loadRun);
    connect(m_runsView, &RunsView::fineTuneRequested, this, &MainWindow::fineTuneFromRun);
    connect(m_runsView, &RunsView::exportRequested, this, [this](qint64 id) { exportReportDialog(id); });
    connect(m_runsView, &RunsView::continueRequested, this, &MainWindow::continueRun);
    connect(m_store, &RunStore::writeFailed, this, [this](const QString& message) {
        onLog(int(hr::LogLevel::warning), tr("Run history: %1").arg(message));
    });
    connect(m_telemetry, &TelemetryMonitor::sampleReady, this, &MainWindow::onTelemetry);

    m_desktop = new DesktopNotifier(this);
    applyNotifySettings();
    installLogSink();
    connect(m_builder, &hrw::ModelBuilder::specChanged, this, [this] {
        followSequenceLength();
        updateRunActions();
        updateTitle();
    });
    connect(m_builder->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
    connect(m_data, &DataPanel::changed, this, [this] {
        followData();
        updateRunActions();
    });

    buildMemoryPlan();
    followSequenceLength();
    // the data's preset (seed-cnn for the default Fashion-MNIST), not yet the person's choice
    applyPreset(QString::fromStdString(hr::default_preset_for_data(m_data->dataSpec().toStdString())), true);
    applyChartTheme();
    updateRecentMenu();
    // 1480 x 920, or 85 % of a larger screen (three columns of panels and charts), up to 1920 x 1200; a
    // 1366 x 768 laptop gets all of its screen, not a window larger than it (fitIntoScreen)
    const QRect available = screen() ? screen()->availableGeometry() : QRect(0, 0, 1480, 920);
    resize(qBound(1480, available.width() * 85 / 100, 1920), qBound(920, available.height() * 85 / 100, 1200));
    fitIntoScreen(false);
    QSettings s;
    if (m_persistState) {
        // saved on another, larger screen (or with a docked laptop's monitor): fitted to this one
        if (restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray())) fitIntoScreen(true);
        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    }
    if (!m_persistState || !s.contains(QStringLiteral("window/state"))) arrangeDocks();
    updateRunActions();
    m_stateLabel->setText(tr("Ready"));
    if (storeOpen) {
        if (m_store->recoveredRuns() > 0)
            onLog(int(hr::LogLevel::warning), tr("%n run(s) interrupted by an earlier crash were marked failed in the history.",
                                                 nullptr, m_store->recoveredRuns()));
    } else {
        onLog(int(hr::LogLevel::warning),
              tr("The run history is not available (%1); runs are not recorded.").arg(m_store->lastError()));
    }
    onLog(int(hr::LogLevel::info), tr("Hardware monitor: %1").arg(m_telemetry->gpuStatus()));
    m_telemetry->setIntervalMs(AppSettings::load().telemetryIntervalMs);
    m_telemetry->start();
}

QRect MainWindow::fitToScreen(const QRect& wanted, const QRect& available, const QMargins& frame) {
    if (!available.isValid()) return wanted;
    const QRect room = available.marginsRemoved(frame);  // where the client area can be
    QRect r(wanted.topLeft(), wanted.size().boundedTo(room.size()));
    if (r.right() > room.right()) r.moveRight(room.right());
    if (r.bottom() > room.bottom()) r.moveBottom(room.bottom());
    if (r.left() < room.left()) r.moveLeft(room.left());
    if (r.top() < room.top()) r.moveTop(room.top());
    return r;
}

void MainWindow::fitIntoScreen(bool move) {
    if (isMaximized() || isFullScreen()) return;  // the window system sizes those
    QScreen* s = screen();
    if (!s) return;
    // the frame the window manager draws around the window, once it is known
    const QRect frame = frameGeometry(), client = geometry();
    const QMargins margins(client.left() - frame.left(), client.top() - frame.top(), frame.right() - client.right(),
                           frame.bottom() - client.bottom());
    const QRect fitted = fitToScreen(client, s->availableGeometry(), margins);
    if (move && fitted != client) setGeometry(fitted);
    else if (fitted.size() != client.size()) resize(fitted.size());
}

void MainWindow::showEvent(QShowEvent* event) {
    // sized before it is shown (a saved geometry, a caller's resize): never larger than this screen
    if (!event->spontaneous()) {
        fitIntoScreen(testAttribute(Qt::WA_Moved));
        // and again once the window manager has framed it (its title bar counts too)
        QTimer::singleShot(0, this, [this] {
            if (QScreen* s = screen(); s && !s->availableGeometry().contains(frameGeometry())) fitIntoScreen(true);
        });
    }
    QMainWindow::showEvent(event);
}

QString MainWindow::runStorePath() {
    const QString env = qEnvironmentVariable("HEADROOM_DB");
    return env.isEmpty() ? RunStore::defaultPath() : env;
}

QWidget* MainWindow::buildMonitorTab() {
    // in a scroll area: below the charts' minimum height (a screen smaller than 1366 x 768) the tab
    // scrolls instead of making the window taller than the screen
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("monitorSplitter"));
    split->setChildrenCollapsible(false);
    split->addWidget(m_monitor);
    split->addWidget(m_hardware);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    QScrollArea* scroll = scrolled(split);
    scroll->setObjectName(QStringLiteral("monitorScroll"));
    return scroll;
}

MainWindow::~MainWindow() {
    stopAndWait();
    // QWidget's destructor deletes the children after this one has run; what they emit while they go
    // (the undo stack's cleanChanged, a tab widget's currentChanged) must not reach this window's slots
    for (QObject* child : findChildren<QObject*>()) disconnect(child, nullptr, this, nullptr);
}

void MainWindow::stopAndWait() {
    if (m_shutDown) return;
    m_shutDown = true;
    hr::set_log_sink(nullptr);
    m_runs->shutdown();  // a run in progress is stopped, waited for and filed as stopped
    m_store->flush();
    m_telemetry->stop();
}

// hr::log (core's process-wide log, from any thread) goes to the Log tab and to qDebug.
void MainWindow::installLogSink() {
    QPointer<MainWindow> self(this);
    hr::set_log_sink([self](hr::LogLevel level, const std::string& message) {
        const QString text = QString::fromStdString(message);
        qDebug().noquote() << "headroom:" << hr::log_level_name(level) << text;
        QMetaObject::invokeMethod(qApp, [self, level, text] { if (self) self->onLog(int(level), text); }, Qt::QueuedConnection);
    });
}

// ---- construction ---------------------------------------------------------------------------------
void MainWindow::buildDocks() {
    m_builder = new hrw::ModelBuilder;
    m_builderDock = new QDockWidget(tr("Model builder"), this);
    m_builderDock->setObjectName(QStringLiteral("builderDock"));
    m_builderDock->setWidget(m_builder);
    m_builderDock->setMinimumWidth(340);  // its first width: arrangeDocks()
    addDockWidget(Qt::LeftDockWidgetArea, m_builderDock);

    m_data = new DataPanel;
    m_dataDock = new QDockWidget(tr("Data"), this);
    m_dataDock->setObjectName(QStringLiteral("dataDock"));
    m_dataDock->setWidget(scrolled(m_data));
    addDockWidget(Qt::RightDockWidgetArea, m_dataDock);

    m_setup = new TrainingSetupPanel;
    m_setupDock = new QDockWidget(tr("Training setup"), this);
    m_setupDock->setObjectName(QStringLiteral("setupDock"));
    m_setupDock->setWidget(scrolled(m_setup));
    m_setupDock->setMinimumWidth(290);
    addDockWidget(Qt::RightDockWidgetArea, m_setupDock);
    tabifyDockWidget(m_dataDock, m_setupDock);
    m_setupDock->raise();
}

void MainWindow::arrangeDocks() {
    // the setup panel's own width, and its scroll bar's, so that none of its fields is cut off
    const int setupWidth = m_setup->sizeHint().width() + style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8;
    if (width() < kThreeColumnWidth) {
        // narrower than the builder, the setup and two charts side by side: the Data and Training setup
        // panels are tabs beside the Model builder, and the charts get the rest (at 1366 px, two thirds)
        tabifyDockWidget(m_builderDock, m_dataDock);
        tabifyDockWidget(m_builderDock, m_setupDock);
        m_builderDock->raise();
        resizeDocks({m_builderDock}, {qMax(setupWidth, width() * 32 / 100)}, Qt::Horizontal);
    } else {
        resizeDocks({m_builderDock, m_setupDock}, {qBound(400, width() * 27 / 100, 470), qMin(setupWidth, width() * 32 / 100)},
                    Qt::Horizontal);
    }
}

void MainWindow::buildActions() {
    m_newAction = new QAction(style()->standardIcon(QStyle::SP_FileIcon), tr("&New model"), this);
    m_newAction->setShortcut(QKeySequence::New);
    connect(m_newAction, &QAction::triggered, this, &MainWindow::newModel);
    buildModelFolderActions();  // File > Open model folder… (MainWindowModelFolder.cpp)
    m_openAction = new QAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open model…"), this);
    m_openAction->setShortcut(QKeySequence::Open);
    connect(m_openAction, &QAction::triggered, this, &MainWindow::openModelDialog);
    m_saveAction = new QAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save model"), this);
    m_saveAction->setShortcut(QKeySequence::Save);
    connect(m_saveAction, &QAction::triggered, this, [this] {
        if (m_file.isEmpty()) saveModelAs();
        else saveModel(m_file);
    });
    m_saveAsAction = new QAction(tr("Save model &as…"), this);
    m_saveAsAction->setShortcut(QKeySequence::SaveAs);
    connect(m_saveAsAction, &QAction::triggered, this, &MainWindow::saveModelAs);
    m_exportAction = new QAction(tr("&Export report…"), this);
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setToolTip(tr("Write the report of the selected or last run as HTML, PDF, JSON or CSV"));
    connect(m_exportAction, &QAction::triggered, this, [this] { exportReportDialog(0); });
    m_quitAction = new QAction(tr("&Quit"), this);
    m_quitAction->setShortcut(QKeySequence::Quit);
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);

    m_undoAction = m_builder->undoStack()->createUndoAction(this, tr("&Undo"));
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_redoAction = m_builder->undoStack()->createRedoAction(this, tr("&Redo"));
    m_redoAction->setShortcut(QKeySequence::Redo);

    m_startAction = new QAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("&Start"), this);
    m_startAction->setShortcut(Qt::Key_F5);
    m_startAction->setToolTip(tr("Start training (F5)"));
    connect(m_startAction, &QAction::triggered, this, &MainWindow::start);
    m_pauseAction = new QAction(style()->standardIcon(QStyle::SP_MediaPause), tr("&Pause"), this);
    m_pauseAction->setShortcut(Qt::Key_F6);
    m_pauseAction->setToolTip(tr("Pause between steps (F6)"));
    connect(m_pauseAction, &QAction::triggered, this, &MainWindow::pause);
    m_resumeAction = new QAction(style()->standardIcon(QStyle::SP_MediaSeekForward), tr("&Resume"), this);
    m_resumeAction->setShortcut(Qt::Key_F7);
    m_resumeAction->setToolTip(tr("Resume training (F7)"));
    connect(m_resumeAction, &QAction::triggered, this, &MainWindow::resume);
    m_stopAction = new QAction(style()->standardIcon(QStyle::SP_MediaStop), tr("S&top"), this);
    m_stopAction->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    m_stopAction->setToolTip(tr("Stop after the current step (Shift+F5)"));
    connect(m_stopAction, &QAction::triggered, this, &MainWindow::stop);

    auto* bar = addToolBar(tr("Run"));
    bar->setObjectName(QStringLiteral("runToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_newAction);
    bar->addAction(m_openAction);
    bar->addAction(m_saveAction);
    bar->addSeparator();
    bar->addAction(m_undoAction);
    bar->addAction(m_redoAction);
    bar->addSeparator();
    bar->addAction(m_startAction);
    bar->addAction(m_pauseAction);
    bar->addAction(m_resumeAction);
    bar->addAction(m_stopAction);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_newAction);
    file->addAction(m_openAction);
    file->addAction(m_openFolderAction);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addSeparator();
    file->addAction(m_saveAction);
    file->addAction(m_saveAsAction);
    file->addSeparator();
    file->addAction(m_exportAction);
    file->addSeparator();
    file->addAction(m_quitAction);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(m_undoAction);
    edit->addAction(m_redoAction);
    edit->addSeparator();
    edit->addAction(tr("&Preferences…"), this, &MainWindow::showSettings);

    QMenu* model = menuBar()->addMenu(tr("&Model"));
    m_presetMenu = model->addMenu(tr("&Presets"));
    std::vector<std::string> presets = hr::preset_names();
    presets.push_back("");  // a separator, then the language models
    for (const std::string& name : hr::language_model_preset_names()) presets.push_back(name);
    for (const std::string& name : presets) {
        if (name.empty()) {
            m_presetMenu->addSeparator();
            continue;
        }
        QAction* a = m_presetMenu->addAction(QString::fromStdString(name));
        const hr::PresetTraining training = hr::preset_training(name);
        a->setToolTip(QString::fromStdString(hr::preset_description(name)) +
                      (training.has_training ? QStringLiteral("\n") + presetTrainingText(training) : QString()));
        a->setStatusTip(a->toolTip());
        connect(a, &QAction::triggered, this, [this, name] {
            if (maybeSave()) loadPreset(QString::fromStdString(name));
        });
    }
    m_presetMenu->setToolTipsVisible(true);
    // beside the presets: a LLaMA-family model from a Hugging Face config.json (docs/transformers.md)
    QAction* hf = model->addAction(tr("From a Hugging Face &config…"));
    hf->setStatusTip(tr("Build a Llama, Mistral or Qwen2 model from its config.json (no weights are needed to plan it)"));
    connect(hf, &QAction::triggered, this, [this] {
        if (!maybeSave()) return;
        const QString path = QFileDialog::getOpenFileName(this, tr("From a Hugging Face config"), QString(),
                                                          tr("Hugging Face config (config.json *.json);;All files (*)"));
        if (!path.isEmpty()) openHfConfig(path);
    });

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(m_startAction);
    run->addAction(m_pauseAction);
    run->addAction(m_resumeAction);
    run->addAction(m_stopAction);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_builderDock->toggleViewAction());
    view->addAction(m_dataDock->toggleViewAction());
    view->addAction(m_setupDock->toggleViewAction());
    view->addSeparator();
    view->addAction(tr("Reset chart &views"), this, [this] {
        m_monitor->resetViews();
        m_hardware->resetViews();
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Headroom"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::buildStatusBar() {
    m_stateLabel = new ElidingLabel(this);
    m_stateLabel->setObjectName(QStringLiteral("stateLabel"));
    statusBar()->addWidget(m_stateLabel, 1);
    auto add = [this](QLabel*& l, const char* name) {
        l = new ElidingLabel(this);
        l->setObjectName(QString::fromLatin1(name));
        l->setContentsMargins(6, 0, 6, 0);
        statusBar()->addPermanentWidget(l);
    };
    add(m_deviceLabel, "deviceLabel");
    add(m_stepLabel, "stepLabel");
    add(m_epochLabel, "epochLabel");
    add(m_lossLabel, "lossLabel");
    add(m_speedLabel, "speedLabel");
    add(m_etaLabel, "etaLabel");
    m_deviceLabel->setText(tr("Device: %1").arg(m_setup->deviceLabel()));
    m_stepLabel->setText(tr("Step —"));
    m_epochLabel->setText(tr("Epoch —"));
    m_lossLabel->setText(tr("Loss —"));
    m_speedLabel->setText(tr("— img/s"));
    m_etaLabel->setText(tr("ETA —"));
}

// ---- model files --------------------------------------------------------------------------------------
void MainWindow::updateTitle() {
    const QString name = QString::fromStdString(m_builder->spec().name);
    const QString file = m_file.isEmpty() ? tr("unsaved") : QFileInfo(m_file).fileName();
    setWindowTitle(tr("%1 (%2)[*] — Headroom").arg(name, file));
    setWindowModified(!m_builder->undoStack()->isClean());
}

bool MainWindow::maybeSave() {
    if (m_builder->undoStack()->isClean() || !isVisible()) return true;
    const auto answer = QMessageBox::question(this, tr("Unsaved model"),
                                              tr("The model has unsaved changes. Save them first?"),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Save) return m_file.isEmpty() ? saveModelAs() : saveModel(m_file);
    return true;
}

void MainWindow::newModel() {
    if (!maybeSave()) return;
    forgetInitialWeights();
    hr::ModelSpec spec;
    spec.name = tr("untitled").toStdString();
    m_builder->resetSpec(spec);
    m_file.clear();
    m_modelSource = QStringLiteral("builder");
    m_modelChosen = true;
    updateTitle();
}

void MainWindow::loadPreset(const QString& name) {
    if (applyPreset(name, false)) m_modelChosen = true;
}

bool MainWindow::applyPreset(const QString& name, bool keepData) {
    const bool wasApplying = m_applyingPreset;
    m_applyingPreset = true;  // setTrainConfig and the Data panel's signals call followData: not now
    try {
        // A language model (and resnet20, tabular-mlp) brings its own training settings, a language model and
        // resnet20 their data too: the same defaults `headroom train --preset NAME` starts from
        // (session/RunDefaults.h). Leaving one for another image preset brings the generic ones back. Device,
        // threads, ranks and memory strategies stay; a preset that names no data keeps the window's.
        forgetInitialWeights();  // a preset's model: the opened weights are not its
        const QString previous = m_modelSource.startsWith(QLatin1String("preset:")) ? m_modelSource.mid(7) : QString();
        const hr::PresetTraining training = hr::preset_training(name.toStdString());
        hr::TrainConfig c = trainConfig();
        const hr::TrainConfig before = c;
        bool settingsChanged = false;
        if (training.has_training) {  // what default_train_config(name) puts on top of the generic settings
            hr::apply_preset_training(name.toStdString(), c);
            settingsChanged = true;
        } else if (hr::preset_training(previous.toStdString()).has_training) {
            hr::copy_training_settings(defaultTrainConfig(name.toStdString()), c);
            settingsChanged = true;
        }
        if (keepData) {  // as `headroom train --data ...` without --preset: the preset's settings, the data given
            c.data = before.data;
            c.target = before.target;
            c.tokenizer = before.tokenizer;
        }
        if (settingsChanged) setTrainConfig(c);
        // drawn for the data's samples and classes (a CIFAR-10 image, a table's columns), as the command line
        m_builder->resetSpec(hr::preset_model_for_data(name.toStdString(), c));
        m_file.clear();
        m_modelSource = QStringLiteral("preset:") + name;
        m_builder->undoStack()->setClean();
        updateTitle();
        m_applyingPreset = wasApplying;
        return true;
    } catch (const std::exception& e) {
        m_applyingPreset = wasApplying;
        QMessageBox::warning(this, tr("Preset"), QString::fromUtf8(e.what()));
        return false;
    }
}

void MainWindow::followSequenceLength() {
    m_data->setSequenceLength(m_config.seq > 0 ? m_config.seq : hr::model_sequence_length(m_builder->spec()));
}

void MainWindow::followData() {
    // a preset not edited since it was loaded follows the data's samples and classes (a CIFAR-10 image, a
    // table's columns), as `headroom train --preset NAME --data ...` draws it
    if (m_applyingPreset) return;
    if (!m_modelSource.startsWith(QLatin1String("preset:")) || !m_builder->undoStack()->isClean()) return;
    if (!m_modelChosen) {
        // no model chosen yet: the data's preset, by the command line's rule (a table is not refused at Start
        // for seed-cnn's image input)
        const std::string data = m_data->dataSpec().toStdString();
        const QString wanted = QString::fromStdString(hr::default_preset_for_data(data));
        if (wanted != m_modelSource.mid(7)) {
            if (applyPreset(wanted, true)) {
                const QString text = tr("No model was chosen, so the builder now holds %1 (Model > Presets for another).")
                                         .arg(dataPresetText(data));
                onLog(int(hr::LogLevel::info), text);
                statusBar()->showMessage(text, 10000);
            }
            return;
        }
    }
    try {
        const hr::ModelSpec drawn = hr::preset_model_for_data(m_modelSource.mid(7).toStdString(), trainConfig());
        if (hr::model_spec_to_json(drawn) == hr::model_spec_to_json(m_builder->spec())) return;
        m_builder->resetSpec(drawn);
        m_builder->undoStack()->setClean();
    } catch (const std::exception&) {
        // a preset that cannot take this data (seed-cnn on a table): the run says so when it starts
    }
}

bool MainWindow::openHfConfig(const QString& path) {
    try {
        const hr::ModelSpec spec = hr::hf_model_spec(hr::load_hf_config(path.toStdString()));
        forgetInitialWeights();  // the architecture only
        // a language model's training settings (text data, AdamW, ...): what `headroom train --model-config` uses
        hr::TrainConfig c = trainConfig();
        hr::apply_preset_training("gpt-tiny", c);
        m_applyingPreset = true;
        setTrainConfig(c);
        m_applyingPreset = false;
        m_builder->resetSpec(spec);
    } catch (const hr::Error& e) {
        m_applyingPreset = false;
        auto* box = new QMessageBox(QMessageBox::Warning, tr("From a Hugging Face config"),
                                    tr("Could not open %1:\n%2").arg(path, messageText(e.message())), QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    m_file.clear();
    m_modelSource = QStringLiteral("hf:") + path;
    m_modelChosen = true;
    m_builder->undoStack()->setClean();
    updateTitle();
    return true;
}

void MainWindow::openModelDialog() {
    if (!maybeSave()) return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), QString(),
                                                      tr("Model spec (*.json);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
}

bool MainWindow::openModel(const QString& path) {
    try {
        hr::ModelSpec spec = hr::load_model_spec(path.toStdString());
        forgetInitialWeights();
        m_builder->resetSpec(spec);
    } catch (const std::exception& e) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Open model"),
                                    tr("Could not open %1:\n%2").arg(path, QString::fromUtf8(e.what())),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    m_file = path;
    m_modelSource = path;
    m_modelChosen = true;
    m_builder->undoStack()->setClean();
    addRecent(path);
    updateTitle();
    return true;
}

bool MainWindow::saveModel(const QString& path) {
    try {
        hr::save_model_spec(m_builder->spec(), path.toStdString());
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Save model"), tr("Could not save %1:\n%2").arg(path, QString::fromUtf8(e.what())));
        return false;
    }
    m_file = path;
    m_modelSource = path;
    m_modelChosen = true;
    m_builder->undoStack()->setClean();
    addRecent(path);
    updateTitle();
    statusBar()->showMessage(tr("Saved %1").arg(path), 3000);
    return true;
}

bool MainWindow::saveModelAs() {
    QString path = QFileDialog::getSaveFileName(this, tr("Save model as"),
                                                m_file.isEmpty() ? QString::fromStdString(m_builder->spec().name) + ".json" : m_file,
                                                tr("Model spec (*.json)"));
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    return saveModel(path);
}

void MainWindow::addRecent(const QString& path) {
    if (!m_persistState) return;
    QSettings s;
    QStringList list = s.value(QStringLiteral("recentFiles")).toStringList();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxRecent) list.removeLast();
    s.setValue(QStringLiteral("recentFiles"), list);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList list = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& path : list) {
        QAction* a = m_recentMenu->addAction(QFileInfo(path).fileName());
        a->setToolTip(path);
        connect(a, &QAction::triggered, this, [this, path] {
            if (maybeSave()) openModel(path);
        });
    }
    m_recentMenu->setEnabled(!list.isEmpty());
}

// ---- configuration ------------------------------------------------------------------------------------
hr::TrainConfig MainWindow::trainConfig() const {
    hr::TrainConfig c = m_config;  // what the panels do not show (tokenizer, gradient clipping, ...)
    c.model = m_builder->spec();
    c.model_source = m_modelSource.toStdString();
    m_data->applyTo(c);
    m_setup->applyTo(c);
    return c;
}

void MainWindow::setTrainConfig(const hr::TrainConfig& c) {
    m_config = c;
    m_data->setFrom(c);
    m_setup->setFrom(c);
    followData();
    followSequenceLength();
}

// ---- running ------------------------------------------------------------------------------------------
void MainWindow::updateRunActions() {
    const bool running = m_runs->isRunning(), paused = m_runs->isPaused();
    const bool valid = m_builder->isValid() && !m_builder->spec().layers.empty();
    m_startAction->setEnabled(!running && valid);
    m_startAction->setToolTip(valid ? tr("Start training (F5)")
                                    : tr("Fix the model first: %1").arg(QString::fromStdString(m_builder->report().error)));
    // one process pauses its trainer; the ranks of a multi-rank run pause together after the same step
    m_pauseAction->setEnabled(running && !paused && m_runs->canPause());
    m_pauseAction->setToolTip(running && m_runs->isMultiRank() ? tr("Pause every rank after the same step (F6)")
                                                               : tr("Pause between steps (F6)"));
    m_resumeAction->setEnabled(running && paused);
    m_stopAction->setEnabled(running);
    m_builder->setEditable(!running);
    m_data->setEnabled(!running);
    m_setup->setEnabled(!running);
    m_newAction->setEnabled(!running);
    m_openAction->setEnabled(!running);
    m_presetMenu->setEnabled(!running);
}

QString MainWindow::outputFolder() const {
    const QString base = QFileInfo(m_store->path().isEmpty() ? runStorePath() : m_store->path()).absolutePath();
    return newRunFolder(QDir(base).filePath(QStringLiteral("runs")));  // the command line's rule too (RunDefaults.h)
}

RunOptions MainWindow::runOptions() const {
    RunOptions o;
    o.store = m_store->isOpen() ? m_store : nullptr;
    o.outDir = outputFolder();
    o.recordRefusedRuns = true;    // the Runs tab lists what was tried
    o.sampleTelemetry = false;     // the hardware monitor samples all the time; it feeds the run
    o.stepBatchMs = m_monitor->effectiveIntervalMs();  // the settings' chart refresh, or slower (MonitorView)
    o.adviseOnOutOfMemory = false; // the out-of-memory dialog asks the planner when it opens
    o.ranks = m_setup->ranks();    // several: `headroom train --ranks N` child processes (RankRelay)
    o.telemetryIntervalMs = m_telemetry->intervalMs();  // and the ranks' telemetry at the monitor's pace
    return o;
}

void MainWindow::start() {
    if (m_runs->isRunning() || !m_startAction->isEnabled()) return;
    startRun(trainConfig(), runOptions());
}

// Continue training (the Runs tab): the run's folder resumed from its newest checkpoint with its own
// configuration and the new total length, through the controller's path `headroom train --resume` takes.
void MainWindow::continueRun(qint64 runId, qint64 totalSteps, int totalEpochs) {
    const auto info = m_store->run(runId);
    if (!info) return;
    QString error;
    std::optional<ContinuePoint> point = RunController::continuePoint(info->outDir, &error);
    if (point) {
        // on the ranks that wrote the checkpoint (a multi-rank run goes on on them: RankRelay, --resume)
        const hr::TrainConfig config = RunController::continuedConfig(*point, totalSteps, totalEpochs, point->ranks);
        RunOptions options = runOptions();
        options.outDir = info->outDir;
        options.resume = true;
        options.continuesRun = runId;
        options.ranks = point->ranks;
        options.name = tr("%1 (continued)").arg(info->name);
        startRun(config, options);
        if (m_runs->isRunning() && m_tabs->currentWidget() == m_runsView) m_tabs->setCurrentWidget(m_monitorTab);
        return;
    }
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot start"), error, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::startRun(const hr::TrainConfig& config, const RunOptions& options) {
    if (!options.store)
        onLog(int(hr::LogLevel::warning), tr("This run is not recorded in the history: %1").arg(m_store->lastError()));
    QString error;
    if (!m_runs->start(config, options, &error)) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot start"), error, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    m_monitor->clear();
    m_hardware->clearRanks();  // the previous run's ranks and their machines' GPUs
    m_hardware->setRunLayout(options.ranks, config.strategy.pipeline);  // names the per-rank lines
    m_hardware->setRefreshIntervalMs(m_monitor->effectiveIntervalMs());  // a run: the Monitor's pace
    m_plan->setRunStarted(config);  // predicted, for the comparison after the run
    if (m_tabs->currentWidget() == m_plan) m_tabs->setCurrentWidget(m_monitorTab);
    m_lastResult = hr::TrainResult{};
    m_runGpu = -1;
    if (config.device.rfind("cuda:", 0) == 0) m_runGpu = QString::fromStdString(config.device.substr(5)).toInt();
    else if (config.device == "auto" && m_telemetry->gpuAvailable()) m_runGpu = 0;
    updateRunActions();
    m_stateLabel->setText(tr("Starting…"));
    m_deviceLabel->setText(tr("Device: %1").arg(m_setup->deviceLabel()));
    onLog(int(hr::LogLevel::info), tr("Starting run: %1 on %2").arg(QString::fromStdString(config.model.name),
                                                                     QString::fromStdString(config.data)));
}

void MainWindow::onRunStarted(qint64 runId, const QString&) {
    if (runId > 0) m_lastRunId = runId;
    m_runsView->setActiveRun(runId);
}

void MainWindow::onDevice(const hr::DeviceEvent& e) {
    m_deviceLabel->setText(tr("Device: %1").arg(QString::fromStdString(e.name)));
    if (e.device.rfind("cuda:", 0) == 0) m_runGpu = QString::fromStdString(e.device.substr(5)).toInt();
    else if (e.device == "cpu") m_runGpu = -1;
}

void MainWindow::pause() {
    if (!m_runs->isRunning() || m_runs->isPaused()) return;
    m_runs->pause();
    m_stateLabel->setText(tr("Paused"));
    updateRunActions();
}

void MainWindow::resume() {
    if (!m_runs->isRunning() || !m_runs->isPaused()) return;
    m_runs->resume();
    m_stateLabel->setText(tr("Training…"));
    updateRunActions();
}

void MainWindow::stop() {
    if (!m_runs->isRunning()) return;
    m_runs->stop();
    m_stateLabel->setText(tr("Stopping…"));
    m_stopAction->setEnabled(false);
}

void MainWindow::onSteps(const QVector<hr::StepEvent>& steps) {
    if (steps.isEmpty()) return;
    m_telemetry->setCurrentStep(steps.last().step);
    m_monitor->addSteps(steps);
    const hr::StepEvent& e = steps.last();
    if (!m_runs->isPaused() && m_stopAction->isEnabled()) m_stateLabel->setText(tr("Training…"));
    m_stepLabel->setText(tr("Step %1/%2").arg(e.step).arg(e.total_steps));
    m_epochLabel->setText(tr("Epoch %1").arg(e.epoch));
    m_lossLabel->setText(tr("Loss %1").arg(e.loss, 0, 'f', 4));
    m_speedLabel->setText(tr("%1 img/s").arg(e.images_per_second, 0, 'f', 0));
    m_etaLabel->setText(tr("ETA %1").arg(formatDuration(e.eta_seconds)));
}

void MainWindow::onEpoch(const hr::EpochEvent& e) {
    m_monitor->addEpoch(e);
    if (!std::isnan(e.test_accuracy))
        onLog(int(hr::LogLevel::info), tr("Epoch %1: training loss %2, test loss %3, test accuracy %4")
                                           .arg(e.epoch)
                                           .arg(e.train_loss, 0, 'f', 4)
                                           .arg(e.test_loss, 0, 'f', 4)
                                           .arg(MonitorView::formatAccuracy(e.test_accuracy)));
}

void MainWindow::onLog(int level, const QString& message) {
    static const char* names[] = {"debug", "info", "warning", "error"};
    const QString lv = level >= 0 && level < 4 ? QString::fromLatin1(names[level]) : QString::number(level);
    m_log->appendPlainText(QStringLiteral("%1  %2  %3").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), lv, message));
}

void MainWindow::onMemory(const hr::MemoryEvent& m) {
    m_monitor->addMemory(m);
    // several ranks: each rank's ledger goes on its own GPU's line, once the rank said which (telemetry)
    m_hardware->addLedger(m_telemetry->secondsNow(), m, m_runs->isMultiRank() ? -1 : m_runGpu);
}

void MainWindow::onTelemetry(const hr::TelemetrySample& s) {
    m_hardware->addSample(s);
    m_runs->addTelemetry(s);  // recorded with the run in progress, if any
}

void MainWindow::onFinished(const RunOutcome& o) {
    const hr::TrainResult& r = o.result();
    m_lastResult = r;
    m_telemetry->setCurrentStep(-1);
    m_hardware->setRefreshIntervalMs(0);  // no run: every sample
    m_hardware->clearRanks(true);         // no rank is left; their GPUs' lines stay on the charts
    m_runsView->setActiveRun(0);
    const QString status = QString::fromStdString(r.status);
    const QString error = resultError(r);
    if (AppSettings::load().desktopNotifications) m_desktop->notifyRunEnded(o.name, status, error);
    m_monitor->setResult(r);
    m_plan->setRunResult(r);
    updateRunActions();
    if (r.status == "failed" && r.out_of_memory) {
        m_stateLabel->setText(tr("Out of memory"));
        onLog(int(hr::LogLevel::error), error);
        m_plan->showOutOfMemory(r);  // the planner's configuration that fits, applied in one click
    } else if (r.status == "failed") {
        m_stateLabel->setText(tr("Failed"));
        onLog(int(hr::LogLevel::error), error);
        auto* box = new QMessageBox(QMessageBox::Critical, tr("Training failed"), error, QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("trainingErrorBox"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    } else if (r.status == "stopped") {
        m_stateLabel->setText(tr("Stopped after %1 steps").arg(r.steps));
    } else {
        m_stateLabel->setText(tr("Finished: %1 steps in %2, test accuracy %3")
                                  .arg(r.steps)
                                  .arg(formatDuration(r.seconds))
                                  .arg(MonitorView::formatAccuracy(r.test_accuracy)));
    }
    if (!r.device_name.empty()) m_deviceLabel->setText(tr("Device: %1").arg(QString::fromStdString(r.device_name)));
    if (!o.ended.writeError.empty())
        onLog(int(hr::LogLevel::warning), tr("The run's files could not be written to %1: %2")
                                              .arg(QString::fromStdString(o.ended.outDir), QString::fromStdString(o.ended.writeError)));
    else if (!o.ended.written.empty())
        onLog(int(hr::LogLevel::info), tr("Weights and run record written to %1").arg(QString::fromStdString(o.ended.outDir)));
    onLog(int(hr::LogLevel::info), tr("Run %1: %2 steps, %3 img/s")
                                       .arg(status)
                                       .arg(r.steps)
                                       .arg(r.images_per_second, 0, 'f', 0));
    emit runFinished(r);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_runs->isRunning() && m_askBeforeClose) {
        const auto answer = QMessageBox::question(this, tr("Training is running"),
                                                  tr("A run is in progress. Stop it and close Headroom?"),
                                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    if (!m_runs->isRunning() && !maybeSave()) {
        event->ignore();
        return;
    }
    stopAndWait();
    if (m_persistState) {
        QSettings s;
        s.setValue(QStringLiteral("window/geometry"), saveGeometry());
        s.setValue(QStringLiteral("window/state"), saveState());
    }
    event->accept();
}

// ---- charts, settings, about --------------------------------------------------------------------------
void MainWindow::saveChart(hrw::LiveChart* chart) {
    QString selected;
    QString path = QFileDialog::getSaveFileName(this, tr("Save chart"), chart->title() + QStringLiteral(".png"),
                                                tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &selected);
    if (path.isEmpty()) return;
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == QLatin1String("pdf")) {
        ok = chart->savePdf(path);
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator gen;
        gen.setFileName(path);
        gen.setSize(chart->size());
        gen.setViewBox(chart->rect());
        gen.setTitle(chart->title());
        QCPPainter painter;
        ok = painter.begin(&gen);
        if (ok) {
            chart->toPainter(&painter, chart->width(), chart->height());
            painter.end();
        }
    } else {
        if (suffix != QLatin1String("png")) path += QStringLiteral(".png");
        ok = chart->savePng(path, 0, 0, 2.0);
    }
    if (!ok) QMessageBox::warning(this, tr("Save chart"), tr("Could not write %1").arg(path));
    else statusBar()->showMessage(tr("Saved %1").arg(path), 3000);
}

void MainWindow::applyChartTheme() {
    m_monitor->setDark(isDarkPalette());
    m_hardware->setDark(isDarkPalette());
    m_runsView->setDark(isDarkPalette());
    m_plan->setDark(isDarkPalette());
}

void MainWindow::applyNotifySettings() { m_runs->webhook()->setSettings(savedNotifySettings()); }

// ---- run history: export and load ----------------------------------------------------------------------
bool MainWindow::exportReport(qint64 runId, const QString& path, QString* error) {
    QString err;
    m_store->flush();  // rows still buffered belong in the report
    const QString suffix = QFileInfo(path).suffix().toLower();
    const auto format = ReportWriter::formatFromName(suffix.isEmpty() ? QStringLiteral("html") : suffix);
    std::optional<ReportData> data;
    if (!format) err = tr("Unknown report format '%1': use .html, .pdf, .json or .csv").arg(suffix);
    else if (!(data = ReportWriter::load(*m_store, runId))) err = tr("There is no run %1 in the history.").arg(runId);
    else if (ReportWriter(*data).write(path, *format, &err)) return true;
    if (error) *error = err;
    return false;
}

void MainWindow::exportReportDialog(qint64 runId) {
    if (runId <= 0) {
        const QList<qint64> selected = m_runsView->selectedRunIds();
        if (m_tabs->currentWidget() == m_runsView && selected.size() == 1) runId = selected.first();
        else if (m_lastRunId > 0) runId = m_lastRunId;
        else if (selected.size() == 1) runId = selected.first();
    }
    const auto info = runId > 0 && m_store->isOpen() ? m_store->run(runId) : std::nullopt;
    if (!info) {
        QMessageBox::information(this, tr("Export report"),
                                 tr("There is no run to export yet. Start a run, or select one in the Runs tab."));
        return;
    }
    QString base = info->name;
    base.replace(QRegularExpression(QStringLiteral("[^\\w.-]+")), QStringLiteral("-"));
    const QStringList filters{tr("HTML report (*.html)"), tr("PDF document (*.pdf)"), tr("JSON data (*.json)"),
                              tr("CSV metrics (*.csv)")};
    const QStringList suffixes{QStringLiteral("html"), QStringLiteral("pdf"), QStringLiteral("json"), QStringLiteral("csv")};
    QString selected = filters.first();
    QString path = QFileDialog::getSaveFileName(this, tr("Export report of \"%1\"").arg(info->name),
                                                base + QStringLiteral(".html"), filters.join(QStringLiteral(";;")), &selected);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + suffixes.value(qMax(0, int(filters.indexOf(selected))));
    QString error;
    if (!exportReport(runId, path, &error)) {
        QMessageBox::warning(this, tr("Export report"), error);
        return;
    }
    statusBar()->showMessage(tr("Report written to %1").arg(path), 5000);
    onLog(int(hr::LogLevel::info), tr("Report of run \"%1\" written to %2").arg(info->name, path));
}

bool MainWindow::loadRun(qint64 runId) {
    if (m_runs->isRunning()) {
        QMessageBox::information(this, tr("Load into builder"), tr("Stop the run in progress first."));
        return false;
    }
    const auto info = m_store->run(runId);
    if (!info) return false;
    if (!maybeSave()) return false;
    try {
        // the stored JSON text goes straight into the config (RunStore::runConfig): it crosses once
        const hr::TrainConfig stored = m_store->runConfig(runId).value_or(hr::TrainConfig{});
        hr::TrainConfig config = info->config.isEmpty() ? trainConfig() : stored;
        if (!info->spec.isEmpty()) config.model = stored.model;
        m_builder->resetSpec(config.model);
        m_builder->undoStack()->setClean();
        m_file.clear();
        m_modelSource = QString::fromStdString(config.model_source);
        m_modelChosen = true;  // the run's model, whatever its data
        m_folder.reset();
        setTrainConfig(config);
        updateWeightsNote();
        updateTitle();
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Load into builder"),
                             tr("The run \"%1\" cannot be loaded: %2").arg(info->name, QString::fromUtf8(e.what())));
        return false;
    }
    m_builderDock->raise();
    statusBar()->showMessage(tr("Loaded the model and settings of run \"%1\"").arg(info->name), 5000);
    return true;
}

void MainWindow::showSettings() {
    const AppSettings cur = AppSettings::load();
    SettingsDialog dlg(cur, this);
    connect(&dlg, &SettingsDialog::message, this, [this](int level, const QString& text) {
        onLog(level, text);
        statusBar()->showMessage(text, 8000);
    });
    if (dlg.exec() != QDialog::Accepted) return;
    const AppSettings next = dlg.settings();
    next.save();
    m_telemetry->setIntervalMs(next.telemetryIntervalMs);
    m_monitor->setRefreshIntervalMs(1000 / next.chartRefreshHz);
    if (TrainingSession* s = m_runs->session()) s->setBatchIntervalMs(m_monitor->effectiveIntervalMs());  // a run in progress too
    applyNotifySettings();
    if (next.theme != cur.theme) {
        applyTheme(next.theme);
        applyChartTheme();
    }
}

void MainWindow::showAbout() {
    const QString text =
        tr("<h3>Headroom %1</h3><p>A workbench for training neural networks within GPU memory.</p>"
           "<table><tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
           "<tr><td>QCustomPlot</td><td>%4</td></tr>"
           "<tr><td>CUDA runtime</td><td>%5</td></tr>"
           "<tr><td>cuDNN</td><td>%6</td></tr>"
           "<tr><td>NCCL</td><td>%7</td></tr>"
           "<tr><td>GPU driver</td><td>%8</td></tr></table>")
            .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR),
                 QStringLiteral(QCUSTOMPLOT_VERSION_STR), cudaRuntimeVersion(), cudnnVersion(), ncclVersion(),
                 gpuDriverStatus().toHtmlEscaped());
    QMessageBox::about(this, tr("About Headroom"), text);
}

}  // namespace hrapp
