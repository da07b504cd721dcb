// A short CPU run started from the main window: charts fill, Pause/Resume/Stop work, the result shown is
// the trainer's.
#include <QAction>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "charts/LiveChart.h"
#include "charts/MemoryChart.h"
#include "gui/MainWindow.h"
#include "gui/MonitorView.h"

class TestTrainingRun : public QObject {
    Q_OBJECT
private:
    static hr::TrainConfig config(hrapp::MainWindow& w, int epochs) {
        hr::TrainConfig c = w.trainConfig();
        c.data = "synthetic";
        c.epochs = epochs;
        c.batch = 64;
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 0.05;
        c.optimizer.momentum = 0.9;
        c.threads = 2;
        c.evaluate_each_epoch = true;
        return c;
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
    }

    void shortRunFillsEveryChart() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        w.setTrainConfig(config(w, 2));
        QCOMPARE(w.trainConfig().data, std::string("synthetic"));
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        QVERIFY(w.startAction()->isEnabled());
        w.startAction()->trigger();
        QVERIFY(w.isRunning());
        QVERIFY(!w.startAction()->isEnabled());
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QCOMPARE(QString::fromStdString(r.status), QStringLiteral("finished"));
        QCOMPARE(r.epochs_completed, 2);

        hrapp::MonitorView* m = w.monitor();
        QVERIFY(m->lossChart()->pointCount(0) > 0);          // training loss per step
        QCOMPARE(m->lossChart()->pointCount(2), 2);          // validation loss per epoch
        QVERIFY(m->accuracyChart()->pointCount(0) > 0);
        QCOMPARE(m->accuracyChart()->pointCount(1), 2);
        QVERIFY(m->throughputChart()->pointCount(0) > 0);
        QVERIFY(m->memoryChart()->pointCount(0) > 0);
        QCOMPARE(m->lossChart()->pointCount(0), int(r.steps));  // every step arrived, in batches
        // The accuracy shown is the trainer's.
        QCOMPARE(m->testAccuracyText(), hrapp::MonitorView::formatAccuracy(r.test_accuracy));
        QCOMPARE(r.epochs.back().test_accuracy, r.test_accuracy);
        QVERIFY(w.findChild<QLabel*>(QStringLiteral("stateLabel"))->text().contains(hrapp::MonitorView::formatAccuracy(r.test_accuracy)));
        QVERIFY(w.startAction()->isEnabled());
    }

    // --eval-every within an epoch: every evaluation reaches the charts at its step (the trainer's on_eval
    // through the session and the controller), the epoch's end is drawn once
    void evaluationsWithinAnEpochReachTheCharts() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        hr::TrainConfig c = config(w, 1);
        c.train_limit = 640;  // 10 steps of 64
        c.test_limit = 128;
        c.eval_every = 4;     // evaluations after steps 4 and 8, and at the end (10)
        w.setTrainConfig(c);
        QSignalSpy evals(w.runController(), &hrapp::RunController::evaluated);
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.start();
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QCOMPARE(QString::fromStdString(r.status), QStringLiteral("finished"));
        QCOMPARE(r.evals.size(), std::size_t(3));
        QCOMPARE(evals.count(), 3);
        QCOMPARE(evals.at(0).at(0).value<hr::EvalEvent>().step, std::int64_t(4));
        QCOMPARE(evals.at(2).at(0).value<hr::EvalEvent>().step, std::int64_t(10));
        hrapp::MonitorView* m = w.monitor();
        QCOMPARE(m->lossChart()->pointCount(2), 3);
        QCOMPARE(m->accuracyChart()->pointCount(1), 3);
        QCOMPARE(m->testAccuracyText(), hrapp::MonitorView::formatAccuracy(r.test_accuracy));
    }

    void pauseResumeStop() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        w.setTrainConfig(config(w, 50));
        QSignalSpy steps(w.session(), &hrapp::TrainingSession::stepsReady);
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.start();
        QVERIFY(QTest::qWaitFor([&] { return steps.count() >= 2; }, 120000));
        QVERIFY(w.pauseAction()->isEnabled());
        QVERIFY(!w.resumeAction()->isEnabled());
        w.pauseAction()->trigger();
        QVERIFY(w.resumeAction()->isEnabled());
        QTest::qWait(500);  // steps already in flight arrive
        const int pausedAt = w.monitor()->lossChart()->pointCount(0);
        QTest::qWait(1000);
        QCOMPARE(w.monitor()->lossChart()->pointCount(0), pausedAt);  // nothing trains while paused
        w.resumeAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return w.monitor()->lossChart()->pointCount(0) > pausedAt; }, 60000));
        QElapsedTimer t;
        t.start();
        w.stopAction()->trigger();
        QVERIFY(finished.wait(60000));
        QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("stopped"));
        QVERIFY(w.lastResult().steps < 50 * 32);
        QVERIFY2(t.elapsed() < 10000, "Stop takes effect within a step");
        QVERIFY(w.startAction()->isEnabled());
        QVERIFY(!w.stopAction()->isEnabled());
    }

    void closeDuringRunStopsCleanly() {
        auto* w = new hrapp::MainWindow;
        w->setPersistState(false);
        w->setAskBeforeClose(false);
        w->show();
        w->setTrainConfig(config(*w, 50));
        QSignalSpy steps(w->session(), &hrapp::TrainingSession::stepsReady);
        w->start();
        QVERIFY(QTest::qWaitFor([&] { return steps.count() >= 1; }, 120000));
        w->pause();  // a paused run must stop too
        QVERIFY(w->close());
        delete w;
    }

    void trainerErrorShowsDialog() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.show();
        hr::TrainConfig c = config(w, 1);
        c.data = "idx:/nonexistent/folder";
        w.setTrainConfig(c);
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.start();
        QVERIFY(finished.wait(60000));
        QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("failed"));
        QVERIFY(!w.lastResult().error.empty());
        QVERIFY(QTest::qWaitFor([&] { return w.findChild<QWidget*>(QStringLiteral("trainingErrorBox")) != nullptr; }, 5000));
        QVERIFY(w.startAction()->isEnabled());  // the window stays usable
    }
};

QTEST_MAIN(TestTrainingRun)
#include "test_training_run.moc"
