#include "gui/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QCheckBox>
#include <QGroupBox>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QThread>
#include <QToolBar>
#include <QUndoStack>

#include <cmath>

#include "base/error.h"
#include "plan/planner.h"
#include "train/device.h"
#include "builder/ModelBuilder.h"
#include "charts/LiveChart.h"
#include "gui/AppSettings.h"
#include "gui/DataPanel.h"
#include "gui/HardwareView.h"
#include "gui/MemoryPlanPanel.h"
#include "gui/RunsView.h"
#include "gui/TelemetryMonitor.h"
#include "notify/webhook_notifier.h"
#include "report/report_writer.h"
#include "store/run_store.h"
#include "gui/MonitorView.h"
#include "gui/RuntimeInfo.h"
#include "gui/TrainingSetupPanel.h"

namespace hrapp {

namespace {
constexpr int kMaxRecent = 8;
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
    m_tabs->addTab(buildMonitorTab(), tr("Monitor"));
    m_tabs->addTab(m_runsView, tr("Runs"));
    m_tabs->addTab(m_log, tr("Log"));
    setCentralWidget(m_tabs);

    buildDocks();
    buildActions();
    buildMenus();
    buildStatusBar();

    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("TrainingSession"));
    m_session = new TrainingSession;
    m_session->moveToThread(m_thread);
    connect(m_thread, &QThread::finished, m_session, &QObject::deleteLater);
    connect(m_session, &TrainingSession::stepsReady, this, &MainWindow::onSteps, Qt::QueuedConnection);
    connect(m_session, &TrainingSession::epochFinished, this, &MainWindow::onEpoch, Qt::QueuedConnection);
    connect(m_session, &TrainingSession::memoryUpdated, this, &MainWindow::onMemory, Qt::QueuedConnection);
    connect(m_session, &TrainingSession::logMessage, this, &MainWindow::onLog, Qt::QueuedConnection);
    connect(m_session, &TrainingSession::finished, this, &MainWindow::onFinished, Qt::QueuedConnection);
    m_thread->start();

    connect(m_monitor, &MonitorView::saveChartRequested, this, &MainWindow::saveChart);
    connect(m_hardware, &HardwareView::saveChartRequested, this, &MainWindow::saveChart);
    connect(m_runsView, &RunsView::saveChartRequested, this, &MainWindow::saveChart);
    connect(m_runsView, &RunsView::loadRequested, this, &MainWindow::loadRun);
    connect(m_runsView, &RunsView::exportRequested, this, [this](qint64 id) { exportReportDialog(id); });
    connect(m_store, &RunStore::writeFailed, this, [this](const QString& message) {
        onLog(int(hr::LogLevel::warning), tr("Run history: %1").arg(message));
    });
    connect(m_telemetry, &TelemetryMonitor::sampleReady, this, &MainWindow::onTelemetry);

