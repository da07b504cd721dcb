// Issue 9's "done when": the same run through the command line and through the window produces the
// same history record, the same JSON report, the same run.json and the same webhook message (captured
// by a local HTTP server), timestamps, ids, timings and process details aside. Both go through one
// RunController; this test holds them to it from the outside: `headroom train` as a separate process,
// the window in this one, one history database, one webhook.
#include <QtTest>
#include "test_support.h"

#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "gui/MainWindow.h"
#include "http_sink.h"
#include "report/report_writer.h"
#include "store/run_store.h"

using namespace hrapp;

namespace {

// What may differ between two runs of the same configuration: when, which id, how fast, and what the
// process itself looked like (telemetry, memory samples over time, file paths).
const QSet<QString> kVolatile = {"id", "created", "finished", "generated", "seconds", "train_seconds", "images_per_second",
                                 "samples_per_second", "tokens_per_second",
                                 "step_seconds", "elapsed_seconds", "telemetry", "samples", "source_dir",
                                 "out_dir", "measured_resident_peak_bytes"};

QJsonValue stripped(const QJsonValue& v) {
    if (v.isObject()) {
        QJsonObject o;
        const QJsonObject in = v.toObject();
        for (auto it = in.begin(); it != in.end(); ++it)
            if (!kVolatile.contains(it.key())) o[it.key()] = stripped(it.value());
        return o;
    }
    if (v.isArray()) {
        QJsonArray a;
        for (const QJsonValue& e : v.toArray()) a.append(stripped(e));
        return a;
    }
    return v;
}

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// The first difference between two JSON values, as a path ("" when equal).
QString firstDifference(const QJsonValue& a, const QJsonValue& b, const QString& at = "$") {
    if (a.type() != b.type()) return at + " (type)";
    if (a.isObject()) {
        const QJsonObject x = a.toObject(), y = b.toObject();
        QStringList keys = x.keys() + y.keys();
        keys.removeDuplicates();
        for (const QString& k : keys) {
            const QString d = firstDifference(x.value(k), y.value(k), at + "." + k);
            if (!d.isEmpty()) return d;
        }
        return {};
    }
    if (a.isArray()) {
        const QJsonArray x = a.toArray(), y = b.toArray();
        if (x.size() != y.size()) return at + QString(" (%1 vs %2 entries)").arg(x.size()).arg(y.size());
        for (int i = 0; i < x.size(); ++i) {
            const QString d = firstDifference(x[i], y[i], at + QString("[%1]").arg(i));
            if (!d.isEmpty()) return d;
        }
        return {};
    }
    return a == b ? QString() : at + " (" + QJsonDocument(QJsonArray{a}).toJson(QJsonDocument::Compact) + " vs " +
                                    QJsonDocument(QJsonArray{b}).toJson(QJsonDocument::Compact) + ")";
}

// A webhook message without its timings: the "Training time" line and the metrics' times.
QJsonObject webhookWithoutTimes(const QByteArray& body) {
    QJsonObject o = QJsonDocument::fromJson(body).object();
    QStringList lines = o["text"].toString().split('\n');
    lines.erase(std::remove_if(lines.begin(), lines.end(), [](const QString& l) { return l.startsWith("Training time"); }),
                lines.end());
    o["text"] = lines.join('\n');
    return stripped(o).toObject();
}

}  // namespace

class TestSameRun : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    hrtest::HttpSink m_sink;
    QString m_db;

    // The run, as the window's panels set it and as flags say it.
    static hr::TrainConfig windowConfig(MainWindow& w) {
        hr::TrainConfig c = w.trainConfig();
        c.data = "synthetic";
        c.train_limit = 256;
        c.test_limit = 64;
        c.epochs = 2;
        c.steps = 0;
        c.batch = 32;
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 0.05;
        c.optimizer.momentum = 0.9;
        c.seed = 7;
        c.threads = 2;
        c.device = "cpu";
        return c;
    }
    QStringList cliFlags() const {
        return {"train", "--preset", "seed-cnn", "--data", "synthetic", "--train-limit", "256", "--test-limit", "64",
                "--epochs", "2", "--batch", "32", "--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9", "--seed", "7",
                "--threads", "2", "--device", "cpu", "--db", m_db, "--out", m_dir.filePath("cli"),
                "--notify", m_sink.url().toString()};
    }

