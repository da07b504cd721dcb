// RunStore: schema migration from v1, batched writes, crash recovery, rename/delete/filter, reading back.
// (Labelled gui because it links headroom_app, where Qt Sql lives; it opens no window.)
#include <QtTest>

#include <QSqlDatabase>
#include <QSqlQuery>

#include "store/run_store.h"
#include "test_support.h"
#include "train/trainer.h"

using namespace hrapp;

namespace {

QString tempDb(const char* name) {
    return QString::fromStdString(hrtest::temp_dir("hr-store")) + QLatin1Char('/') + QLatin1String(name);
}

// Raw access to a database file outside RunStore (a second connection).
struct RawDb {
    explicit RawDb(const QString& path) : name(QStringLiteral("raw-") + QString::number(++counter)) {
        QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        d.setDatabaseName(path);
        d.open();
    }
    ~RawDb() {
        {
            QSqlDatabase d = QSqlDatabase::database(name);
            d.close();
        }
        QSqlDatabase::removeDatabase(name);
    }
    bool exec(const QString& sql) {
        QSqlQuery q(QSqlDatabase::database(name));
        return q.exec(sql);
    }
    QVariant scalar(const QString& sql) {
        QSqlQuery q(QSqlDatabase::database(name));
        if (!q.exec(sql) || !q.next()) return {};
        return q.value(0);
    }
    QString name;
    static inline int counter = 0;
};

hr::StepEvent step(std::int64_t i, double loss = 1.0) {
    hr::StepEvent e;
    e.step = i;
    e.epoch = 1 + static_cast<int>((i - 1) / 50);
    e.loss = loss;
    e.accuracy = 0.5;
    e.lr = 0.01;
    e.step_seconds = 0.02;
    e.images_per_second = 3200;
    return e;
}

QJsonObject config(const QString& data) {
    return QJsonObject{{QStringLiteral("data"), data}, {QStringLiteral("batch"), 64}};
}
QJsonObject spec(const QString& name) { return QJsonObject{{QStringLiteral("name"), name}}; }

}  // namespace

