// ranks: none
// `headroom train` on several CPU ranks, from outside (this test is one process; it launches the
// headroom binary itself): 2 ranks with zero2 (through `--ranks 2`, the built-in launcher) and with dp
// (through `mpirun -np 2 headroom train` directly) give the model.safetensors of one process with the
// same global batch (--accumulate 2), to 1e-6 relative, read with the project's safetensors reader; only
// rank 0 writes (one run folder, one run in the history, one result line); run.json says how the run was
// spread. kill -9 of one rank mid-run ends the whole run within seconds, leaves no process and no run.json.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <thread>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/dtype.h"
#include "dist/communicator.h"
#include "io/safetensors.h"
#include "test_support.h"
#include "programs.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

// The same small run everywhere: an MLP on synthetic data, 4 steps of a global batch of 64.
QStringList runFlags(const QString& out, const QString& db) {
    return {"train", "--preset", "mlp", "--data", "synthetic", "--train-limit", "256", "--test-limit", "64",
            "--batch", "64", "--steps", "4", "--threads", "1", "--seed", "3", "--device", "cpu",
            "--out", out, "--db", db};
}

using Result = hrtest::ProcessResult;

Result run(const QString& program, const QStringList& args, const QString& cwd, int timeout_ms = 120000) {
    return hrtest::run_program(program, args, cwd, timeout_ms);
}

// Largest |a - b| / max(|b|) over every tensor of two weight files, which must have the same names,
// dtypes and shapes; "" when they match that well, else what differs.
double g_worst = 0;  // the last comparison's largest relative difference (reported)

QString compareWeights(const std::string& a_path, const std::string& b_path, double tolerance) {
    return hrtest::compare_weights(a_path, b_path, tolerance, &g_worst);
}

std::set<std::string> entries(const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
}

nlohmann::json readJson(const std::string& path) { return hrtest::read_json(path); }

// Runs recorded in a history database, as `headroom runs` lists them (one line per run after the header).
int recordedRuns(const QString& db, const QString& cwd) {
    const Result r = run(kHeadroom, {"runs", "--db", db}, cwd);
    int n = 0;
    for (const QString& line : r.output.split('\n'))
        if (line.contains("finished")) ++n;
    return n;
}



}  // namespace

class TrainRanksTest : public QObject {
    Q_OBJECT

    std::string m_dir;
    QString m_reference;  // one process: model.safetensors

private:
    // The test figures of a run on ranks against the one-process reference's: every test sample counted
    // once (accuracy exactly, loss to 1e-6).
    // A step's measured traffic (rank 0's, evaluations and checkpoints not counted) is the planner's, byte for
    // byte: the activations and gradients a pipeline stage sends and receives, a split head's reductions, the
    // replicas' all-reduce. (Before run.json version 4 the evaluations' traffic was in it: above the plan.)
    void compareTraffic(const nlohmann::json& j) {
        const double measured = j["distributed"]["communication_bytes_per_step"].get<double>();
        const double planned = j["memory"]["predicted"]["communication_bytes_per_step"].get<double>();
        QVERIFY2(measured == planned && measured > 0,
                 qPrintable(QString("measured %1 B a step, planned %2 B").arg(measured, 0, 'f', 1).arg(planned, 0, 'f', 1)));
    }

    void compareTestMetrics(const nlohmann::json& ranks) {
        const nlohmann::json one = readJson(QFileInfo(m_reference).absolutePath().toStdString() + "/run.json");
        QCOMPARE(ranks["final"]["test_accuracy"].get<double>(), one["final"]["test_accuracy"].get<double>());
        const double a = ranks["final"]["test_loss"].get<double>(), b = one["final"]["test_loss"].get<double>();
        QVERIFY2(std::fabs(a - b) <= 1e-6 * std::fabs(b), qPrintable(QString("test loss %1 vs %2").arg(a, 0, 'g', 17).arg(b, 0, 'g', 17)));
    }

    // The last run's HTML report (headroom report last), "" when it could not be written.
    static QString reportHtml(const QString& w) {
        const Result html = run(kHeadroom, {"report", "last", "--db", w + "/history.db", "--format", "html", "--out", w + "/report.html"}, w);
        QFile page(w + "/report.html");
        if (html.exit_code != 0 || !page.open(QIODevice::ReadOnly)) return {};
        return QString::fromUtf8(page.readAll());
    }

