#include "store/run_store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QSet>
#include <QTimeZone>
#include <QUuid>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <csignal>

#include <sys/types.h>
#include <unistd.h>

#include "train/run_summary.h"
#include "train/trainer.h"

namespace hrapp {
namespace {

QVariant num(double v) { return std::isfinite(v) ? QVariant(v) : QVariant(QMetaType(QMetaType::Double)); }
QVariant num(qint64 v) { return v >= 0 ? QVariant(v) : QVariant(QMetaType(QMetaType::LongLong)); }
double dbl(const QVariant& v) { return v.isNull() ? qQNaN() : v.toDouble(); }
qint64 i64(const QVariant& v) { return v.isNull() ? -1 : v.toLongLong(); }

QString nowIso() { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); }
QDateTime fromIso(const QVariant& v) {
    if (v.isNull()) return {};
    QDateTime d = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
    d.setTimeSpec(Qt::UTC);
    return d;
}
QString jsonText(const QJsonObject& o) { return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)); }
QJsonObject jsonObject(const QVariant& v) {
    if (v.isNull()) return {};
    return QJsonDocument::fromJson(v.toString().toUtf8()).object();
}

bool processAlive(qint64 pid) {
    if (pid <= 0) return false;
    if (pid == static_cast<qint64>(::getpid())) return true;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Schema v1: runs, step and epoch metrics. v2 adds device/error/pid columns, telemetry and memory.
const char* kSchemaV1[] = {
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, "
    "status TEXT NOT NULL, created TEXT NOT NULL, finished TEXT, spec TEXT, config TEXT, final_metrics TEXT)",
    "CREATE TABLE IF NOT EXISTS step_metrics (run_id INTEGER NOT NULL, step INTEGER NOT NULL, epoch INTEGER, "
    "loss REAL, accuracy REAL, lr REAL, step_seconds REAL, images_per_second REAL, elapsed_seconds REAL, "
    "loss_scale REAL, skipped INTEGER)",
    "CREATE INDEX IF NOT EXISTS step_metrics_run ON step_metrics(run_id, step)",
    "CREATE TABLE IF NOT EXISTS epoch_metrics (run_id INTEGER NOT NULL, epoch INTEGER NOT NULL, step INTEGER, "
    "train_loss REAL, train_accuracy REAL, test_loss REAL, test_accuracy REAL, seconds REAL, "
    "images_per_second REAL)",
    "CREATE INDEX IF NOT EXISTS epoch_metrics_run ON epoch_metrics(run_id, epoch)",
};
const char* kMigrationV2[] = {
    "ALTER TABLE runs ADD COLUMN device TEXT",
    "ALTER TABLE runs ADD COLUMN error TEXT",
    "ALTER TABLE runs ADD COLUMN pid INTEGER",
    "CREATE TABLE IF NOT EXISTS telemetry (run_id INTEGER NOT NULL, t REAL, step INTEGER, gpu INTEGER, "
    "gpu_name TEXT, cpu_util REAL, ram_used INTEGER, ram_total INTEGER, process_rss INTEGER, "
    "gpu_mem_used INTEGER, gpu_mem_total INTEGER, power_w REAL, power_limit_w REAL, gpu_util REAL, "
    "mem_util REAL, temperature_c REAL, sm_clock_mhz REAL, energy_j REAL)",
    "CREATE INDEX IF NOT EXISTS telemetry_run ON telemetry(run_id, t)",
    "CREATE TABLE IF NOT EXISTS memory (run_id INTEGER NOT NULL, category TEXT NOT NULL, predicted INTEGER, "
    "peak INTEGER, at_peak INTEGER, PRIMARY KEY (run_id, category))",
    "CREATE TABLE IF NOT EXISTS memory_samples (run_id INTEGER NOT NULL, t REAL, step INTEGER, "
    "live_total INTEGER, reserved_free INTEGER, device_capacity INTEGER)",
    "CREATE INDEX IF NOT EXISTS memory_samples_run ON memory_samples(run_id, t)",
};
// v3: the run a run continues ("Continue training", headroom train --resume): its id, or NULL.
const char* kMigrationV3[] = {
    "ALTER TABLE runs ADD COLUMN continues INTEGER",
};

}  // namespace

