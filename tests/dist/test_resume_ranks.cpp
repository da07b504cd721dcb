// ranks: none
// Checkpoints and --resume of runs on several CPU ranks, from outside (this test is one process; it runs
// the headroom binary through its --ranks launcher, which runs mpirun):
// - 2 ranks, 10 steps, then --resume to 20 steps on 2 ranks gives the model.safetensors of 20 steps at
//   once on 2 ranks bit for bit, for dp, zero1, zero2 and zero3 (the reference is the uninterrupted run,
//   a separate process tree that writes its checkpoint only at its end).
// - the same 2-rank checkpoint resumed onto 3 ranks and onto one process gives the uninterrupted 2-rank
//   run's weights to 1e-6 relative (the reductions add in another order), and run.json says how the
//   resumed run was spread.
// - a checkpoint that does not fit the run (another optimizer in config.json) is refused once, exit code
//   2, nothing in the folder changed.
// - kill -9 of one rank mid-run with --save-every: the run ends; --resume on 2 ranks completes from the
//   newest checkpoint.
// - 2 pipeline stages resumed on 2 ranks keep the split config.json records; on 3 ranks, 3 stages balanced anew.
#include <QtTest>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"
#include "io/safetensors.h"
#include "test_support.h"
#include "programs.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

// A small run: an MLP on synthetic data, global batch 66 (an even split on 1, 2 and 3 ranks), 4 steps
// an epoch, so 10 steps stop mid-epoch.
QStringList runFlags(const QString& out, int steps) {
    return {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "264", "--test-limit", "66",
            "--batch", "66", "--steps", QString::number(steps), "--threads", "1", "--seed", "5", "--device", "cpu",
            "--optimizer", "adam", "--out", out, "--no-history", "--quiet"};
}

using Result = hrtest::ProcessResult;

Result run(const QStringList& args, const QString& cwd, int timeout_ms = 120000) {
    return hrtest::run_program(kHeadroom, args, cwd, timeout_ms);
}

// "" when both files hold the same tensors (names, dtypes, shapes) within `tolerance` relative to the
// reference's largest value (0: bit for bit); g_worst is the largest relative difference seen.
double g_worst = 0;
QString compareWeights(const std::string& a_path, const std::string& ref_path, double tolerance) {
    return hrtest::compare_weights(a_path, ref_path, tolerance, &g_worst);
}

nlohmann::json readJson(const std::string& path) { return hrtest::read_json(path); }

// name -> (size, mtime) of a folder's files: "nothing changed" is this staying equal.
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> snapshot(const std::string& dir) {
    std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> out;
    for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = {e.file_size(), e.last_write_time()};
    return out;
}

// The pids of the headroom ranks below `root` (mpirun's children), by rank.
std::map<int, long> rankProcesses(long root) {
    std::map<long, long> parent;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const std::size_t close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state;
        long ppid;
        rest >> state >> ppid;
        parent[std::stol(name)] = ppid;
    }
    std::map<int, long> ranks;
    for (const auto& [pid, ppid] : parent) {
        long p = ppid;
        bool below = false;
        for (int depth = 0; depth < 8 && p > 1; ++depth) {
            if (p == root) below = true;
            auto it = parent.find(p);
            p = it == parent.end() ? 0 : it->second;
        }
        if (!below) continue;
        std::ifstream env("/proc/" + std::to_string(pid) + "/environ");
        std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
        const std::string key = "OMPI_COMM_WORLD_RANK=";
        const std::size_t at = all.find(key);
        if (at == std::string::npos) continue;
        std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
        std::string exe;
        std::getline(comm, exe);
        if (exe == "headroom") ranks[std::atoi(all.c_str() + at + key.size())] = pid;
    }
    return ranks;
}

}  // namespace

class ResumeRanksTest : public QObject {
    Q_OBJECT

    std::string m_dir;

    // 2 ranks, `stage`: the uninterrupted 20 steps (ref) and 10 steps (half, its checkpoint at step 10)
    bool prepare(const QString& stage) {
        const QString w = QString::fromStdString(m_dir + "/" + stage.toStdString());
        fs::create_directories(w.toStdString());
        if (fs::exists((w + "/ref/model.safetensors").toStdString())) return true;
        QStringList ref = runFlags(w + "/ref", 20), half = runFlags(w + "/half", 10);
        ref << "--ranks" << "2" << "--shard" << stage;
        half << "--ranks" << "2" << "--shard" << stage;
        const Result a = run(ref, w), b = run(half, w);
        [&] {
            QVERIFY2(a.exit_code == 0, qPrintable(a.output));
            QVERIFY2(b.exit_code == 0, qPrintable(b.output));
        }();
        return a.exit_code == 0 && b.exit_code == 0 && fs::exists((w + "/half/checkpoint-000000010.json").toStdString());
    }

