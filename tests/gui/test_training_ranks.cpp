// A multi-rank run from the window (issue 10): the setup panel's "CPU × 2 ranks" and sharding stage give
// the config and the rank count; RunController launches `headroom train --config ... --ranks 2` as child
// processes (session/RankRelay) and relays their events. Compared against what the run itself wrote:
// the relayed final metrics equal run.json's "final", the relayed epochs its "epochs", run.json says 2
// ranks and the stage; memory events arrived from both ranks and the Monitor offers both; the history
// holds one finished run with every step. Stop: every rank (found through /proc below the launcher) is
// gone when the controller says the run ended, which is recorded as stopped in the history and in
// run.json. Pause is refused for such a run.
#include <QtTest>

#include <QComboBox>
#include <QJsonArray>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>
#include <map>
#include <chrono>
#include <set>
#include <unistd.h>
#include <signal.h>
#include <thread>

#include <nlohmann/json.hpp>

#include "gui/MonitorView.h"
#include "gui/TrainingSetupPanel.h"
#include "nn/model_spec.h"
#include "session/RankRelay.h"
#include "session/RunController.h"
#include "store/run_store.h"
#include "test_support.h"
#include "programs.h"

using namespace hrapp;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

bool haveMpirun() { return !QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty(); }

// What the window would train: the panel's ranks entry and stage, a small MLP, one thread per rank.
hr::TrainConfig windowConfig(TrainingSetupPanel& panel, const QString& stage, std::int64_t steps, int* ranks) {
    auto* box = panel.findChild<QComboBox*>(QStringLiteral("ranksCombo"));
    box->setCurrentIndex(box->findData(QStringLiteral("cpu:2")));
    auto* shard = panel.findChild<QComboBox*>(QStringLiteral("shardingCombo"));
    shard->setCurrentIndex(shard->findData(stage));
    hr::TrainConfig c = defaultTrainConfig();
    panel.applyTo(c);
    c.model = hr::preset_model("mlp");
    c.model_source = "preset:mlp";
    c.data = "synthetic";
    c.train_limit = 256;
    c.test_limit = 64;
    c.batch = 64;
    c.steps = steps;
    c.epochs = 1;
    c.threads = 1;
    *ranks = panel.ranks();
    return c;
}

nlohmann::json readJson(const QString& path) { return hrtest::read_json(path.toStdString()); }




bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestTrainingRanks : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!haveMpirun()) QSKIP("no mpirun on PATH");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        qputenv("OMP_NUM_THREADS", "1");
    }

    void panelOffersRanksAndStages() {
        TrainingSetupPanel panel;
        auto* shard = panel.findChild<QComboBox*>(QStringLiteral("shardingCombo"));
        QVERIFY(!shard->isEnabled());  // one process: no sharding
        QCOMPARE(panel.ranks(), 1);
        int ranks = 0;
        const hr::TrainConfig c = windowConfig(panel, QStringLiteral("zero2"), 4, &ranks);
        QCOMPARE(ranks, 2);
        QVERIFY(shard->isEnabled());
        QCOMPARE(c.strategy.shard, std::string("zero2"));
        QCOMPARE(c.device, std::string("cpu"));
        if (qEnvironmentVariableIsSet("HEADROOM_GRAB_DIR")) {
            panel.resize(420, 900);
            QVERIFY(panel.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/setup-ranks.png")));
        }
    }

    // 2 CPU ranks with zero2, from the window's session: what was relayed is what the run wrote.
    void twoRanksRelayTheRunRank0Wrote() {
        RunStore store;
        QVERIFY(store.open(m_dir.filePath(QStringLiteral("history.db"))));
        TrainingSetupPanel panel;
        int ranks = 0;
        const hr::TrainConfig config = windowConfig(panel, QStringLiteral("zero2"), 4, &ranks);
        RunController c;
        MonitorView monitor;
        connect(&c, &RunController::memoryUpdated, &monitor, &MonitorView::addMemory);
        std::set<int> memoryRanks;
        QVector<hr::EpochEvent> epochs;
        std::int64_t lastStep = 0;
        connect(&c, &RunController::memoryUpdated, this, [&](const hr::MemoryEvent& e) { memoryRanks.insert(e.rank); });
        connect(&c, &RunController::epochFinished, this, [&](const hr::EpochEvent& e) { epochs << e; });
        connect(&c, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& s) { lastStep = s.last().step; });
        QSignalSpy finished(&c, &RunController::runFinished);
        RunOptions o;
        o.store = &store;
        o.outDir = m_dir.filePath(QStringLiteral("two"));
        o.ranks = ranks;
        o.rankProgram = kHeadroom;
        o.sampleTelemetry = false;
        QString error;
        QVERIFY2(c.start(config, o, &error), qPrintable(error));
        QVERIFY(c.isMultiRank());
        QVERIFY(c.canPause());
        QVERIFY(finished.wait(120000));
        const RunOutcome out = finished.first().first().value<RunOutcome>();
        QVERIFY2(out.result().status == "finished", out.result().error.c_str());

        const nlohmann::json j = readJson(o.outDir + QStringLiteral("/run.json"));
        QCOMPARE(j["status"].get<std::string>(), std::string("finished"));
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QCOMPARE(j["distributed"]["stage"].get<std::string>(), std::string("zero2"));
        const nlohmann::json& f = j["final"];
        QVERIFY(same(out.result().test_accuracy, f["test_accuracy"].get<double>()));
        QVERIFY(same(out.result().test_loss, f["test_loss"].get<double>()));
        QVERIFY(same(out.result().train_loss, f["train_loss"].get<double>()));
        QCOMPARE(out.result().steps, f["steps"].get<std::int64_t>());
        QCOMPARE(out.result().world_size, 2);
        QCOMPARE(lastStep, std::int64_t(4));
        QCOMPARE(epochs.size(), qsizetype(j["epochs"].size()));
        QVERIFY(same(epochs.last().test_accuracy, j["epochs"].back()["test_accuracy"].get<double>()));
        QCOMPARE(out.finalMetrics.value(QStringLiteral("test_accuracy")).toDouble(), f["test_accuracy"].get<double>());

        QCOMPARE(memoryRanks, (std::set<int>{0, 1}));
        QCOMPARE(monitor.memoryRanks(), (QList<int>{0, 1}));
        QVERIFY(monitor.memoryRankBox()->isVisibleTo(&monitor));
        monitor.setMemoryRank(1);
        QCOMPARE(monitor.memoryRank(), 1);

        // one record, the controller's: finished, every step, the run folder
        const QVector<RunInfo> runs = store.listRuns();
        QCOMPARE(runs.size(), qsizetype(1));
        QCOMPARE(runs[0].status, QStringLiteral("finished"));
        QCOMPARE(runs[0].outDir, QDir(o.outDir).absolutePath());
        QCOMPARE(store.steps(runs[0].id).size(), qsizetype(4));
        // and the run's spread over the ranks, as run.json has it (the report's Ranks table reads this)
        const QJsonObject d = runs[0].finalMetrics.value(QStringLiteral("distributed")).toObject();
        QCOMPARE(d.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(d.value(QStringLiteral("stage")).toString(), QStringLiteral("zero2"));
        for (const char* key : {"rank_batch", "predicted_peak_bytes", "measured_peak_bytes", "measured_resident_peak_bytes"}) {
            const QJsonArray a = d.value(QLatin1String(key)).toArray();
            QCOMPARE(std::size_t(a.size()), j["distributed"][key].size());
            for (int i = 0; i < a.size(); ++i) QCOMPARE(a[i].toInteger(), j["distributed"][key][std::size_t(i)].get<qint64>());
        }
        if (qEnvironmentVariableIsSet("HEADROOM_GRAB_DIR")) {
            monitor.resize(900, 600);
            QVERIFY(monitor.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/monitor-ranks.png")));
        }
    }

    // Pause: every rank stops stepping after the same step and waits without spinning; Resume goes on from
    // there; Stop while paused ends every rank.
    void pauseHoldsEveryRank() {
        TrainingSetupPanel panel;
        int ranks = 0;
        const hr::TrainConfig config = windowConfig(panel, QStringLiteral("zero1"), 1000000, &ranks);
        RunController c;
        std::int64_t lastStep = 0;
        connect(&c, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& s) { lastStep = s.last().step; });
        QSignalSpy finished(&c, &RunController::runFinished);
        RunOptions o;
        o.outDir = m_dir.filePath(QStringLiteral("pause"));
        o.ranks = ranks;
        o.rankProgram = kHeadroom;
        o.sampleTelemetry = false;
        QString error;
        QVERIFY2(c.start(config, o, &error), qPrintable(error));
        QVERIFY(c.canPause());
        const long launcher = c.relay()->launcherPid();
        QTRY_VERIFY_WITH_TIMEOUT(lastStep >= 2, 60000);
        c.pause();
        QVERIFY(c.isPaused());
        QTest::qWait(2000);  // rank 0 sees the pause within 200 ms, the step in flight ends and is relayed
        const std::int64_t pausedAt = lastStep;
        std::set<long> below = hrtest::processes_below(launcher);
        QVERIFY2(below.size() >= 3, "mpirun and its two ranks");
        std::map<long, double> cpu;
        for (long pid : below) cpu[pid] = hrtest::process_cpu_seconds(pid);
        QTest::qWait(2500);
        QCOMPARE(lastStep, pausedAt);  // no step while paused
        double used = 0;
        for (const auto& [pid, before] : cpu)
            if (before >= 0) used += std::max(0.0, hrtest::process_cpu_seconds(pid) - before);
        // a spinning rank would burn about 2.5 CPU seconds here; paused ranks poll ten times a second
        QVERIFY2(used < 1.0, qPrintable(QStringLiteral("the paused ranks used %1 CPU seconds in 2.5 s").arg(used)));
        c.resume();
        QVERIFY(!c.isPaused());
        QTRY_VERIFY_WITH_TIMEOUT(lastStep > pausedAt + 1, 60000);
        c.pause();
        QTest::qWait(500);
        c.stop();  // stopping a paused run ends every rank
        QVERIFY(finished.wait(60000));
        const RunOutcome out = finished.first().first().value<RunOutcome>();
        QCOMPARE(out.result().status, std::string("stopped"));
        below.insert(launcher);
        for (long pid : below) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QStringLiteral("process %1 is still running").arg(pid)));
    }

    // Stop: every rank stops; none is left when the controller reports the end; recorded as stopped.
    void stopEndsEveryRank() {
        RunStore store;
        QVERIFY(store.open(m_dir.filePath(QStringLiteral("stop.db"))));
        TrainingSetupPanel panel;
        int ranks = 0;
        const hr::TrainConfig config = windowConfig(panel, QStringLiteral("dp"), 1000000, &ranks);
        RunController c;
        std::int64_t lastStep = 0;
        connect(&c, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& s) { lastStep = s.last().step; });
        QSignalSpy finished(&c, &RunController::runFinished);
        RunOptions o;
        o.store = &store;
        o.outDir = m_dir.filePath(QStringLiteral("stop"));
        o.ranks = ranks;
        o.rankProgram = kHeadroom;
        o.sampleTelemetry = false;
        QString error;
        QVERIFY2(c.start(config, o, &error), qPrintable(error));
        const long launcher = c.relay()->launcherPid();
        QTRY_VERIFY_WITH_TIMEOUT(lastStep >= 3, 60000);
        std::set<long> below = hrtest::processes_below(launcher);
        QVERIFY2(below.size() >= 3, "mpirun and its two ranks");  // mpirun, 2 ranks (and maybe helpers)
        c.stop();
        QVERIFY(finished.wait(60000));
        const RunOutcome out = finished.first().first().value<RunOutcome>();
        QCOMPARE(out.result().status, std::string("stopped"));
        below.insert(launcher);
        for (long pid : below) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QStringLiteral("process %1 is still running").arg(pid)));
        const nlohmann::json j = readJson(o.outDir + QStringLiteral("/run.json"));
        QCOMPARE(j["status"].get<std::string>(), std::string("stopped"));
        QCOMPARE(j["final"]["steps"].get<std::int64_t>(), out.result().steps);
        QVERIFY(out.result().steps >= 3);
        const QVector<RunInfo> runs = store.listRuns();
        QCOMPARE(runs.size(), qsizetype(1));
        QCOMPARE(runs[0].status, QStringLiteral("stopped"));
    }

    // Stop while a rank is stopped (SIGSTOP: it answers nothing) and the rank timeout is far away: the
    // launcher's escalation (HEADROOM_STOP_GRACE, 2 s here: SIGTERM, then SIGKILL) ends every process of
    // the job, and the controller reports the end.
    void stopDuringAStallEndsEveryRank() {
        qputenv("HEADROOM_STOP_GRACE", "2");
        TrainingSetupPanel panel;
        int ranks = 0;
        hr::TrainConfig config = windowConfig(panel, QStringLiteral("zero2"), 1000000, &ranks);
        config.rank_timeout = 300;
        RunController c;
        std::int64_t lastStep = 0;
        connect(&c, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& s) { lastStep = s.last().step; });
        QSignalSpy finished(&c, &RunController::runFinished);
        RunOptions o;
        o.outDir = m_dir.filePath(QStringLiteral("stall"));
        o.ranks = ranks;
        o.rankProgram = kHeadroom;
        o.sampleTelemetry = false;
        QString error;
        QVERIFY2(c.start(config, o, &error), qPrintable(error));
        qunsetenv("HEADROOM_STOP_GRACE");
        const long launcher = c.relay()->launcherPid();
        QTRY_VERIFY_WITH_TIMEOUT(lastStep >= 3, 60000);
        std::set<long> below = hrtest::processes_below(launcher);
        const std::map<int, long> rankPids = hrtest::rank_processes(launcher);
        QVERIFY(rankPids.count(1));
        ::kill(static_cast<pid_t>(rankPids.at(1)), SIGSTOP);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        QElapsedTimer t;
        t.start();
        c.stop();
        QVERIFY(finished.wait(30000));
        qInfo("Stop to end during a stall: %.2f s (grace 2 s)", t.elapsed() / 1000.0);
        QVERIFY2(t.elapsed() < 10000, qPrintable(QString::number(t.elapsed())));
        below.insert(launcher);
        for (long pid : below) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QStringLiteral("process %1 is still running").arg(pid)));
    }
};

QTEST_MAIN(TestTrainingRanks)
#include "test_training_ranks.moc"