RunStore::RunStore(QObject* parent) : QObject(parent) {
    m_connection = QStringLiteral("hr-runstore-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    m_flushTimer.setSingleShot(true);
    connect(&m_flushTimer, &QTimer::timeout, this, [this] { flush(); });
}

RunStore::~RunStore() { close(); }

QString RunStore::defaultPath() {
    QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    if (dir.isEmpty()) dir = QDir::homePath() + QStringLiteral("/.local/share/headroom");
    return dir + QStringLiteral("/runs.sqlite");
}

QSqlDatabase RunStore::db() const { return QSqlDatabase::database(m_connection, false); }

bool RunStore::isOpen() const { return QSqlDatabase::contains(m_connection) && db().isOpen(); }

void RunStore::fail(const QString& message) const { m_lastError = message; }

bool RunStore::exec(const QString& sql, const QVariantList& binds) const {
    QSqlQuery q(db());
    if (!q.prepare(sql)) {
        fail(q.lastError().text() + QStringLiteral(" [") + sql + QStringLiteral("]"));
        return false;
    }
    for (const QVariant& b : binds) q.addBindValue(b);
    if (!q.exec()) {
        fail(q.lastError().text() + QStringLiteral(" [") + sql + QStringLiteral("]"));
        return false;
    }
    return true;
}

bool RunStore::open(const QString& path) {
    close();
    m_path = path.isEmpty() ? defaultPath() : path;
    m_recovered = 0;
    const QFileInfo fi(m_path);
    if (!QDir().mkpath(fi.absolutePath())) {
        fail(QCoreApplication::translate("RunStore", "Cannot create the folder %1 for the run history; "
                                                     "check its permissions.").arg(fi.absolutePath()));
        return false;
    }
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
    d.setDatabaseName(m_path);
    d.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (!d.open()) {
        fail(QCoreApplication::translate("RunStore", "Cannot open the run history %1: %2")
                 .arg(m_path, d.lastError().text()));
        d = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
        return false;
    }
    {
        QSqlQuery q(d);
        q.exec(QStringLiteral("PRAGMA journal_mode=WAL"));
        q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
        q.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    }
    d = QSqlDatabase();  // no copy may outlive the connection (close() removes it)
    int version = schemaVersion();
    bool ok = true;
    if (version == 0) {
        ok = createSchemaV1();
        version = 1;
    }
    if (ok && version > kSchemaVersion) {
        fail(QCoreApplication::translate("RunStore", "The run history %1 was written by a newer Headroom "
                                                     "(schema %2, this one reads up to %3); update Headroom "
                                                     "or choose another file.")
                 .arg(m_path).arg(version).arg(kSchemaVersion));
        ok = false;
    }
    if (ok && version < kSchemaVersion) ok = migrate(version);
    if (!ok) {
        const QString e = m_lastError;
        close();
        m_lastError = e;
        return false;
    }
    recoverInterruptedRuns();
    m_sinceFlush.start();
    return true;
}

void RunStore::close() {
    if (!QSqlDatabase::contains(m_connection)) return;
    if (db().isOpen()) flush();
    {
        QSqlDatabase d = db();
        d.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
    m_flushTimer.stop();
}

int RunStore::schemaVersion() const {
    if (!QSqlDatabase::contains(m_connection)) return 0;
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("SELECT MAX(version) FROM schema_version")) || !q.next()) return 0;
    return q.value(0).isNull() ? 0 : q.value(0).toInt();
}

bool RunStore::createSchemaV1() {
    QSqlDatabase d = db();
    d.transaction();
    for (const char* sql : kSchemaV1)
        if (!exec(QString::fromUtf8(sql))) {
            d.rollback();
            return false;
        }
    if (!exec(QStringLiteral("INSERT INTO schema_version(version) VALUES (1)"))) {
        d.rollback();
        return false;
    }
    return d.commit();
}

bool RunStore::migrate(int from) {
    QSqlDatabase d = db();
    for (int v = from; v < kSchemaVersion; ++v) {
        d.transaction();
        bool ok = true;
        if (v == 1)
            for (const char* sql : kMigrationV2) ok = ok && exec(QString::fromUtf8(sql));
        if (v == 2)
            for (const char* sql : kMigrationV3) ok = ok && exec(QString::fromUtf8(sql));
        ok = ok && exec(QStringLiteral("DELETE FROM schema_version")) &&
             exec(QStringLiteral("INSERT INTO schema_version(version) VALUES (?)"), {v + 1});
        if (!ok) {
            const QString e = m_lastError;
            d.rollback();
            fail(QCoreApplication::translate("RunStore", "Cannot upgrade the run history %1 from schema %2: %3")
                     .arg(m_path).arg(v).arg(e));
            return false;
        }
        d.commit();
    }
    return true;
}

