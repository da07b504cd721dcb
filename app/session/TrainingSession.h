#pragma once
// TrainingSession: owns the core trainer of one run on its own QThread (moveToThread). Core callbacks
// arrive on that thread and leave as queued signals carrying copied values; step events are batched
// so the GUI receives at most one batch per batchIntervalMs (default 40 ms, i.e. <= 25 Hz).
// requestStop()/setPaused() are thread-safe and may be called from the GUI thread while run() blocks.
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QVector>

#include <atomic>
#include <chrono>
#include <mutex>

#include "train/config.h"
#include "train/events.h"
#include "train/trainer.h"

Q_DECLARE_METATYPE(hr::StepEvent)
Q_DECLARE_METATYPE(hr::EpochEvent)
Q_DECLARE_METATYPE(hr::MemoryEvent)
Q_DECLARE_METATYPE(hr::TrainResult)

namespace hrapp {

class TrainingSession : public QObject {
    Q_OBJECT
public:
    explicit TrainingSession(QObject* parent = nullptr);
    ~TrainingSession() override;

    static void registerMetaTypes();

    // Thread-safe.
    void requestStop();
    void setPaused(bool paused);
    bool isPaused() const { return m_paused.load(); }
    bool isRunning() const { return m_running.load(); }
    void setBatchIntervalMs(int ms) { m_batchIntervalMs.store(qMax(1, ms)); }

public slots:
    // Runs one training run to the end on the calling (session) thread. Errors, including exceptions
    // thrown before training, arrive as finished() with status "failed".
    void run(const hr::TrainConfig& config);

signals:
    void started();
    void stepsReady(const QVector<hr::StepEvent>& steps);
    void epochFinished(const hr::EpochEvent& epoch);
    void memoryUpdated(const hr::MemoryEvent& memory);
    void logMessage(int level, const QString& message);
    void finished(const hr::TrainResult& result);

private:
    void flushSteps(bool force);

    std::mutex m_mutex;            // guards m_trainer and m_pending
    hr::Trainer* m_trainer = nullptr;
    QVector<hr::StepEvent> m_pending;
    std::chrono::steady_clock::time_point m_lastFlush;
    std::atomic<bool> m_stopRequested{false};
    std::atomic<bool> m_paused{false};
    std::atomic<bool> m_running{false};
    std::atomic<int> m_batchIntervalMs{40};
};

}  // namespace hrapp
