// ranks: none
// `headroom train --ranks 2` with HEADROOM_EVENTS_ADDR (issue 45): every rank sends its events as JSON lines
// over its own TCP connection to the launcher's socket, and the launcher passes every line on, unchanged, to
// the parent's socket (this test listens); none is written to a file. Rank 0
// sends its steps and its end, rank 1 its memory and its end; each line says its rank. A socket that
// nobody listens on costs the run nothing: the launcher says so and the ranks train on.
#include <QtTest>
#include <QTcpServer>
#include <QTcpSocket>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"
#include "test_support.h"

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

QStringList shortRun(const QString& out) {
    return {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--test-limit", "64",
            "--batch", "64", "--steps", "6", "--threads", "1", "--seed", "3", "--device", "cpu", "--no-history",
            "--quiet", "--ranks", "2", "--shard", "dp", "--out", out};
}

}  // namespace

class TrainRanksEventsTest : public QObject {
    Q_OBJECT
    std::string m_dir;

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !hr::mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-train-ranks-events");
    }

    void eventsArriveOverTheSocket() {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        std::map<QTcpSocket*, QByteArray> peers;
        std::map<int, std::multiset<std::string>> events;  // rank -> its event kinds
        int badLines = 0;
        auto read = [&](QTcpSocket* s) {
            QByteArray& partial = peers[s];
            partial += s->readAll();
            qsizetype nl;
            while ((nl = partial.indexOf('\n')) >= 0) {
                const QByteArray line = partial.left(nl);
                partial.remove(0, nl + 1);
                try {
                    const nlohmann::json j = nlohmann::json::parse(line.toStdString());
                    events[j.at("rank").get<int>()].insert(j.at("event").get<std::string>());
                } catch (const std::exception&) {
                    ++badLines;
                }
            }
        };
        connect(&server, &QTcpServer::newConnection, this, [&] {
            while (QTcpSocket* s = server.nextPendingConnection()) {
                peers[s];
                connect(s, &QTcpSocket::readyRead, this, [&read, s] { read(s); });
            }
        });
        const QString w = QString::fromStdString(m_dir);
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMP_NUM_THREADS", "1");
        env.remove("HEADROOM_EVENTS_DIR");
        env.insert("HEADROOM_EVENTS_ADDR", QString("127.0.0.1:%1").arg(server.serverPort()));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(w);
        p.start(kHeadroom, shortRun(w + "/out"));
        QVERIFY(p.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        while (p.state() == QProcess::Running && t.elapsed() < 120000) QTest::qWait(50);
        QCOMPARE(p.exitCode(), 0);
        QTest::qWait(200);
        for (auto& [s, partial] : peers) {
            while (s->waitForReadyRead(50)) {
            }
            read(s);
        }
        QCOMPARE(badLines, 0);
        QCOMPARE(int(peers.size()), 1);  // the launcher's, carrying every rank's lines
        QCOMPARE(events[0].count("step"), std::size_t(6));
        QCOMPARE(events[0].count("end"), std::size_t(1));
        QCOMPARE(events[1].count("end"), std::size_t(1));
        QVERIFY(events[1].count("memory") > 0);
        QCOMPARE(events[1].count("step"), std::size_t(0));  // rank 0 speaks for the run
        QVERIFY(QDir(w).entryList({"*.jsonl"}, QDir::Files).isEmpty());
        QVERIFY(QFileInfo::exists(w + "/out/run.json"));
    }

    void nobodyListeningCostsTheRunNothing() {
        QTcpServer probe;  // a port that was free a moment ago, now closed
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const quint16 port = probe.serverPort();
        probe.close();
        const QString w = QString::fromStdString(m_dir) + "/nobody";
        QDir().mkpath(w);
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMP_NUM_THREADS", "1");
        env.insert("HEADROOM_EVENTS_ADDR", QString("127.0.0.1:%1").arg(port));
        p.setProcessEnvironment(env);
        p.start(kHeadroom, shortRun(w + "/out"));
        QVERIFY(p.waitForFinished(120000));
        const QString out = QString::fromLocal8Bit(p.readAll());
        QVERIFY2(p.exitCode() == 0, qPrintable(out));
        QVERIFY2(out.contains("cannot reach its parent"), qPrintable(out));
        QVERIFY(QFileInfo::exists(w + "/out/run.json"));
    }
};

QTEST_GUILESS_MAIN(TrainRanksEventsTest)
#include "test_train_ranks_events.moc"