void RunStore::recoverInterruptedRuns() {
    QSqlQuery q(db());
    q.exec(QStringLiteral("SELECT id, pid FROM runs WHERE status = 'running'"));
    QList<qint64> dead;
    while (q.next())
        if (!processAlive(q.value(1).isNull() ? -1 : q.value(1).toLongLong())) dead << q.value(0).toLongLong();
    const QString why = QCoreApplication::translate("RunStore", "the program ended during the run");
    for (qint64 id : dead) {
        // finished: the last thing written for the run, else its creation time.
        exec(QStringLiteral("UPDATE runs SET status = 'failed', error = ?, finished = COALESCE(finished, ?) "
                            "WHERE id = ?"),
             {why, nowIso(), id});
        ++m_recovered;
    }
    if (m_recovered) emit runsChanged();
}

// ---- writing ------------------------------------------------------------------------------------

QString RunStore::defaultRunName(const QString& model, const QString& data) {
    const QString m = model.isEmpty() ? QStringLiteral("model") : model;
    return data.isEmpty() ? m : QCoreApplication::translate("RunStore", "%1 on %2").arg(m, data);
}

qint64 RunStore::beginRun(const QJsonObject& config, const QJsonObject& spec, const QString& device,
                          const QString& name) {
    const QString n = name.isEmpty() ? defaultRunName(spec.value(QStringLiteral("name")).toString(),
                                                      config.value(QStringLiteral("data")).toString())
                                     : name;
    return insertRun(n, jsonText(spec), jsonText(config), device);
}

qint64 RunStore::insertRun(const QString& name, const QString& specText, const QString& configText,
                           const QString& device) {
    if (!isOpen()) {
        fail(QCoreApplication::translate("RunStore", "The run history is not open."));
        return 0;
    }
    QSqlQuery q(db());
    q.prepare(QStringLiteral("INSERT INTO runs(name, status, created, spec, config, device, pid) "
                             "VALUES (?, 'running', ?, ?, ?, ?, ?)"));
    q.addBindValue(name);
    q.addBindValue(nowIso());
    q.addBindValue(specText);
    q.addBindValue(configText);
    q.addBindValue(device);
    q.addBindValue(static_cast<qint64>(::getpid()));
    if (!q.exec()) {
        fail(q.lastError().text());
        emit writeFailed(m_lastError);
        return 0;
    }
    const qint64 id = q.lastInsertId().toLongLong();
    emit runsChanged();
    return id;
}

void RunStore::noteBuffered() {
    if (pendingRows() >= m_batchSize || (m_sinceFlush.isValid() && m_sinceFlush.elapsed() >= m_flushIntervalMs)) {
        flush();
        return;
    }
    if (!m_flushTimer.isActive()) m_flushTimer.start(m_flushIntervalMs);
}

int RunStore::pendingRows() const {
    return static_cast<int>(m_steps.size() + m_epochs.size() + m_telemetry.size() + m_memory.size());
}

void RunStore::addStep(qint64 runId, const hr::StepEvent& e) {
    m_steps.push_back({runId, e});
    noteBuffered();
}

void RunStore::addEpoch(qint64 runId, const hr::EpochEvent& e) {
    m_epochs.push_back({runId, e});
    flush();  // rare and shown in the Runs tab: write at once
}

void RunStore::addTelemetry(qint64 runId, const hr::TelemetrySample& s) {
    auto it = m_telemetryOrigin.find(runId);
    if (it == m_telemetryOrigin.end()) it = m_telemetryOrigin.insert(runId, s.t_seconds);
    m_telemetry.push_back({runId, s.t_seconds - it.value(), s});
    noteBuffered();
}

void RunStore::addMemory(qint64 runId, const hr::MemoryEvent& e) {
    m_lastLedger[runId] = e.ledger;
    m_memory.push_back({runId, e});
    noteBuffered();
}

