#include "session/TrainingSession.h"

#include <exception>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/error.h"
#include "plan/planner.h"
#include "train/eval_weights.h"
#include "train/generate.h"
#include "train/run_record.h"

namespace hrapp {

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) { registerMetaTypes(); }

TrainingSession::~TrainingSession() = default;

void TrainingSession::registerMetaTypes() {
    qRegisterMetaType<hr::DeviceEvent>("hr::DeviceEvent");
    qRegisterMetaType<hr::StepEvent>("hr::StepEvent");
    qRegisterMetaType<hr::EpochEvent>("hr::EpochEvent");
    qRegisterMetaType<hr::EvalEvent>("hr::EvalEvent");
    qRegisterMetaType<hr::MemoryEvent>("hr::MemoryEvent");
    qRegisterMetaType<hr::LogEvent>("hr::LogEvent");
    qRegisterMetaType<hr::TrainResult>("hr::TrainResult");
    qRegisterMetaType<QVector<hr::StepEvent>>("QVector<hr::StepEvent>");
    qRegisterMetaType<hrapp::RunEnded>("hrapp::RunEnded");
    qRegisterMetaType<hrapp::SessionJob>("hrapp::SessionJob");
}

void TrainingSession::requestStop() {
    m_stopRequested = true;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_trainer) {
        m_trainer->set_paused(false);  // a paused trainer must wake up to stop
        m_trainer->request_stop();
    }
}

void TrainingSession::setPaused(bool paused) {
    m_paused = paused;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_trainer) m_trainer->set_paused(paused);
}

void TrainingSession::requestSnapshot() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_trainer) m_trainer->request_snapshot();
    else m_snapshotWanted = true;  // before the trainer exists: asked for as soon as it does
}

std::shared_ptr<const hr::WeightsSnapshot> TrainingSession::latestSnapshot() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_snapshot;
}

void TrainingSession::flushSteps(bool force) {
    QVector<hr::StepEvent> batch;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto now = std::chrono::steady_clock::now();
        if (m_pending.isEmpty()) return;
        if (!force && now - m_lastFlush < std::chrono::milliseconds(m_batchIntervalMs.load())) return;
        m_lastFlush = now;
        batch.swap(m_pending);
    }
    emit stepsReady(batch);
}

namespace {

// The planner's prediction for the run that ran, by category (the data loaders' buffers depend on the
// dataset's size, known now).
PredictedMemory predict(const hr::TrainConfig& config, const hr::TrainResult& r, hr::MemoryPlan* plan) {
    PredictedMemory p;
    try {
        *plan = hr::predict_memory(hr::plan_request(config, r.train_samples, r.test_samples));
        p.valid = true;
        p.device = plan->device;
        p.host = plan->host;
        p.deviceTotal = plan->device_total;
        p.hostTotal = plan->host_total;
        for (const hr::RankPlan& rp : plan->ranks) p.rankDeviceTotals.push_back(rp.device_total);
        // several ranks: the plan describes its largest rank, the result's ledger is rank 0's; compare like
        // with like (each rank's total is in rankDeviceTotals)
        for (const hr::RankPlan& rp : plan->ranks)
            if (plan->ranks.size() > 1 && rp.rank == 0) {
                p.device = rp.device;
                p.host = rp.host;
                p.deviceTotal = rp.device_total;
                p.hostTotal = rp.host_total;
            }
    } catch (const std::exception& e) {
        p.error = e.what();
    }
    return p;
}

}  // namespace

void TrainingSession::run(const SessionJob& job) {
    m_running = true;
    m_stopRequested = false;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_pending.clear();
        m_snapshot.reset();
        m_lastFlush = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    }
    hr::TrainCallbacks cb;
    cb.on_device = [this](const hr::DeviceEvent& e) { emit deviceChosen(e); };
    cb.on_step = [this](const hr::StepEvent& e) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_pending.push_back(e);
        }
        flushSteps(false);
    };
    cb.on_epoch = [this](const hr::EpochEvent& e) {
        flushSteps(true);  // the epoch's last steps first, so the charts stay in order
        emit epochFinished(e);
    };
    cb.on_eval = [this](const hr::EvalEvent& e) {
        flushSteps(true);  // the steps before it first, as for an epoch
        emit evaluated(e);
    };
    cb.on_memory = [this](const hr::MemoryEvent& e) { emit memoryUpdated(e); };
    cb.on_log = [this](const hr::LogEvent& e) { emit logMessage(e); };
    cb.on_snapshot = [this](std::shared_ptr<const hr::WeightsSnapshot> s) {
        if (!s) return;
        const qint64 step = s->step;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_snapshot = std::move(s);
        }
        emit snapshotReady(step);
    };

    RunEnded end;
    end.outDir = job.outDir;
    auto fail = [&](const hr::Message& m) {
        end.result.status = "failed";
        end.result.error = m.english();
        end.result.error_messages = {m};  // the front ends show it in the user's language
    };
    try {
        hr::Trainer trainer(job.config, cb);
        trainer.set_run_folder(job.outDir, job.resume);  // config.json and checkpoints from the start
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_trainer = &trainer;
            trainer.set_paused(m_paused.load());
            if (m_stopRequested.load()) trainer.request_stop();
            if (m_snapshotWanted.exchange(false)) trainer.request_snapshot();
        }
        emit started();
        try {
            end.result = trainer.run();
        } catch (...) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_trainer = nullptr;
            throw;
        }
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_trainer = nullptr;
        }
        flushSteps(true);
        const hr::TrainResult& r = end.result;
        hr::MemoryPlan plan;
        if (r.status != "failed" || r.steps > 0) end.predicted = predict(job.config, r, &plan);
        if (!job.outDir.empty() && (r.status == "finished" || r.status == "stopped")) {
            namespace fs = std::filesystem;
            try {
                fs::create_directories(job.outDir);
                const std::string weights = (fs::path(job.outDir) / "model.safetensors").string();
                trainer.save_weights(weights);
                end.written.push_back(weights);
                // --prune/--quantize: the written weights as trained and pruned/quantised, into the record
                try {
                    hr::RunLog log{[this](const hr::LogEvent& e) { emit logMessage(e); }};
                    hr::evaluate_what_if(job.config, weights, end.result, log);
                } catch (const hr::Error& e) {
                    emit logMessage({hr::LogLevel::warning, e.message().english(), e.message()});
                }
                // core's run folder writes run.json (train/run_record.h), with the prediction beside the measured
                end.written.push_back(hr::write_run_record(job.outDir, job.config, r, end.predicted.valid ? &plan : nullptr,
                                                           end.predicted.valid ? end.predicted.rankDeviceTotals
                                                                               : std::vector<std::size_t>{}));
            } catch (const std::exception& e) {
                end.writeError = e.what();
            }
        }
    } catch (const hr::Cancelled&) {
        end.result.status = "stopped";
    } catch (const hr::InputError& e) {  // refused before training: a flag, file, spec or dataset
        fail(e.message());
        end.result.bad_input = true;
        end.refused = true;
    } catch (const hr::Error& e) {
        fail(e.message());
    } catch (const std::exception& e) {
        fail(hr::Message::plain(e.what()));
    } catch (...) {
        fail(hr::Message::plain("unknown error in the trainer"));
    }
    flushSteps(true);
    m_running = false;
    m_paused = false;
    emit ended(end);
}

}  // namespace hrapp
