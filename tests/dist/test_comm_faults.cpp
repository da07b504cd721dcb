// ranks: none
// Ranks fail together and never hang, at the communicator level: this test (one process) launches
// `mpirun -np 2` on its own binary in a helper mode where one rank misbehaves, and checks from outside
// that the job ends within seconds, with one message naming the rank and the cause, and that no rank
// is left running. (The run-level version, `headroom train --ranks` with kill -9, comes with the trainer.)
#include <QtTest>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "base/error.h"
#include "dist/communicator.h"
#include "test_support.h"

using namespace hr;

namespace {

// Helper mode (under mpirun): HR_FAULT_HELPER = hang | die, HR_FAULT_DIR = where each rank writes its pid.
int helper(const std::string& mode) {
    std::unique_ptr<Communicator> comm;
    try {
        comm = make_mpi_communicator(3.0);  // a 3 s timeout instead of 300
    } catch (const std::exception& e) {
        std::fprintf(stderr, "helper: %s\n", e.what());
        return 3;
    }
    const int r = comm->rank();
    if (const char* dir = std::getenv("HR_FAULT_DIR"))
        std::ofstream(std::string(dir) + "/rank" + std::to_string(r) + ".pid") << getpid() << "\n";
    comm->barrier();  // both ranks are up
    try {
        if (r == 1) {
            if (mode == "die") std::raise(SIGKILL);                      // a rank that dies mid-run
            std::this_thread::sleep_for(std::chrono::seconds(60));      // a rank that hangs
        }
        comm->barrier();
        std::fprintf(stderr, "helper: rank %d passed a barrier it should not have\n", r);
        return 4;
    } catch (const Error& e) {
        std::fprintf(stderr, "headroom: %s\n", e.what());  // the one message, then every rank ends
        comm->abort_all(e.what());
    }
    return 5;
}

struct Outcome {
    int exit_code = 0;
    double seconds = 0;
    QString output;
    std::vector<long> pids;
};

Outcome launch(const QString& mode) {
    Outcome o;
    const std::string dir = hrtest::temp_dir("hr-fault");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("HR_FAULT_HELPER", mode);
    env.insert("HR_FAULT_DIR", QString::fromStdString(dir));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    QStringList args = QString(HR_MPIRUN_FLAGS).split(' ', Qt::SkipEmptyParts);
    args << "-np" << "2" << QCoreApplication::applicationFilePath();
    QElapsedTimer t;
    t.start();
    p.start(HR_MPIEXEC, args);
    if (!p.waitForFinished(90000)) p.kill();
    o.seconds = t.elapsed() / 1000.0;
    o.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    o.output = QString::fromLocal8Bit(p.readAll());
    for (int r = 0; r < 2; ++r) {
        std::ifstream f(dir + "/rank" + std::to_string(r) + ".pid");
        long pid = 0;
        if (f >> pid) o.pids.push_back(pid);
    }
    return o;
}

bool any_alive(const std::vector<long>& pids) {
    for (int tries = 0; tries < 50; ++tries) {  // mpirun reaps its children as it exits; allow a moment
        bool alive = false;
        for (long pid : pids) alive |= ::kill(static_cast<pid_t>(pid), 0) == 0;
        if (!alive) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
}

}  // namespace

class CommFaultsTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !mpi_built()) QSKIP("no mpirun or no MPI support in this build");
    }

    // Rank 1 stops answering: rank 0's wait times out (3 s here), it says so naming itself and the call,
    // and MPI_Abort ends both.
    void aHangingRankEndsTheJobWithinSeconds() {
        const Outcome o = launch("hang");
        qInfo("hang: exit %d after %.1f s", o.exit_code, o.seconds);
        QVERIFY2(o.exit_code != 0, qPrintable(o.output));
        QVERIFY2(o.seconds < 30, qPrintable(o.output));
        QVERIFY2(o.output.contains("rank 0: barrier did not finish within 3 s"), qPrintable(o.output));
        QCOMPARE(o.pids.size(), std::size_t(2));
        QVERIFY(!any_alive(o.pids));
    }

    // Rank 1 is killed (SIGKILL) while rank 0 waits in a collective: the job ends, nothing is left.
    void aKilledRankEndsTheJob() {
        const Outcome o = launch("die");
        qInfo("die: exit %d after %.1f s", o.exit_code, o.seconds);
        QVERIFY2(o.exit_code != 0, qPrintable(o.output));
        QVERIFY2(o.seconds < 30, qPrintable(o.output));
        QCOMPARE(o.pids.size(), std::size_t(2));
        QVERIFY(!any_alive(o.pids));
    }
};

int main(int argc, char** argv) {
    if (const char* mode = std::getenv("HR_FAULT_HELPER")) return helper(mode);
    QCoreApplication app(argc, argv);
    CommFaultsTest t;
    return QTest::qExec(&t, argc, argv);
}
#include "test_comm_faults.moc"