bool RunStore::flush() {
    m_flushTimer.stop();
    m_sinceFlush.restart();
    if (pendingRows() == 0 || !isOpen()) return pendingRows() == 0;
    QSqlDatabase d = db();
    if (!d.transaction()) {
        fail(d.lastError().text());
        emit writeFailed(m_lastError);
        return false;
    }
    bool ok = true;
    if (!m_steps.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO step_metrics(run_id, step, epoch, loss, accuracy, lr, step_seconds, "
                                 "images_per_second, elapsed_seconds, loss_scale, skipped) "
                                 "VALUES (?,?,?,?,?,?,?,?,?,?,?)"));
        for (const auto& p : m_steps) {
            const auto& e = p.e;
            q.addBindValue(p.run);
            q.addBindValue(static_cast<qint64>(e.step));
            q.addBindValue(e.epoch);
            q.addBindValue(num(e.loss));
            q.addBindValue(num(e.accuracy));
            q.addBindValue(num(e.lr));
            q.addBindValue(num(e.step_seconds));
            q.addBindValue(num(e.images_per_second));
            q.addBindValue(num(e.elapsed_seconds));
            q.addBindValue(num(e.loss_scale));
            q.addBindValue(e.skipped ? 1 : 0);
            ok = ok && q.exec();
        }
        if (!ok) fail(q.lastError().text());
    }
    if (ok && !m_epochs.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO epoch_metrics(run_id, epoch, step, train_loss, train_accuracy, "
                                 "test_loss, test_accuracy, seconds, images_per_second) VALUES (?,?,?,?,?,?,?,?,?)"));
        for (const auto& p : m_epochs) {
            const auto& e = p.e;
            q.addBindValue(p.run);
            q.addBindValue(e.epoch);
            q.addBindValue(static_cast<qint64>(e.step));
            q.addBindValue(num(e.train_loss));
            q.addBindValue(num(e.train_accuracy));
            q.addBindValue(num(e.test_loss));
            q.addBindValue(num(e.test_accuracy));
            q.addBindValue(num(e.seconds));
            q.addBindValue(num(e.images_per_second));
            ok = ok && q.exec();
        }
        if (!ok) fail(q.lastError().text());
    }
    if (ok && !m_telemetry.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO telemetry(run_id, t, step, gpu, gpu_name, cpu_util, ram_used, ram_total, "
                                 "process_rss, gpu_mem_used, gpu_mem_total, power_w, power_limit_w, gpu_util, "
                                 "mem_util, temperature_c, sm_clock_mhz, energy_j) "
                                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        for (const auto& p : m_telemetry) {
            const auto& h = p.s.host;
            auto bindCommon = [&](int gpu, const QString& name) {
                q.addBindValue(p.run);
                q.addBindValue(p.t);
                q.addBindValue(static_cast<qint64>(p.s.step));
                q.addBindValue(gpu);
                q.addBindValue(name);
                q.addBindValue(num(h.cpu_utilization));
                q.addBindValue(num(static_cast<qint64>(h.ram_used)));
                q.addBindValue(num(static_cast<qint64>(h.ram_total)));
                q.addBindValue(num(static_cast<qint64>(h.process_rss)));
            };
            if (p.s.gpus.empty()) {
                bindCommon(-1, QString());
                for (int i = 0; i < 9; ++i) q.addBindValue(QVariant(QMetaType(QMetaType::Double)));
                ok = ok && q.exec();
            }
            for (const auto& g : p.s.gpus) {
                bindCommon(g.index, QString::fromStdString(g.name));
                q.addBindValue(num(static_cast<qint64>(g.memory_used)));
                q.addBindValue(num(static_cast<qint64>(g.memory_total)));
                q.addBindValue(num(g.power_watts));
                q.addBindValue(num(g.power_limit_watts));
                q.addBindValue(num(g.gpu_utilization));
                q.addBindValue(num(g.memory_utilization));
                q.addBindValue(num(g.temperature_c));
                q.addBindValue(num(g.sm_clock_mhz));
                q.addBindValue(num(g.energy_joules));
                ok = ok && q.exec();
            }
        }
        if (!ok) fail(q.lastError().text());
    }
    if (ok && !m_memory.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO memory_samples(run_id, t, step, live_total, reserved_free, "
                                 "device_capacity) VALUES (?,?,?,?,?,?)"));
        QSet<qint64> runs;
        for (const auto& p : m_memory) {
            q.addBindValue(p.run);
            q.addBindValue(p.e.elapsed_seconds);
            q.addBindValue(static_cast<qint64>(p.e.step));
            q.addBindValue(static_cast<qint64>(p.e.ledger.live_total));
            q.addBindValue(static_cast<qint64>(p.e.ledger.reserved_free));
            q.addBindValue(static_cast<qint64>(p.e.device_capacity));
            ok = ok && q.exec();
            runs.insert(p.run);
        }
        if (!ok) fail(q.lastError().text());
        for (qint64 r : runs)
            if (ok) ok = writeMemoryCategories(r, m_lastLedger.value(r));
    }
    if (!ok || !d.commit()) {
        if (ok) fail(d.lastError().text());
        d.rollback();
        emit writeFailed(m_lastError);
        // keep the rows: a locked database may accept them at the next flush
        return false;
    }
    ++m_commits;
    m_steps.clear();
    m_epochs.clear();
    m_telemetry.clear();
    m_memory.clear();
    return true;
}

