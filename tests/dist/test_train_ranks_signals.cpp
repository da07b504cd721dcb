// ranks: none
// `headroom train --ranks 2` ended from outside (this test is one process; it runs the headroom binary):
// - SIGINT to the launcher (Ctrl-C) ends the run as Ctrl-C ends one process: the same exit status as a
//   one-process run given SIGINT (the reference, run here too), run.json with status "stopped" and the
//   steps taken, model.safetensors, the history entry "stopped", and no process left below the launcher.
// - kill -9 of rank 0 or rank 1 mid-run: mpirun ends the other ranks, so rank 0 cannot finish its history
//   entry; the launcher marks it failed, naming the cause (`headroom runs` says failed, never running).
// - --pause-file holds one process and 2 ranks without a step until the file is removed.
#include <QtTest>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"
#include "history_rows.h"
#include "test_support.h"
#include "programs.h"

namespace fs = std::filesystem;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

QStringList longRun(const QString& out, const QString& db) {
    return {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--test-limit", "64",
            "--batch", "64", "--steps", "1000000", "--threads", "1", "--seed", "3", "--device", "cpu",
            "--out", out, "--db", db};
}





struct Ended {
    bool ok = false;
    int exitCode = -1;
    QString output;
    std::set<long> processes;  // below the launcher while it trained (ranks, mpirun)
};

// Starts `args`, waits until it trains (rank 0's "training mlp" note, then a moment), runs `act` with the
// launcher's pid and the ranks, and waits for the end.
template <typename Act>
Ended runAndAct(const QStringList& args, const QString& cwd, int ranks, Act act) {
    Ended e;
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMP_NUM_THREADS", "1");
    p.setProcessEnvironment(env);
    p.start(kHeadroom, args);
    if (!p.waitForStarted(10000)) return e;
    QElapsedTimer t;
    t.start();
    while (!e.output.contains("training mlp") && t.elapsed() < 60000 && p.state() == QProcess::Running) {
        p.waitForReadyRead(200);
        e.output += QString::fromLocal8Bit(p.readAll());
    }
    std::map<int, long> r;
    while (ranks > 1 && int(r.size()) < ranks && t.elapsed() < 60000) r = hrtest::rank_processes(p.processId());
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    e.processes = hrtest::processes_below(p.processId());
    act(static_cast<long>(p.processId()), r);
    e.ok = p.waitForFinished(60000);
    e.output += QString::fromLocal8Bit(p.readAll());
    if (!e.ok) {
        for (long pid : e.processes) ::kill(static_cast<pid_t>(pid), SIGKILL);
        p.kill();
        p.waitForFinished(5000);
    }
    e.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return e;
}

QString runsList(const QString& db, const QString& cwd) {
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(kHeadroom, {"runs", "--db", db});
    p.waitForFinished(30000);
    return QString::fromLocal8Bit(p.readAll());
}

using hrtest::history_rows;

nlohmann::json readJson(const std::string& path) { return hrtest::read_json(path); }

}  // namespace

