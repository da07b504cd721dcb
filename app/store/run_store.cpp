// RunStore: opening the history database, its schema and migrations, recovering runs that were cut
// off. Writing runs is in run_store_write.cpp, reading them in run_store_read.cpp.
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
#include "store/run_store_detail.h"

namespace hrapp {

using namespace store_detail;

namespace {

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
    // several processes share the history (the window, command-line runs, the ranks' launcher): a writer
    // waits this long for another's lock, far longer than any of their transactions holds one
    d.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(kBusyTimeoutMs));
    if (!d.open()) {
        fail(QCoreApplication::translate("RunStore", "Cannot open the run history %1: %2")
                 .arg(m_path, d.lastError().text()));
        d = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
        return false;
    }
    d = QSqlDatabase();  // no copy may outlive the connection (close() removes it)
    if (!prepareSchema()) {
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

// Creating and upgrading the schema is one write transaction (BEGIN IMMEDIATE: the write lock first), and
// the version is read inside it. Of several processes opening one history at once (the window and
// command-line runs on a new machine, or after an update), one creates or upgrades it while the others
// wait on the lock (busy timeout), then read the version it committed and find nothing to do: no two
// create the tables or add a column twice ("duplicate column name"), and none gives up on the history.
// PRAGMA user_version mirrors schema_version once a schema is current, so an open of a current file takes
// no write lock.
bool RunStore::prepareSchema() {
    {
        // WAL lets the runs' writers and the window's readers work side by side. Not inside a transaction
        // (SQLite refuses to change the journal mode there); the mode is the file's, kept by every opener.
        // (A file SQLite cannot switch keeps its journal and works as well, one writer or reader at a time.)
        QSqlQuery q(db());
        q.exec(QStringLiteral("PRAGMA journal_mode=WAL"));
        q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
        q.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    }
    if (userVersion() == kSchemaVersion && schemaVersion() == kSchemaVersion) return true;
    if (!exec(QStringLiteral("BEGIN IMMEDIATE"))) {
        fail(QCoreApplication::translate("RunStore", "Cannot prepare the run history %1 (%2); if another program "
                                                     "holds it locked, close that program or try again.")
                 .arg(m_path, m_lastError));
        return false;
    }
    int version = schemaVersion();  // read under the write lock: what the last one to hold it left
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
    if (ok) ok = exec(QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion));
    if (ok && !exec(QStringLiteral("COMMIT"))) {
        fail(QCoreApplication::translate("RunStore", "Cannot prepare the run history %1: %2").arg(m_path, m_lastError));
        ok = false;
    }
    if (!ok) {
        const QString e = m_lastError;
        exec(QStringLiteral("ROLLBACK"));  // nothing of a half-made schema stays
        m_lastError = e;
    }
    return ok;
}

int RunStore::userVersion() const {
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return 0;
    return q.value(0).toInt();
}

// Inside prepareSchema's transaction.
bool RunStore::createSchemaV1() {
    for (const char* sql : kSchemaV1)
        if (!exec(QString::fromUtf8(sql))) return false;
    return exec(QStringLiteral("INSERT INTO schema_version(version) VALUES (1)"));
}

// Inside prepareSchema's transaction: every step commits with the others or none does.
bool RunStore::migrate(int from) {
    for (int v = from; v < kSchemaVersion; ++v) {
        bool ok = true;
        if (v == 1)
            for (const char* sql : kMigrationV2) ok = ok && exec(QString::fromUtf8(sql));
        if (v == 2)
            for (const char* sql : kMigrationV3) ok = ok && exec(QString::fromUtf8(sql));
        ok = ok && exec(QStringLiteral("DELETE FROM schema_version")) &&
             exec(QStringLiteral("INSERT INTO schema_version(version) VALUES (?)"), {v + 1});
        if (!ok) {
            fail(QCoreApplication::translate("RunStore", "Cannot upgrade the run history %1 from schema %2: %3")
                     .arg(m_path).arg(v).arg(m_lastError));
            return false;
        }
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

}  // namespace hrapp
