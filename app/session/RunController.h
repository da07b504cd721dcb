#pragma once
// RunController: the lifecycle of one training run, the same for `headroom train` and the window.
//
// Given a TrainConfig and RunOptions, start() checks the config (nothing is recorded or written for a
// config that does not validate), records the run in the history (RunStore), starts a telemetry
// sampler when asked, and hands the run to the session thread (TrainingSession: the trainer, the
// prediction with the real sample counts, the outputs written atomically, model.safetensors first and
// run.json last). Events come back as values (session/RunEvent.h): the controller records steps,
// epochs, memory and telemetry, sends the webhook messages (app/notify, with the settings the front
// end gave webhook()), and re-emits every event, which the CLI prints and the window draws. At the
// end it files the result and the prediction, turns an out-of-memory into one OutOfMemoryAdvice, and
// emits runFinished() with a RunOutcome; notificationsSettled() follows once no webhook message is in
// flight.
//
// Events may also come from elsewhere: deliver() takes a RunEvent (e.g. parsed from a rank's JSON
// line) and handles it exactly as one from the own session thread, so a multi-rank run's relay needs
// no second path. One controller runs one run at a time; it lives on the thread that created it (the
// GUI or main thread, which must run an event loop), and so does the RunStore it is given.
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QVector>

#include <memory>
#include <optional>

#include "session/OutOfMemoryAdvice.h"
#include "session/RunDefaults.h"
#include "session/RunEvent.h"
#include "telemetry/telemetry.h"
#include "train/config.h"

class QThread;

namespace hr {
class TelemetrySampler;
}

namespace hrapp {

class RankRelay;
class RunStore;
class TrainingSession;
class WebhookNotifier;

struct RunOptions {
    QString name;                    // the run's name in the history; "" : "<model> on <data>"
    QString outDir;                  // model.safetensors and run.json go here; "" : nothing is written
    RunStore* store = nullptr;       // the history (not owned); null: the run is not recorded
    // A run whose input the trainer refuses (a dataset that is not there, ...) stays in the history as
    // failed when true (the window: the Runs tab lists what was tried); when false it leaves no trace
    // (the CLI: exit code 2 and nothing written).
    bool recordRefusedRuns = false;
    // Sample telemetry (NVML, /proc) for the run with a sampler of its own; false: the front end feeds
    // addTelemetry() (the window's always-on hardware monitor).
    bool sampleTelemetry = true;
    // the sampler's interval; with ranks > 1 also the ranks' own telemetry's (RankTelemetry)
    int telemetryIntervalMs = 500;
    int stepBatchMs = 40;            // steps reach stepsReady() at most every this many milliseconds
    // Compute the out-of-memory advice into the outcome (a planner search); the window's dialog asks
    // adviseOutOfMemory() itself when it opens.
    bool adviseOnOutOfMemory = true;
    // Train on the own session thread; false: the run's events arrive through deliver() (a relay of
    // another process's JSON lines, e.g. rank 0 of a multi-rank run), ending with its RunEnded.
    bool runLocally = true;
    // Continue the run in outDir from its newest checkpoint (headroom train --resume, "Continue
    // training"); the config is the run's own (config.json) with its length, threads or device changed.
    bool resume = false;
    // With resume: the history's record of the run being continued, linked from the new record
    // (RunInfo::continuesRunId). 0: the newest run recorded with outDir, if any.
    qint64 continuesRun = 0;
    // Several ranks (issue 10, docs/distributed.md "From the window"): ranks > 1 runs the config as
    // `headroom train --config ... --ranks N` child processes (session/RankRelay.h) whose events arrive
    // through deliver(); the history record is this controller's, the run folder rank 0's. rankProgram:
    // the headroom binary ("" : this program).
    int ranks = 1;
    QString rankProgram;
};

// What "Continue training" and `headroom train --resume DIR` start from: the run's own configuration
// (DIR/config.json) and where its newest checkpoint stands.
struct ContinuePoint {
    hr::TrainConfig config;     // as the run was last started (its length included)
    qint64 checkpointStep = 0;  // optimizer steps the newest checkpoint holds
    int checkpointEpoch = 1;    // the epoch it was written in
    int ranks = 1;              // the ranks that wrote it (a multi-rank run goes on on as many: RankRelay)
};

struct RunOutcome {
    qint64 runId = 0;                // 0: not recorded
    QString name;
    hr::TrainConfig config;
    RunEnded ended;                  // the trainer's result, the prediction, the files written
    std::optional<OutOfMemoryAdvice> advice;  // out of memory (with adviseOnOutOfMemory)
    QJsonObject finalMetrics;        // as recorded and as notified (RunStore::finalMetrics)