bool RunStore::writeMemoryCategories(qint64 runId, const hr::LedgerSnapshot& s) {
    for (hr::MemCategory c : hr::all_categories()) {
        if (!exec(QStringLiteral("INSERT INTO memory(run_id, category, peak, at_peak) VALUES (?,?,?,?) "
                                 "ON CONFLICT(run_id, category) DO UPDATE SET peak = excluded.peak, "
                                 "at_peak = excluded.at_peak"),
                  {runId, QString::fromLatin1(hr::category_name(c)), static_cast<qint64>(hr::at(s.peak, c)),
                   static_cast<qint64>(hr::at(s.at_peak, c))}))
            return false;
    }
    return true;
}

void RunStore::setPredictedMemory(qint64 runId, const hr::CategoryBytes& predicted) {
    if (!isOpen()) return;
    for (hr::MemCategory c : hr::all_categories())
        exec(QStringLiteral("INSERT INTO memory(run_id, category, predicted) VALUES (?,?,?) "
                            "ON CONFLICT(run_id, category) DO UPDATE SET predicted = excluded.predicted"),
             {runId, QString::fromLatin1(hr::category_name(c)), static_cast<qint64>(hr::at(predicted, c))});
}

QJsonObject RunStore::finalMetrics(const hr::TrainResult& r, const std::vector<std::size_t>& predictedRankTotals) {
    // the figures run.json's "final" has (core/train/run_summary.h), and "distributed" for several ranks
    nlohmann::json m = hr::run_final_summary(r);
    if (r.world_size > 1) m["distributed"] = hr::run_distributed_summary(r, 0, predictedRankTotals);
    return QJsonDocument::fromJson(QByteArray::fromStdString(m.dump())).object();
}

void RunStore::finishRun(qint64 runId, const hr::TrainResult& r, const std::vector<std::size_t>& predictedRankTotals) {
    const QJsonObject m = finalMetrics(r, predictedRankTotals);
    // The result's ledger holds the run's peaks: they are the measured figures of record.
    flush();
    if (r.ledger.peak_total > 0 && isOpen()) writeMemoryCategories(runId, r.ledger);
    if (!r.device_name.empty() && isOpen())
        exec(QStringLiteral("UPDATE runs SET device = ? WHERE id = ?"), {QString::fromStdString(r.device_name), runId});
    finishRun(runId, QString::fromStdString(r.status), QString::fromStdString(r.error), m);
}

void RunStore::finishRun(qint64 runId, const QString& status, const QString& error, const QJsonObject& finalMetrics) {
    flush();
    if (!isOpen()) return;
    QString st = status;
    if (st != QLatin1String("finished") && st != QLatin1String("stopped") && st != QLatin1String("failed"))
        st = QStringLiteral("failed");
    if (!exec(QStringLiteral("UPDATE runs SET status = ?, finished = ?, final_metrics = ?, error = ? WHERE id = ?"),
              {st, nowIso(), jsonText(finalMetrics), error.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(error),
               runId}))
        emit writeFailed(m_lastError);
    m_telemetryOrigin.remove(runId);
    m_lastLedger.remove(runId);
    emit runsChanged();
}

// ---- reading ------------------------------------------------------------------------------------

