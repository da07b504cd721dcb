#pragma once
// TrainingSession: the session thread's half of a run (RunController is the other). It lives on its
// own QThread (moveToThread), owns the core trainer of one run at a time, and turns the trainer's
// callbacks into queued signals carrying copied values (session/RunEvent.h); step events are batched so
// receivers get at most one batch per batch interval (default 40 ms, i.e. <= 25 Hz). After training it
// predicts the run's memory with the dataset's real sample counts and writes the outputs while the
// trained model still exists: model.safetensors first, run.json last (both atomic), so a folder with
// run.json is complete. requestStop()/setPaused() are thread-safe and may be called while run() blocks.
#include <QObject>
#include <QString>
#include <QVector>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "session/RunEvent.h"
#include "train/config.h"
#include "train/trainer.h"

namespace hrapp {

struct SessionJob {
    hr::TrainConfig config;
    std::string outDir;  // "" : write nothing
    bool resume = false; // continue the run in outDir from its newest checkpoint (train/resume.h)
};

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
    // Thread-safe. Asks the trainer for a copy of the weights between its next two steps (a language
    // model's Sample panel); snapshotReady() follows from the session thread, and latestSnapshot()
    // returns the newest copy of this run (null before the first; cleared when a run starts).
    void requestSnapshot();
    std::shared_ptr<const hr::WeightsSnapshot> latestSnapshot() const;

public slots:
    // Runs one job to the end on the calling (session) thread. Every outcome, including an input the
    // trainer refuses and an exception, arrives as ended().
    void run(const hrapp::SessionJob& job);

signals:
    void started();
    void deviceChosen(const hr::DeviceEvent& device);
    void stepsReady(const QVector<hr::StepEvent>& steps);
    void epochFinished(const hr::EpochEvent& epoch);
    // an evaluation on the held-out split (every --eval-every steps, an epoch's end, the end)
    void evaluated(const hr::EvalEvent& eval);
    void memoryUpdated(const hr::MemoryEvent& memory);
    void logMessage(const hr::LogEvent& message);
    void ended(const hrapp::RunEnded& end);
    void snapshotReady(qint64 step);  // after requestSnapshot(): latestSnapshot() holds it

private:
    void flushSteps(bool force);

    mutable std::mutex m_mutex;  // guards m_trainer, m_pending and m_snapshot
    std::shared_ptr<const hr::WeightsSnapshot> m_snapshot;
    hr::Trainer* m_trainer = nullptr;
    QVector<hr::StepEvent> m_pending;
    std::chrono::steady_clock::time_point m_lastFlush;
    std::atomic<bool> m_stopRequested{false};
    std::atomic<bool> m_paused{false};
    std::atomic<bool> m_running{false};
    std::atomic<bool> m_snapshotWanted{false};  // requestSnapshot() before the run's trainer existed
    std::atomic<int> m_batchIntervalMs{40};
};

}  // namespace hrapp

Q_DECLARE_METATYPE(hrapp::SessionJob)