    m_webhook = new WebhookNotifier(this);
    m_desktop = new DesktopNotifier(this);
    connect(m_webhook, &WebhookNotifier::failed, this, [this](const QString&, const QString& message) {
        onLog(int(hr::LogLevel::warning), message);
    });
    applyNotifySettings();
    connect(m_builder, &hrw::ModelBuilder::specChanged, this, [this] {
        updateRunActions();
        updateTitle();
    });
    connect(m_builder->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
    connect(m_data, &DataPanel::changed, this, &MainWindow::updateRunActions);

    buildMemoryPlan();
    loadPreset(QStringLiteral("seed-cnn"));
    applyChartTheme();
    updateRecentMenu();
    resize(1480, 920);
    QSettings s;
    if (m_persistState) {
        restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    }
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

QString MainWindow::runStorePath() {
    const QString env = qEnvironmentVariable("HEADROOM_DB");
    return env.isEmpty() ? RunStore::defaultPath() : env;
}

QWidget* MainWindow::buildMonitorTab() {
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("monitorSplitter"));
    split->setChildrenCollapsible(false);
    split->addWidget(m_monitor);
    split->addWidget(m_hardware);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    return split;
}

MainWindow::~MainWindow() {
    stopAndWait();
}

void MainWindow::stopAndWait() {
    if (!m_thread) return;
    m_session->requestStop();
    m_thread->quit();
    m_thread->wait();
    m_thread = nullptr;
    // The session's last queued events (its final steps and finished()) still reach the history.
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    if (m_runId > 0) {
        m_store->finishRun(m_runId, QStringLiteral("stopped"));
        m_runId = 0;
    }
    m_store->flush();
    m_telemetry->stop();
}

// ---- construction ---------------------------------------------------------------------------------
void MainWindow::buildDocks() {
    m_builder = new hrw::ModelBuilder;
    m_builderDock = new QDockWidget(tr("Model builder"), this);
    m_builderDock->setObjectName(QStringLiteral("builderDock"));
    m_builderDock->setWidget(m_builder);
    m_builderDock->setMinimumWidth(470);
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
    m_setupDock->setMinimumWidth(340);
    addDockWidget(Qt::RightDockWidgetArea, m_setupDock);
    tabifyDockWidget(m_dataDock, m_setupDock);
    m_setupDock->raise();
}

void MainWindow::buildActions() {
    m_newAction = new QAction(style()->standardIcon(QStyle::SP_FileIcon), tr("&New model"), this);
    m_newAction->setShortcut(QKeySequence::New);
    connect(m_newAction, &QAction::triggered, this, &MainWindow::newModel);
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
    for (const std::string& name : hr::preset_names()) {
        QAction* a = m_presetMenu->addAction(QString::fromStdString(name));
        a->setToolTip(QString::fromStdString(hr::preset_description(name)));
        a->setStatusTip(a->toolTip());
        connect(a, &QAction::triggered, this, [this, name] {
            if (maybeSave()) loadPreset(QString::fromStdString(name));
        });
    }
    m_presetMenu->setToolTipsVisible(true);

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
    m_stateLabel = new QLabel(this);
    m_stateLabel->setObjectName(QStringLiteral("stateLabel"));
    statusBar()->addWidget(m_stateLabel, 1);
    auto add = [this](QLabel*& l, const char* name) {
        l = new QLabel(this);
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
    hr::ModelSpec spec;
    spec.name = tr("untitled").toStdString();
    m_builder->resetSpec(spec);
    m_file.clear();
    m_modelSource = QStringLiteral("builder");
    updateTitle();
}

void MainWindow::loadPreset(const QString& name) {
    try {
        m_builder->resetSpec(hr::preset_model(name.toStdString()));
        m_file.clear();
        m_modelSource = QStringLiteral("preset:") + name;
        m_builder->undoStack()->setClean();
        updateTitle();
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Preset"), QString::fromUtf8(e.what()));
    }
}

void MainWindow::openModelDialog() {
    if (!maybeSave()) return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), QString(),
                                                      tr("Model spec (*.json);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
}

bool MainWindow::openModel(const QString& path) {
    try {
        m_builder->resetSpec(hr::load_model_spec(path.toStdString()));
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
    hr::TrainConfig c;
    c.model = m_builder->spec();
    c.model_source = m_modelSource.toStdString();
    m_data->applyTo(c);
    m_setup->applyTo(c);
    return c;
}

void MainWindow::setTrainConfig(const hr::TrainConfig& c) {
    m_data->setFrom(c);
    m_setup->setFrom(c);
}

// ---- running ------------------------------------------------------------------------------------------
void MainWindow::updateRunActions() {
    const bool valid = m_builder->isValid() && !m_builder->spec().layers.empty();
    m_startAction->setEnabled(!m_running && valid);
    m_startAction->setToolTip(valid ? tr("Start training (F5)")
                                    : tr("Fix the model first: %1").arg(QString::fromStdString(m_builder->report().error)));
    m_pauseAction->setEnabled(m_running && !m_paused);
    m_resumeAction->setEnabled(m_running && m_paused);
    m_stopAction->setEnabled(m_running);
    m_builder->setEditable(!m_running);
    m_data->setEnabled(!m_running);
    m_setup->setEnabled(!m_running);
    m_newAction->setEnabled(!m_running);
    m_openAction->setEnabled(!m_running);
    m_presetMenu->setEnabled(!m_running);
}

void MainWindow::start() {
    if (m_running || !m_startAction->isEnabled()) return;
    hr::TrainConfig config = trainConfig();
    try {
        hr::validate_train_config(config);
    } catch (const std::exception& e) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot start"), QString::fromUtf8(e.what()),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    m_monitor->clear();
    m_plan->setRunStarted(config);  // predicted, for the comparison after the run
    if (m_tabs->currentWidget() == m_plan) m_tabs->setCurrentWidget(m_monitor->parentWidget());
    m_lastResult = hr::TrainResult{};
    m_runId = m_store->isOpen() ? m_store->beginRun(config) : 0;
    if (m_runId > 0) {
        m_lastRunId = m_runId;
        const auto info = m_store->run(m_runId);
        m_runName = info ? info->name : QString::number(m_runId);
    } else {
        m_runName = QString::fromStdString(config.model.name);
        onLog(int(hr::LogLevel::warning), tr("This run is not recorded in the history: %1").arg(m_store->lastError()));
    }
    m_runsView->setActiveRun(m_runId);
    m_runConfig = config;
    m_runEpochs = config.steps > 0 ? 0 : config.epochs;
    m_runGpu = -1;
    if (config.device.rfind("cuda:", 0) == 0) m_runGpu = QString::fromStdString(config.device.substr(5)).toInt();
    else if (config.device == "auto" && m_telemetry->gpuAvailable()) m_runGpu = 0;
    m_running = true;
    m_paused = false;
    m_session->setPaused(false);
    m_session->setBatchIntervalMs(1000 / AppSettings::load().chartRefreshHz);
    updateRunActions();
    m_stateLabel->setText(tr("Starting…"));
    m_deviceLabel->setText(tr("Device: %1").arg(m_setup->deviceLabel()));
    onLog(int(hr::LogLevel::info), tr("Starting run: %1 on %2").arg(QString::fromStdString(config.model.name),
                                                                     QString::fromStdString(config.data)));
    TrainingSession* s = m_session;
    QMetaObject::invokeMethod(m_session, [s, config] { s->run(config); }, Qt::QueuedConnection);
}

void MainWindow::pause() {
    if (!m_running || m_paused) return;
    m_paused = true;
    m_session->setPaused(true);
    m_stateLabel->setText(tr("Paused"));
    updateRunActions();
}

void MainWindow::resume() {
    if (!m_running || !m_paused) return;
    m_paused = false;
    m_session->setPaused(false);
    m_stateLabel->setText(tr("Training…"));
    updateRunActions();
}

void MainWindow::stop() {
    if (!m_running) return;
    m_session->requestStop();
    m_stateLabel->setText(tr("Stopping…"));
    m_stopAction->setEnabled(false);
}

QString MainWindow::formatDuration(double s) {
    if (!std::isfinite(s) || s < 0) return QStringLiteral("—");
    const qint64 t = qint64(std::llround(s));
    if (t >= 3600) return QStringLiteral("%1:%2:%3").arg(t / 3600).arg((t / 60) % 60, 2, 10, QLatin1Char('0')).arg(t % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(t / 60).arg(t % 60, 2, 10, QLatin1Char('0'));
}

void MainWindow::onSteps(const QVector<hr::StepEvent>& steps) {
    if (steps.isEmpty()) return;
    if (m_runId > 0)
        for (const hr::StepEvent& e : steps) m_store->addStep(m_runId, e);
    m_telemetry->setCurrentStep(steps.last().step);
    m_monitor->addSteps(steps);
    const hr::StepEvent& e = steps.last();
    if (!m_paused && m_stopAction->isEnabled()) m_stateLabel->setText(tr("Training…"));
    m_stepLabel->setText(tr("Step %1/%2").arg(e.step).arg(e.total_steps));
    m_epochLabel->setText(tr("Epoch %1").arg(e.epoch));
    m_lossLabel->setText(tr("Loss %1").arg(e.loss, 0, 'f', 4));
    m_speedLabel->setText(tr("%1 img/s").arg(e.images_per_second, 0, 'f', 0));
    m_etaLabel->setText(tr("ETA %1").arg(formatDuration(e.eta_seconds)));
}

void MainWindow::onEpoch(const hr::EpochEvent& e) {
    if (m_runId > 0) m_store->addEpoch(m_runId, e);
    m_webhook->notifyEpoch(m_runName, e, m_runEpochs);
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
    if (m_runId > 0) m_store->addMemory(m_runId, m);
    m_monitor->addMemory(m);
    m_hardware->addLedger(m_telemetry->secondsNow(), m, m_runGpu);
}

void MainWindow::onTelemetry(const hr::TelemetrySample& s) {
    m_hardware->addSample(s);
    if (m_running && m_runId > 0) m_store->addTelemetry(m_runId, s);
}

void MainWindow::onFinished(const hr::TrainResult& r) {
    m_running = false;
    m_paused = false;
    m_lastResult = r;
    m_telemetry->setCurrentStep(-1);
    const qint64 runId = m_runId;
    m_runId = 0;
    m_runsView->setActiveRun(0);
    if (runId > 0) {
        // Predicted against measured, category by category (what the report sets side by side).
        if (r.status != "failed" || r.steps > 0) {
            try {
                m_store->setPredictedMemory(
                    runId, hr::predict_memory(hr::plan_request(m_runConfig, r.train_samples, r.test_samples)).device);
            } catch (const std::exception& e) {
                onLog(int(hr::LogLevel::warning), tr("No memory prediction for this run: %1").arg(QString::fromUtf8(e.what())));
            }
        }
        m_store->finishRun(runId, r);
        m_store->flush();
    }
    {
        QJsonObject metrics;
        if (runId > 0) {
            if (const auto info = m_store->run(runId)) metrics = info->finalMetrics;
        }
        const QString status = QString::fromStdString(r.status), error = QString::fromStdString(r.error);
        m_webhook->notifyRunEnded(m_runName, status, error, metrics);  // asynchronous; a failure is only logged
        if (AppSettings::load().desktopNotifications) m_desktop->notifyRunEnded(m_runName, status, error);
    }
    m_monitor->setResult(r);
    m_plan->setRunResult(r);
    if (runId > 0 && m_plan->hasRunPlan()) m_store->setPredictedMemory(runId, m_plan->runPlan().device);
    updateRunActions();
    if (r.status == "failed" && r.out_of_memory) {
        m_stateLabel->setText(tr("Out of memory"));
        onLog(int(hr::LogLevel::error), QString::fromStdString(r.error));
        m_plan->showOutOfMemory(r);  // the planner's configuration that fits, applied in one click
    } else if (r.status == "failed") {
        m_stateLabel->setText(tr("Failed"));
        onLog(int(hr::LogLevel::error), QString::fromStdString(r.error));
        auto* box = new QMessageBox(QMessageBox::Critical, tr("Training failed"), QString::fromStdString(r.error),
                                    QMessageBox::Ok, this);
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
    onLog(int(hr::LogLevel::info), tr("Run %1: %2 steps, %3 img/s")
                                       .arg(QString::fromStdString(r.status))
                                       .arg(r.steps)
                                       .arg(r.images_per_second, 0, 'f', 0));
    emit runFinished(r);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_running && m_askBeforeClose) {
        const auto answer = QMessageBox::question(this, tr("Training is running"),
                                                  tr("A run is in progress. Stop it and close Headroom?"),
                                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    if (!m_running && !maybeSave()) {
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

void MainWindow::applyNotifySettings() {
    const AppSettings a = AppSettings::load();
    WebhookNotifier::Settings s;
    s.url = a.webhookUrl.isEmpty() ? QUrl() : QUrl::fromUserInput(a.webhookUrl);
    s.format = WebhookNotifier::templateFromName(a.webhookTemplate).value_or(WebhookNotifier::Template::Generic);
    s.onFinished = a.notifyOnFinished;
    s.onFailed = a.notifyOnFailed;
    s.everyEpochs = a.notifyEveryEpochs;
    m_webhook->setSettings(s);
}

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
    if (m_running) {
        QMessageBox::information(this, tr("Load into builder"), tr("Stop the run in progress first."));
        return false;
    }
    const auto info = m_store->run(runId);
    if (!info) return false;
    if (!maybeSave()) return false;
    try {
        const auto toJson = [](const QJsonObject& o) {
            return nlohmann::json::parse(QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString());
        };
        hr::TrainConfig config = info->config.isEmpty() ? trainConfig() : hr::train_config_from_json(toJson(info->config));
        if (!info->spec.isEmpty()) config.model = hr::model_spec_from_json(toJson(info->spec));
        m_builder->resetSpec(config.model);
        m_builder->undoStack()->setClean();
        m_file.clear();
        m_modelSource = QString::fromStdString(config.model_source);
        setTrainConfig(config);
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
    AppSettings cur = AppSettings::load();
    QDialog dlg(this);
    dlg.setWindowTitle(tr("Preferences"));
    auto* form = new QFormLayout(&dlg);
    auto* lang = new QComboBox(&dlg);
    lang->addItem(tr("System"), "system");
    lang->addItem(QStringLiteral("English"), "en");
    lang->addItem(QStringLiteral("简体中文"), "zh_CN");
    lang->setCurrentIndex(qMax(0, lang->findData(cur.language)));
    form->addRow(tr("Language"), lang);
    auto* note = new QLabel(tr("A new language takes effect when Headroom restarts."), &dlg);
    note->setWordWrap(true);
    form->addRow(QString(), note);
    auto* theme = new QComboBox(&dlg);
    theme->addItem(tr("System"), "system");
    theme->addItem(tr("Light"), "light");
    theme->addItem(tr("Dark"), "dark");
    theme->setCurrentIndex(qMax(0, theme->findData(cur.theme)));
    form->addRow(tr("Theme"), theme);
    auto* rate = new QSpinBox(&dlg);
    rate->setRange(1, 25);
    rate->setSuffix(tr(" Hz"));
    rate->setValue(cur.chartRefreshHz);
    rate->setToolTip(tr("How often the charts redraw during a run (at most 25 times a second)"));
    form->addRow(tr("Chart refresh rate"), rate);
    auto* interval = new QSpinBox(&dlg);
    interval->setObjectName(QStringLiteral("telemetryInterval"));
    interval->setRange(100, 10000);
    interval->setSingleStep(100);
    interval->setSuffix(tr(" ms"));
    interval->setValue(cur.telemetryIntervalMs);
    interval->setToolTip(tr("How often the hardware monitor reads GPU and host figures (100 ms to 10 s)"));
    form->addRow(tr("Hardware sampling interval"), interval);

    auto* notify = new QGroupBox(tr("Notifications"), &dlg);
    auto* nf = new QFormLayout(notify);
    auto* url = new QLineEdit(cur.webhookUrl, notify);
    url->setObjectName(QStringLiteral("webhookUrl"));
    url->setPlaceholderText(tr("https://… (empty: no webhook)"));
    url->setClearButtonEnabled(true);
    url->setMinimumWidth(360);
    nf->addRow(tr("Webhook URL"), url);
    auto* format = new QComboBox(notify);
    format->addItem(tr("Generic JSON"), "generic");
    format->addItem(tr("WeCom (企业微信)"), "wecom");
    format->addItem(tr("DingTalk (钉钉)"), "dingtalk");
    format->addItem(tr("Feishu / Lark (飞书)"), "feishu");
    format->addItem(tr("Slack"), "slack");
    format->setCurrentIndex(qMax(0, format->findData(cur.webhookTemplate)));
    nf->addRow(tr("Message format"), format);
    auto* onFinished = new QCheckBox(tr("When a run finishes or is stopped"), notify);
    onFinished->setChecked(cur.notifyOnFinished);
    auto* onFailed = new QCheckBox(tr("When a run fails"), notify);
    onFailed->setChecked(cur.notifyOnFailed);
    auto* every = new QSpinBox(notify);
    every->setRange(0, 100000);
    every->setSpecialValueText(tr("never"));
    every->setPrefix(tr("every "));
    every->setSuffix(tr(" epochs"));
    every->setValue(cur.notifyEveryEpochs);
    nf->addRow(tr("Send"), onFinished);
    nf->addRow(QString(), onFailed);
    nf->addRow(tr("Progress"), every);
    auto* testButton = new QPushButton(tr("Send a test message"), notify);
    nf->addRow(QString(), testButton);
    connect(testButton, &QPushButton::clicked, &dlg, [this, url, format] {
        WebhookNotifier::Settings s = m_webhook->settings();
        s.url = QUrl::fromUserInput(url->text().trimmed());
        s.format = WebhookNotifier::templateFromName(format->currentData().toString()).value_or(WebhookNotifier::Template::Generic);
        auto* probe = new WebhookNotifier(this);
        probe->setSettings(s);
        connect(probe, &WebhookNotifier::delivered, probe, [this, probe](const QString&, int http) {
            onLog(int(hr::LogLevel::info), tr("Webhook test message delivered (HTTP %1)").arg(http));
            statusBar()->showMessage(tr("Webhook test message delivered"), 5000);
            probe->deleteLater();
        });
        connect(probe, &WebhookNotifier::failed, probe, [this, probe](const QString&, const QString& message) {
            onLog(int(hr::LogLevel::warning), message);
            statusBar()->showMessage(message, 8000);
            probe->deleteLater();
        });
        if (!probe->send(QStringLiteral("test"), tr("Headroom: test message"),
                         tr("Notifications from Headroom arrive here."), QJsonObject{}))
            probe->deleteLater();
    });
    auto* desktop = new QCheckBox(tr("Show a desktop notification when a run ends"), notify);
    desktop->setChecked(cur.desktopNotifications);
    desktop->setEnabled(DesktopNotifier::available());
    if (!DesktopNotifier::available()) desktop->setToolTip(tr("This desktop has no system tray for notifications"));
    nf->addRow(QString(), desktop);
    form->addRow(notify);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dlg);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dlg, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dlg, &QDialog::reject);
    if (dlg.exec() != QDialog::Accepted) return;
    AppSettings next = cur;
    next.language = lang->currentData().toString();
    next.theme = theme->currentData().toString();
    next.chartRefreshHz = rate->value();
    next.telemetryIntervalMs = interval->value();
    next.webhookUrl = url->text().trimmed();
    next.webhookTemplate = format->currentData().toString();
    next.notifyOnFinished = onFinished->isChecked();
    next.notifyOnFailed = onFailed->isChecked();
    next.notifyEveryEpochs = every->value();
    next.desktopNotifications = desktop->isChecked();
    next.save();
    m_telemetry->setIntervalMs(next.telemetryIntervalMs);
    applyNotifySettings();
    if (next.theme != cur.theme) {
        applyTheme(next.theme);
        applyChartTheme();
    }
    m_session->setBatchIntervalMs(1000 / next.chartRefreshHz);
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