class TrainRanksSignalsTest : public QObject {
    Q_OBJECT
    std::string m_dir;

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !hr::mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-train-ranks-signals");
    }

    void ctrlCStopsEveryRankLikeOneProcess() {
        const QString w = QString::fromStdString(m_dir);
        // the reference: one process, SIGINT mid-run
        const Ended one = runAndAct(longRun(w + "/one", w + "/one.db"), w, 1,
                                    [](long pid, const std::map<int, long>&) { ::kill(static_cast<pid_t>(pid), SIGINT); });
        QVERIFY2(one.ok, qPrintable(one.output));
        QCOMPARE(readJson(m_dir + "/one/run.json")["status"].get<std::string>(), std::string("stopped"));

        QStringList args = longRun(w + "/two", w + "/two.db");
        args << "--ranks" << "2" << "--shard" << "zero2";
        const Ended two = runAndAct(args, w, 2, [](long pid, const std::map<int, long>&) { ::kill(static_cast<pid_t>(pid), SIGINT); });
        QVERIFY2(two.ok, qPrintable(two.output));
        QCOMPARE(two.exitCode, one.exitCode);
        QVERIFY2(QFileInfo::exists(w + "/two/model.safetensors"), qPrintable(two.output));
        const nlohmann::json j = readJson(m_dir + "/two/run.json");
        QCOMPARE(j["status"].get<std::string>(), std::string("stopped"));
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QVERIFY(j["final"]["steps"].get<std::int64_t>() > 0);
        QVERIFY2(two.output.contains("stopped after"), qPrintable(two.output));
        QVERIFY2(two.processes.size() >= 3, "mpirun and two ranks below the launcher");
        for (long pid : two.processes) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QString("process %1 is left").arg(pid)));
        QCOMPARE(history_rows(w + "/two.db"), QStringList{"stopped|"});
    }

    // --pause-file: while the file exists no step is taken (one process, and 2 ranks through the launcher);
    // once it is removed the run finishes, with the same weights as a run never paused.
    void pauseFileHoldsTheRun_data() {
        QTest::addColumn<int>("ranks");
        QTest::newRow("one process") << 1;
        QTest::newRow("2 ranks") << 2;
    }
    void pauseFileHoldsTheRun() {
        QFETCH(int, ranks);
        const QString w = QString::fromStdString(m_dir) + QString("/pause%1").arg(ranks);
        QDir().mkpath(w + "/events");
        QStringList common = {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256",
                              "--test-limit", "64", "--batch", "64", "--steps", "12", "--threads", "1", "--seed",
                              "5", "--device", "cpu", "--no-history", "--quiet"};
        if (ranks > 1) common << "--ranks" << QString::number(ranks) << "--shard" << "dp";
        auto start = [&](QProcess& p, const QStringList& extra, const QString& events) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("OMP_NUM_THREADS", "1");
            if (!events.isEmpty()) env.insert("HEADROOM_EVENTS_DIR", events);
            p.setProcessEnvironment(env);
            p.setProcessChannelMode(QProcess::MergedChannels);
            p.start(kHeadroom, common + extra);
        };
        QProcess plain;
        start(plain, {"--out", w + "/plain"}, {});
        QVERIFY(plain.waitForFinished(120000));
        QCOMPARE(plain.exitCode(), 0);

        const QString hold = w + "/hold";
        QFile(hold).open(QIODevice::WriteOnly);
        QProcess paused;
        start(paused, {"--out", w + "/paused", "--pause-file", hold}, w + "/events");
        QVERIFY(paused.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        auto steps = [&] {  // rank 0's step events so far
            QFile f(w + "/events/rank0.jsonl");
            if (!f.open(QIODevice::ReadOnly)) return -1;
            return int(f.readAll().count("\"event\":\"step\""));
        };
        auto device = [&] {
            QFile f(w + "/events/rank0.jsonl");
            return f.open(QIODevice::ReadOnly) && f.readAll().contains("\"event\":\"device\"");
        };
        while (!device() && t.elapsed() < 60000 && paused.state() == QProcess::Running) paused.waitForFinished(100);
        QVERIFY2(device(), "rank 0 started training");
        paused.waitForFinished(3000);  // three seconds held: a 12-step MLP run would be long done
        QCOMPARE(paused.state(), QProcess::Running);
        QCOMPARE(steps(), 0);
        QVERIFY(QFile::remove(hold));
        QVERIFY(paused.waitForFinished(120000));
        const QString out = QString::fromLocal8Bit(paused.readAll());
        QVERIFY2(paused.exitCode() == 0, qPrintable(out));
        QCOMPARE(steps(), 12);
        QCOMPARE(readJson((w + "/paused/run.json").toStdString())["final"]["steps"].get<std::int64_t>(), std::int64_t(12));
        QFile a(w + "/plain/model.safetensors"), b(w + "/paused/model.safetensors");
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QVERIFY2(a.readAll() == b.readAll(), "pausing changed the weights");
    }

    void aKilledRank0IsRecordedFailed() { killedRankIsRecordedFailed(0); }
    void aKilledRank1IsRecordedFailed() { killedRankIsRecordedFailed(1); }

private:
    void killedRankIsRecordedFailed(int victim) {
        const QString w = QString::fromStdString(m_dir) + QString("/kill%1").arg(victim);
        QDir().mkpath(w);
        QStringList args = longRun(w + "/out", w + "/history.db");
        args << "--ranks" << "2" << "--shard" << "dp";
        const Ended e = runAndAct(args, w, 2, [victim](long, const std::map<int, long>& ranks) {
            if (ranks.count(victim)) ::kill(static_cast<pid_t>(ranks.at(victim)), SIGKILL);
        });
        QVERIFY2(e.ok, qPrintable(e.output));
        QVERIFY(e.exitCode != 0);
        for (long pid : e.processes) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QString("process %1 is left").arg(pid)));
        // straight after the launcher: failed, with a cause (the launcher's or rank 0's own), never running
        const QStringList rows = history_rows(w + "/history.db");
        QCOMPARE(rows.size(), qsizetype(1));
        QVERIFY2(rows[0].startsWith("failed|") && rows[0].size() > 10, qPrintable(rows[0]));
        QVERIFY2(!rows[0].contains("the program ended during the run"), qPrintable(rows[0]));
        if (victim == 0) {  // rank 0 had no chance to say anything: the launcher's message names the cause
            QVERIFY2(rows[0].contains("rank 0 was ended before it recorded the run's end"), qPrintable(rows[0]));
            QVERIFY2(e.output.contains("rank 0 was ended before it recorded the run's end"), qPrintable(e.output));
        }
        const QString runs = runsList(w + "/history.db", w);
        QVERIFY2(runs.contains("failed") && !runs.contains("running"), qPrintable(runs));
    }
};

QTEST_GUILESS_MAIN(TrainRanksSignalsTest)
#include "test_train_ranks_signals.moc"
