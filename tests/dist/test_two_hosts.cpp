// ranks: none
// Ranks on two hosts (issue 45): the test makes two hosts out of network namespaces joined by a veth pair
// (`ip netns`, each process with a /tmp of its own through `unshare --mount`), runs mpirun in the first
// and has it start the second host's daemon through a launch agent (plm_rsh_agent: a script that enters
// that namespace). Traffic stays on the pair. Checked:
// - `headroom train` on one rank per host equals the same run on two local ranks bit for bit (and one
//   process within float rounding: the loss within 1e-6);
// - a host whose rank is stopped (SIGSTOP) or killed ends the run within --rank-timeout plus a margin, no process
//   of the job left;
// - the same through the product: `headroom train --ranks 2 --hosts A:1,B:1` started in host A (Open MPI's
//   launch agent and interfaces from OMPI_MCA_* variables) equals two local ranks bit for bit, and both
//   ranks' events reach the launcher over its socket on host A's address (it writes them to its own
//   HEADROOM_EVENTS_DIR; the ranks write no file); a rank on host B that hangs while running
//   (HEADROOM_TEST_SPIN) is named in the history with its step, and the run ends within --rank-timeout plus
//   the grace, no process left.
// Needs root, `ip`, `unshare` and mpirun; skips otherwise. Folders are under the build tree, not /tmp
// (each host's /tmp is its own).
#include <QtTest>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"
#include "history_rows.h"
#include "test_support.h"
#include "programs.h"

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

QStringList runArgs(const QString& out, const QString& steps) {
    return {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--test-limit", "64",
            "--batch", "64", "--steps", steps, "--threads", "1", "--seed", "3", "--device", "cpu", "--no-history",
            "--quiet", "--shard", "dp", "--rank-timeout", "2", "--out", out};
}

