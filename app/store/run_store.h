#pragma once
// RunStore: the run history in SQLite (Qt Sql, QSQLITE). One database file, by default
// AppDataLocation/runs.sqlite; WAL mode; per-step, telemetry and memory rows are buffered and written
// in one transaction every batchSize() rows or flushIntervalMs() (and at finishRun/flush/close).
// Runs left 'running' by a process that is gone are marked 'failed' on open, keeping their rows.
// Use a RunStore from the thread that created it (the GUI thread); the session thread's events reach
// it through queued signals.
#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVariant>
#include <QVector>

#include <optional>

#include "memory/category.h"
#include "memory/ledger.h"
#include "telemetry/telemetry.h"
#include "train/events.h"

namespace hr {
struct TrainConfig;
struct TrainResult;
}  // namespace hr

namespace hrapp {

struct RunInfo {
    qint64 id = 0;
    QString name;
    QString status;        // running | finished | failed | stopped
    QDateTime created;     // UTC
    QDateTime finished;    // invalid while running
    QString device;
    QString error;
    QString modelName;     // from the spec
    QString data;          // from the config
    QString outDir;        // the run's output folder ("" : not written, or recorded before it was kept)
    QJsonObject config;    // TrainConfig JSON (train_config_to_json)
    QJsonObject spec;      // ModelSpec JSON (model_spec_to_json)
    QJsonObject finalMetrics;
    qint64 stepCount = 0;  // rows in step_metrics
    qint64 continuesRunId = 0;     // the run this one continues from its checkpoint (0: none)
    QList<qint64> continuedBy;     // the runs that continue this one, oldest first
};

struct RunFilter {
    QString text;          // case-insensitive substring of name, model name, data or device
    QStringList statuses;  // empty: all
    QDateTime since;       // invalid: no bound
    QDateTime until;
    int limit = 0;         // 0: no limit; newest first
};

struct StepRow {
    qint64 step = 0;
    int epoch = 0;
    double loss = 0, accuracy = 0, lr = 0, stepSeconds = 0, imagesPerSecond = 0, elapsedSeconds = 0,
           lossScale = 0;
    bool skipped = false;
};

struct EpochRow {
    int epoch = 0;
    qint64 step = 0;
    double trainLoss = 0, trainAccuracy = 0, testLoss = qQNaN(), testAccuracy = qQNaN(), seconds = 0,
           imagesPerSecond = 0;
};

// One row per GPU per sample (gpu = -1: a host-only sample). NaN / -1 where not known.
struct TelemetryRow {
    double t = 0;          // seconds since the run's first telemetry sample
    qint64 step = -1;
    int gpu = -1;
    QString gpuName;
    double cpuUtilization = qQNaN();
    qint64 ramUsed = -1, ramTotal = -1, processRss = -1;
    qint64 gpuMemoryUsed = -1, gpuMemoryTotal = -1;
    double powerWatts = qQNaN(), powerLimitWatts = qQNaN(), gpuUtilization = qQNaN(),
           memoryUtilization = qQNaN(), temperatureC = qQNaN(), smClockMhz = qQNaN(),
           energyJoules = qQNaN();
};

// Predicted and measured bytes of one memory category (-1: not known).
struct MemoryCategoryRow {
    QString category;       // hr::category_name
    qint64 predicted = -1;  // from the planner
    qint64 peak = -1;       // the category's own maximum
    qint64 atPeak = -1;     // its share when the total was highest
};

struct MemorySampleRow {
    double t = 0;
    qint64 step = -1;
    qint64 liveTotal = 0, reservedFree = 0, deviceCapacity = 0;
};

// x/y of one metric of one run, for overlaying runs in one chart.
struct RunSeries {
    qint64 runId = 0;
    QString runName;
    QVector<double> x, y;
};

class RunStore : public QObject {
    Q_OBJECT
public:
    static constexpr int kSchemaVersion = 3;  // v3: runs.continues
    // How long a statement waits for another process's lock on the history before it fails (SQLite's
    // busy timeout): far longer than any transaction of the window or a run holds one.
    static constexpr int kBusyTimeoutMs = 30000;

    explicit RunStore(QObject* parent = nullptr);
    ~RunStore() override;  // flushes and closes

    // AppDataLocation/runs.sqlite (the folder is created by open()).
    static QString defaultPath();
    // Opens (creating or migrating) the database; path empty: defaultPath(). False with lastError().
    // Safe when several processes open one file at once, new or at an older schema: its creation and
    // upgrade are one transaction under SQLite's write lock, the version read inside it (run_store.cpp).
    bool open(const QString& path = QString());
    void close();
    bool isOpen() const;
    QString path() const { return m_path; }
    QString lastError() const { return m_lastError; }
    int schemaVersion() const;     // of the open database
    int recoveredRuns() const { return m_recovered; }  // runs marked failed by the last open()

