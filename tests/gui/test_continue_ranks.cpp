// Continue training of a multi-rank run from the window (issues 10 and 13): a 2-rank run started in the
// window (RunController through RankRelay) and stopped writes its checkpoint; the Runs tab's Continue
// training relaunches it on its 2 ranks (`headroom train --resume DIR --ranks 2`) to a new total length.
// The reference is the same configuration trained that many steps on 2 ranks without stopping (another
// controller, its own folder): the continued run's model.safetensors holds the same tensors, byte for
// byte (CPU, f32, one thread per rank, constant schedule). run.json of the continued run says 2 ranks and
// the step it resumed from; the history links the two runs.
#include <QDialog>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include "test_support.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "gui/MainWindow.h"
#include "gui/RunsView.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"
#include "session/RunController.h"
#include "store/run_store.h"
#include "train/resume.h"

using namespace hrapp;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

hr::TrainConfig rankConfig(std::int64_t steps) {
    hr::TrainConfig c = defaultTrainConfig();
    c.model = hr::preset_model("mlp");
    c.model_source = "preset:mlp";
    c.data = "synthetic";
    c.train_limit = 256;
    c.test_limit = 64;
    c.batch = 64;
    c.steps = steps;
    c.optimizer.kind = "adam";
    c.optimizer.lr = 0.001;
    c.schedule.kind = "constant";
    c.strategy.shard = "zero2";
    c.threads = 1;
    c.device = "cpu";
    return c;
}

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

class TestContinueRanks : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomContinueRanksTest"));
        QVERIFY(m_dir.isValid());
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty()) QSKIP("no mpirun on PATH");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        qputenv("OMP_NUM_THREADS", "1");
        qputenv("HEADROOM_PROGRAM", kHeadroom.toLocal8Bit());  // the ranks are headroom, not this test
    }

    void continueStoppedMultiRankRun() {
        MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        RunController* controller = w.runController();
        RunsView* runs = w.runsView();
        const std::int64_t ownLength = 1000000;

        // 1. a 2-rank run started in the window, stopped after a few steps: its checkpoint is of 2 ranks
        QSignalSpy finished(&w, &MainWindow::runFinished);
        std::int64_t lastStep = 0;
        connect(controller, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& s) { lastStep = s.last().step; });
        RunOptions o = w.runOptions();
        o.ranks = 2;
        o.rankProgram = kHeadroom;
        o.outDir = m_dir.filePath(QStringLiteral("run"));
        QString error;
        QVERIFY2(controller->start(rankConfig(ownLength), o, &error), qPrintable(error));
        QVERIFY(controller->isMultiRank());
        const qint64 first = controller->runId();
        QVERIFY(first > 0);
        QVERIFY(QTest::qWaitFor([&] { return lastStep >= 3; }, 120000));
        w.stop();
        QVERIFY(finished.wait(60000));
        QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("stopped"));
        const hr::Checkpoint ck = hr::read_latest_checkpoint_json(o.outDir.toStdString());
        QCOMPARE(ck.world_size, 2);
        const std::int64_t stoppedAt = ck.cursor.step;
        QVERIFY(stoppedAt >= 3 && stoppedAt < ownLength);
        const std::int64_t total = stoppedAt + 6;  // past an epoch's end (4 steps an epoch)
        const std::optional<ContinuePoint> point = RunController::continuePoint(o.outDir);
        QVERIFY(point);
        QCOMPARE(point->ranks, 2);

        // 2. Continue training from the Runs tab: the dialog says the ranks and asks for the length
        QVERIFY(QTest::qWaitFor([&] { return runs->rowOf(first) >= 0; }, 5000));
        runs->selectRuns({first});
        QVERIFY2(runs->continueButton()->isEnabled(), qPrintable(runs->continueButton()->toolTip()));
        QString ranksNote;
        QTimer::singleShot(0, this, [&] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            if (!dialog || dialog->objectName() != QLatin1String("continueDialog")) return;
            if (auto* l = dialog->findChild<QLabel*>(QStringLiteral("continueRanks"))) ranksNote = l->text();
            dialog->findChild<QSpinBox*>(QStringLiteral("continueLength"))->setValue(int(total));
            dialog->accept();
        });
        QSignalSpy started(controller, &RunController::runStarted);
        QTest::mouseClick(runs->continueButton(), Qt::LeftButton);
        QVERIFY2(ranksNote.contains(QStringLiteral("2 ranks")), qPrintable(ranksNote));
        QVERIFY(started.count() == 1 || started.wait(10000));
        QVERIFY(controller->isMultiRank());  // relaunched on its ranks, not as one process
        const qint64 second = started.first().first().toLongLong();
        QVERIFY(finished.wait(120000));
        const hr::TrainResult r = w.lastResult();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QCOMPARE(r.steps, total);
        QCOMPARE(r.resumed_from_step, stoppedAt);
        QCOMPARE(r.world_size, 2);
        std::ifstream in((o.outDir + QStringLiteral("/run.json")).toStdString());
        const nlohmann::json j = nlohmann::json::parse(in);
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QCOMPARE(j["resume"]["resumed_from_step"].get<std::int64_t>(), stoppedAt);

        // 3. the same configuration, `total` steps on 2 ranks uninterrupted
        RunController reference;
        RunOptions ro;
        ro.outDir = m_dir.filePath(QStringLiteral("uninterrupted"));
        ro.sampleTelemetry = false;
        ro.ranks = 2;
        ro.rankProgram = kHeadroom;
        QSignalSpy refDone(&reference, &RunController::runFinished);
        QVERIFY2(reference.start(rankConfig(total), ro, &error), qPrintable(error));
        QVERIFY(refDone.wait(120000));
        QCOMPARE(refDone.first().first().value<RunOutcome>().result().status, std::string("finished"));
        const hr::SafeTensorsFile continued = hr::read_safetensors((o.outDir + "/model.safetensors").toStdString());
        const hr::SafeTensorsFile uninterrupted = hr::read_safetensors((ro.outDir + "/model.safetensors").toStdString());
        QVERIFY(!continued.tensors.empty());
        QCOMPARE(differing(continued, uninterrupted), 0);

        // 4. the history links the two
        const auto b = w.runStore()->run(second);
        QVERIFY(b);
        QCOMPARE(b->continuesRunId, first);
        QCOMPARE(b->status, QStringLiteral("finished"));
    }
};

QTEST_MAIN(TestContinueRanks)
#include "test_continue_ranks.moc"
