#include "session/RunController.h"

#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QThread>

#include <filesystem>

#include "base/error.h"
#include "nn/model_spec.h"
#include "notify/webhook_notifier.h"
#include "session/RankRelay.h"
#include "session/RunText.h"
#include "session/TrainingSession.h"
#include "train/resume.h"
#include "store/run_store.h"
#include "telemetry/nvml_source.h"
#include "telemetry/sampler.h"

namespace hrapp {

namespace {
struct ControllerText {
    Q_DECLARE_TR_FUNCTIONS(RunController)
};

bool canCreateFilesIn(const std::filesystem::path& folder) {
    std::string probe = (folder / ".headroom-write-test-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
}
}  // namespace

int RunOutcome::exitCode() const {
    const hr::TrainResult& r = ended.result;
    if (ended.refused) return 2;
    if (r.status == "failed") return r.bad_input || r.out_of_memory ? 2 : 1;
    if (!ended.writeError.empty()) return 1;
    return r.status == "finished" ? 0 : 1;
}

RunController::RunController(QObject* parent) : QObject(parent) {
    TrainingSession::registerMetaTypes();
    qRegisterMetaType<hrapp::RunOutcome>("hrapp::RunOutcome");
    qRegisterMetaType<hrapp::RankTelemetry>("hrapp::RankTelemetry");
    m_webhook = new WebhookNotifier(this);
    connect(m_webhook, &WebhookNotifier::delivered, this, &RunController::checkSettled);
    connect(m_webhook, &WebhookNotifier::failed, this, [this](const QString&, const QString& message) {
        warn(message);
        checkSettled();
    });
    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("TrainingSession"));
    m_session = new TrainingSession;
    m_session->moveToThread(m_thread);
    // m_session is deleted by shutdown(), after the thread ended and its last events were delivered:
    // until then session() stays valid for the receivers of those events (the window's handlers).
    connect(m_session, &TrainingSession::deviceChosen, this, &RunController::onDevice);
    connect(m_session, &TrainingSession::stepsReady, this, &RunController::onSteps);
    connect(m_session, &TrainingSession::epochFinished, this, &RunController::onEpoch);
    connect(m_session, &TrainingSession::evaluated, this, &RunController::onEval);
    connect(m_session, &TrainingSession::memoryUpdated, this, &RunController::onMemory);
    connect(m_session, &TrainingSession::logMessage, this, &RunController::onLog);
    connect(m_session, &TrainingSession::ended, this, &RunController::onEnded);
    m_thread->start();
}

RunController::~RunController() { shutdown(); }

void RunController::shutdown() {
    if (!m_thread) return;
    if (m_relay) m_relay->finish(30000);  // every rank stopped and waited for; its end files the run
    m_session->requestStop();
    m_thread->quit();
    m_thread->wait();
    m_thread = nullptr;
    // The session's last queued events (its final steps and ended()) still reach the history.
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    if (m_running) {  // ended() never came: file what there is
        if (m_store && m_runId > 0) {
            m_store->finishRun(m_runId, QStringLiteral("stopped"));
            m_store->flush();
        }
        if (m_sampler) m_sampler->stop();
        m_running = false;
    }
    // Its thread has ended, so nothing runs on it any more; session() is null from here on.
    delete m_session;
    m_session = nullptr;
}

QString RunController::checkOutputFolder(const QString& dirText) {
    namespace fs = std::filesystem;
    const fs::path dir = dirText.toStdString();
    std::error_code ec;
    if (fs::exists(dir, ec)) {
        if (!fs::is_directory(dir, ec)) return ControllerText::tr("%1 is a file, not a folder; give a folder").arg(dirText);
        if (!canCreateFilesIn(dir)) return ControllerText::tr("%1 is not writable; pick a folder you can write to").arg(dirText);
        return {};
    }
    fs::path p = fs::absolute(dir, ec).parent_path();
    while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
    if (p.empty() || !fs::is_directory(p, ec) || !canCreateFilesIn(p))
        return ControllerText::tr("%1 cannot be created: %2 is not a writable folder").arg(dirText, QString::fromStdString(p.string()));
    return {};
}

// ---- resume: "Continue training" and headroom train --resume ---------------------------------------------

std::optional<ContinuePoint> RunController::continuePoint(const QString& dir, QString* error) {
    try {
        ContinuePoint p;
        p.config = hr::read_run_config(dir.toStdString());
        const hr::Checkpoint ck = hr::read_latest_checkpoint_json(dir.toStdString());  // InputError when none
        p.checkpointStep = ck.cursor.step;
        p.checkpointEpoch = ck.cursor.epoch;
        p.ranks = ck.world_size;
        return p;
    } catch (const hr::Error& e) {
        if (error) *error = messageText(e.message());
        return std::nullopt;
    }
}

hr::TrainConfig RunController::continuedConfig(const ContinuePoint& point, qint64 totalSteps, int totalEpochs, int world) {
    hr::TrainConfig c = point.config;
    if (totalSteps > 0) {
        c.steps = totalSteps;
    } else if (totalEpochs > 0) {
        c.epochs = totalEpochs;
        c.steps = 0;
    }
    c.init_from.clear();  // the checkpoint's weights, not the first run's starting point
    if (!c.strategy.rank_batch.empty() && c.strategy.rank_batch.size() != static_cast<std::size_t>(std::max(1, world)))
        c.strategy.rank_batch.clear();
    return c;
}

qint64 RunController::continuedRunOf(const RunOptions& options) const {
    if (!m_store) return 0;
    if (options.continuesRun > 0) return options.continuesRun;
    return m_store->newestRunInFolder(options.outDir);  // before the new record exists
}

bool RunController::start(const hr::TrainConfig& config, const RunOptions& options, QString* error) {
    auto refuse = [&](const QString& why) {
        if (error) *error = why;
        return false;
    };
    if (m_running || !m_thread || m_relay) return refuse(ControllerText::tr("a run is in progress; stop it first"));
    try {
        hr::validate_train_config(config);
        hr::validate_model_spec(config.model);
    } catch (const hr::Error& e) {
        return refuse(messageText(e.message()));
    }
    if (!options.outDir.isEmpty())
        if (const QString why = checkOutputFolder(options.outDir); !why.isEmpty()) return refuse(why);

    m_options = options;
    m_config = config;
    m_store = options.store;
    m_runId = 0;
    m_name = options.name.isEmpty() ? RunStore::defaultRunName(QString::fromStdString(config.model.name),
                                                               QString::fromStdString(config.data))
                                    : options.name;
    m_running = true;
    m_paused = false;
    m_awaitingSettle = false;
    if (m_store) {
        const qint64 continued = options.resume ? continuedRunOf(options) : 0;
        m_runId = m_store->beginRun(config, options.name,
                                     options.outDir.isEmpty() ? QString() : QDir(options.outDir).absolutePath());
        if (m_runId > 0 && continued > 0) m_store->setContinues(m_runId, continued);
        if (m_runId > 0) {
            if (const auto info = m_store->run(m_runId)) m_name = info->name;
        } else {
            warn(ControllerText::tr("This run is not recorded in the history: %1").arg(m_store->lastError()));
        }
    }
    if (options.sampleTelemetry) {
        QPointer<RunController> self(this);
        m_sampler = std::make_unique<hr::TelemetrySampler>(
            hr::make_default_gpu_source(),
            [self](const hr::TelemetrySample& s) {
                // on the sampler thread: hand a copy to the controller's thread
                if (self) QMetaObject::invokeMethod(self.data(), [self, s] { if (self) self->addTelemetry(s); }, Qt::QueuedConnection);
            },
            options.telemetryIntervalMs);
        m_sampler->start();
    }
    m_session->setPaused(false);
    m_session->setBatchIntervalMs(options.stepBatchMs);
    emit runStarted(m_runId, m_name);
    if (options.ranks > 1) return startRanks(config, options, error);
    if (!options.runLocally) return true;  // deliver() brings the events
    SessionJob job{config, options.outDir.toStdString(), options.resume};
    TrainingSession* s = m_session;
    QMetaObject::invokeMethod(m_session, [s, job] { s->run(job); }, Qt::QueuedConnection);
    return true;
}

void RunController::pause() {
    if (!m_running || m_paused) return;
    m_paused = true;
    if (m_relay) m_relay->setPaused(true);  // the ranks pause together after the same step
    else if (m_session) m_session->setPaused(true);
}

void RunController::resume() {
    if (!m_running || !m_paused) return;
    m_paused = false;
    if (m_relay) m_relay->setPaused(false);
    else if (m_session) m_session->setPaused(false);
}

void RunController::stop() {
    if (m_relay) return m_relay->stop();
    if (m_running && m_session) m_session->requestStop();
}

// options.ranks > 1: the ranks are child processes (session/RankRelay.h); their events come through
// deliver(), the end last, once no rank is left. A child that cannot start files the run as failed.
bool RunController::startRanks(const hr::TrainConfig& config, const RunOptions& options, QString* error) {
    m_relay = new RankRelay([this](const RunEvent& e) { deliver(e); }, this);
    m_relay->setTelemetryIntervalMs(options.telemetryIntervalMs);
    QString why;
    // resume: `headroom train --resume OUT --ranks N` with the length, threads, device and interval asked for
    if (m_relay->start(config, options.outDir, options.ranks, options.rankProgram, &why, options.resume)) return true;
    // nothing started: as if start() had refused (no record, no signal after runStarted's)
    delete m_relay;
    m_relay = nullptr;
    if (m_sampler) {
        m_sampler->stop();
        m_sampler.reset();
    }
    if (m_store && m_runId > 0) m_store->deleteRun(m_runId);
    m_runId = 0;
    m_running = false;
    if (error) *error = why;
    return false;
}

void RunController::warn(const QString& message) { onLog({hr::LogLevel::warning, message.toStdString()}); }

void RunController::addTelemetry(const hr::TelemetrySample& s) {
    if (m_running && m_store && m_runId > 0) m_store->addTelemetry(m_runId, s);
}

void RunController::deliver(const RunEvent& event) {
    struct Visitor {
        RunController* c;
        void operator()(const hr::DeviceEvent& e) const { c->onDevice(e); }
        void operator()(const hr::StepEvent& e) const { c->onSteps({e}); }
        void operator()(const hr::EpochEvent& e) const { c->onEpoch(e); }
        void operator()(const hr::EvalEvent& e) const { c->onEval(e); }
        void operator()(const hr::MemoryEvent& e) const { c->onMemory(e); }
        void operator()(const hr::LogEvent& e) const { c->onLog(e); }
        void operator()(const RunEnded& e) const { c->onEnded(e); }
        void operator()(const RankTelemetry& e) const {
            if (c->m_running) emit c->rankTelemetry(e);
        }
    };
    std::visit(Visitor{this}, event);
}

void RunController::onDevice(const hr::DeviceEvent& e) { emit deviceChosen(e); }

void RunController::onSteps(const QVector<hr::StepEvent>& steps) {
    if (steps.isEmpty()) return;
    if (m_store && m_runId > 0)
        for (const hr::StepEvent& e : steps) m_store->addStep(m_runId, e);
    if (m_sampler) m_sampler->set_current_step(steps.last().step);
    emit stepsReady(steps);
}

void RunController::onEpoch(const hr::EpochEvent& e) {
    if (m_store && m_runId > 0) m_store->addEpoch(m_runId, e);
    m_webhook->notifyEpoch(m_name, e, m_config.steps > 0 ? 0 : m_config.epochs);
    emit epochFinished(e);
}

void RunController::onEval(const hr::EvalEvent& e) { emit evaluated(e); }

void RunController::onMemory(const hr::MemoryEvent& e) {
    // the history keeps rank 0's ledger (the other ranks' reach the charts; run.json has every rank's peak)
    if (m_store && m_runId > 0 && e.rank == 0) m_store->addMemory(m_runId, e);
    emit memoryUpdated(e);
}

void RunController::onLog(const hr::LogEvent& e) { emit logMessage(e); }

void RunController::onEnded(const RunEnded& end) {
    if (!m_running) return;  // a duplicate end (a relay and the session both)
    if (m_relay) {  // a multi-rank run: its child processes are gone (RankRelay delivers the end last)
        m_relay->deleteLater();
        m_relay = nullptr;
    }
    if (m_sampler) {
        m_sampler->stop();
        QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);  // its last samples belong to the run
        m_sampler.reset();
    }
    RunOutcome o;
    o.runId = m_runId;
    o.name = m_name;
    o.config = m_config;
    o.ended = end;
    const std::vector<std::size_t> predictedRanks = end.predicted.valid ? end.predicted.rankDeviceTotals : std::vector<std::size_t>{};
    o.finalMetrics = RunStore::finalMetrics(end.result, predictedRanks);
    const hr::TrainResult& r = end.result;
    if (m_store && m_runId > 0) {
        if (end.refused && !m_options.recordRefusedRuns) {
            m_store->deleteRun(m_runId);  // bad input found before training: no trace in the history
            o.runId = 0;
        } else {
            if (end.predicted.valid) m_store->setPredictedMemory(m_runId, end.predicted.device);
            m_store->finishRun(m_runId, r, predictedRanks);
            m_store->flush();
        }
    }
    if (r.out_of_memory && m_options.adviseOnOutOfMemory) o.advice = adviseOutOfMemory(m_config, r);
    m_running = false;
    m_paused = false;
    m_runId = 0;
    m_awaitingSettle = true;
    // asynchronous; a failure is only logged
    m_webhook->notifyRunEnded(m_name, QString::fromStdString(r.status), resultError(r), o.finalMetrics);
    emit runFinished(o);
    checkSettled();
}

void RunController::checkSettled() {
    if (!m_awaitingSettle || m_webhook->inFlight() > 0) return;
    m_awaitingSettle = false;
    emit notificationsSettled();
}

}  // namespace hrapp
