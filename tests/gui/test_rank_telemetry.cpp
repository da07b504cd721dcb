// Per-rank telemetry (issue 10): the ranks of a multi-rank run may be on other machines than the window,
// whose own hardware monitor sees only its machine. Every rank sends what its process sees (its
// resident memory, which GPU it trains on), and each machine's lowest local rank its machine's CPU, RAM
// and GPUs, as "telemetry" lines of the events the window relays (session/RankRelay).
//
// The real run here is 2 CPU ranks through mpirun, with a fake NVML (tests/support/fake_nvml.c) found by
// the ranks as libnvidia-ml.so.1 on their LD_LIBRARY_PATH, as a driver would be: the window (this test
// process, which has no driver) shows the GPUs the ranks report, with the fake driver's own figures.
// Each rank's resident memory is checked against the operating system's view of that process (its
// VmHWM and VmRSS in /proc) and against the rank's own ledger, and the pids are the ranks' (found below
// the launcher). The view's placement rules (another machine's GPUs, the Ranks column, a rank's ledger
// on its GPU) are checked with events as a remote machine would send them.
#include <QtTest>

#include <QSignalSpy>
#include <QSysInfo>
#include <QTableWidget>
#include <QTemporaryDir>

#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "charts/LiveChart.h"
#include "gui/HardwareView.h"
#include "nn/model_spec.h"
#include "session/RankRelay.h"
#include "session/RunController.h"
#include "session/RunDefaults.h"
#include "test_support.h"

using namespace hrapp;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool haveMpirun() { return !QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty(); }

// A /proc/PID/status figure in bytes ("VmRSS", "VmHWM"); -1 when the process is gone.
qint64 procStatusBytes(long long pid, const char* key) {
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith(QByteArray(key) + ':')) {
            const QList<QByteArray> parts = line.simplified().split(' ');
            return parts.size() >= 2 ? parts[1].toLongLong() * 1024 : -1;  // kB
        }
    return -1;
}

int seriesNamed(hrw::LiveChart* chart, const QString& name) {
    for (int i = 0; i < chart->graphCount(); ++i)
        if (chart->graph(i)->name() == name) return i;
    return -1;
}

double lastValue(hrw::LiveChart* chart, int series) {
    const auto data = chart->graph(series)->data();
    return data->isEmpty() ? std::nan("") : (data->constEnd() - 1)->value;
}

hr::GpuStats gpu(int index, const char* name, double usedGiB) {
    hr::GpuStats g;
    g.index = index;
    g.name = name;
    g.memory_used = std::int64_t(usedGiB * kGiB);
    g.memory_total = std::int64_t(80 * kGiB);
    g.power_watts = 200 + index;
    g.gpu_utilization = 90;
    g.temperature_c = 60;
    return g;
}

}  // namespace

