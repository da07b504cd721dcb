// Continue training from the Runs tab (issue 13): a run stopped early in the window is continued from
// its folder's checkpoint to a new total length, through the same controller path `headroom train
// --resume` takes. The reference is the same configuration trained that many steps without stopping (a
// second controller, its own folder): the continued run's model.safetensors holds the same tensors, byte
// for byte (CPU, f32, one thread, constant schedule). The history links the two runs (the Runs tab's
// Continued column, RunInfo), and the button says why it is disabled for a finished or an already
// continued run.
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include "test_support.h"

#include "gui/MainWindow.h"
#include "gui/RunsView.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"
#include "session/RunController.h"
#include "store/run_store.h"
#include "train/resume.h"

#include <nlohmann/json.hpp>

using namespace hrapp;

namespace {

hr::TrainConfig tinyConfig(std::int64_t steps) {
    hr::TrainConfig c = defaultTrainConfig();
    c.model = hr::preset_model("mlp");
    c.model_source = "preset:mlp";
    c.data = "synthetic";
    c.train_limit = 256;  // 16 steps of 16 per epoch
    c.test_limit = 64;
    c.batch = 16;
    c.steps = steps;
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.05;
    c.optimizer.momentum = 0.9;
    c.schedule.kind = "constant";
    c.threads = 1;
    c.device = "cpu";
    return c;
}

// Tensors that differ between two safetensors files (name, shape, dtype or bytes); the files' metadata
// (the run record, with its times) is not compared.
int differing(const hr::SafeTensorsFile& a, const hr::SafeTensorsFile& b) {
    if (a.tensors.size() != b.tensors.size()) return 1000;
    int n = 0;
    for (const hr::SafeTensor& t : a.tensors) {
        const hr::SafeTensor* u = b.find(t.name);
        if (!u || u->shape != t.shape || u->dtype != t.dtype || u->data != t.data) ++n;
    }
    return n;
}

}  // namespace