    // A copy of the 10-step folder of `stage`, resumed to 20 steps with `extra` flags.
    Result resumeCopy(const QString& stage, const QString& name, const QStringList& extra) {
        const std::string w = m_dir + "/" + stage.toStdString();
        fs::remove_all(w + "/" + name.toStdString());
        fs::copy(w + "/half", w + "/" + name.toStdString(), fs::copy_options::recursive);
        QStringList args{"train", "--resume", QString::fromStdString(w) + "/" + name, "--steps", "20", "--no-history", "--quiet"};
        args << extra;
        return run(args, QString::fromStdString(w));
    }

    void sameRanksBitForBit(const QString& stage) {
        QVERIFY(prepare(stage));
        const Result r = resumeCopy(stage, "again2", {"--ranks", "2"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const std::string w = m_dir + "/" + stage.toStdString();
        const QString why = compareWeights(w + "/again2/model.safetensors", w + "/ref/model.safetensors", 0);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        // the run folder is as a fresh 2-rank run's: config.json, the newest checkpoints, the weights, run.json
        const nlohmann::json j = readJson(w + "/again2/run.json");
        QCOMPARE(j["resume"]["resumed_from_step"].get<int>(), 10);
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QCOMPARE(j["distributed"]["stage"].get<std::string>(), stage.toStdString());
        QVERIFY(fs::exists(w + "/again2/checkpoint-000000020.json"));
        QVERIFY(fs::exists(w + "/again2/config.json"));
        // each rank's measured peak is still the planner's prediction (checkpoints allocate nothing)
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        // the checkpoint is one process's format: the master copy / optimizer state are whole tensors
        const nlohmann::json ck = readJson(w + "/half/checkpoint-000000010.json");
        QCOMPARE(ck["world_size"].get<int>(), 2);
    }

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-resume-ranks");
    }

    void dpResumedOnTwoRanksBitForBit() { sameRanksBitForBit("dp"); }
    void zero1ResumedOnTwoRanksBitForBit() { sameRanksBitForBit("zero1"); }
    void zero2ResumedOnTwoRanksBitForBit() { sameRanksBitForBit("zero2"); }
    void zero3ResumedOnTwoRanksBitForBit() { sameRanksBitForBit("zero3"); }

    // The 2-rank checkpoints onto 3 ranks and onto one process.
    void ontoThreeRanksAndOneProcess() {
        for (const QString stage : {"dp", "zero3"}) {
            QVERIFY(prepare(stage));
            const std::string w = m_dir + "/" + stage.toStdString();
            const Result three = resumeCopy(stage, "three", {"--ranks", "3"});
            QVERIFY2(three.exit_code == 0, qPrintable(three.output));
            QString why = compareWeights(w + "/three/model.safetensors", w + "/ref/model.safetensors", 1e-6);
            QVERIFY2(why.isEmpty(), qPrintable(why));
            qInfo("%s: 2-rank checkpoint resumed on 3 ranks vs 2 ranks throughout: largest relative difference %.3g",
                  qPrintable(stage), g_worst);
            const nlohmann::json j = readJson(w + "/three/run.json");
            QCOMPARE(j["distributed"]["world_size"].get<int>(), 3);
            QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({22, 22, 22}), j["distributed"].dump().c_str());
            QCOMPARE(j["resume"]["resumed_from_step"].get<int>(), 10);
            // and the same 2-rank checkpoint as one process
            const Result one = resumeCopy(stage, "one", {});
            QVERIFY2(one.exit_code == 0, qPrintable(one.output));
            why = compareWeights(w + "/one/model.safetensors", w + "/ref/model.safetensors", 1e-6);
            QVERIFY2(why.isEmpty(), qPrintable(why));
            qInfo("%s: 2-rank checkpoint resumed as one process vs 2 ranks throughout: largest relative difference %.3g",
                  qPrintable(stage), g_worst);
            QCOMPARE(readJson(w + "/one/run.json")["distributed"]["world_size"].get<int>(), 1);
        }
    }

    // Pipeline stages resumed on as many ranks keep the split config.json records (a balanced split is
    // recorded as its counts), not the one the balancer's count gives at resume time (issue 59 changed
    // that count): a recorded 3,3 of the mlp's 6 layers stays 3,3 though the balancer cuts 2,4.
    void pipelineResumeKeepsTheRecordedSplit() {
        const std::string w = m_dir + "/pipeline";
        fs::create_directories(w);
        QStringList first = runFlags(QString::fromStdString(w + "/run"), 4);
        first << "--ranks" << "2" << "--pipeline" << "2";
        const Result a = run(first, QString::fromStdString(w));
        QVERIFY2(a.exit_code == 0, qPrintable(a.output));
        QVERIFY2(readJson(w + "/run/run.json")["distributed"]["pipeline_layers"] == nlohmann::json({2, 4}),
                 readJson(w + "/run/run.json")["distributed"].dump().c_str());
        nlohmann::json config = readJson(w + "/run/config.json");
        QVERIFY2(config["strategy"]["pipeline_split"] == nlohmann::json({2, 4}), config["strategy"].dump().c_str());
        // as a run balanced by another count would have recorded it
        config["strategy"]["pipeline_split"] = {3, 3};
        std::ofstream(w + "/run/config.json") << config.dump(2);
        const Result b = run({"train", "--resume", QString::fromStdString(w + "/run"), "--steps", "8", "--ranks", "2",
                              "--no-history", "--quiet"},
                             QString::fromStdString(w));
        QVERIFY2(b.exit_code == 0, qPrintable(b.output));
        const nlohmann::json j = readJson(w + "/run/run.json");
        QCOMPARE(j["resume"]["resumed_from_step"].get<int>(), 4);
        QVERIFY2(j["distributed"]["pipeline_layers"] == nlohmann::json({3, 3}), j["distributed"].dump().c_str());
        // on another number of stages: balanced anew (3 stages of the mlp by the count: 1,1,4)
        const Result c = run({"train", "--resume", QString::fromStdString(w + "/run"), "--steps", "12", "--ranks", "3",
                              "--no-history", "--quiet"},
                             QString::fromStdString(w));
        QVERIFY2(c.exit_code == 0, qPrintable(c.output));
        QVERIFY2(readJson(w + "/run/run.json")["distributed"]["pipeline_layers"] == nlohmann::json({1, 1, 4}),
                 readJson(w + "/run/run.json")["distributed"].dump().c_str());
    }

