#include "session/TrainingSession.h"

#include <exception>

#include "base/error.h"

namespace hrapp {

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) { registerMetaTypes(); }

TrainingSession::~TrainingSession() = default;

void TrainingSession::registerMetaTypes() {
    qRegisterMetaType<hr::StepEvent>("hr::StepEvent");
    qRegisterMetaType<hr::EpochEvent>("hr::EpochEvent");
    qRegisterMetaType<hr::MemoryEvent>("hr::MemoryEvent");
    qRegisterMetaType<hr::TrainResult>("hr::TrainResult");
    qRegisterMetaType<QVector<hr::StepEvent>>("QVector<hr::StepEvent>");
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

void TrainingSession::run(const hr::TrainConfig& config) {
    m_running = true;
    m_stopRequested = false;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_pending.clear();
        m_lastFlush = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    }
    hr::TrainCallbacks cb;
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
    cb.on_memory = [this](const hr::MemoryEvent& e) { emit memoryUpdated(e); };
    cb.on_log = [this](const hr::LogEvent& e) {
        emit logMessage(static_cast<int>(e.level), QString::fromStdString(e.message));
    };

    hr::TrainResult result;
    try {
        hr::Trainer trainer(config, cb);
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_trainer = &trainer;
            trainer.set_paused(m_paused.load());
            if (m_stopRequested.load()) trainer.request_stop();
        }
        emit started();
        try {
            result = trainer.run();
        } catch (...) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_trainer = nullptr;
            throw;
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        m_trainer = nullptr;
    } catch (const hr::Cancelled&) {
        result.status = "stopped";
    } catch (const std::exception& e) {
        result.status = "failed";
        result.error = e.what();
    } catch (...) {
        result.status = "failed";
        result.error = "unknown error in the trainer";
    }
    flushSteps(true);
    m_running = false;
    m_paused = false;
    emit finished(result);
}

}  // namespace hrapp