class TestContinueTraining : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomContinueTest"));
        QVERIFY(m_dir.isValid());
    }

    void continueStoppedRunFromRunsTab() {
        MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        RunController* controller = w.runController();
        RunsView* runs = w.runsView();
        const std::int64_t ownLength = 100000;  // far more than runs before Stop lands

        // 1. a run started in the window, stopped after its first steps
        QSignalSpy steps(controller, &RunController::stepsReady);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        QString error;
        QVERIFY2(controller->start(tinyConfig(ownLength), w.runOptions(), &error), qPrintable(error));
        const qint64 first = controller->runId();
        QVERIFY(first > 0);
        QVERIFY(QTest::qWaitFor([&] { return steps.count() >= 1; }, 120000));
        w.stop();
        QVERIFY(finished.wait(60000));
        QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("stopped"));
        const auto firstInfo = w.runStore()->run(first);
        QVERIFY(firstInfo && !firstInfo->outDir.isEmpty());
        const hr::Checkpoint ck = hr::read_latest_checkpoint_json(firstInfo->outDir.toStdString());
        const std::int64_t stoppedAt = ck.cursor.step;
        QVERIFY(stoppedAt >= 1 && stoppedAt < ownLength);
        const std::int64_t total = stoppedAt + 21;  // a new length: ends mid-epoch, past an epoch's end

        // 2. the Runs tab offers Continue training for it
        QVERIFY(QTest::qWaitFor([&] { return runs->rowOf(first) >= 0; }, 5000));
        runs->selectRuns({first});
        QVERIFY2(runs->continueButton()->isEnabled(), qPrintable(runs->continueButton()->toolTip()));
        QVERIFY(runs->continueButton()->toolTip().contains(QString::number(stoppedAt)));

        // the dialog asks for the total length, the run's own as default; we give the new one
        std::int64_t offered = -1;
        QTimer::singleShot(0, this, [&] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            if (!dialog || dialog->objectName() != QLatin1String("continueDialog")) return;
            auto* spin = dialog->findChild<QSpinBox*>(QStringLiteral("continueLength"));
            offered = spin->value();
            spin->setValue(int(total));
            dialog->accept();
        });
        QSignalSpy started(controller, &RunController::runStarted);
        QTest::mouseClick(runs->continueButton(), Qt::LeftButton);
        QCOMPARE(offered, ownLength);
        QVERIFY(started.count() == 1 || started.wait(10000));
        const qint64 second = started.first().first().toLongLong();
        QVERIFY(second > first);
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QCOMPARE(QString::fromStdString(r.status), QStringLiteral("finished"));
        QCOMPARE(r.steps, total);
        QCOMPARE(r.resumed_from_step, stoppedAt);

        // 3. the same configuration, `total` steps uninterrupted, in a folder of its own
        RunController reference;
        RunOptions o;
        o.outDir = m_dir.filePath(QStringLiteral("uninterrupted"));
        o.sampleTelemetry = false;
        QSignalSpy refDone(&reference, &RunController::runFinished);
        QVERIFY2(reference.start(tinyConfig(total), o, &error), qPrintable(error));
        QVERIFY(refDone.wait(300000));
        QCOMPARE(QString::fromStdString(refDone.first().first().value<RunOutcome>().result().status),
                 QStringLiteral("finished"));
        const hr::SafeTensorsFile continued = hr::read_safetensors((firstInfo->outDir + "/model.safetensors").toStdString());
        const hr::SafeTensorsFile uninterrupted = hr::read_safetensors((o.outDir + "/model.safetensors").toStdString());
        QVERIFY(!continued.tensors.empty());
        QCOMPARE(differing(continued, uninterrupted), 0);

        // 4. the history links the two, and the Runs tab shows it
        const auto a = w.runStore()->run(first), b = w.runStore()->run(second);
        QVERIFY(a && b);
        QCOMPARE(b->continuesRunId, first);
        QCOMPARE(a->continuedBy, QList<qint64>{second});
        QCOMPARE(b->outDir, a->outDir);
        QCOMPARE(b->status, QStringLiteral("finished"));
        QCOMPARE(b->config.value(QStringLiteral("steps")).toInteger(), qint64(total));
        runs->reload();
        QTableWidget* t = runs->table();
        QCOMPARE(t->item(runs->rowOf(second), RunsView::ContinuedColumn)->text(), QStringLiteral("continues #%1").arg(first));
        QCOMPARE(t->item(runs->rowOf(first), RunsView::ContinuedColumn)->text(), QStringLiteral("continued in #%1").arg(second));

        // 5. neither can be continued now: the first was continued, the second finished; each says why
        runs->selectRuns({first});
        QVERIFY(!runs->continueButton()->isEnabled());
        QVERIFY(runs->continueButton()->toolTip().contains(QStringLiteral("#%1").arg(second)));
        runs->selectRuns({second});
        QVERIFY(!runs->continueButton()->isEnabled());
        QVERIFY(runs->continueButton()->toolTip().contains(QStringLiteral("finished")));
        QVERIFY(!runs->continueRun(second, false));
    }

    void runWithoutCheckpointSaysWhy() {
        MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        // a failed run whose folder holds no checkpoint (it failed at setup)
        hr::TrainConfig c = tinyConfig(10);
        c.data = "idx:/nonexistent/folder";
        QSignalSpy finished(&w, &MainWindow::runFinished);
        QString error;
        QVERIFY2(w.runController()->start(c, w.runOptions(), &error), qPrintable(error));
        const qint64 id = w.runController()->runId();
        QVERIFY(finished.wait(60000));
        QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("failed"));
        RunsView* runs = w.runsView();
        runs->reload();
        runs->selectRuns({id});
        QVERIFY(!runs->continueButton()->isEnabled());
        const QString why = runs->continueButton()->toolTip();
        QVERIFY2(why.contains(QStringLiteral("checkpoint")), qPrintable(why));
        QVERIFY(!runs->continueRun(id, false));
    }

    // `headroom train --resume DIR --config FILE` (how the window continues a multi-rank run): FILE is the
    // continued configuration as a whole. One that changes anything but the length, threads, device,
    // checkpoint interval and stage is refused naming the fields, and the folder stays as it was; the right
    // one continues the run from its checkpoint to FILE's length.
    void resumeWithTheContinuedConfigFile() {
        const QString exe = hrtest::qbinary_path("headroom");
        const QString dir = m_dir.filePath(QStringLiteral("resume-config"));
        const QString run = dir + QStringLiteral("/run");
        QDir().mkpath(dir);
        auto headroom = [&](const QStringList& args, QString* err = nullptr) {
            QProcess p;
            p.start(exe, args);
            if (!p.waitForFinished(120000)) return -1;
            if (err) *err = QString::fromUtf8(p.readAllStandardError());
            return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        };
        QString err;
        QCOMPARE(headroom({"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--batch", "16",
                           "--steps", "6", "--save-every", "3", "--threads", "1", "--device", "cpu", "--optimizer",
                           "sgd", "--lr", "0.05", "--no-history", "--quiet", "--out", run},
                          &err),
                 0);
        QString error;
        const std::optional<ContinuePoint> point = RunController::continuePoint(run, &error);
        QVERIFY2(point, qPrintable(error));
        auto write = [&](const QString& name, const hr::TrainConfig& c) {
            QFile f(dir + QLatin1Char('/') + name);
            f.open(QIODevice::WriteOnly);
            f.write(QByteArray::fromStdString(hr::train_config_to_json(c).dump(2)));
            return f.fileName();
        };
        // a changed learning rate and batch: refused, naming them; nothing in the folder changes
        hr::TrainConfig bad = RunController::continuedConfig(*point, 10, 0, 1);
        bad.optimizer.lr = 0.1;
        bad.batch = 32;
        const QStringList before = QDir(run).entryList(QDir::Files, QDir::Name);
        QCOMPARE(headroom({"train", "--resume", run, "--config", write("bad.json", bad), "--no-history"}, &err), 2);
        QVERIFY2(err.contains(QStringLiteral("optimizer.lr")) && err.contains(QStringLiteral("batch")), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);  // one message
        QCOMPARE(QDir(run).entryList(QDir::Files, QDir::Name), before);
        // other run flags beside the file: refused too
        QCOMPARE(headroom({"train", "--resume", run, "--config", write("bad.json", bad), "--lr", "0.1"}, &err), 2);
        QVERIFY2(err.contains(QStringLiteral("--lr")), qPrintable(err));
        // the continued configuration with a new length, threads and checkpoint interval: continues
        hr::TrainConfig good = RunController::continuedConfig(*point, 10, 0, 1);
        good.threads = 2;
        good.save_every_steps = 5;
        QCOMPARE(headroom({"train", "--resume", run, "--config", write("good.json", good), "--no-history", "--quiet"}, &err), 0);
        QFile rj(run + QStringLiteral("/run.json"));
        QVERIFY(rj.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(rj.readAll().toStdString());
        QCOMPARE(j["resume"]["resumed_from_step"].get<std::int64_t>(), std::int64_t(6));
        QCOMPARE(j["final"]["steps"].get<std::int64_t>(), std::int64_t(10));
        QCOMPARE(j["config"]["threads"].get<int>(), 2);
    }

    void continuedConfigIsOneRule() {
        // what `headroom train --resume` and the Runs tab's Continue both train with
        ContinuePoint p;
        p.config = tinyConfig(10);
        p.config.init_from = "/somewhere/model.safetensors";
        p.config.strategy.rank_batch = {3, 5};
        p.ranks = 2;
        hr::TrainConfig c = RunController::continuedConfig(p, 25, 0, 2);
        QCOMPARE(c.steps, std::int64_t(25));
        QVERIFY(c.init_from.empty());  // from the checkpoint's weights
        QCOMPARE(c.strategy.rank_batch, (std::vector<std::int64_t>{3, 5}));  // same ranks: kept
        QCOMPARE(c.batch, p.config.batch);
        c = RunController::continuedConfig(p, 0, 3, 4);  // in epochs, on four ranks
        QCOMPARE(c.steps, std::int64_t(0));
        QCOMPARE(c.epochs, 3);
        QVERIFY(c.strategy.rank_batch.empty());  // split evenly again
        c = RunController::continuedConfig(p, 0, 0, 2);  // its own length
        QCOMPARE(c.steps, p.config.steps);
        QCOMPARE(c.epochs, p.config.epochs);
    }
};

QTEST_MAIN(TestContinueTraining)
#include "test_continue_training.moc"