class TestRunStore : public QObject {
    Q_OBJECT
private slots:
    void freshDatabaseIsCurrentAndWal() {
        const QString path = tempDb("fresh.sqlite");
        RunStore store;
        QVERIFY2(store.open(path), qPrintable(store.lastError()));
        QCOMPARE(store.schemaVersion(), RunStore::kSchemaVersion);
        QVERIFY(store.listRuns().isEmpty());
        store.close();
        RawDb raw(path);
        QCOMPARE(raw.scalar(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
    }

    void migratesFromV1() {
        const QString path = tempDb("v1.sqlite");
        {
            RawDb raw(path);
            QVERIFY(raw.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)"));
            QVERIFY(raw.exec("INSERT INTO schema_version VALUES (1)"));
            QVERIFY(raw.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, "
                             "status TEXT NOT NULL, created TEXT NOT NULL, finished TEXT, spec TEXT, config TEXT, "
                             "final_metrics TEXT)"));
            QVERIFY(raw.exec("CREATE TABLE step_metrics (run_id INTEGER NOT NULL, step INTEGER NOT NULL, epoch INTEGER, "
                             "loss REAL, accuracy REAL, lr REAL, step_seconds REAL, images_per_second REAL, "
                             "elapsed_seconds REAL, loss_scale REAL, skipped INTEGER)"));
            QVERIFY(raw.exec("CREATE TABLE epoch_metrics (run_id INTEGER NOT NULL, epoch INTEGER NOT NULL, step INTEGER, "
                             "train_loss REAL, train_accuracy REAL, test_loss REAL, test_accuracy REAL, seconds REAL, "
                             "images_per_second REAL)"));
            QVERIFY(raw.exec("INSERT INTO runs(name, status, created, finished, spec, config, final_metrics) VALUES "
                             "('old run', 'finished', '2024-01-02T03:04:05.000Z', '2024-01-02T03:05:05.000Z', "
                             "'{\"name\":\"mlp\"}', '{\"data\":\"mnist\"}', '{\"test_accuracy\":0.9}')"));
            QVERIFY(raw.exec("INSERT INTO step_metrics(run_id, step, epoch, loss) VALUES (1, 1, 1, 2.5), (1, 2, 1, 2.0)"));
        }
        RunStore store;
        QVERIFY2(store.open(path), qPrintable(store.lastError()));
        QCOMPARE(store.schemaVersion(), 3);  // v1 -> v2 -> v3 (runs.continues)
        QCOMPARE(store.recoveredRuns(), 0);
        auto runs = store.listRuns();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs[0].name, QStringLiteral("old run"));
        QCOMPARE(runs[0].modelName, QStringLiteral("mlp"));
        QCOMPARE(runs[0].data, QStringLiteral("mnist"));
        QCOMPARE(runs[0].stepCount, qint64(2));
        QCOMPARE(runs[0].finalMetrics.value("test_accuracy").toDouble(), 0.9);
        QCOMPARE(runs[0].created.date(), QDate(2024, 1, 2));
        QCOMPARE(store.steps(1).size(), 2);
        QCOMPARE(store.steps(1)[1].loss, 2.0);
        // v2 tables work on the migrated file
        const qint64 id = store.beginRun(config("synthetic"), spec("lenet5"), "cpu");
        QVERIFY(id > 1);
        hr::TelemetrySample s;
        s.t_seconds = 5;
        s.host.ram_total = 1000;
        store.addTelemetry(id, s);
        QVERIFY(store.flush());
        QCOMPARE(store.telemetry(id).size(), 1);
        QCOMPARE(store.telemetry(id)[0].ramTotal, qint64(1000));
        QCOMPARE(store.telemetry(id)[0].t, 0.0);  // relative to the run's first sample
        store.close();
        // reopening does not migrate again
        QVERIFY(store.open(path));
        QCOMPARE(store.schemaVersion(), 3);
        QCOMPARE(store.listRuns().size(), 2);
        // v3: the new run continues the old one; both records show the link, deleting the old clears it
        QVERIFY(store.setContinues(id, 1));
        QCOMPARE(store.run(id)->continuesRunId, qint64(1));
        QCOMPARE(store.run(1)->continuedBy, QList<qint64>{id});
        QVERIFY(store.deleteRun(1));
        QCOMPARE(store.run(id)->continuesRunId, qint64(0));
    }

    void refusesNewerSchema() {
        const QString path = tempDb("newer.sqlite");
        {
            RawDb raw(path);
            QVERIFY(raw.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)"));
            QVERIFY(raw.exec("INSERT INTO schema_version VALUES (99)"));
        }
        RunStore store;
        QVERIFY(!store.open(path));
        QVERIFY(store.lastError().contains("newer"));
        QVERIFY(!store.isOpen());
    }

    void batchedWrites() {
        RunStore store;
        QVERIFY(store.open(tempDb("batch.sqlite")));
        store.setBatchSize(50);
        store.setFlushIntervalMs(600000);
        const qint64 id = store.beginRun(config("synthetic"), spec("mlp"), "cpu");
        QVERIFY(id > 0);
        const qint64 before = store.transactionsCommitted();
        for (int i = 1; i <= 120; ++i) store.addStep(id, step(i, 3.0 - i * 0.01));
        QCOMPARE(store.transactionsCommitted() - before, qint64(2));  // at 50 and 100 rows
        QCOMPARE(store.pendingRows(), 20);
        QCOMPARE(store.steps(id).size(), 100);  // the rest is still buffered
        QVERIFY(store.flush());
        QCOMPARE(store.transactionsCommitted() - before, qint64(3));
        QCOMPARE(store.pendingRows(), 0);
        const auto rows = store.steps(id);
        QCOMPARE(rows.size(), 120);
        QCOMPARE(rows.last().step, qint64(120));
        QVERIFY(qAbs(rows.last().loss - (3.0 - 1.2)) < 1e-12);
        QCOMPARE(rows.last().epoch, 3);
        // an empty flush commits nothing
        QVERIFY(store.flush());
        QCOMPARE(store.transactionsCommitted() - before, qint64(3));
    }

