// ranks: none
// `headroom train --ranks N` with a rank that hangs while it runs (issue 45): a busy loop, as a kernel or a
// driver call that never returns, not a stopped process (state R, so the launcher's /proc sampling sees
// nothing wrong with it). The test-only hook HEADROOM_TEST_SPIN=RANK:STEP (docs/environment.md) makes that
// rank spin when it begins the step. Every rank sends heartbeats to the launcher over its event socket (its
// step, the collective it waits for); the launcher sees the rank compute while the others wait for it past
// --rank-timeout and ends the job. Checked, at 2 and 3 ranks in dp, ZeRO-2 and ZeRO-3: the job ends within
// the timeout plus the grace, no process of it left; the history entry is failed and names that rank, that
// it kept running, the step it hung in, and the last good checkpoint (intact) for --resume. This test is one
// process; it runs the headroom binary. Each case prints the time from the hang to the end.
#include <QtTest>

#include <fstream>
#include <map>
#include <string>
#include <set>

#include <signal.h>
#include <unistd.h>

#include "dist/communicator.h"
#include "history_rows.h"
#include "test_support.h"
#include "train/resume.h"

namespace {

const QString kHangHeadroom = hrtest::qbinary_path("headroom");
constexpr double kHangGrace = 2;  // HEADROOM_STOP_GRACE
constexpr int kSpinStep = 6;      // the first checkpoint is step 5 (--save-every 5): the rank spins right after it

bool hangHasCheckpoint(const QString& dir) {
    return QDir(dir).entryList({"checkpoint-*.safetensors"}, QDir::Files).size() > 0;
}

}  // namespace

class TrainRanksHangTest : public QObject {
    Q_OBJECT
    std::string m_dir;

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !hr::mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHangHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-train-ranks-hang");
    }

    void aRankThatHangsRunningIsNamedAndEndsTheJob_data() {
        QTest::addColumn<QStringList>("layout");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("victim");
        QTest::newRow("dp 2, rank 1") << QStringList{"--shard", "dp"} << 2 << 1;
        QTest::newRow("dp 3, rank 0") << QStringList{"--shard", "dp"} << 3 << 0;
        QTest::newRow("zero2 2, rank 0") << QStringList{"--shard", "zero2"} << 2 << 0;
        QTest::newRow("zero3 3, rank 2") << QStringList{"--shard", "zero3"} << 3 << 2;
    }
    void aRankThatHangsRunningIsNamedAndEndsTheJob() {
        QFETCH(QStringList, layout);
        QFETCH(int, ranks);
        QFETCH(int, victim);
        const double timeout = 3;
        const QString w = QString::fromStdString(m_dir) + "/" + QString(QTest::currentDataTag()).replace(' ', '_').remove(',');
        QDir().mkpath(w);
        QStringList args = {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--test-limit",
                            "64", "--batch", "64", "--steps", "1000000", "--threads", "1", "--seed", "3", "--device",
                            "cpu", "--save-every", "5", "--rank-timeout", QString::number(timeout), "--out",
                            w + "/out", "--db", w + "/history.db", "--ranks", QString::number(ranks)};
        args << layout;
        QProcess p;
        p.setWorkingDirectory(w);
        p.setProcessChannelMode(QProcess::MergedChannels);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMP_NUM_THREADS", "1");
        env.insert("HEADROOM_STOP_GRACE", QString::number(kHangGrace));
        env.insert("HEADROOM_TEST_SPIN", QString("%1:%2").arg(victim).arg(kSpinStep));
        p.setProcessEnvironment(env);
        p.start(kHangHeadroom, args);
        QVERIFY(p.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        QString output;
        std::map<int, long> r;
        while ((int(r.size()) < ranks || !hangHasCheckpoint(w + "/out")) && t.elapsed() < 90000 &&
               p.state() == QProcess::Running) {
            p.waitForReadyRead(100);
            output += QString::fromLocal8Bit(p.readAll());
            r = hrtest::rank_processes(p.processId());
        }
        QVERIFY2(r.count(victim) && hangHasCheckpoint(w + "/out"), qPrintable(output));
        // the hang begins with step 6, right after the checkpoint of step 5
        const std::set<long> processes = hrtest::processes_below(p.processId());
        QElapsedTimer since;
        since.start();
        // the victim is running (a thread of it busy), not stopped, while it hangs
        bool sawRunning = false;
        const bool ended = [&] {
            while (since.elapsed() < 60000) {
                if (p.waitForFinished(100)) return true;
                // its training thread (the main thread waits in Qt's event loop)
                const QString tasks = QString("/proc/%1/task").arg(r.at(victim));
                for (const QString& tid : QDir(tasks).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
                    std::ifstream stat((tasks + "/" + tid + "/stat").toStdString());
                    std::string line;
                    std::getline(stat, line);
                    const std::size_t close = line.rfind(')');
                    if (close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'R') sawRunning = true;
                }
            }
            return false;
        }();
        const double seconds = since.elapsed() / 1000.0;
        output += QString::fromLocal8Bit(p.readAll());
        if (!ended) {
            for (long pid : processes) ::kill(static_cast<pid_t>(pid), SIGKILL);
            p.kill();
            p.waitForFinished(5000);
        }
        qInfo("%s: hang to end %.2f s (--rank-timeout %.0f s, grace %.0f s)", QTest::currentDataTag(), seconds, timeout, kHangGrace);
        QVERIFY2(ended, qPrintable(output));
        QVERIFY(sawRunning);
        QVERIFY(p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0);
        QVERIFY2(processes.size() >= 3, "mpirun and the ranks below the launcher");
        for (long pid : processes) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QString("process %1 is left").arg(pid)));
        // the launcher said which rank, while it ended the job
        const QString named = QString("rank %1 (on ").arg(victim);
        QVERIFY2(output.contains(named), qPrintable(output));
        QVERIFY2(output.contains(QString("stopped making progress in step %1: its process kept running").arg(kSpinStep)),
                 qPrintable(output));
        // the history: failed, naming the rank, its step, and the checkpoint to resume from
        const QStringList rows = hrtest::history_rows(w + "/history.db");
        QCOMPARE(rows.size(), qsizetype(1));
        QVERIFY2(rows[0].startsWith("failed|"), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains(named), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains(QString("stopped making progress in step %1: its process kept running").arg(kSpinStep)),
                 qPrintable(rows[0]));
        const hr::Checkpoint ck = hr::read_latest_checkpoint_json((w + "/out").toStdString());
        QCOMPARE(ck.cursor.step, std::int64_t(5));
        QVERIFY2(rows[0].contains("the last good checkpoint is step 5"), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains("headroom train --resume " + w + "/out"), qPrintable(rows[0]));
        // within the timeout plus the grace, and a margin for a loaded 2-core machine
        QVERIFY2(seconds < timeout + kHangGrace + 6, qPrintable(QString("%1 s").arg(seconds)));
    }
};

QTEST_GUILESS_MAIN(TrainRanksHangTest)
#include "test_train_ranks_hang.moc"