static const char* kRunColumns =
    "SELECT r.id, r.name, r.status, r.created, r.finished, r.device, r.error, r.spec, r.config, r.final_metrics, "
    "(SELECT COUNT(*) FROM step_metrics s WHERE s.run_id = r.id), r.continues, "
    "(SELECT GROUP_CONCAT(c.id) FROM runs c WHERE c.continues = r.id) FROM runs r";

static RunInfo runFromQuery(const QSqlQuery& q) {
    RunInfo r;
    r.id = q.value(0).toLongLong();
    r.name = q.value(1).toString();
    r.status = q.value(2).toString();
    r.created = fromIso(q.value(3));
    r.finished = fromIso(q.value(4));
    r.device = q.value(5).toString();
    r.error = q.value(6).toString();
    r.spec = jsonObject(q.value(7));
    r.config = jsonObject(q.value(8));
    r.finalMetrics = jsonObject(q.value(9));
    r.stepCount = q.value(10).toLongLong();
    r.modelName = r.spec.value(QStringLiteral("name")).toString();
    r.data = r.config.value(QStringLiteral("data")).toString();
    r.outDir = r.config.value(QStringLiteral("out_dir")).toString();
    r.continuesRunId = q.value(11).isNull() ? 0 : q.value(11).toLongLong();
    for (const QString& id : q.value(12).toString().split(QLatin1Char(','), Qt::SkipEmptyParts))
        r.continuedBy << id.toLongLong();
    std::sort(r.continuedBy.begin(), r.continuedBy.end());
    return r;
}

QVector<RunInfo> RunStore::listRuns(const RunFilter& f) const {
    QVector<RunInfo> out;
    if (!isOpen()) return out;
    QString sql = QString::fromLatin1(kRunColumns);
    QStringList where;
    QVariantList binds;
    if (!f.statuses.isEmpty()) {
        QStringList marks;
        for (const QString& s : f.statuses) {
            marks << QStringLiteral("?");
            binds << s;
        }
        where << QStringLiteral("r.status IN (%1)").arg(marks.join(QLatin1Char(',')));
    }
    if (f.since.isValid()) {
        where << QStringLiteral("r.created >= ?");
        binds << f.since.toUTC().toString(Qt::ISODateWithMs);
    }
    if (f.until.isValid()) {
        where << QStringLiteral("r.created <= ?");
        binds << f.until.toUTC().toString(Qt::ISODateWithMs);
    }
    if (!where.isEmpty()) sql += QStringLiteral(" WHERE ") + where.join(QStringLiteral(" AND "));
    sql += QStringLiteral(" ORDER BY r.id DESC");
    QSqlQuery q(db());
    q.prepare(sql);
    for (const QVariant& b : binds) q.addBindValue(b);
    if (!q.exec()) {
        fail(q.lastError().text());
        return out;
    }
    while (q.next()) {
        RunInfo r = runFromQuery(q);
        if (!f.text.isEmpty()) {
            const QString hay = r.name + QLatin1Char('\n') + r.modelName + QLatin1Char('\n') + r.data +
                                QLatin1Char('\n') + r.device;
            if (!hay.contains(f.text, Qt::CaseInsensitive)) continue;
        }
        out.push_back(std::move(r));
        if (f.limit > 0 && out.size() >= f.limit) break;
    }
    return out;
}

std::optional<RunInfo> RunStore::run(qint64 runId) const {
    if (!isOpen()) return std::nullopt;
    QSqlQuery q(db());
    q.prepare(QString::fromLatin1(kRunColumns) + QStringLiteral(" WHERE r.id = ?"));
    q.addBindValue(runId);
    if (!q.exec() || !q.next()) return std::nullopt;
    return runFromQuery(q);
}

bool RunStore::setContinues(qint64 runId, qint64 continuedRunId) {
    if (!run(runId) || (continuedRunId > 0 && !run(continuedRunId)) || runId == continuedRunId) {
        fail(QCoreApplication::translate("RunStore", "There is no run %1.").arg(run(runId) ? continuedRunId : runId));
        return false;
    }
    if (!exec(QStringLiteral("UPDATE runs SET continues = ? WHERE id = ?"),
              {continuedRunId > 0 ? QVariant(continuedRunId) : QVariant(QMetaType(QMetaType::LongLong)), runId}))
        return false;
    emit runsChanged();
    return true;
}

