// The launcher's heartbeats (issue 45, app/cli/rank_events.h): the rule that names a rank without progress,
// worked by hand over made-up heartbeats; the heartbeat's JSON form both ways; a rank's lines over a real
// loopback socket into the launcher's record and on into its HEADROOM_EVENTS_DIR; and the record core keeps
// (dist/rank_progress.h). tests/dist/test_train_ranks_hang.cpp runs the whole path with ranks.
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "cli/rank_events.h"
#include "dist/rank_progress.h"
#include "session/RunEvent.h"
#include "test_support.h"

using hrapp::RankEvents;

namespace {

RankEvents::Beat beatOf(std::int64_t step, const std::string& waiting, double still, double received) {
    RankEvents::Beat b;
    b.progress.step = step;
    b.progress.waiting = waiting;
    b.progress.still_seconds = still;
    b.received = received;
    b.host = "h";
    return b;
}

}  // namespace

class RankHeartbeatsTest : public QObject {
    Q_OBJECT
private slots:
    void theRuleNamesTheRankTheOthersWaitFor() {
        const double now = 100, timeout = 3;
        std::map<int, RankEvents::Beat> beats;
        beats[0] = beatOf(6, "all_reduce of one value (sum)", 2.9, 99.8);  // waiting 3.1 s
        beats[1] = beatOf(6, "", 2.8, 99.7);                               // computing 2.8 + 0.3 = 3.1 s
        auto s = RankEvents::stallsOf(beats, timeout, now, false);
        QCOMPARE(int(s.size()), 1);
        QCOMPARE(s[0].rank, 1);
        QCOMPARE(s[0].step, std::int64_t(6));
        QVERIFY(!s[0].silent);
        QVERIFY(std::abs(s[0].seconds - 3.1) < 1e-9);
        // 2.5 s of computing is not yet a stall
        beats[1] = beatOf(6, "", 2.2, 99.7);
        QVERIFY(RankEvents::stallsOf(beats, timeout, now, false).empty());
        // computing long while nobody waits (one long step on every rank) is no stall either
        beats[0] = beatOf(6, "", 10, 99.8);
        beats[1] = beatOf(6, "", 10, 99.7);
        QVERIFY(RankEvents::stallsOf(beats, timeout, now, false).empty());
        // a rank that ended is not judged, but what it last said (it waited) still counts
        beats[0] = beatOf(6, "reduce_scatter", 5, 99.8);
        beats[0].ended = true;
        s = RankEvents::stallsOf(beats, timeout, now, false);
        QCOMPARE(int(s.size()), 1);
        QCOMPARE(s[0].rank, 1);
    }

    void aRankNotHeardFromIsNamedSilent() {
        std::map<int, RankEvents::Beat> beats;
        beats[0] = beatOf(4, "all_gather", 1, 99.9);
        beats[2] = beatOf(4, "all_gather", 0.1, 95.5);  // nothing for 4.5 s
        auto s = RankEvents::stallsOf(beats, 3, 100, false);
        QCOMPARE(int(s.size()), 1);
        QCOMPARE(s[0].rank, 2);
        QVERIFY(s[0].silent);
        QVERIFY(std::abs(s[0].seconds - 4.5) < 1e-9);
        // its connection closed while the job ran: a rank that ended (mpirun tells of a death), not judged
        beats[2].closed = 96;
        QVERIFY(RankEvents::stallsOf(beats, 3, 100, false).empty());
        // once the job has ended, the silence counts up to the close: 0.5 s, no stall; closed later, a stall
        QVERIFY(RankEvents::stallsOf(beats, 3, 100, true).empty());
        beats[2].closed = 99.5;
        s = RankEvents::stallsOf(beats, 3, 100, true);
        QCOMPARE(int(s.size()), 1);
        QVERIFY(s[0].silent);
        QVERIFY(std::abs(s[0].seconds - 4.0) < 1e-9);
    }

    void theHeartbeatsJsonBothWays() {
        hrapp::RankTelemetry t;
        t.rank = 2;
        t.host = "gpu-b";
        t.progress = hr::RankProgress{7, "all_reduce of one value (sum)", 1.25};
        const nlohmann::json j = hrapp::runEventToJson(t);
        QCOMPARE(j["progress"]["step"].get<std::int64_t>(), std::int64_t(7));
        QCOMPARE(QString::fromStdString(j["progress"]["waiting"].get<std::string>()), QString("all_reduce of one value (sum)"));
        const auto back = std::get<hrapp::RankTelemetry>(hrapp::runEventFromJson(j));
        QVERIFY(back.progress.has_value());
        QCOMPARE(back.progress->step, std::int64_t(7));
        QCOMPARE(back.progress->still_seconds, 1.25);
        t.progress.reset();  // a program that sends none
        QVERIFY(!hrapp::runEventToJson(t).contains("progress"));
        QVERIFY(!std::get<hrapp::RankTelemetry>(hrapp::runEventFromJson(hrapp::runEventToJson(t))).progress);
    }

    void linesOverTheSocketReachTheRecordAndTheFolder() {
        const QString dir = QString::fromStdString(hrtest::temp_dir("hr-rank-heartbeats"));
        RankEvents events;
        QString error;
        QVERIFY2(events.listen("127.0.0.1", &error), qPrintable(error));
        QVERIFY(events.address().startsWith("127.0.0.1:"));
        QVERIFY(events.forwardTo({}, dir));
        const int port = events.address().section(':', 1).toInt();
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<quint16>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        hrapp::RankTelemetry t;
        t.rank = 1;
        t.host = "h1";
        t.progress = hr::RankProgress{3, "", 0.5};
        nlohmann::json j = hrapp::runEventToJson(t);
        j["rank"] = 1;
        const std::string line = j.dump() + "\n";
        // in two pieces: the record takes whole lines only
        QVERIFY(::send(fd, line.data(), 10, 0) == 10);
        for (int i = 0; i < 20; ++i) {
            events.pump();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        QVERIFY(events.beats().empty());
        QVERIFY(::send(fd, line.data() + 10, line.size() - 10, 0) == ssize_t(line.size() - 10));
        for (int i = 0; i < 50 && events.beats().empty(); ++i) {
            events.pump();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        QCOMPARE(int(events.beats().size()), 1);
        QCOMPARE(events.beats().at(1).progress.step, std::int64_t(3));
        QCOMPARE(QString::fromStdString(events.beats().at(1).host), QString("h1"));
        ::close(fd);
        for (int i = 0; i < 50 && events.beats().at(1).closed < 0; ++i) {
            events.pump();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        QVERIFY(events.beats().at(1).closed >= 0);
        QFile f(dir + "/rank1.jsonl");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll().toStdString(), line);  // passed on unchanged
    }

    void coreKeepsTheStepAndTheWait() {
        hr::note_step_begins(12);
        hr::RankProgress p = hr::rank_progress();
        QCOMPARE(p.step, std::int64_t(12));
        QVERIFY(p.waiting.empty());
        hr::note_wait_begins("barrier");
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        p = hr::rank_progress();
        QCOMPARE(QString::fromStdString(p.waiting), QString("barrier"));
        QVERIFY(p.still_seconds >= 0.025);
        hr::note_wait_ends();
        p = hr::rank_progress();
        QVERIFY(p.waiting.empty());
        QVERIFY(p.still_seconds < 0.025);
        hr::spin_here_for_test(12);  // HEADROOM_TEST_SPIN is not set: returns at once
    }
};

QTEST_GUILESS_MAIN(RankHeartbeatsTest)
#include "test_rank_heartbeats.moc"