    const hr::TrainResult& result() const { return ended.result; }
    // 0 finished; 1 failed, stopped, or the outputs could not be written; 2 bad input (refused, a
    // diverging loss) or out of memory.
    int exitCode() const;
};

class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;  // shutdown()

    // Why `dir` cannot take a run's outputs ("" when it can): it is a file, or neither it nor its
    // nearest existing parent is a folder one can create files in (probed, and the probe removed).
    static QString checkOutputFolder(const QString& dir);

    // Reads the run folder `dir` for a resume: its config.json and its newest complete checkpoint.
    // nullopt with *error (what is wrong and what to do) when either is missing or damaged.
    static std::optional<ContinuePoint> continuePoint(const QString& dir, QString* error = nullptr);
    // The configuration a continued run trains with, the same for `headroom train --resume` and the Runs
    // tab's Continue: the run's own, with a new total length (totalSteps > 0, or totalEpochs > 0 measured
    // in epochs; neither: its own length), from the checkpoint's weights (not the first run's --init-from),
    // on `world` ranks (another number than the run's per-rank batches is split evenly again).
    static hr::TrainConfig continuedConfig(const ContinuePoint& point, qint64 totalSteps, int totalEpochs, int world);

    // Starts a run; false (with *error) when one is running, or the config or the output folder is
    // not usable: then nothing is recorded or written and no signal follows.
    bool start(const hr::TrainConfig& config, const RunOptions& options, QString* error = nullptr);
    void pause();
    void resume();
    void stop();      // takes effect between steps; the outputs so far are written
    void shutdown();  // stop, wait for the session thread and file the run (closing the window)

    bool isRunning() const { return m_running; }
    bool isPaused() const { return m_paused; }
    // One process pauses its trainer; a multi-rank run's ranks pause together (RankRelay::setPaused).
    bool canPause() const { return m_running; }
    bool isMultiRank() const { return m_relay != nullptr; }
    RankRelay* relay() const { return m_relay; }  // the multi-rank run's child processes (null: none)
    qint64 runId() const { return m_runId; }          // of the run in progress (0: none, or not recorded)
    QString runName() const { return m_name; }
    const hr::TrainConfig& config() const { return m_config; }

    WebhookNotifier* webhook() const { return m_webhook; }  // its settings are the front end's
    TrainingSession* session() const { return m_session; }  // null after shutdown()

    // A telemetry sample from the front end's monitor: recorded with the run in progress.
    void addTelemetry(const hr::TelemetrySample& sample);
    // An event from elsewhere (a relaying process), handled exactly like the session's own.
    void deliver(const hrapp::RunEvent& event);

signals:
    void runStarted(qint64 runId, const QString& name);
    void deviceChosen(const hr::DeviceEvent& device);
    void stepsReady(const QVector<hr::StepEvent>& steps);
    void epochFinished(const hr::EpochEvent& epoch);
    void evaluated(const hr::EvalEvent& eval);  // every evaluation (TrainingSession::evaluated)
    void memoryUpdated(const hr::MemoryEvent& memory);
    void logMessage(const hr::LogEvent& message);
    // A multi-rank run's rank telling what it sees of its machine (RankTelemetry; only through deliver()).
    void rankTelemetry(const hrapp::RankTelemetry& telemetry);
    void runFinished(const hrapp::RunOutcome& outcome);
    void notificationsSettled();  // after runFinished: no webhook message of the run is in flight

private:
    void onDevice(const hr::DeviceEvent& e);
    void onSteps(const QVector<hr::StepEvent>& steps);
    void onEpoch(const hr::EpochEvent& e);
    void onEval(const hr::EvalEvent& e);
    void onMemory(const hr::MemoryEvent& e);
    void onLog(const hr::LogEvent& e);
    void onEnded(const RunEnded& end);
    void checkSettled();
    qint64 continuedRunOf(const RunOptions& options) const;  // the record a resume links to (0: none)
    void warn(const QString& message);
    bool startRanks(const hr::TrainConfig& config, const RunOptions& options, QString* error);

    QThread* m_thread = nullptr;
    TrainingSession* m_session = nullptr;
    RankRelay* m_relay = nullptr;  // a multi-rank run in progress (options.ranks > 1)
    WebhookNotifier* m_webhook = nullptr;
    std::unique_ptr<hr::TelemetrySampler> m_sampler;
    QPointer<RunStore> m_store;
    RunOptions m_options;
    hr::TrainConfig m_config;
    qint64 m_runId = 0;
    QString m_name;
    bool m_running = false;
    bool m_paused = false;
    bool m_awaitingSettle = false;
};

}  // namespace hrapp

Q_DECLARE_METATYPE(hrapp::RunOutcome)