    void timedFlush() {
        RunStore store;
        QVERIFY(store.open(tempDb("timed.sqlite")));
        store.setBatchSize(100000);
        store.setFlushIntervalMs(50);
        const qint64 id = store.beginRun(config("synthetic"), spec("mlp"), "cpu");
        store.addStep(id, step(1));
        store.addStep(id, step(2));
        QTRY_COMPARE_WITH_TIMEOUT(store.pendingRows(), 0, 3000);
        QCOMPARE(store.steps(id).size(), 2);
    }

    void crashRecovery() {
        const QString path = tempDb("crash.sqlite");
        qint64 crashed = 0, alive = 0, done = 0;
        {
            RunStore store;
            QVERIFY(store.open(path));
            done = store.beginRun(config("mnist"), spec("mlp"), "cpu");
            store.finishRun(done, "finished");
            crashed = store.beginRun(config("mnist"), spec("lenet5"), "cpu");
            for (int i = 1; i <= 30; ++i) store.addStep(crashed, step(i));
            hr::EpochEvent ep;
            ep.epoch = 1;
            ep.train_loss = 0.7;
            store.addEpoch(crashed, ep);
            alive = store.beginRun(config("mnist"), spec("resnet-mini"), "cpu");
            // the store goes away without finishing: what a kill leaves behind (rows already flushed)
        }
        {
            RawDb raw(path);
            // the crashed run's process is gone; the other one belongs to a live process (pid 1)
            QVERIFY(raw.exec(QStringLiteral("UPDATE runs SET pid = 999999999 WHERE id = %1").arg(crashed)));
            QVERIFY(raw.exec(QStringLiteral("UPDATE runs SET pid = 1 WHERE id = %1").arg(alive)));
        }
        RunStore store;
        QVERIFY(store.open(path));
        QCOMPARE(store.recoveredRuns(), 1);
        auto r = store.run(crashed);
        QVERIFY(r.has_value());
        QCOMPARE(r->status, QStringLiteral("failed"));
        QVERIFY(r->error.contains("program ended during the run"));
        QVERIFY(r->finished.isValid());
        QCOMPARE(store.steps(crashed).size(), 30);  // everything written so far is kept
        QCOMPARE(store.epochs(crashed).size(), 1);
        QCOMPARE(store.run(alive)->status, QStringLiteral("running"));
        QCOMPARE(store.run(done)->status, QStringLiteral("finished"));
    }

    void renameDeleteFilter() {
        RunStore store;
        QVERIFY(store.open(tempDb("filter.sqlite")));
        QSignalSpy changed(&store, &RunStore::runsChanged);
        const qint64 a = store.beginRun(config("mnist"), spec("mlp"), "cpu");
        const qint64 b = store.beginRun(config("fashion-mnist"), spec("lenet5"), "cuda:0", "my lenet");
        const qint64 c = store.beginRun(config("synthetic"), spec("resnet-mini"), "cpu");
        store.finishRun(a, "finished");
        store.finishRun(b, "stopped");
        QCOMPARE(store.run(a)->name, QStringLiteral("mlp on mnist"));
        QCOMPARE(store.listRuns().size(), 3);
        QCOMPARE(store.listRuns().first().id, c);  // newest first
        RunFilter f;
        f.statuses = {"finished", "stopped"};
        QCOMPARE(store.listRuns(f).size(), 2);
        f = RunFilter();
        f.text = "LENET";
        QCOMPARE(store.listRuns(f).size(), 1);
        QCOMPARE(store.listRuns(f)[0].id, b);
        f.text = "cuda";
        QCOMPARE(store.listRuns(f).size(), 1);
        f = RunFilter();
        f.since = QDateTime::currentDateTimeUtc().addDays(1);
        QCOMPARE(store.listRuns(f).size(), 0);
        f = RunFilter();
        f.limit = 2;
        QCOMPARE(store.listRuns(f).size(), 2);

        QVERIFY(store.renameRun(a, "  baseline  "));
        QCOMPARE(store.run(a)->name, QStringLiteral("baseline"));
        QVERIFY(!store.renameRun(a, "   "));
        QVERIFY(!store.renameRun(12345, "x"));

        for (int i = 1; i <= 5; ++i) store.addStep(c, step(i));
        store.flush();
        QVERIFY(store.deleteRun(c));
        QVERIFY(!store.run(c).has_value());
        QCOMPARE(store.steps(c).size(), 0);
        QVERIFY(!store.deleteRun(c));
        QCOMPARE(store.listRuns().size(), 2);
        QVERIFY(changed.count() >= 7);
    }