class TestRankTelemetry : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The relay's line format: every field back as it was, NaN as null; a malformed GPU entry is dropped.
    void telemetryLinesRoundTrip() {
        RankTelemetry t;
        t.rank = 3;
        t.host = "node-b";
        t.pid = 4242;
        t.device = "cuda:1";
        t.gpu = 2;
        t.machine = true;
        t.sample.t_seconds = 12.5;
        t.sample.step = 77;
        t.sample.host.cpu_utilization = 41.5;
        t.sample.host.cpu_count = 64;
        t.sample.host.ram_used = 123456789;
        t.sample.host.ram_total = 987654321;
        t.sample.host.process_rss = 55555;
        hr::GpuStats g = gpu(2, "NVIDIA H200", 7.25);
        g.pci_bus_id = "0000:b3:00.0";
        g.sm_clock_mhz = hr::kTelemetryNaN;
        g.energy_joules = 1e6;
        t.sample.gpus = {g};
        nlohmann::json j = runEventToJson(RunEvent(t));
        QCOMPARE(j["event"].get<std::string>(), std::string("telemetry"));
        QVERIFY(j["gpus"][0]["sm_clock_mhz"].is_null());
        j["gpus"].push_back("not a GPU");
        const RunEvent back = runEventFromJson(nlohmann::json::parse(j.dump()));
        const auto* r = std::get_if<RankTelemetry>(&back);
        QVERIFY(r);
        QCOMPARE(r->rank, 3);
        QCOMPARE(r->host, std::string("node-b"));
        QCOMPARE(r->pid, 4242LL);
        QCOMPARE(r->device, std::string("cuda:1"));
        QCOMPARE(r->gpu, 2);
        QVERIFY(r->machine);
        QCOMPARE(r->sample.t_seconds, 12.5);
        QCOMPARE(r->sample.step, std::int64_t(77));
        QCOMPARE(r->sample.host.cpu_utilization, 41.5);
        QCOMPARE(r->sample.host.cpu_count, 64);
        QCOMPARE(r->sample.host.ram_used, std::int64_t(123456789));
        QCOMPARE(r->sample.host.ram_total, std::int64_t(987654321));
        QCOMPARE(r->sample.host.process_rss, std::int64_t(55555));
        QCOMPARE(r->sample.gpus.size(), std::size_t(1));
        const hr::GpuStats& b = r->sample.gpus[0];
        QCOMPARE(b.index, 2);
        QCOMPARE(b.name, std::string("NVIDIA H200"));
        QCOMPARE(b.pci_bus_id, std::string("0000:b3:00.0"));
        QCOMPARE(b.memory_used, g.memory_used);
        QCOMPARE(b.memory_total, g.memory_total);
        QCOMPARE(b.power_watts, 202.0);
        QVERIFY(std::isnan(b.sm_clock_mhz));
        QVERIFY(std::isnan(b.memory_utilization));
        QCOMPARE(b.energy_joules, 1e6);
        // a field of the wrong type is refused as any other event's
        j["pid"] = "many";
        QVERIFY_THROWS_EXCEPTION(hr::InputError, runEventFromJson(j));
    }

    // 2 CPU ranks from the window's controller; the ranks find the fake driver, the window has none.
    void ranksReportTheirProcessesAndMachine() {
        if (!haveMpirun()) QSKIP("no mpirun on PATH");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        const QString lib = m_dir.filePath(QStringLiteral("driver"));
        QVERIFY(QDir().mkpath(lib));
        QVERIFY(QFile::link(hrtest::qbinary_path("tests/libfake-nvidia-ml.so"), lib + QStringLiteral("/libnvidia-ml.so.1")));
        const QByteArray oldPath = qgetenv("LD_LIBRARY_PATH");
        qputenv("LD_LIBRARY_PATH", (lib + QLatin1Char(':')).toLocal8Bit() + oldPath);  // the children's, not ours
        qputenv("FAKE_NVML", "2gpus");
        qputenv("OMP_NUM_THREADS", "1");

        hr::TrainConfig config = defaultTrainConfig();
        config.model = hr::preset_model("mlp");
        config.model_source = "preset:mlp";
        config.data = "synthetic";
        config.train_limit = 256;
        config.test_limit = 64;
        config.batch = 64;
        config.steps = 1000000;  // stopped below
        config.threads = 1;
        config.device = "cpu";
        config.strategy.shard = "dp";

        HardwareView view;
        view.setGpuState(false, QStringLiteral("no NVIDIA driver (this test)"));
        view.resize(1200, 700);
        RunController c;
        QElapsedTimer clock;
        clock.start();
        const QString localHost = QSysInfo::machineHostName();
        std::map<int, QVector<RankTelemetry>> got;
        std::map<int, std::size_t> ledgerLive;  // each rank's latest ledger
        std::map<int, int> rssWithinOs;         // samples within 25 % of the OS's VmRSS read on arrival
        QStringList problems;
        connect(&c, &RunController::memoryUpdated, this, [&](const hr::MemoryEvent& m) {
            ledgerLive[m.rank] = m.ledger.live_total;
            view.addLedger(clock.elapsed() / 1000.0, m, -1);
        });
        connect(&c, &RunController::rankTelemetry, this, [&](const RankTelemetry& t) {
            view.addRankTelemetry(clock.elapsed() / 1000.0, t, localHost);
            got[t.rank] << t;
            const qint64 hwm = procStatusBytes(t.pid, "VmHWM"), rss = procStatusBytes(t.pid, "VmRSS");
            if (hwm < 0) return;  // the rank has just ended
            const std::int64_t said = t.sample.host.process_rss;
            // the kernel's resident counters are per-thread caches, synced every 64 pages: either figure may
            // be off by that much for each of the rank's threads (OpenBLAS, OpenMP, MPI, the sampler)
            const qint64 slack = qint64(4) << 20;
            if (said <= 0 || said > hwm + slack)
                problems << QStringLiteral("rank %1 said %2 bytes resident, its peak is %3").arg(t.rank).arg(said).arg(hwm);
            if (ledgerLive.count(t.rank) && said < std::int64_t(ledgerLive[t.rank]))
                problems << QStringLiteral("rank %1 said %2 bytes resident, below its ledger's %3").arg(t.rank).arg(said).arg(ledgerLive[t.rank]);
            if (rss > 0 && std::abs(double(said - rss)) <= 0.25 * double(rss)) ++rssWithinOs[t.rank];
        });
        QSignalSpy finished(&c, &RunController::runFinished);
        RunOptions o;
        o.outDir = m_dir.filePath(QStringLiteral("run"));
        o.ranks = 2;
        o.rankProgram = kHeadroom;
        o.sampleTelemetry = false;
        o.telemetryIntervalMs = 100;  // the ranks' telemetry too (HEADROOM_EVENTS_TELEMETRY_MS)
        QString error;
        const bool started = c.start(config, o, &error);
        qputenv("LD_LIBRARY_PATH", oldPath);
        QVERIFY2(started, qPrintable(error));
        const long launcher = c.relay()->launcherPid();
        auto enough = [&] { return got[0].size() >= 4 && got[1].size() >= 4 && ledgerLive.size() == 2; };
        QTRY_VERIFY_WITH_TIMEOUT(enough(), 90000);
        const std::set<long> below = hrtest::processes_below(launcher);
        if (qEnvironmentVariableIsSet("HEADROOM_GRAB_DIR"))
            QVERIFY(view.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/hardware-ranks.png")));
        c.stop();
        QVERIFY(finished.wait(60000));
        qunsetenv("FAKE_NVML");
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));

        // the two ranks are two processes below the launcher, on this machine
        const long long pid0 = got[0].first().pid, pid1 = got[1].first().pid;
        QVERIFY(pid0 != pid1);
        QVERIFY2(below.count(long(pid0)) && below.count(long(pid1)), "the reporting processes are the launcher's ranks");
        for (int rank : {0, 1}) {
            QVERIFY2(rssWithinOs[rank] >= 1, qPrintable(QStringLiteral("rank %1's resident memory never matched the OS's").arg(rank)));
            for (const RankTelemetry& t : got[rank]) {
                QCOMPARE(t.rank, rank);
                QCOMPARE(QString::fromStdString(t.host), localHost);
                QCOMPARE(t.device.empty() ? std::string("cpu") : t.device, std::string("cpu"));
                QCOMPARE(t.gpu, -1);  // a CPU rank trains on no GPU
            }
        }
        // rank 0 is the machine's lowest local rank: the machine's figures, the fake driver's GPUs
        const RankTelemetry& m = got[0].last();
        QVERIFY(m.machine);
        QVERIFY(m.sample.host.ram_total > 0 && m.sample.host.ram_used > 0);
        QCOMPARE(m.sample.gpus.size(), std::size_t(2));
        for (int i = 0; i < 2; ++i) {
            const hr::GpuStats& g = m.sample.gpus[std::size_t(i)];
            QCOMPARE(g.name, "Fake NVML GPU " + std::to_string(i));
            QCOMPARE(g.memory_used, std::int64_t(i + 1) << 30);
            QCOMPARE(g.power_watts, 150.0 + i);
            QCOMPARE(g.pci_bus_id, std::string(i == 0 ? "0000:65:00.0" : "0000:66:00.0"));
        }
        // rank 1 is not: only its own process
        const RankTelemetry& r1 = got[1].last();
        QVERIFY(!r1.machine);
        QVERIFY(r1.sample.gpus.empty());
        QCOMPARE(r1.sample.host.ram_total, std::int64_t(-1));

        // the window without a driver shows the ranks' GPUs and each rank's resident memory
        QCOMPARE(view.relayedGpuCount(), 2);
        QTableWidget* table = view.deviceTable();
        QVERIFY(!table->isHidden());
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->item(0, 1)->text(), QStringLiteral("Fake NVML GPU 0"));
        QCOMPARE(table->item(1, 2)->text(), QStringLiteral("2.0 / 80.0 GiB"));
        QCOMPARE(table->item(0, 7)->text(), QString());  // no rank trains on them
        QVERIFY(!view.powerChart()->isHidden());
        QVERIFY(seriesNamed(view.powerChart(), QStringLiteral("GPU 1")) >= 0);
        QVERIFY(view.statusText().contains(QStringLiteral("ranks")));
        for (int rank : {0, 1}) {
            const int s = seriesNamed(view.hostMemoryChart(), QStringLiteral("rank %1 resident (RSS)").arg(rank));
            QVERIFY2(s >= 0, "a resident-memory line per rank");
            QCOMPARE(lastValue(view.hostMemoryChart(), s), double(got[rank].last().sample.host.process_rss) / kGiB);
        }
        // CPU ranks draw no ledger on the GPU memory chart, but each on the per-rank chart: its latest
        // ledger, as the rank sent it
        for (int i = 0; i < view.gpuMemoryChart()->graphCount(); ++i)
            QVERIFY(!view.gpuMemoryChart()->graph(i)->name().contains(QStringLiteral("ledger")));
        QVERIFY(!view.rankMemoryChart()->isHidden());
        for (int rank : {0, 1}) {
            const int s = seriesNamed(view.rankMemoryChart(), QStringLiteral("rank %1").arg(rank));
            QVERIFY2(s >= 0, "a ledger line per CPU rank");
            QCOMPARE(lastValue(view.rankMemoryChart(), s), double(ledgerLive[rank]) / (1024.0 * 1024.0));
        }
        // the run ended: no rank is left in the table, the lines stay on view
        view.clearRanks(true);
        QCOMPARE(table->rowCount(), 0);
        QVERIFY(!view.powerChart()->isHidden());
        QVERIFY(!view.rankMemoryChart()->isHidden());  // the ended run's lines stay on view
        view.clearRanks();  // the next run: back to this machine's own state
        QVERIFY(view.powerChart()->isHidden());
        QVERIFY(view.rankMemoryChart()->isHidden());
        QCOMPARE(view.rankMemoryChart()->graphCount(), 0);
        QVERIFY(view.showsNoDriverState());
    }

    // CPU ranks of a pipeline (2 stages x 2 data-parallel replicas): each rank's ledger on the per-rank
    // chart, named by the stage and replica it runs, in MiB; a rank not placed yet draws nothing
    void cpuRanksLedgerPerStage() {
        HardwareView view;
        view.setGpuState(false, QStringLiteral("no NVIDIA driver (this test)"));
        view.setRunLayout(4, 2);
        QCOMPARE(view.rankName(0), QStringLiteral("rank 0: stage 0 of replica 0"));
        QCOMPARE(view.rankName(3), QStringLiteral("rank 3: stage 1 of replica 1"));
        QVERIFY(view.rankMemoryChart()->isHidden());
        for (int rank = 0; rank < 4; ++rank) {
            RankTelemetry t;
            t.rank = rank;
            t.host = "node-a";
            t.device = "cpu";
            t.gpu = -1;
            t.machine = rank == 0;
            t.sample.host.process_rss = 100LL << 20;
            view.addRankTelemetry(1, t, QStringLiteral("node-a"));
            hr::MemoryEvent m;
            m.rank = rank;
            m.ledger.live_total = std::size_t(rank + 1) << 19;
            view.addLedger(1.5, m, -1);
            m.ledger.live_total = std::size_t(rank + 1) << 20;
            view.addLedger(2, m, -1);
        }
        QVERIFY(!view.rankMemoryChart()->isHidden());
        QCOMPARE(view.rankMemoryChart()->graphCount(), 4);
        const int s = seriesNamed(view.rankMemoryChart(), QStringLiteral("rank 2: stage 1 of replica 0"));
        QVERIFY(s >= 0);
        QCOMPARE(lastValue(view.rankMemoryChart(), s), 3.0);
        hr::MemoryEvent late;
        late.rank = 5;
        view.addLedger(3, late, -1);
        QCOMPARE(view.rankMemoryChart()->graphCount(), 4);
        view.setRunLayout(2, 2);  // one stage per rank
        QCOMPARE(view.rankName(1), QStringLiteral("rank 1: stage 1"));
        view.setRunLayout(3, 1);
        QCOMPARE(view.rankName(2), QStringLiteral("rank 2"));
        if (qEnvironmentVariableIsSet("HEADROOM_GRAB_DIR")) {
            view.resize(1200, 500);
            view.show();
            QVERIFY(view.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/hardware-stages.png")));
        }
    }

    // A window with its own GPUs, a rank on it and a rank on another machine: this machine's GPUs are the
    // own monitor's (the local rank's machine report adds none), the other machine's join the table under
    // its name, the Ranks column says who trains where, and a GPU rank's ledger gets its own line.
    void anotherMachinesGpusJoinTheTable() {
        HardwareView view;
        view.setGpuState(true, QStringLiteral("NVML, driver 999, 1 GPU"));
        hr::TelemetrySample own;
        own.t_seconds = 1;
        own.gpus = {gpu(0, "Local GPU", 3)};
        view.addSample(own);
        const QString here = QStringLiteral("node-a");
        RankTelemetry r0;
        r0.rank = 0;
        r0.host = "node-a";
        r0.device = "cuda:0";
        r0.gpu = 0;
        r0.machine = true;
        r0.sample.host.process_rss = 2 << 30;
        r0.sample.gpus = {gpu(0, "Local GPU", 3)};  // the same GPU the window samples itself
        RankTelemetry r1;
        r1.rank = 1;
        r1.host = "node-b";
        r1.device = "cuda:0";
        r1.gpu = 1;  // node-b's NVML index 1 (CUDA_VISIBLE_DEVICES=1 there)
        r1.machine = true;
        r1.sample.host.cpu_utilization = 70;
        r1.sample.host.ram_used = 40LL << 30;
        r1.sample.host.process_rss = 3LL << 30;
        r1.sample.gpus = {gpu(0, "Remote GPU", 1), gpu(1, "Remote GPU", 9.5)};
        view.addRankTelemetry(2, r0, here);
        view.addRankTelemetry(2, r1, here);
        QTableWidget* table = view.deviceTable();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("0"));
        QCOMPARE(table->item(0, 1)->text(), QStringLiteral("Local GPU"));
        QCOMPARE(table->item(0, 7)->text(), QStringLiteral("0"));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("node-b:0"));
        QCOMPARE(table->item(1, 7)->text(), QString());
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("node-b:1"));
        QCOMPARE(table->item(2, 2)->text(), QStringLiteral("9.5 / 80.0 GiB"));
        QCOMPARE(table->item(2, 7)->text(), QStringLiteral("1"));
        QCOMPARE(view.relayedGpuCount(), 2);
        QVERIFY(seriesNamed(view.powerChart(), QStringLiteral("node-b GPU 1")) >= 0);
        QVERIFY(seriesNamed(view.cpuChart(), QStringLiteral("node-b CPU")) >= 0);
        QVERIFY(seriesNamed(view.hostMemoryChart(), QStringLiteral("node-b RAM used")) >= 0);
        QVERIFY(seriesNamed(view.hostMemoryChart(), QStringLiteral("rank 1 resident (RSS, node-b)")) >= 0);
        QCOMPARE(view.powerChart()->graphCount(), 3);  // local GPU 0 once, node-b's two
        // each GPU rank's ledger on a line of its own, against its GPU
        hr::MemoryEvent m;
        m.rank = 1;
        m.ledger.live_total = std::size_t(5) << 30;
        view.addLedger(3, m, -1);
        const int s = seriesNamed(view.gpuMemoryChart(), QStringLiteral("rank 1 ledger allocated"));
        QVERIFY(s >= 0);
        QCOMPARE(lastValue(view.gpuMemoryChart(), s), 5.0);
        m.rank = 7;  // not placed (no telemetry yet): no line
        view.addLedger(3, m, -1);
        QCOMPARE(seriesNamed(view.gpuMemoryChart(), QStringLiteral("rank 7 ledger allocated")), -1);
        view.clearRanks(true);
        QCOMPARE(table->rowCount(), 1);  // the own GPU stays
        QCOMPARE(table->item(0, 7)->text(), QString());
    }
};

QTEST_MAIN(TestRankTelemetry)
#include "test_rank_telemetry.moc"
