// The run history under several processes at once (issue 42, item 5): on a new machine two runs started
// together once lost one of them ("Cannot upgrade the run history ... duplicate column name: device").
// Several processes open one history together, a new file and a file at schema 1 that must be upgraded:
// `headroom train` runs (the command line, beside this process's own RunStore as the window holds one),
// and this program's helper mode, whose processes wait at a barrier and open the history within the same
// millisecond. Every run must be in the history, finished, with its steps, and the schema current.
// (Labelled gui because it links headroom_app, where Qt Sql lives; it opens no window.)
#include <QtTest>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QThread>

#include <memory>
#include <vector>

#include "store/run_store.h"
#include "test_support.h"
#include "train/events.h"

using namespace hrapp;

namespace {

// Helper mode: HR_HISTORY_HELPER=DB, HR_HISTORY_GO=FILE, HR_HISTORY_NAME=NAME. Waits until FILE exists
// (every helper has started by then), opens DB, records a run NAME of two steps and finishes it.
int helperMain() {
    const QString db = qEnvironmentVariable("HR_HISTORY_HELPER"), go = qEnvironmentVariable("HR_HISTORY_GO"),
                  name = qEnvironmentVariable("HR_HISTORY_NAME");
    QElapsedTimer waited;
    waited.start();
    while (!QFile::exists(go)) {
        if (waited.elapsed() > 60000) return 3;
        QThread::usleep(200);
    }
    RunStore store;
    if (!store.open(db)) {
        QTextStream(stderr) << "open: " << store.lastError() << '\n';
        return 1;
    }
    const qint64 id = store.beginRun(QJsonObject{{QStringLiteral("data"), QStringLiteral("synthetic")}},
                                     QJsonObject{{QStringLiteral("name"), QStringLiteral("mlp")}}, QStringLiteral("cpu"), name);
    if (id == 0) {
        QTextStream(stderr) << "beginRun: " << store.lastError() << '\n';
        return 1;
    }
    for (int i = 1; i <= 2; ++i) {
        hr::StepEvent e;
        e.step = i;
        e.epoch = 1;
        e.loss = 1.0 / i;
        store.addStep(id, e);
    }
    store.finishRun(id, QStringLiteral("finished"));
    return store.flush() ? 0 : 1;
}

// Schema 1 as the first Headroom wrote it, with one run of two steps.
void writeSchemaV1(const QString& path) {
    const QString name = QStringLiteral("v1-writer");
    {
        QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        d.setDatabaseName(path);
        QVERIFY(d.open());
        QSqlQuery q(d);
        for (const char* sql :
             {"CREATE TABLE schema_version (version INTEGER NOT NULL)", "INSERT INTO schema_version VALUES (1)",
              "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, status TEXT NOT NULL, "
              "created TEXT NOT NULL, finished TEXT, spec TEXT, config TEXT, final_metrics TEXT)",
              "CREATE TABLE step_metrics (run_id INTEGER NOT NULL, step INTEGER NOT NULL, epoch INTEGER, loss REAL, "
              "accuracy REAL, lr REAL, step_seconds REAL, images_per_second REAL, elapsed_seconds REAL, "
              "loss_scale REAL, skipped INTEGER)",
              "CREATE TABLE epoch_metrics (run_id INTEGER NOT NULL, epoch INTEGER NOT NULL, step INTEGER, "
              "train_loss REAL, train_accuracy REAL, test_loss REAL, test_accuracy REAL, seconds REAL, "
              "images_per_second REAL)",
              "INSERT INTO runs(name, status, created, finished, spec, config) VALUES ('old run', 'finished', "
              "'2024-01-02T03:04:05.000Z', '2024-01-02T03:05:05.000Z', '{\"name\":\"mlp\"}', '{\"data\":\"mnist\"}')",
              "INSERT INTO step_metrics(run_id, step, epoch, loss) VALUES (1, 1, 1, 2.5), (1, 2, 1, 2.0)"})
            QVERIFY2(q.exec(QString::fromUtf8(sql)), sql);
        d.close();
    }
    QSqlDatabase::removeDatabase(name);
}

// What a history file holds, read by a second connection: PRAGMA user_version and the schema_version rows.
struct SchemaState {
    int userVersion = -1;
    QList<int> versions;
    QStringList runColumns;
};
SchemaState schemaState(const QString& path) {
    SchemaState s;
    const QString name = QStringLiteral("schema-reader");
    {
        QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        d.setDatabaseName(path);
        if (d.open()) {
            QSqlQuery q(d);
            if (q.exec(QStringLiteral("PRAGMA user_version")) && q.next()) s.userVersion = q.value(0).toInt();
            q.exec(QStringLiteral("SELECT version FROM schema_version"));
            while (q.next()) s.versions << q.value(0).toInt();
            q.exec(QStringLiteral("PRAGMA table_info(runs)"));
            while (q.next()) s.runColumns << q.value(1).toString();
            d.close();
        }
    }
    QSqlDatabase::removeDatabase(name);
    return s;
}

// OMP_NUM_THREADS=1 (the processes share two cores); the user's settings and history never touched.
QProcessEnvironment quietEnvironment(const QString& home) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
    env.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/xdg-data"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/xdg-config"));
    return env;
}

