// ranks: none
// `headroom train --ranks N` with a rank that stops answering without dying (SIGSTOP: a hung GPU, a wedged
// driver call, a frozen host behave so). This test is one process; it runs the headroom binary.
// - The others fail after --rank-timeout (2 s here) and the job ends as a whole within the timeout plus the
//   launcher's grace (HEADROOM_STOP_GRACE, 2 s here): no process of the job left, the history entry failed,
//   naming the stopped rank and the last step, and the last good checkpoint (intact) named for --resume.
//   At 2 and 3 ranks, in the dp, ZeRO-3, pipeline and split-head layouts, the stopped rank first or last.
// - SIGTERM of the launcher while a rank is stopped (and --rank-timeout long): the launcher asks the
//   ranks to stop, and when they have not within the grace, ends them (SIGTERM, then SIGKILL).
// Each prints the measured time from the stop (or the SIGTERM) to the end of the launcher.
#include <QtTest>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "dist/communicator.h"
#include "history_rows.h"
#include "test_support.h"
#include "train/resume.h"

namespace fs = std::filesystem;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");
constexpr double kGrace = 2;  // HEADROOM_STOP_GRACE

using hrtest::history_rows;

bool hasCheckpoint(const QString& dir) {
    return QDir(dir).entryList({"checkpoint-*.safetensors"}, QDir::Files).size() > 0;
}

struct Ended {
    bool ok = false;         // the launcher ended within the test's limit
    int exitCode = -1;
    double seconds = -1;     // from the stop (or SIGTERM) to the launcher's end
    QString output;
    std::set<long> processes;  // below the launcher while it trained (ranks, mpirun)
};

}  // namespace

class TrainRanksStallTest : public QObject {
    Q_OBJECT
    std::string m_dir;

    // Starts the run, waits for a checkpoint, stops rank `victim` with SIGSTOP and (term) sends SIGTERM to
    // the launcher; waits for the end.
    Ended stallRun(const QString& w, const QStringList& layout, int ranks, int victim, double rankTimeout, bool term) {
        Ended e;
        QDir().mkpath(w);
        QStringList args = {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--test-limit",
                            "64", "--batch", "64", "--steps", "1000000", "--threads", "1", "--seed", "3", "--device",
                            "cpu", "--save-every", "5", "--rank-timeout", QString::number(rankTimeout), "--out",
                            w + "/out", "--db", w + "/history.db", "--ranks", QString::number(ranks)};
        args << layout;
        QProcess p;
        p.setWorkingDirectory(w);
        p.setProcessChannelMode(QProcess::MergedChannels);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMP_NUM_THREADS", "1");
        env.insert("HEADROOM_STOP_GRACE", QString::number(kGrace));
        p.setProcessEnvironment(env);
        p.start(kHeadroom, args);
        if (!p.waitForStarted(10000)) return e;
        QElapsedTimer t;
        t.start();
        std::map<int, long> r;
        while ((int(r.size()) < ranks || !hasCheckpoint(w + "/out")) && t.elapsed() < 90000 &&
               p.state() == QProcess::Running) {
            p.waitForReadyRead(200);
            e.output += QString::fromLocal8Bit(p.readAll());
            r = hrtest::rank_processes(p.processId());
        }
        if (!r.count(victim) || !hasCheckpoint(w + "/out")) {
            e.output += "\n[test] the run did not reach its first checkpoint on every rank";
            p.kill();
            p.waitForFinished(5000);
            return e;
        }
        e.processes = hrtest::processes_below(p.processId());
        ::kill(static_cast<pid_t>(r.at(victim)), SIGSTOP);
        QElapsedTimer since;
        since.start();
        if (term) {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a stall the launcher has seen
            ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
            since.restart();
        }
        e.ok = p.waitForFinished(60000);
        e.seconds = since.elapsed() / 1000.0;
        e.output += QString::fromLocal8Bit(p.readAll());
        if (!e.ok) {
            for (long pid : e.processes) {
                ::kill(static_cast<pid_t>(pid), SIGCONT);
                ::kill(static_cast<pid_t>(pid), SIGKILL);
            }
            p.kill();
            p.waitForFinished(5000);
        }
        e.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        return e;
    }