    void finishWithResultMemoryAndOverlay() {
        RunStore store;
        QVERIFY(store.open(tempDb("finish.sqlite")));
        const qint64 a = store.beginRun(config("mnist"), spec("mlp"), "cpu");
        const qint64 b = store.beginRun(config("mnist"), spec("mlp"), "cpu");
        for (int i = 1; i <= 10; ++i) {
            store.addStep(a, step(i, 1.0 / i));
            store.addStep(b, step(i, 2.0 / i));
        }
        hr::MemoryEvent m;
        m.step = 3;
        m.elapsed_seconds = 0.5;
        m.device_capacity = 1 << 30;
        hr::at(m.ledger.peak, hr::MemCategory::parameters) = 4000;
        hr::at(m.ledger.peak, hr::MemCategory::activations) = 9000;
        m.ledger.live_total = 12000;
        store.addMemory(a, m);
        hr::CategoryBytes predicted{};
        hr::at(predicted, hr::MemCategory::parameters) = 4000;
        hr::at(predicted, hr::MemCategory::activations) = 8000;
        store.setPredictedMemory(a, predicted);

        hr::TrainResult r;
        r.status = "finished";
        r.test_accuracy = 0.87;
        r.steps = 10;
        r.seconds = 1.5;
        r.device_name = "cpu (OpenBLAS, 2 threads)";
        r.test_loss = std::numeric_limits<double>::quiet_NaN();
        hr::at(r.ledger.peak, hr::MemCategory::parameters) = 4000;
        hr::at(r.ledger.peak, hr::MemCategory::activations) = 9500;
        r.ledger.peak_total = 13500;
        store.finishRun(a, r);
        store.finishRun(b, "failed", "loss became NaN");

        auto ra = store.run(a);
        QCOMPARE(ra->status, QStringLiteral("finished"));
        QCOMPARE(ra->device, QStringLiteral("cpu (OpenBLAS, 2 threads)"));
        QCOMPARE(ra->finalMetrics.value("test_accuracy").toDouble(), 0.87);
        QVERIFY(ra->finalMetrics.value("test_loss").isNull());
        QCOMPARE(store.run(b)->error, QStringLiteral("loss became NaN"));

        const auto mem = store.memory(a);
        QCOMPARE(mem.size(), int(hr::kMemCategoryCount));
        QCOMPARE(mem[0].category, QStringLiteral("parameters"));
        QCOMPARE(mem[0].predicted, qint64(4000));
        const auto act = std::find_if(mem.begin(), mem.end(), [](auto& x) { return x.category == "activations"; });
        QCOMPARE(act->predicted, qint64(8000));
        QCOMPARE(act->peak, qint64(9500));
        QCOMPARE(store.memorySamples(a).size(), 1);
        QCOMPARE(store.memorySamples(a)[0].liveTotal, qint64(12000));
        QVERIFY(store.memory(b).isEmpty());

        const auto series = store.overlay({a, b}, "loss");
        QCOMPARE(series.size(), 2);
        QCOMPARE(series[0].x.size(), 10);
        QCOMPARE(series[1].y[1], 1.0);
        QCOMPARE(series[0].y[9], 0.1);
    }
};

QTEST_MAIN(TestRunStore)
#include "test_run_store.moc"