struct Finished {
    int exitCode = -1;
    QString output;
};

// Waits for every process; what each printed and its exit code.
std::vector<Finished> waitAll(std::vector<std::unique_ptr<QProcess>>& processes, int timeoutMs) {
    std::vector<Finished> out;
    for (auto& p : processes) {
        if (!p->waitForFinished(timeoutMs)) {
            p->kill();
            p->waitForFinished(5000);
        }
        out.push_back({p->exitStatus() == QProcess::NormalExit ? p->exitCode() : -1, QString::fromLocal8Bit(p->readAll())});
    }
    return out;
}

}  // namespace

class TestHistoryConcurrency : public QObject {
    Q_OBJECT
    QString m_dir;

    // N `headroom train` runs of 2 steps started at once against `db`, while this process opens the same
    // history (as the window does). Every run must be recorded and finished with its steps.
    void trainRunsAtOnce(const QString& db, int n, int runsBefore) {
        const QString exe = hrtest::qbinary_path("headroom");
        QVERIFY2(QFileInfo::exists(exe), "build the headroom target");
        std::vector<std::unique_ptr<QProcess>> processes;
        const QString tag = QFileInfo(db).baseName();
        for (int i = 0; i < n; ++i) {
            auto p = std::make_unique<QProcess>();
            p->setProcessChannelMode(QProcess::MergedChannels);
            p->setProcessEnvironment(quietEnvironment(m_dir));
            p->start(exe, {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "64", "--test-limit", "32",
                           "--batch", "16", "--steps", "2", "--threads", "1", "--device", "cpu", "--quiet",
                           "--db", db, "--out", m_dir + QStringLiteral("/%1-run%2").arg(tag).arg(i),
                           "--name", QStringLiteral("%1 train %2").arg(tag).arg(i)});
            processes.push_back(std::move(p));
        }
        // the window's history, opened while the runs start
        RunStore window;
        QVERIFY2(window.open(db), qPrintable(window.lastError()));
        QCOMPARE(window.schemaVersion(), RunStore::kSchemaVersion);
        const std::vector<Finished> done = waitAll(processes, 240000);
        for (int i = 0; i < n; ++i) {
            QVERIFY2(done[i].exitCode == 0, qPrintable(done[i].output));
            QVERIFY2(!done[i].output.contains(QStringLiteral("run history")), qPrintable(done[i].output));
        }
        const QVector<RunInfo> runs = window.listRuns();
        QCOMPARE(runs.size(), runsBefore + n);
        for (int i = 0; i < n; ++i) {
            const QString name = QStringLiteral("%1 train %2").arg(tag).arg(i);
            const auto it = std::find_if(runs.begin(), runs.end(), [&](const RunInfo& r) { return r.name == name; });
            QVERIFY2(it != runs.end(), qPrintable(name + QStringLiteral(" is not in the history")));
            QCOMPARE(it->status, QStringLiteral("finished"));
            QCOMPARE(it->stepCount, qint64(2));
        }
    }