    // Continued: the run in work/out resumed on `ranks` ranks (0: as it was) and one process's reference
    // resumed on one process, 2 more steps each, from copies (a resumed run writes into its folder); their
    // weights compared (largest relative difference in g_worst). "" when equal within tol, else why not.
    QString continueBoth(const std::string& work, int ranks, double tol) {
        const QString w = QString::fromStdString(work);
        fs::copy(work + "/out", work + "/cont", fs::copy_options::recursive);
        fs::copy(QFileInfo(m_reference).absolutePath().toStdString(), work + "/one", fs::copy_options::recursive);
        QStringList args{"train", "--resume", w + "/cont", "--steps", "6", "--quiet", "--db", w + "/history.db"};
        if (ranks > 0) args << "--ranks" << QString::number(ranks);
        const Result a = run(kHeadroom, args, w);
        if (a.exit_code != 0) return QStringLiteral("the run on ranks did not continue: ") + a.output;
        const Result b = run(kHeadroom, {"train", "--resume", w + "/one", "--steps", "6", "--quiet", "--db", w + "/history.db"}, w);
        if (b.exit_code != 0) return QStringLiteral("the reference did not continue: ") + b.output;
        return compareWeights(work + "/cont/model.safetensors", work + "/one/model.safetensors", tol);
    }

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-train-ranks");
        // the reference: one process, the same global batch in two micro-batches of 32
        const QString dir = QString::fromStdString(m_dir);
        QStringList args = runFlags(dir + "/one", dir + "/one.db");
        args << "--accumulate" << "2" << "--quiet";
        const Result r = run(kHeadroom, args, dir);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        m_reference = dir + "/one/model.safetensors";
        QVERIFY(QFileInfo::exists(m_reference));
    }

    // `headroom train --ranks 2 --shard zero2`: the launcher runs mpirun; rank 0 alone writes.
    void zero2OnTwoRanksEqualsOneProcess() {
        const std::string work = m_dir + "/zero2";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "2" << "--shard" << "zero2";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("zero2 on 2 ranks vs one process: largest relative difference %.3g", g_worst);
        // only rank 0 wrote: one output folder with a one-process run's files (the last step's checkpoint
        // included), one run in the history, one result line
        QCOMPARE(entries(work + "/out"),
                 (std::set<std::string>{"checkpoint-000000004.json", "checkpoint-000000004.safetensors", "config.json",
                                        "model.safetensors", "run.json"}));
        for (const std::string& e : entries(work))
            QVERIFY2(e == "out" || e.rfind("history.db", 0) == 0, e.c_str());
        QCOMPARE(recordedRuns(w + "/history.db", w), 1);
        QCOMPARE(r.output.count(QRegularExpression("(^|\\n)test_accuracy=")), 1);  // the last line, rank 0's
        QCOMPARE(r.output.count("epoch 1: train_loss="), 1);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QCOMPARE(j["distributed"]["stage"].get<std::string>(), std::string("zero2"));
        QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({32, 32}), j["distributed"].dump().c_str());
        QCOMPARE(j["distributed"]["measured_peak_bytes"].size(), std::size_t(2));
        QVERIFY(j["distributed"]["communication_bytes_per_step"].get<double>() > 0);
        QCOMPARE(j["config"]["strategy"]["shard"].get<std::string>(), std::string("zero2"));
        // each rank's measured peak is the planner's prediction for it
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        // each rank's process at its peak as the OS saw it: above its ledger, and at most the largest
        // process this test has waited for (getrusage's view of the launcher's, mpirun's and the ranks' peaks)
        const nlohmann::json& resident = j["distributed"]["measured_resident_peak_bytes"];
        QCOMPARE(resident.size(), std::size_t(2));
        rusage children{};
        QCOMPARE(getrusage(RUSAGE_CHILDREN, &children), 0);
        for (int rank = 0; rank < 2; ++rank) {
            const std::int64_t bytes = resident[rank].get<std::int64_t>();
            QVERIFY2(bytes > j["distributed"]["measured_peak_bytes"][rank].get<std::int64_t>(), resident.dump().c_str());
            QVERIFY2(bytes <= std::int64_t(children.ru_maxrss) * 1024 + (std::int64_t(4) << 20),
                     qPrintable(QString("rank %1: %2 bytes resident, the largest child %3 kB").arg(rank).arg(bytes).arg(children.ru_maxrss)));
        }
        // the history and the report carry the same (headroom report's JSON: the run's final metrics)
        const Result rep = run(kHeadroom, {"report", "last", "--db", w + "/history.db", "--format", "json", "--out", w + "/report.json"}, w);
        QVERIFY2(rep.exit_code == 0, qPrintable(rep.output));
        const nlohmann::json fm = readJson(work + "/report.json")["run"]["final_metrics"]["distributed"];
        for (const char* key : {"world_size", "stage", "rank_batch", "predicted_peak_bytes", "measured_peak_bytes",
                                "measured_resident_peak_bytes"})
            QVERIFY2(fm[key] == j["distributed"][key], qPrintable(QString("%1: %2 vs %3").arg(key, fm[key].dump().c_str(), j["distributed"][key].dump().c_str())));
        QCOMPARE(fm["communication_bytes_per_step"].get<double>(), j["distributed"]["communication_bytes_per_step"].get<double>());
        const QString text = reportHtml(w);
        QVERIFY(!text.isEmpty());
        QVERIFY(text.contains("Resident peak (OS)"));
        QVERIFY(text.contains("2 ranks, sharding stage zero2"));
        QVERIFY(!text.contains("world_size"));  // the table, not the raw JSON under Final metrics
        compareTestMetrics(j);
    }

    // `mpirun -np 2 headroom train --shard dp` directly.
    void dpThroughMpirunEqualsOneProcess() {
        const std::string work = m_dir + "/dp";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = QString(HR_MPIRUN_FLAGS).split(' ', Qt::SkipEmptyParts);
        args << "-np" << "2" << kHeadroom;
        args << runFlags(w + "/out", w + "/history.db") << "--shard" << "dp";
        const Result r = run(QStringLiteral(HR_MPIEXEC), args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("dp on 2 ranks vs one process: largest relative difference %.3g", g_worst);
        QCOMPARE(entries(work + "/out"),
                 (std::set<std::string>{"checkpoint-000000004.json", "checkpoint-000000004.safetensors", "config.json",
                                        "model.safetensors", "run.json"}));
        QCOMPARE(recordedRuns(w + "/history.db", w), 1);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QCOMPARE(j["distributed"]["stage"].get<std::string>(), std::string("dp"));
    }

    // Uneven shares (--rank-batch 48,16) with zero1: gradients weighted by samples give the one-batch update.
    void unevenRankBatchesEqualOneProcess() {
        const std::string work = m_dir + "/uneven";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "2" << "--shard" << "zero1" << "--rank-batch" << "48,16" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("zero1, rank batches 48 and 16, vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({48, 16}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        compareTestMetrics(j);
    }

    // zero3 on 3 ranks with an uneven split of the batch (22, 21, 21): the evaluation takes the same
    // forwards (and gathers) on every rank, and the weights and test figures are one process's.
    void zero3OnThreeUnevenRanksEqualsOneProcess() {
        const std::string work = m_dir + "/three";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "3" << "--shard" << "zero3" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("zero3 on 3 ranks (22, 21, 21) vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({22, 21, 21}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        compareTestMetrics(j);
    }

    // A tensor-parallel head (--tp-head 3, strategy/tp_head.h): the last layer's 10 columns split 4 + 3 + 3,
    // every rank on the whole batch in the same two micro-batches as the reference; the weights file holds
    // the whole head and equals one process's; run.json and the report say how the model was laid out.
    // Then the split run's checkpoint continues on 2 ranks (the head split over them) and equals one
    // process continued from its own checkpoint.
    void tpHeadOnThreeRanksEqualsOneProcess() {
        const std::string work = m_dir + "/tp";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "3" << "--tp-head" << "3" << "--accumulate" << "2" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("head split over 3 ranks vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["version"].get<int>(), 4);
        QCOMPARE(j["distributed"]["tp_head"].get<int>(), 3);
        QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({64, 64, 64}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        QCOMPARE(j["config"]["strategy"]["tp_head"].get<int>(), 3);
        compareTraffic(j);
        compareTestMetrics(j);
        const QString text = reportHtml(w);
        QVERIFY(!text.isEmpty());
        QVERIFY(text.contains("3 ranks with a tensor-parallel head"));
        QVERIFY2(text.contains(QString::fromUtf8("head columns 0–3 of 10")) &&
                     text.contains(QString::fromUtf8("head columns 7–9 of 10")),
                 "the layout across the ranks");
        // continued: the split run on 2 ranks, one process's run on one process, 2 more steps each (copies:
        // a resumed run writes into its folder)
        why = continueBoth(work, 2, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("continued on 2 ranks with the head split vs one process continued: %.3g", g_worst);
        const nlohmann::json k = readJson(work + "/cont/run.json");
        QCOMPARE(k["distributed"]["tp_head"].get<int>(), 2);
        QCOMPARE(k["final"]["steps"].get<int>(), 6);
    }

    // Pipeline stages (--pipeline 2, strategy/pipeline.h) with the reference's two micro-batches: the
    // weights file holds the whole model, bit-identical to one process's; run.json and the report say which
    // layers each stage had, and each stage's measured peak is the planner's. The run then continues on 3
    // ranks (3 stages, balanced anew) and equals one process continued from its own checkpoint.
    void pipelineOnTwoRanksEqualsOneProcess() {
        const std::string work = m_dir + "/pipeline";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "2" << "--pipeline" << "2" << "--accumulate" << "2" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 0.0);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("2 pipeline stages vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QVERIFY2(j["distributed"]["pipeline_layers"] == nlohmann::json({2, 4}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        QCOMPARE(j["model"]["param_count"].get<std::int64_t>(), std::int64_t(235146));  // the whole model's
        compareTraffic(j);
        compareTestMetrics(j);
        const QString text = reportHtml(w);
        QVERIFY(!text.isEmpty());
        QVERIFY(text.contains("2 pipeline stages"));
        QVERIFY2(text.contains(QString::fromUtf8("stage 1: layers 2–5")), "the layout across the ranks");
        why = continueBoth(work, 3, 0.0);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const nlohmann::json k = readJson(work + "/cont/run.json");
        QCOMPARE(k["distributed"]["pipeline_layers"].size(), std::size_t(3));
    }

    // 2 pipeline stages x 2 data-parallel replicas on 4 ranks (--pipeline 2 --shard dp): each replica takes
    // half the batch through its two stages, which is the reference's micro-batch; the stages' gradients are
    // summed over the replicas (a sum of two: the reference's order), so the weights are one process's; the
    // measured traffic is the planner's; the checkpoint continues as one process, equal to the reference
    // continued.
    void stagesTimesReplicasEqualOneProcess() {
        const std::string work = m_dir + "/kxd";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "4" << "--pipeline" << "2" << "--shard" << "dp" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("2 stages x 2 replicas vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 4);
        QVERIFY2(j["distributed"]["pipeline_layers"] == nlohmann::json({2, 4}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({32, 32, 32, 32}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        compareTraffic(j);
        compareTestMetrics(j);
        why = continueBoth(work, 1, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("  continued as one process: %.3g from the reference continued", g_worst);
        // 3 ranks for 2 stages: refused, naming the multiple
        args = runFlags(w + "/bad", w + "/history.db");
        args << "--ranks" << "3" << "--pipeline" << "2" << "--shard" << "dp";
        const Result bad = run(kHeadroom, args, w);
        QVERIFY2(bad.exit_code == 2 && bad.output.contains("needs a multiple of 2 ranks"), qPrintable(bad.output));
        QVERIFY(!fs::exists(work + "/bad"));
    }

    // A split head on 2 ranks x 2 data-parallel replicas on 4 ranks (--tp-head 2 --shard dp): each replica
    // takes half the batch (the reference's micro-batch), its 2 ranks split the head's columns, the replicas
    // sum their gradients; the weights are one process's to 1e-6, each rank's peak is the planner's, the
    // report says which columns of which replica each rank held, and the checkpoint continues as one
    // process, equal to the reference continued. 3 ranks for a head split in 2 are refused.
    void headTimesReplicasEqualOneProcess() {
        const std::string work = m_dir + "/txd";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "4" << "--tp-head" << "2" << "--shard" << "dp" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("head split over 2 ranks x 2 replicas vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 4);
        QCOMPARE(j["distributed"]["tp_head"].get<int>(), 2);
        QVERIFY2(j["distributed"]["rank_batch"] == nlohmann::json({32, 32, 32, 32}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        compareTraffic(j);
        compareTestMetrics(j);
        const QString text = reportHtml(w);
        QVERIFY(!text.isEmpty());
        QVERIFY(text.contains("A tensor-parallel head over 2 ranks times 2 data-parallel replicas"));
        QVERIFY2(text.contains(QString::fromUtf8("head columns 0–4 of 10, replica 1")) &&
                     text.contains(QString::fromUtf8("head columns 5–9 of 10, replica 0")),
                 "the layout across the ranks");
        why = continueBoth(work, 1, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("  continued as one process: %.3g from the reference continued", g_worst);
        args = runFlags(w + "/bad", w + "/history.db");
        args << "--ranks" << "3" << "--tp-head" << "2" << "--shard" << "dp";
        const Result bad = run(kHeadroom, args, w);
        QVERIFY2(bad.exit_code == 2 && bad.output.contains("start it on 2 ranks, or 2 x 2"), qPrintable(bad.output));
        QVERIFY(!fs::exists(work + "/bad"));
    }

    // ZeRO-1 inside a layout (--pipeline 2 or --tp-head 2 with --shard zero1 on 4 ranks): each part's optimizer
    // state sharded over its 2 replicas, its parameters all-gathered after the update. The weights are one
    // process's to 1e-6, every rank's peak is the planner's, the measured traffic too (the all-gather
    // included), and the checkpoint continues on the same 4 ranks (stages: the layout kept, zero1 inside it; a
    // split head: spread over the 4) equal to the reference continued.
    void zeroInsideALayoutEqualsOneProcess_data() {
        QTest::addColumn<QString>("flag");
        QTest::newRow("--pipeline 2 --shard zero1") << "--pipeline";
        QTest::newRow("--tp-head 2 --shard zero1") << "--tp-head";
    }
    void zeroInsideALayoutEqualsOneProcess() {
        QFETCH(QString, flag);
        const std::string work = m_dir + "/zero1" + flag.toStdString();
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "4" << flag << "2" << "--shard" << "zero1" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("%s 2 x 2 zero1 replicas vs one process: largest relative difference %.3g", qPrintable(flag), g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 4);
        QCOMPARE(j["config"]["strategy"]["shard"].get<std::string>(), std::string("zero1"));
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        compareTraffic(j);
        compareTestMetrics(j);
        why = continueBoth(work, 4, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        // the resume policy (strategy/rank_layout.h relayout_for_resume): stages on a multiple of them keep their
        // replicas and zero1 inside; a split head spreads over all the ranks (no replicas left, no ZeRO)
        const nlohmann::json c = readJson(work + "/cont/run.json");
        const bool stages = flag == QLatin1String("--pipeline");
        QVERIFY2(c["config"]["strategy"]["shard"] == (stages ? "zero1" : "none") &&
                     c["config"]["strategy"][stages ? "pipeline" : "tp_head"] == (stages ? 2 : 4),
                 c["config"]["strategy"].dump().c_str());
        qInfo("  continued on 4 ranks: %.3g from the reference continued", g_worst);
    }

    // 2 pipeline stages x a head split over 2 ranks (--ranks 4 --pipeline 2 --tp-head 2, the reference's two
    // micro-batches): stage 0 on ranks 0 and 1 (the same rows), stage 1 on ranks 2 and 3 with half the head's
    // columns each. The weights are one process's to 1e-6 (the head's input gradient is a sum over its parts),
    // every rank's peak is the planner's, the traffic too, the test figures one process's; the report says
    // what each rank holds; the run continues on the same 4 ranks (the layout kept) equal to the reference
    // continued.
    void stagesTimesSplitHeadEqualsOneProcess() {
        const std::string work = m_dir + "/pipeline-tp";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "4" << "--pipeline" << "2" << "--tp-head" << "2" << "--accumulate" << "2" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/out/model.safetensors", m_reference.toStdString(), 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("2 stages x a head split over 2 ranks vs one process: largest relative difference %.3g", g_worst);
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 4);
        QCOMPARE(j["distributed"]["tp_head"].get<int>(), 2);
        QVERIFY2(j["distributed"]["pipeline_layers"] == nlohmann::json({2, 4}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
        QCOMPARE(j["model"]["param_count"].get<std::int64_t>(), std::int64_t(235146));  // the whole model's
        compareTraffic(j);
        compareTestMetrics(j);
        const QString text = reportHtml(w);
        QVERIFY(!text.isEmpty());
        QVERIFY(text.contains("2 pipeline stages of consecutive layers, each on 2 ranks"));
        QVERIFY2(text.contains(QString::fromUtf8("stage 0: layers 0–1")) &&
                     text.contains(QString::fromUtf8("stage 1: layers 2–5, head columns 0–4 of 10")) &&
                     text.contains(QString::fromUtf8("stage 1: layers 2–5, head columns 5–9 of 10")),
                 "the layout across the ranks");
        why = continueBoth(work, 4, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const nlohmann::json c = readJson(work + "/cont/run.json");
        QVERIFY2(c["config"]["strategy"]["tp_head"] == 2 && c["config"]["strategy"]["pipeline"] == 2 &&
                     c["config"]["strategy"]["shard"] == "none",
                 c["config"]["strategy"].dump().c_str());
        qInfo("  continued on 4 ranks: %.3g from the reference continued", g_worst);
    }

    // A stage of few parameters (seed-cnn's first convolution alone: 1,280 B of gradients) has no idle memory
    // to move the checkpoint's tensors through: it keeps 1 MiB of its own from the start, so the planner's
    // peak is still the ledger's on every rank (it once borrowed the megabyte at checkpoint time, unforeseen)
    void aStageOfFewParametersIsPredictedToo() {
        const std::string work = m_dir + "/small-stage";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args[2] = "seed-cnn";
        args << "--ranks" << "2" << "--pipeline" << "2" << "--pipeline-split" << "1,9" << "--quiet";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const nlohmann::json j = readJson(work + "/out/run.json");
        QVERIFY2(j["distributed"]["pipeline_layers"] == nlohmann::json({1, 9}), j["distributed"].dump().c_str());
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                 j["distributed"].dump().c_str());
    }

    // Settings every rank would refuse alike are refused once, with exit code 2 and nothing written.
    void badSettingsAreRefusedOnce() {
        const std::string work = m_dir + "/bad";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "2" << "--shard" << "dp" << "--rank-batch" << "40,40";
        const Result r = run(kHeadroom, args, w);
        QVERIFY2(r.exit_code == 2, qPrintable(r.output));
        QCOMPARE(r.output.count("--rank-batch adds up to 80"), 1);
        QVERIFY(!fs::exists(work + "/out"));
        // a split head over a number of ranks other than the run's
        args = runFlags(w + "/out", w + "/history.db");
        args << "--ranks" << "2" << "--tp-head" << "3";
        const Result t = run(kHeadroom, args, w);
        QVERIFY2(t.exit_code == 2, qPrintable(t.output));
        QCOMPARE(t.output.count("--tp-head 3 splits the head over 3 ranks (T x D: D data-parallel replicas of it on T x D ranks), but the run has 2"), 1);
        QVERIFY(!fs::exists(work + "/out"));
    }

    // kill -9 of rank 1 mid-run: the run ends within seconds, no rank is left, nothing is written.
    void aKilledRankEndsTheRun() { faultMidRun(SIGKILL, "kill"); }

    // kill -9 of the last pipeline stage mid-run: the first stage, waiting for a gradient that never comes,
    // ends the run within seconds too, and no rank is left.
    void aKilledStageEndsThePipeline() { faultMidRun(SIGKILL, "kill-stage", {"--pipeline", "2", "--accumulate", "4"}); }
    // 2 stages x 2 replicas: rank 1 (stage 0 of the second replica) killed ends every rank
    void aKilledStageOfAReplicaEndsTheRun() {
        faultMidRun(SIGKILL, "kill-replica", {"--pipeline", "2", "--shard", "dp", "--accumulate", "2"}, 4);
    }
    // a split head's 2 parts x 2 replicas: rank 1 (part 0 of the second replica) killed ends every rank
    void aKilledPartOfASplitHeadEndsTheRun() {
        faultMidRun(SIGKILL, "kill-part", {"--tp-head", "2", "--shard", "dp", "--accumulate", "2"}, 4);
    }

    // Rank 1 stops (SIGSTOP) mid-run: rank 0's wait times out after --rank-timeout (3 s), it says so once
    // naming itself, records the run as failed in the history and ends every rank.
    void aHangingRankEndsTheRunAfterTheTimeout() {
        const QString output = faultMidRun(SIGSTOP, "hang");
        QVERIFY2(output.contains(QRegularExpression("rank 0: .* did not finish within 3 s")), qPrintable(output));
        const Result runs = run(kHeadroom, {"runs", "--db", QString::fromStdString(m_dir + "/hang/history.db")},
                                QString::fromStdString(m_dir));
        QVERIFY2(runs.output.contains("failed"), qPrintable(runs.output));
    }

private:
    QString faultMidRun(int signal, const std::string& name,
                        const QStringList& layout = {"--shard", "zero2"}, int world = 2) {
        const std::string work = m_dir + "/" + name;
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        QStringList args = runFlags(w + "/out", w + "/history.db");
        args.replace(args.indexOf("--steps") + 1, "1000000");
        args << "--ranks" << QString::number(world) << layout << "--rank-timeout" << "3";
        QProcess p;
        p.setWorkingDirectory(w);
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(kHeadroom, args);
        if (!p.waitForStarted(10000)) return "did not start";
        // wait until both ranks train (rank 0 says so), then a moment more
        QElapsedTimer t;
        t.start();
        QString output;
        while (!output.contains("training mlp") && t.elapsed() < 60000) {
            p.waitForReadyRead(200);
            output += QString::fromLocal8Bit(p.readAll());
        }
        [&] { QVERIFY2(output.contains("training mlp"), qPrintable(output)); }();
        std::map<int, long> ranks;
        const std::size_t W = static_cast<std::size_t>(world);
        while (ranks.size() < W && t.elapsed() < 60000) ranks = hrtest::rank_processes(static_cast<long>(p.processId()));
        [&] { QCOMPARE(ranks.size(), W); }();
        if (ranks.size() < W) {
            p.kill();
            p.waitForFinished(5000);
            return output;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        QElapsedTimer since;
        since.start();
        ::kill(static_cast<pid_t>(ranks.at(1)), signal);
        const bool ended = p.waitForFinished(30000);
        const double seconds = since.elapsed() / 1000.0;
        output += QString::fromLocal8Bit(p.readAll());
        if (!ended) {
            for (const auto& [rank, pid] : ranks) ::kill(static_cast<pid_t>(pid), SIGKILL);
            p.kill();
            p.waitForFinished(5000);
        }
        qInfo("%s rank 1: the run ended after %.1f s, exit %d", name.c_str(), seconds, p.exitCode());
        [&] {
            QVERIFY2(ended && seconds < 30, qPrintable(output));
            QVERIFY2(p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0, qPrintable(output));
            bool any = true;
            for (int tries = 0; tries < 50 && any; ++tries) {
                any = false;
                for (const auto& [rank, pid] : ranks) any |= hrtest::process_alive(pid);
                if (any) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            QVERIFY2(!any, "a rank is still running");
            QVERIFY(!fs::exists(work + "/out/run.json"));
            QVERIFY(!fs::exists(work + "/out/model.safetensors"));
        }();
        return output;
    }
};

QTEST_GUILESS_MAIN(TrainRanksTest)
#include "test_train_ranks.moc"