qint64 RunStore::newestRunInFolder(const QString& outDir) const {
    if (!isOpen() || outDir.isEmpty()) return 0;
    const QString want = QDir::cleanPath(QDir(outDir).absolutePath());
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT id, config FROM runs ORDER BY id DESC"));
    if (!q.exec()) return 0;
    while (q.next()) {
        const QString dir = jsonObject(q.value(1)).value(QStringLiteral("out_dir")).toString();
        if (!dir.isEmpty() && QDir::cleanPath(QDir(dir).absolutePath()) == want) return q.value(0).toLongLong();
    }
    return 0;
}

bool RunStore::renameRun(qint64 runId, const QString& name) {
    const QString n = name.trimmed();
    if (n.isEmpty()) {
        fail(QCoreApplication::translate("RunStore", "A run's name cannot be empty."));
        return false;
    }
    if (!run(runId)) {
        fail(QCoreApplication::translate("RunStore", "There is no run %1.").arg(runId));
        return false;
    }
    if (!exec(QStringLiteral("UPDATE runs SET name = ? WHERE id = ?"), {n, runId})) return false;
    emit runsChanged();
    return true;
}

bool RunStore::deleteRun(qint64 runId) {
    if (!run(runId)) {
        fail(QCoreApplication::translate("RunStore", "There is no run %1.").arg(runId));
        return false;
    }
    flush();
    QSqlDatabase d = db();
    d.transaction();
    bool ok = true;
    for (const char* t : {"step_metrics", "epoch_metrics", "telemetry", "memory", "memory_samples"})
        ok = ok && exec(QStringLiteral("DELETE FROM %1 WHERE run_id = ?").arg(QLatin1String(t)), {runId});
    // a run that continued this one keeps its record; its link is cleared
    ok = ok && exec(QStringLiteral("UPDATE runs SET continues = NULL WHERE continues = ?"), {runId});
    ok = ok && exec(QStringLiteral("DELETE FROM runs WHERE id = ?"), {runId});
    if (!ok) {
        d.rollback();
        return false;
    }
    d.commit();
    emit runsChanged();
    return true;
}

QVector<StepRow> RunStore::steps(qint64 runId) const {
    QVector<StepRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT step, epoch, loss, accuracy, lr, step_seconds, images_per_second, "
                             "elapsed_seconds, loss_scale, skipped FROM step_metrics WHERE run_id = ? ORDER BY step"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        StepRow r;
        r.step = q.value(0).toLongLong();
        r.epoch = q.value(1).toInt();
        r.loss = dbl(q.value(2));
        r.accuracy = dbl(q.value(3));
        r.lr = dbl(q.value(4));
        r.stepSeconds = dbl(q.value(5));
        r.imagesPerSecond = dbl(q.value(6));
        r.elapsedSeconds = dbl(q.value(7));
        r.lossScale = dbl(q.value(8));
        r.skipped = q.value(9).toInt() != 0;
        out.push_back(r);
    }
    return out;
}

QVector<EpochRow> RunStore::epochs(qint64 runId) const {
    QVector<EpochRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT epoch, step, train_loss, train_accuracy, test_loss, test_accuracy, seconds, "
                             "images_per_second FROM epoch_metrics WHERE run_id = ? ORDER BY epoch"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        EpochRow r;
        r.epoch = q.value(0).toInt();
        r.step = q.value(1).toLongLong();
        r.trainLoss = dbl(q.value(2));
        r.trainAccuracy = dbl(q.value(3));
        r.testLoss = dbl(q.value(4));
        r.testAccuracy = dbl(q.value(5));
        r.seconds = dbl(q.value(6));
        r.imagesPerSecond = dbl(q.value(7));
        out.push_back(r);
    }
    return out;
}