    // N helper processes, released at one barrier, against `db`: every run recorded with its 2 steps.
    void helpersAtOnce(const QString& db, int n, int runsBefore, const QString& round) {
        const QString go = db + QStringLiteral(".go");
        QFile::remove(go);
        std::vector<std::unique_ptr<QProcess>> processes;
        for (int i = 0; i < n; ++i) {
            auto p = std::make_unique<QProcess>();
            p->setProcessChannelMode(QProcess::MergedChannels);
            QProcessEnvironment env = quietEnvironment(m_dir);
            env.insert(QStringLiteral("HR_HISTORY_HELPER"), db);
            env.insert(QStringLiteral("HR_HISTORY_GO"), go);
            env.insert(QStringLiteral("HR_HISTORY_NAME"), QStringLiteral("%1 helper %2").arg(round).arg(i));
            p->setProcessEnvironment(env);
            p->start(QCoreApplication::applicationFilePath(), {});
            QVERIFY(p->waitForStarted(30000));
            processes.push_back(std::move(p));
        }
        QThread::msleep(300);  // each has loaded and waits at the barrier
        {
            QFile f(go);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        const std::vector<Finished> done = waitAll(processes, 120000);
        for (const Finished& f : done) QVERIFY2(f.exitCode == 0, qPrintable(f.output));
        RunStore store;
        QVERIFY2(store.open(db), qPrintable(store.lastError()));
        const QVector<RunInfo> runs = store.listRuns();
        QCOMPARE(runs.size(), runsBefore + n);
        for (int i = 0; i < n; ++i) {
            const QString name = QStringLiteral("%1 helper %2").arg(round).arg(i);
            const auto it = std::find_if(runs.begin(), runs.end(), [&](const RunInfo& r) { return r.name == name; });
            QVERIFY2(it != runs.end(), qPrintable(name + QStringLiteral(" is not in the history")));
            QCOMPARE(it->status, QStringLiteral("finished"));
            QCOMPARE(it->stepCount, qint64(2));
        }
    }

    static void schemaIsCurrent(const QString& db) {
        const SchemaState s = schemaState(db);
        QCOMPARE(s.userVersion, RunStore::kSchemaVersion);
        QCOMPARE(s.versions, QList<int>{RunStore::kSchemaVersion});  // one row: created or upgraded once
        for (const char* column : {"device", "error", "pid", "continues"})
            QCOMPARE(s.runColumns.count(QLatin1String(column)), 1);
    }

private slots:
    void initTestCase() {
        m_dir = QString::fromStdString(hrtest::temp_dir("hr-history-concurrency"));
        QVERIFY(QDir(m_dir).exists());
    }

    // a new machine: no history file yet
    void newHistoryManyProcesses() {
        for (int round = 0; round < 3; ++round) {
            const QString db = m_dir + QStringLiteral("/helpers-new-%1.sqlite").arg(round);
            helpersAtOnce(db, 8, 0, QStringLiteral("new %1").arg(round));
            schemaIsCurrent(db);
        }
    }

    // after an update: a history at schema 1 upgraded by whichever process comes first
    void oldHistoryManyProcesses() {
        for (int round = 0; round < 3; ++round) {
            const QString db = m_dir + QStringLiteral("/helpers-v1-%1.sqlite").arg(round);
            writeSchemaV1(db);
            helpersAtOnce(db, 8, 1, QStringLiteral("v1 %1").arg(round));
            schemaIsCurrent(db);
            RunStore store;
            QVERIFY(store.open(db));
            QCOMPARE(store.run(1)->name, QStringLiteral("old run"));  // the old run kept, with its steps
            QCOMPARE(store.steps(1).size(), 2);
        }
    }

    void newHistoryTrainRuns() {
        const QString db = m_dir + QStringLiteral("/train-new.sqlite");
        trainRunsAtOnce(db, 6, 0);
        schemaIsCurrent(db);
    }

    void oldHistoryTrainRuns() {
        const QString db = m_dir + QStringLiteral("/train-v1.sqlite");
        writeSchemaV1(db);
        trainRunsAtOnce(db, 6, 1);
        schemaIsCurrent(db);
    }

    // a current file is opened without the write lock: a reader holding a transaction open does not
    // keep a new RunStore from opening it (PRAGMA user_version says it is current)
    void currentHistoryOpensWithoutTheWriteLock() {
        const QString db = m_dir + QStringLiteral("/current.sqlite");
        {
            RunStore first;
            QVERIFY(first.open(db));
        }
        const QString name = QStringLiteral("writer-holding-the-lock");
        {
            QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
            d.setDatabaseName(db);
            QVERIFY(d.open());
            QSqlQuery q(d);
            QVERIFY(q.exec(QStringLiteral("BEGIN IMMEDIATE")));  // another process's write in progress
            QElapsedTimer t;
            t.start();
            RunStore second;
            QVERIFY2(second.open(db), qPrintable(second.lastError()));
            QVERIFY2(t.elapsed() < 2000, "waited for the write lock");
            QCOMPARE(second.schemaVersion(), RunStore::kSchemaVersion);
            QVERIFY(q.exec(QStringLiteral("ROLLBACK")));
            d.close();
        }
        QSqlDatabase::removeDatabase(name);
    }
};

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsSet("HR_HISTORY_HELPER")) {
        QCoreApplication app(argc, argv);
        return helperMain();
    }
    QCoreApplication app(argc, argv);
    TestHistoryConcurrency test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "test_history_concurrency.moc"