    // ---- writing a run ---------------------------------------------------------------------------
    // Returns the new run id, or 0 with lastError(). name empty: "<model> on <data>".
    qint64 beginRun(const QJsonObject& config, const QJsonObject& spec, const QString& device,
                    const QString& name = QString());
    // outDir: the run's output folder, kept in the stored config as "out_dir" (RunInfo::outDir).
    qint64 beginRun(const hr::TrainConfig& config, const QString& name = QString(),
                    const QString& outDir = QString());  // run_store_config.cpp
    // The name a run gets when none is given: "<model> on <data>".
    static QString defaultRunName(const QString& modelName, const QString& data);
    // The final metrics finishRun(TrainResult) records (test_accuracy, seconds, peak_bytes, ...; NaN as
    // null): what the history, the report and the webhook message show. A run on several ranks adds
    // "distributed": world_size, stage, rank_batch, per rank the predicted (predictedRankTotals, the
    // planner's device totals; null when none), measured (the ledger's) and resident (the OS's) peaks,
    // and the communication bytes and seconds per step (docs/run-json.md, "distributed").
    static QJsonObject finalMetrics(const hr::TrainResult& result,
                                    const std::vector<std::size_t>& predictedRankTotals = {});
    void addStep(qint64 runId, const hr::StepEvent& e);
    void addEpoch(qint64 runId, const hr::EpochEvent& e);
    void addTelemetry(qint64 runId, const hr::TelemetrySample& s);
    void addMemory(qint64 runId, const hr::MemoryEvent& e);
    void setPredictedMemory(qint64 runId, const hr::CategoryBytes& predicted);
    void finishRun(qint64 runId, const hr::TrainResult& result, const std::vector<std::size_t>& predictedRankTotals = {});
    // status: finished | stopped | failed (for runs ended without a TrainResult).
    void finishRun(qint64 runId, const QString& status, const QString& error = QString(),
                   const QJsonObject& finalMetrics = QJsonObject());

    // ---- batching ----------------------------------------------------------------------------------
    void setBatchSize(int rows) { m_batchSize = qMax(1, rows); }
    int batchSize() const { return m_batchSize; }
    void setFlushIntervalMs(int ms) { m_flushIntervalMs = qMax(1, ms); }
    int flushIntervalMs() const { return m_flushIntervalMs; }
    bool flush();                                  // writes everything buffered; false on a DB error
    int pendingRows() const;
    qint64 transactionsCommitted() const { return m_commits; }

    // ---- reading -----------------------------------------------------------------------------------
    QVector<RunInfo> listRuns(const RunFilter& filter = RunFilter()) const;
    std::optional<RunInfo> run(qint64 runId) const;
    // A stored run's configuration with its model, parsed straight from the stored JSON text
    // (run_store_config.cpp). nullopt: no such run; hr::InputError: the stored JSON is not a config.
    std::optional<hr::TrainConfig> runConfig(qint64 runId) const;
    bool renameRun(qint64 runId, const QString& name);
    // Links a run to the run it continues (Continue training, --resume); 0 clears the link.
    bool setContinues(qint64 runId, qint64 continuedRunId);
    // The newest run recorded with this output folder (compared as absolute, clean paths); 0: none.
    qint64 newestRunInFolder(const QString& outDir) const;
    bool deleteRun(qint64 runId);
    QVector<StepRow> steps(qint64 runId) const;
    QVector<EpochRow> epochs(qint64 runId) const;
    QVector<TelemetryRow> telemetry(qint64 runId) const;
    QVector<MemoryCategoryRow> memory(qint64 runId) const;  // every category, in ledger order
    QVector<MemorySampleRow> memorySamples(qint64 runId) const;
    // metric: loss | accuracy | lr | images_per_second | step_seconds (x = step);
    //         train_loss | train_accuracy | test_loss | test_accuracy | epoch_images_per_second (x = epoch)
    QVector<RunSeries> overlay(const QList<qint64>& runIds, const QString& metric) const;
    static QStringList overlayMetrics();

signals:
    void runsChanged();          // a run was added, finished, renamed or deleted
    void writeFailed(const QString& message);

private:
    struct PendingStep { qint64 run; hr::StepEvent e; };
    struct PendingTelemetry { qint64 run; double t; hr::TelemetrySample s; };
    struct PendingMemory { qint64 run; hr::MemoryEvent e; };
    struct PendingEpoch { qint64 run; hr::EpochEvent e; };

    qint64 insertRun(const QString& name, const QString& specText, const QString& configText, const QString& device);
    QSqlDatabase db() const;
    bool exec(const QString& sql, const QVariantList& binds = {}) const;
    bool prepareSchema();   // create or upgrade, in one BEGIN IMMEDIATE transaction
    int userVersion() const;  // PRAGMA user_version: kSchemaVersion once prepareSchema committed
    bool createSchemaV1();
    bool migrate(int from);
    void recoverInterruptedRuns();
    void noteBuffered();
    bool writeMemoryCategories(qint64 runId, const hr::LedgerSnapshot& s);
    void fail(const QString& message) const;

    QString m_connection;
    QString m_path;
    mutable QString m_lastError;
    int m_recovered = 0;
    int m_batchSize = 200;
    int m_flushIntervalMs = 1000;
    qint64 m_commits = 0;
    QVector<PendingStep> m_steps;
    QVector<PendingEpoch> m_epochs;
    QVector<PendingTelemetry> m_telemetry;
    QVector<PendingMemory> m_memory;
    QHash<qint64, double> m_telemetryOrigin;   // first sample's t per run
    QHash<qint64, hr::LedgerSnapshot> m_lastLedger;
    QElapsedTimer m_sinceFlush;
    QTimer m_flushTimer;
};

}  // namespace hrapp