bool run(const QString& program, const QStringList& args, QString* output = nullptr) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    const bool ok = p.waitForFinished(120000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    if (output) *output = QString::fromLocal8Bit(p.readAll());
    return ok;
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TwoHostsTest : public QObject {
    Q_OBJECT
    QString m_a, m_b, m_ipA, m_ipB, m_dir, m_agent, m_privtmp;
    bool m_made = false;

    // `mpirun` in host A over both hosts, one rank each, running headroom with `args`
    QStringList mpirunInA(const QStringList& args) const {
        QStringList mpi = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--host",
                           m_ipA + ":1," + m_ipB + ":1", "-np", "2", "-x", "OMP_NUM_THREADS=1", "--mca",
                           "plm_rsh_agent", m_agent, "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include",
                           m_ipA.section('.', 0, 2) + ".0/24", "--mca", "oob_tcp_if_include",
                           m_ipA.section('.', 0, 2) + ".0/24", kHeadroom};
        mpi << args;
        return QStringList{"netns", "exec", m_a, "unshare", "--mount", m_privtmp, m_dir + "/stage"} + mpi;
    }

    // `headroom train ARGS --ranks 2 --hosts A:1,B:1` started in host A with a /tmp of its own
    QStringList headroomInA(const QStringList& args) const {
        return QStringList{"netns", "exec", m_a, "unshare", "--mount", m_privtmp, m_dir + "/stage", kHeadroom} + args +
               QStringList{"--ranks", "2", "--hosts", m_ipA + ":1," + m_ipB + ":1"};
    }
    // what Open MPI needs from the environment for these hosts: the launch agent and the pair's subnet
    QProcessEnvironment hostsEnvironment() const {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMP_NUM_THREADS", "1");
        env.insert("OMPI_MCA_plm_rsh_agent", m_agent);
        env.insert("OMPI_MCA_btl_tcp_if_include", m_ipA.section('.', 0, 2) + ".0/24");
        env.insert("OMPI_MCA_oob_tcp_if_include", m_ipA.section('.', 0, 2) + ".0/24");
        env.insert("HEADROOM_STOP_GRACE", "2");
        return env;
    }

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !hr::mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        if (::geteuid() != 0) QSKIP("network namespaces need root");
        if (QStandardPaths::findExecutable("ip").isEmpty() || QStandardPaths::findExecutable("unshare").isEmpty())
            QSKIP("no ip or unshare");
        const long pid = static_cast<long>(::getpid());
        m_a = QString("hr-%1-a").arg(pid);
        m_b = QString("hr-%1-b").arg(pid);
        const QString net = QString("10.%1.%2").arg(200 + (pid / 250) % 50).arg(pid % 250);
        m_ipA = net + ".1";
        m_ipB = net + ".2";
        const QString va = QString("hr%1a").arg(pid), vb = QString("hr%1b").arg(pid);
        if (!run("ip", {"netns", "add", m_a})) QSKIP("cannot make network namespaces here (a container without CAP_SYS_ADMIN?)");
        m_made = true;
        QVERIFY(run("ip", {"netns", "add", m_b}));
        QVERIFY(run("ip", {"link", "add", va, "type", "veth", "peer", "name", vb}));
        QVERIFY(run("ip", {"link", "set", va, "netns", m_a}));
        QVERIFY(run("ip", {"link", "set", vb, "netns", m_b}));
        QVERIFY(run("ip", {"-n", m_a, "addr", "add", m_ipA + "/24", "dev", va}));
        QVERIFY(run("ip", {"-n", m_b, "addr", "add", m_ipB + "/24", "dev", vb}));
        for (const QString& ns : {m_a, m_b}) QVERIFY(run("ip", {"-n", ns, "link", "set", "lo", "up"}));
        QVERIFY(run("ip", {"-n", m_a, "link", "set", va, "up"}));
        QVERIFY(run("ip", {"-n", m_b, "link", "set", vb, "up"}));
        m_dir = hrtest::qbinary_path("two-hosts-%1").arg(pid);
        QVERIFY(QDir().mkpath(m_dir));
        // `privtmp STAGE COMMAND...`, in a mount namespace of its own (unshare --mount): COMMAND with a /tmp of
        // its own, a new tmpfs. Where the build tree is itself under /tmp (a clone made with mktemp -d), the
        // tree's top folder there is bound into the new /tmp at its own path first, so that the binaries and
        // these folders stay where they are; the tmpfs is made at STAGE and moved onto /tmp.
        const QString binary = hrtest::qbinary_path();
        const QString keep = binary.startsWith("/tmp/") ? "/tmp/" + binary.section('/', 2, 2) : QString();
        m_privtmp = m_dir + "/privtmp.sh";
        QFile privtmp(m_privtmp);
        QVERIFY(privtmp.open(QIODevice::WriteOnly));
        privtmp.write(QString("#!/bin/sh\n"
                              "set -e\n"
                              "stage=$1; shift\n"
                              "mkdir -p \"$stage\"\n"
                              "mount -t tmpfs tmpfs \"$stage\"\n"
                              "keep='%1'\n"
                              "if [ -n \"$keep\" ]; then\n"
                              "  mkdir -p \"$stage/${keep#/tmp/}\"\n"
                              "  mount --bind \"$keep\" \"$stage/${keep#/tmp/}\"\n"
                              "fi\n"
                              "mount --move \"$stage\" /tmp\n"
                              "exec \"$@\"\n")
                          .arg(keep)
                          .toUtf8());
        privtmp.close();
        QVERIFY(QFile::setPermissions(m_privtmp, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        // the launch agent: `agent HOST COMMAND...` runs COMMAND in HOST's namespace with a /tmp of its own
        m_agent = m_dir + "/agent.sh";
        QFile agent(m_agent);
        QVERIFY(agent.open(QIODevice::WriteOnly));
        agent.write(QString("#!/bin/sh\n"
                            "host=$1; shift\n"
                            "case \"$host\" in %1) ns=%2;; %3) ns=%4;; *) echo \"agent: unknown host $host\" >&2; exit 1;; esac\n"
                            "exec ip netns exec $ns unshare --mount %5 %6/stage-$ns /bin/sh -c \"$*\"\n")
                        .arg(m_ipA, m_a, m_ipB, m_b, m_privtmp, m_dir)
                        .toUtf8());
        agent.close();
        QVERIFY(QFile::setPermissions(m_agent, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    }

    void cleanupTestCase() {
        if (m_made) {
            run("ip", {"netns", "del", m_a});
            run("ip", {"netns", "del", m_b});
        }
        if (!m_dir.isEmpty()) QDir(m_dir).removeRecursively();
    }

    void twoHostsEqualTwoLocalRanks() {
        QString said;
        QVERIFY2(run("ip", mpirunInA(runArgs(m_dir + "/two-hosts", "6")), &said), qPrintable(said));
        QProcess local;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMP_NUM_THREADS", "1");
        local.setProcessEnvironment(env);
        local.setProcessChannelMode(QProcess::MergedChannels);
        local.start(kHeadroom, runArgs(m_dir + "/local", "6") << "--ranks" << "2");
        QVERIFY(local.waitForFinished(120000));
        QVERIFY2(local.exitCode() == 0, local.readAll().constData());
        local.start(kHeadroom, QStringList(runArgs(m_dir + "/one", "6")).replaceInStrings("dp", "none"));
        QVERIFY(local.waitForFinished(120000));
        QVERIFY2(local.exitCode() == 0, local.readAll().constData());
        const QByteArray two = fileBytes(m_dir + "/two-hosts/model.safetensors");
        QVERIFY(!two.isEmpty());
        QVERIFY2(two == fileBytes(m_dir + "/local/model.safetensors"), "two hosts differ from two local ranks");
        const nlohmann::json a = hrtest::read_json((m_dir + "/two-hosts/run.json").toStdString());
        const nlohmann::json b = hrtest::read_json((m_dir + "/one/run.json").toStdString());
        QCOMPARE(a["distributed"]["world_size"].get<int>(), 2);
        QVERIFY(std::abs(a["final"]["train_loss"].get<double>() - b["final"]["train_loss"].get<double>()) < 1e-6);
    }

    void headroomTrainOnTwoHosts() {
        QProcess p;
        QProcessEnvironment env = hostsEnvironment();
        env.insert("HEADROOM_EVENTS_DIR", m_dir + "/events");
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::MergedChannels);
        QElapsedTimer t;
        t.start();
        p.start("ip", headroomInA(runArgs(m_dir + "/train-two-hosts", "6")));
        QVERIFY(p.waitForFinished(120000));
        const QString said = QString::fromLocal8Bit(p.readAll());
        qInfo("headroom train --ranks 2 --hosts A:1,B:1, 6 steps: %.2f s", t.elapsed() / 1000.0);
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(said));
        if (!QFileInfo::exists(m_dir + "/local/model.safetensors")) {  // the two local ranks, when not run yet
            QProcess local;
            QProcessEnvironment le = QProcessEnvironment::systemEnvironment();
            le.insert("OMP_NUM_THREADS", "1");
            local.setProcessEnvironment(le);
            local.start(kHeadroom, runArgs(m_dir + "/local", "6") << "--ranks" << "2");
            QVERIFY(local.waitForFinished(120000));
            QCOMPARE(local.exitCode(), 0);
        }
        const QByteArray two = fileBytes(m_dir + "/train-two-hosts/model.safetensors");
        QVERIFY(!two.isEmpty());
        QVERIFY2(two == fileBytes(m_dir + "/local/model.safetensors"), "headroom train on two hosts differs from two local ranks");
        // both ranks' events came to the launcher's socket on host A's address (the ranks had no HEADROOM_EVENTS_DIR)
        for (int rank : {0, 1}) {
            QFile f(m_dir + QString("/events/rank%1.jsonl").arg(rank));
            QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
            int beats = 0;
            bool ended = false;
            for (const QByteArray& line : f.readAll().split('\n')) {
                if (line.isEmpty()) continue;
                const nlohmann::json j = nlohmann::json::parse(line.toStdString());
                QCOMPARE(j["rank"].get<int>(), rank);
                if (j["event"] == "telemetry" && j.contains("progress")) ++beats;
                if (j["event"] == "end") ended = j["result"]["status"] == "finished";
            }
            QVERIFY2(beats > 0, qPrintable(QString("rank %1 sent no heartbeat").arg(rank)));
            QVERIFY2(ended, qPrintable(QString("rank %1's end did not arrive").arg(rank)));
        }
    }

    void aRankThatHangsOnHostBIsNamed() {
        const QString w = m_dir + "/hang";
        QDir().mkpath(w);
        QProcess p;
        QProcessEnvironment env = hostsEnvironment();
        env.insert("HEADROOM_TEST_SPIN", "1:6");
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::MergedChannels);
        QStringList args = runArgs(w + "/out", "1000000");
        args.removeAll("--no-history");
        args << "--save-every" << "5" << "--db" << w + "/history.db";
        p.start("ip", headroomInA(args));
        QVERIFY(p.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        std::set<long> job;
        while (t.elapsed() < 90000 && p.state() == QProcess::Running &&
               QDir(w + "/out").entryList({"checkpoint-*.safetensors"}, QDir::Files).isEmpty()) {
            p.waitForFinished(100);
            for (long pid : hrtest::processes_below(p.processId())) job.insert(pid);
        }
        QElapsedTimer since;  // the rank on host B spins from step 6, right after the checkpoint of step 5
        since.start();
        for (long pid : hrtest::processes_below(p.processId())) job.insert(pid);
        const bool ended = p.waitForFinished(60000);
        const double seconds = since.elapsed() / 1000.0;
        const QString said = QString::fromLocal8Bit(p.readAll());
        qInfo("host B's rank hangs running: the run ended after %.2f s (--rank-timeout 2 s, grace 2 s)", seconds);
        if (!ended)
            for (long pid : job) ::kill(static_cast<pid_t>(pid), SIGKILL);
        QVERIFY2(ended, qPrintable(said));
        QVERIFY(p.exitCode() != 0);
        QVERIFY2(job.size() >= 3, "mpirun and the ranks below the launcher");
        for (long pid : job) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QString("process %1 is left").arg(pid)));
        const QStringList rows = hrtest::history_rows(w + "/history.db");
        QCOMPARE(rows.size(), qsizetype(1));
        QVERIFY2(rows[0].startsWith("failed|"), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains("rank 1 (on "), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains("stopped making progress in step 6: its process kept running"), qPrintable(rows[0]));
        QVERIFY2(rows[0].contains("the last good checkpoint is step 5"), qPrintable(rows[0]));
        QVERIFY2(seconds < 2 + 2 + 6, qPrintable(QString("%1 s").arg(seconds)));
    }

    void aStoppedOrKilledHostEndsTheRun_data() {
        QTest::addColumn<int>("sig");
        QTest::newRow("SIGSTOP") << int(SIGSTOP);
        QTest::newRow("SIGKILL") << int(SIGKILL);
    }
    void aStoppedOrKilledHostEndsTheRun() {
        QFETCH(int, sig);
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        // a checkpoint each step: its first file says the ranks train (past their setup, whose waits a stopped
        // rank would hold without the steps' timeout on a machine loaded enough to be slow to start)
        const QString out = m_dir + "/stall-" + QTest::currentDataTag();
        p.start("ip", mpirunInA(runArgs(out, "1000000") + QStringList{"--save-every", "1"}));
        QVERIFY(p.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        std::map<int, long> ranks;
        while (ranks.size() < 2 && t.elapsed() < 60000 && p.state() == QProcess::Running) {
            p.waitForFinished(200);
            ranks = hrtest::rank_processes(p.processId());
        }
        QCOMPARE(int(ranks.size()), 2);
        while (QDir(out).entryList({"checkpoint-*.safetensors"}, QDir::Files).isEmpty() && t.elapsed() < 90000 &&
               p.state() == QProcess::Running)
            p.waitForFinished(100);
        QVERIFY2(!QDir(out).entryList({"checkpoint-*.safetensors"}, QDir::Files).isEmpty(), "the ranks never trained");
        const std::set<long> job = hrtest::processes_below(p.processId());
        ::kill(static_cast<pid_t>(ranks.at(1)), sig);  // the rank on host B
        QElapsedTimer since;
        since.start();
        const bool ended = p.waitForFinished(30000);
        qInfo("host B's rank %s: the run ended after %.2f s (--rank-timeout 2 s)", QTest::currentDataTag(), since.elapsed() / 1000.0);
        if (!ended) {
            for (long pid : job) {
                ::kill(static_cast<pid_t>(pid), SIGCONT);
                ::kill(static_cast<pid_t>(pid), SIGKILL);
            }
        }
        QVERIFY2(ended, p.readAll().constData());
        QVERIFY(p.exitCode() != 0);
        for (long pid : job) QVERIFY2(!hrtest::process_alive(pid), qPrintable(QString("process %1 is left").arg(pid)));
    }
};

QTEST_GUILESS_MAIN(TwoHostsTest)
#include "test_two_hosts.moc"