    // Nothing of the job runs; the history says failed, naming the stopped rank, its last step and the
    // checkpoint to resume from, which is there and reads.
    void checkEnded(const Ended& e, const QString& w, int victim) {
        QVERIFY2(e.ok, qPrintable(e.output));
        QVERIFY(e.exitCode != 0);
        QVERIFY2(e.processes.size() >= 3, "mpirun and the ranks below the launcher");
        for (long pid : e.processes)
            QVERIFY2(!hrtest::process_alive(pid), qPrintable(QString("process %1 is left").arg(pid)));
        const QStringList rows = history_rows(w + "/history.db");
        QCOMPARE(rows.size(), qsizetype(1));
        QVERIFY2(rows[0].startsWith("failed|"), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains(QString("rank %1 stopped making progress after step ").arg(victim)), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains("headroom train --resume " + w + "/out"), qPrintable(rows[0]));
        const hr::Checkpoint ck = hr::read_latest_checkpoint_json((w + "/out").toStdString());
        QVERIFY(ck.cursor.step >= 5);
        QVERIFY2(rows[0].contains(QString("the last good checkpoint is step %1").arg(ck.cursor.step)), qPrintable(rows[0]));
        QVERIFY(hr::has_checkpoint((w + "/out").toStdString()));
    }

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !hr::mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-train-ranks-stall");
    }

    void aStoppedRankEndsTheJob_data() {
        QTest::addColumn<QStringList>("layout");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("victim");
        QTest::newRow("dp 2, rank 1") << QStringList{"--shard", "dp"} << 2 << 1;
        QTest::newRow("zero3 3, rank 2") << QStringList{"--shard", "zero3"} << 3 << 2;
        QTest::newRow("pipeline 2, rank 0") << QStringList{"--pipeline", "2", "--accumulate", "2"} << 2 << 0;
        QTest::newRow("pipeline 3, rank 1") << QStringList{"--pipeline", "3", "--accumulate", "4"} << 3 << 1;
        QTest::newRow("split head 2, rank 1") << QStringList{"--tp-head", "2"} << 2 << 1;
        QTest::newRow("split head 3, rank 0") << QStringList{"--tp-head", "3"} << 3 << 0;
    }
    void aStoppedRankEndsTheJob() {
        QFETCH(QStringList, layout);
        QFETCH(int, ranks);
        QFETCH(int, victim);
        const double timeout = 2;
        const QString w = QString::fromStdString(m_dir) + "/" + QString(QTest::currentDataTag()).replace(' ', '_').remove(',');
        const Ended e = stallRun(w, layout, ranks, victim, timeout, false);
        qInfo("%s: stop to end %.2f s (--rank-timeout %.0f s, grace %.0f s)", QTest::currentDataTag(), e.seconds, timeout, kGrace);
        checkEnded(e, w, victim);
        if (QTest::currentTestFailed()) return;
        // within the timeout plus the grace, and a margin for a loaded 2-core machine
        QVERIFY2(e.seconds < timeout + kGrace + 6, qPrintable(QString("%1 s").arg(e.seconds)));
    }

    // the launcher's SIGTERM while a rank is stopped, with a rank timeout far away: the escalation ends it
    void sigtermDuringAStallEndsTheJob() {
        const QString w = QString::fromStdString(m_dir) + "/sigterm";
        const Ended e = stallRun(w, {"--shard", "zero2"}, 2, 1, 300, true);
        qInfo("SIGTERM to end %.2f s (grace %.0f s, --rank-timeout 300 s)", e.seconds, kGrace);
        QVERIFY2(e.output.contains("ranks still running after 2 s are ended"), qPrintable(e.output));
        checkEnded(e, w, 1);
        if (QTest::currentTestFailed()) return;
        QVERIFY2(e.seconds < 2 * kGrace + 6, qPrintable(QString("%1 s").arg(e.seconds)));
    }
};

QTEST_GUILESS_MAIN(TrainRanksStallTest)
#include "test_train_ranks_stall.moc"