QVector<TelemetryRow> RunStore::telemetry(qint64 runId) const {
    QVector<TelemetryRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT t, step, gpu, gpu_name, cpu_util, ram_used, ram_total, process_rss, gpu_mem_used, "
                             "gpu_mem_total, power_w, power_limit_w, gpu_util, mem_util, temperature_c, sm_clock_mhz, "
                             "energy_j FROM telemetry WHERE run_id = ? ORDER BY t, gpu"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        TelemetryRow r;
        r.t = q.value(0).toDouble();
        r.step = i64(q.value(1));
        r.gpu = q.value(2).isNull() ? -1 : q.value(2).toInt();
        r.gpuName = q.value(3).toString();
        r.cpuUtilization = dbl(q.value(4));
        r.ramUsed = i64(q.value(5));
        r.ramTotal = i64(q.value(6));
        r.processRss = i64(q.value(7));
        r.gpuMemoryUsed = i64(q.value(8));
        r.gpuMemoryTotal = i64(q.value(9));
        r.powerWatts = dbl(q.value(10));
        r.powerLimitWatts = dbl(q.value(11));
        r.gpuUtilization = dbl(q.value(12));
        r.memoryUtilization = dbl(q.value(13));
        r.temperatureC = dbl(q.value(14));
        r.smClockMhz = dbl(q.value(15));
        r.energyJoules = dbl(q.value(16));
        out.push_back(r);
    }
    return out;
}

QVector<MemoryCategoryRow> RunStore::memory(qint64 runId) const {
    QVector<MemoryCategoryRow> out;
    if (!isOpen()) return out;
    QHash<QString, MemoryCategoryRow> rows;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT category, predicted, peak, at_peak FROM memory WHERE run_id = ?"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        MemoryCategoryRow r;
        r.category = q.value(0).toString();
        r.predicted = i64(q.value(1));
        r.peak = i64(q.value(2));
        r.atPeak = i64(q.value(3));
        rows.insert(r.category, r);
    }
    if (rows.isEmpty()) return out;
    for (hr::MemCategory c : hr::all_categories()) {
        const QString name = QString::fromLatin1(hr::category_name(c));
        MemoryCategoryRow r = rows.value(name);
        r.category = name;
        if (!rows.contains(name)) r.predicted = r.peak = r.atPeak = -1;
        out.push_back(r);
    }
    return out;
}

QVector<MemorySampleRow> RunStore::memorySamples(qint64 runId) const {
    QVector<MemorySampleRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT t, step, live_total, reserved_free, device_capacity FROM memory_samples "
                             "WHERE run_id = ? ORDER BY t"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        MemorySampleRow r;
        r.t = q.value(0).toDouble();
        r.step = i64(q.value(1));
        r.liveTotal = q.value(2).toLongLong();
        r.reservedFree = q.value(3).toLongLong();
        r.deviceCapacity = q.value(4).toLongLong();
        out.push_back(r);
    }
    return out;
}

QStringList RunStore::overlayMetrics() {
    return {QStringLiteral("loss"),          QStringLiteral("accuracy"),       QStringLiteral("lr"),
            QStringLiteral("images_per_second"), QStringLiteral("step_seconds"), QStringLiteral("train_loss"),
            QStringLiteral("train_accuracy"), QStringLiteral("test_loss"),     QStringLiteral("test_accuracy"),
            QStringLiteral("epoch_images_per_second")};
}

QVector<RunSeries> RunStore::overlay(const QList<qint64>& runIds, const QString& metric) const {
    QVector<RunSeries> out;
    for (qint64 id : runIds) {
        auto info = run(id);
        if (!info) continue;
        RunSeries s;
        s.runId = id;
        s.runName = info->name;
        if (metric == QLatin1String("loss") || metric == QLatin1String("accuracy") || metric == QLatin1String("lr") ||
            metric == QLatin1String("images_per_second") || metric == QLatin1String("step_seconds")) {
            for (const StepRow& r : steps(id)) {
                double y = metric == QLatin1String("loss")       ? r.loss
                           : metric == QLatin1String("accuracy") ? r.accuracy
                           : metric == QLatin1String("lr")       ? r.lr
                           : metric == QLatin1String("images_per_second") ? r.imagesPerSecond
                                                                         : r.stepSeconds;
                s.x << static_cast<double>(r.step);
                s.y << y;
            }
        } else {
            for (const EpochRow& r : epochs(id)) {
                double y = metric == QLatin1String("train_loss")       ? r.trainLoss
                           : metric == QLatin1String("train_accuracy") ? r.trainAccuracy
                           : metric == QLatin1String("test_loss")      ? r.testLoss
                           : metric == QLatin1String("test_accuracy")  ? r.testAccuracy
                                                                       : r.imagesPerSecond;
                s.x << r.epoch;
                s.y << y;
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace hrapp