    // A checkpoint another configuration wrote: refused once, exit code 2, the folder as it was.
    void aCheckpointThatDoesNotFitIsRefusedOnce() {
        QVERIFY(prepare("zero2"));
        const std::string w = m_dir + "/zero2";
        fs::remove_all(w + "/misfit");
        fs::copy(w + "/half", w + "/misfit", fs::copy_options::recursive);
        nlohmann::json c = readJson(w + "/misfit/config.json");
        c["optimizer"]["kind"] = "sgd";  // the checkpoint holds Adam's moments
        {
            std::ofstream f(w + "/misfit/config.json");
            f << c.dump(2);
        }
        const auto before = snapshot(w + "/misfit");
        const Result r = run({"train", "--resume", QString::fromStdString(w + "/misfit"), "--steps", "20", "--ranks",
                              "2", "--no-history", "--quiet"},
                             QString::fromStdString(w));
        QVERIFY2(r.exit_code == 2, qPrintable(r.output));
        QCOMPARE(r.output.count("unexpected tensor 'optimizer.exp_avg"), 1);
        QVERIFY2(snapshot(w + "/misfit") == before, "the refused resume changed the run folder");
    }

    // kill -9 of rank 1 while checkpoints are written every 20 steps; --resume on 2 ranks completes.
    void resumeAfterAKilledRank() {
        const std::string work = m_dir + "/kill";
        fs::remove_all(work);
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", 1000000);
        args << "--ranks" << "2" << "--shard" << "zero2" << "--save-every" << "20" << "--rank-timeout" << "5";
        QProcess p;
        p.setWorkingDirectory(w);
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(kHeadroom, args);
        QVERIFY(p.waitForStarted(10000));
        // wait for a checkpoint past the first, then kill rank 1
        QElapsedTimer t;
        t.start();
        auto newest = [&]() -> std::int64_t {
            std::int64_t best = 0;
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(work + "/out", ec)) {
                const std::string n = e.path().filename().string();
                if (n.rfind("checkpoint-", 0) == 0 && n.size() == 25 && n.substr(20) == ".json")
                    best = std::max<std::int64_t>(best, std::stoll(n.substr(11, 9)));
            }
            return best;
        };
        while (newest() < 40 && t.elapsed() < 60000 && p.state() == QProcess::Running)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const std::map<int, long> ranks = rankProcesses(static_cast<long>(p.processId()));
        if (ranks.size() != 2 || newest() < 40) {
            p.kill();
            p.waitForFinished(5000);
            QFAIL(qPrintable("no second checkpoint or no two ranks: " + QString::fromLocal8Bit(p.readAll())));
        }
        ::kill(static_cast<pid_t>(ranks.at(1)), SIGKILL);
        const bool ended = p.waitForFinished(30000);
        if (!ended) {
            for (const auto& [rank, pid] : ranks) ::kill(static_cast<pid_t>(pid), SIGKILL);
            p.kill();
            p.waitForFinished(5000);
        }
        QVERIFY2(ended, "the run did not end after a rank was killed");
        QVERIFY(!fs::exists(work + "/out/run.json"));
        const std::int64_t at = newest();
        QVERIFY(at >= 40 && at % 20 == 0);
        // resumed on 2 ranks for 6 more steps: it completes from the newest checkpoint
        const Result r = run({"train", "--resume", w + "/out", "--steps", QString::number(at + 6), "--ranks", "2",
                              "--no-history", "--quiet"},
                             w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["status"].get<std::string>(), std::string("finished"));
        QCOMPARE(j["resume"]["resumed_from_step"].get<std::int64_t>(), at);
        QVERIFY(fs::exists(work + "/out/model.safetensors"));
        qInfo("killed rank 1 after the checkpoint of step %lld; resumed to step %lld", static_cast<long long>(at),
              static_cast<long long>(at + 6));
    }
};

QTEST_GUILESS_MAIN(ResumeRanksTest)
#include "test_resume_ranks.moc"