private slots:
    void sameRecordReportRunJsonAndMessage() {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomSameRunTest"));
        m_db = m_dir.filePath("runs.sqlite");
        qputenv("HEADROOM_DB", m_db.toUtf8());
        QSettings().clear();
        QSettings().setValue(QStringLiteral("notify/webhookUrl"), m_sink.url().toString());
        QSettings().setValue(QStringLiteral("notify/webhookTemplate"), QStringLiteral("generic"));
        QSettings().setValue(QStringLiteral("notify/desktop"), false);

        // 1. the window
        qint64 windowRun = 0;
        {
            MainWindow w;
            w.setPersistState(false);
            w.setAskBeforeClose(false);
            w.show();
            w.setTrainConfig(windowConfig(w));
            QSignalSpy finished(&w, &MainWindow::runFinished);
            QSignalSpy settled(w.runController(), &RunController::notificationsSettled);
            w.start();
            QVERIFY(w.isRunning());
            windowRun = w.currentRunId();
            QVERIFY(finished.wait(300000));
            QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("finished"));
            QVERIFY(settled.count() > 0 || settled.wait(20000));
        }
        QCOMPARE(m_sink.bodies.size(), 1);

        // 2. the command line, in a process of its own
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        p.setProcessEnvironment(env);
        p.start(hrtest::qbinary_path("headroom"), cliFlags());
        QVERIFY(p.waitForStarted(10000));
        QVERIFY(QTest::qWaitFor([&] { return p.state() == QProcess::NotRunning; }, 300000));  // serve the webhook meanwhile
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QCOMPARE(m_sink.bodies.size(), 2);

        RunStore store;
        QVERIFY(store.open(m_db));
        const QVector<RunInfo> runs = store.listRuns();
        QCOMPARE(runs.size(), 2);
        const qint64 cliRun = runs.first().id;  // the newest
        QCOMPARE(runs.last().id, windowRun);

        // the history record
        const RunInfo a = *store.run(windowRun), b = *store.run(cliRun);
        QCOMPARE(b.name, a.name);
        QCOMPARE(b.status, QStringLiteral("finished"));
        QCOMPARE(b.status, a.status);
        QCOMPARE(b.device, a.device);
        QCOMPARE(b.error, a.error);
        QCOMPARE(b.stepCount, a.stepCount);
        QVERIFY2(stripped(b.config) == stripped(a.config), qPrintable(firstDifference(a.config, b.config)));
        QVERIFY2(b.spec == a.spec, qPrintable(firstDifference(a.spec, b.spec)));
        QVERIFY2(stripped(b.finalMetrics) == stripped(a.finalMetrics),
                 qPrintable(firstDifference(stripped(a.finalMetrics), stripped(b.finalMetrics))));
        QVERIFY(a.finalMetrics["test_accuracy"].toDouble() > 0.1);
        QCOMPARE(store.memory(cliRun).size(), store.memory(windowRun).size());
        qint64 predicted = 0;
        for (int i = 0; i < store.memory(windowRun).size(); ++i) {
            const MemoryCategoryRow x = store.memory(windowRun)[i], y = store.memory(cliRun)[i];
            QCOMPARE(y.category, x.category);
            QCOMPARE(y.predicted, x.predicted);
            QCOMPARE(y.peak, x.peak);
            QCOMPARE(y.atPeak, x.atPeak);
            predicted += qMax<qint64>(0, x.predicted);
        }
        QVERIFY(predicted > 0);

        // the JSON report (every step, epoch and memory row; the run's record)
        const QString ra = m_dir.filePath("window.json"), rb = m_dir.filePath("cli.json");
        QVERIFY(ReportWriter(*ReportWriter::load(store, windowRun)).write(ra, ReportWriter::Format::Json));
        QVERIFY(ReportWriter(*ReportWriter::load(store, cliRun)).write(rb, ReportWriter::Format::Json));
        const QJsonValue ja = stripped(readJson(ra)), jb = stripped(readJson(rb));
        QVERIFY(ja.toObject()["steps"].toArray().size() == 16);
        QVERIFY2(ja == jb, qPrintable(firstDifference(ja, jb)));

        // run.json, written by each
        QString windowRunJson;
        QDirIterator it(m_dir.filePath("runs"), {"run.json"}, QDir::Files, QDirIterator::Subdirectories);
        if (it.hasNext()) windowRunJson = it.next();
        QVERIFY2(!windowRunJson.isEmpty(), "the window wrote no run.json beside the history");
        QVERIFY(QFileInfo::exists(QFileInfo(windowRunJson).dir().filePath("model.safetensors")));
        const QJsonValue wa = stripped(readJson(windowRunJson)), wb = stripped(readJson(m_dir.filePath("cli/run.json")));
        QVERIFY(wa.toObject()["status"].toString() == "finished");
        QVERIFY2(wa == wb, qPrintable(firstDifference(wa, wb)));

        // the webhook message
        const QJsonObject ma = webhookWithoutTimes(m_sink.bodies[0]), mb = webhookWithoutTimes(m_sink.bodies[1]);
        QCOMPARE(ma["event"].toString(), QStringLiteral("run_finished"));
        QCOMPARE(ma["details"].toObject()["run"].toString(), a.name);
        QVERIFY2(ma == mb, qPrintable(firstDifference(ma, mb)));
        QSettings().clear();
    }
};

QTEST_MAIN(TestSameRun)
#include "test_same_run.moc"
