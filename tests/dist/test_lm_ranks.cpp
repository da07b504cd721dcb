// ranks: none
// Language models on several CPU ranks, from outside (this test is one process; it runs `mpirun -np N
// headroom train` itself): a small GPT with dropout trained 4 steps (SGD with momentum) with dp, zero2 and
// zero3 on 2 and 3 ranks (and with micro-batches on 2) gives the model.safetensors of one process with the
// same global batch, to 1e-6 relative (per tensor: largest difference over largest value), read with the
// project's safetensors reader; every validation loss in run.json (an evaluation every 2 steps and at the
// last) equals one process's to 1e-6; rank 0 alone writes; each rank's measured ledger peak is what
// `headroom plan --ranks N --shard S` predicts for it. Ctrl-C to `headroom train --ranks 3` stops every rank
// after the same step (the run ends, none hangs in a collective another rank skipped), with one process's
// exit status and run.json "stopped". The same GPT with its head tied to the token embedding (what every
// GPT preset does) gives one process's weights to 1e-6 as well with dp, zero2 and zero3 (2 ranks; zero3
// with 3 micro-batches; zero3 on 3 ranks with the uneven batches 3 + 2 + 2 of a global batch of 7): the
// tied unit stays whole from the head's backward to its own (strategy/sharding.h), and the consolidated
// file has one process's tensors, lm_head.weight equal to transformer.wte.weight; its zero3 checkpoint
// resumes on 2 ranks bit for bit and onto one process to 1e-6. AdamW (one row): its validation losses to 1e-6 too,
// its weights to 1e-3 per tensor only, since Adam divides each gradient element by its own running scale:
// an element whose gradient nearly cancels over the batch (a bias starting at zero) has a rounding error,
// from summing in another order, that is a visible share of it, and so of its update (measured 6e-4).
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <signal.h>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/dtype.h"
#include "dist/communicator.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"
#include "test_support.h"
#include "programs.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

using Result = hrtest::ProcessResult;

Result run(const QString& program, const QStringList& args, const QString& cwd, int timeout_ms = 180000) {
    return hrtest::run_program(program, args, cwd, timeout_ms);
}

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

// A GPT small enough for seconds on CPU ranks: byte vocabulary, 16 positions, 2 blocks of width 32, dropout
// 0.1 (masks keyed on the run-wide window index), an untied head (zero2/zero3 shard every parameter), or
// (tied) the head reading the token embedding's weight, as nanoGPT's.
ModelSpec small_gpt(bool tied = false) {
    ModelSpec s;
    s.name = "gpt-ranks";
    s.input_shape = {16};
    s.num_classes = 256;
    s.layers.push_back(L("token_embedding", {{"vocab_size", 256}, {"dim", 32}}));
    s.layers.push_back(L("position_embedding", {{"max_positions", 16}, {"dim", 32}}));
    s.layers.push_back(L("dropout", {{"p", 0.1}}));
    for (int i = 0; i < 2; ++i) s.layers.push_back(L("transformer_block", {{"dim", 32}, {"heads", 2}, {"dropout", 0.1}}));
    s.layers.push_back(L("layernorm", {{"dim", 32}}));
    s.layers.push_back(L("lm_head", {{"dim", 32}, {"vocab_size", 256}, {"tied", tied}}));
    return s;
}

// The LLaMA shape at the same size: 2 llama_blocks of width 32, 4 query and 2 key/value heads, SwiGLU 64,
// rotary positions, RMSNorm, an untied head (Hugging Face's names).
ModelSpec small_llama() {
    ModelSpec s;
    s.name = "llama-ranks";
    s.input_shape = {16};
    s.num_classes = 256;
    s.layers.push_back(L("token_embedding", {{"vocab_size", 256}, {"dim", 32}}));
    for (int i = 0; i < 2; ++i)
        s.layers.push_back(L("llama_block", {{"dim", 32}, {"heads", 4}, {"kv_heads", 2}, {"hidden", 64}, {"max_positions", 16}}));
    s.layers.push_back(L("rmsnorm", {{"dim", 32}}));
    s.layers.push_back(L("lm_head", {{"dim", 32}, {"vocab_size", 256}, {"tied", false}}));
    return s;
}

// Plain ASCII lines of words, the same every time (about 12 KB).
std::string corpus() {
    const char* words[] = {"the", "memory", "of", "a", "rank", "is", "its", "share", "and", "every", "step",
                           "gradient", "falls", "when", "loss", "window", "token", "model", "batch", "train"};
    std::mt19937 g(11);
    std::string text;
    for (int line = 0; line < 600; ++line) {
        const int n = 3 + static_cast<int>(g() % 5);
        for (int w = 0; w < n; ++w) text += std::string(w ? " " : "") + words[g() % 20];
        text += ".\n";
    }
    return text;
}

// The run's flags without --out; the global batch is 6 windows (3 + 3 on 2 ranks, 2 + 2 + 2 on 3) unless
// given. `model`: gpt (untied head) or gpt-tied.
QStringList runFlags(const QString& dir, const QString& optimizer, const QString& model = "gpt", int batch = 6) {
    QStringList f{"train", "--model", dir + "/" + model + ".json", "--data", "text:" + dir + "/corpus.txt", "--tokenizer", "byte",
                  "--batch", QString::number(batch), "--steps", "4", "--eval-every", "2", "--eval-tokens", "0", "--optimizer", optimizer,
                  "--threads", "1", "--seed", "3", "--device", "cpu", "--no-history", "--quiet"};
    if (optimizer == "sgd") f << "--lr" << "0.1" << "--momentum" << "0.9";
    else f << "--lr" << "0.003";
    return f;
}

double g_worst = 0;  // the last comparison's largest relative difference (reported)

// Largest |a - b| / max(|b|) per tensor of two weight files with the same names, dtypes and shapes; ""
// when within tolerance, else what differs.
QString compareWeights(const std::string& a_path, const std::string& b_path, double tolerance) {
    return hrtest::compare_weights(a_path, b_path, tolerance, &g_worst);
}

nlohmann::json readJson(const std::string& path) { return hrtest::read_json(path); }

std::set<std::string> entries(const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
}

}  // namespace

class LmRanksTest : public QObject {
    Q_OBJECT

    std::string m_dir;
    std::map<QString, nlohmann::json> m_one;  // the references' run.json, by reference name (one-<name>)

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        m_dir = hrtest::temp_dir("hr-lm-ranks");
        {
            std::ofstream spec(m_dir + "/gpt.json");
            spec << model_spec_to_json(small_gpt()).dump(2);
            std::ofstream tied(m_dir + "/gpt-tied.json");
            tied << model_spec_to_json(small_gpt(true)).dump(2);
            std::ofstream llama(m_dir + "/llama.json");
            llama << model_spec_to_json(small_llama()).dump(2);
            std::ofstream text(m_dir + "/corpus.txt", std::ios::binary);
            text << corpus();
        }
        // the references: one process, the whole global batch in one micro-batch
        const QString dir = QString::fromStdString(m_dir);
        for (const QString& o : {QStringLiteral("sgd"), QStringLiteral("adamw")}) {
            const Result r = run(kHeadroom, runFlags(dir, o) << "--out" << dir + "/one-" + o, dir);
            QVERIFY2(r.exit_code == 0, qPrintable(r.output));
            m_one[o] = readJson(m_dir + "/one-" + o.toStdString() + "/run.json");
            QCOMPARE(m_one[o]["evals"].size(), std::size_t(2));  // after step 2 and at the last step
        }
        // the LLaMA-shaped model's
        {
            const Result r = run(kHeadroom, runFlags(dir, "sgd", "llama") << "--out" << dir + "/one-sgd-llama", dir);
            QVERIFY2(r.exit_code == 0, qPrintable(r.output));
            m_one["sgd-llama"] = readJson(m_dir + "/one-sgd-llama/run.json");
        }
        // the tied model's, with global batches of 6 and 7
        for (int batch : {6, 7}) {
            const QString name = QString("sgd-tied-b%1").arg(batch);
            const Result r = run(kHeadroom, runFlags(dir, "sgd", "gpt-tied", batch) << "--out" << dir + "/one-" + name, dir);
            QVERIFY2(r.exit_code == 0, qPrintable(r.output));
            m_one[name] = readJson(m_dir + "/one-" + name.toStdString() + "/run.json");
            QCOMPARE(m_one[name]["evals"].size(), std::size_t(2));
        }
    }

    void ranksEqualOneProcess_data() {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<QString>("stage");
        QTest::addColumn<int>("accumulate");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<double>("tolerance");
        QTest::addColumn<bool>("tied");
        QTest::addColumn<int>("batch");
        QTest::addColumn<bool>("offload");  // --offload-params
        for (int n : {2, 3})
            for (const char* s : {"dp", "zero2", "zero3"})
                QTest::newRow(qPrintable(QString("%1 on %2 ranks").arg(s).arg(n))) << n << s << 1 << "sgd" << 1e-6 << false << 6 << false;
        QTest::newRow("zero2 on 2 ranks, 3 micro-batches each") << 2 << "zero2" << 3 << "sgd" << 1e-6 << false << 6 << false;
        QTest::newRow("zero3 on 3 ranks, adamw") << 3 << "zero3" << 1 << "adamw" << 1e-3 << false << 6 << false;
        // a head tied to the token embedding
        for (const char* s : {"dp", "zero2", "zero3"})
            QTest::newRow(qPrintable(QString("%1 on 2 ranks, tied head").arg(s))) << 2 << s << 1 << "sgd" << 1e-6 << true << 6 << false;
        QTest::newRow("zero3 on 2 ranks, tied head, 3 micro-batches each") << 2 << "zero3" << 3 << "sgd" << 1e-6 << true << 6 << false;
        QTest::newRow("zero3 on 3 ranks, tied head, batches 3 + 2 + 2") << 3 << "zero3" << 1 << "sgd" << 1e-6 << true << 7 << false;
        // parameter offload (ZeRO-Infinity): zero3's shards in host memory (the tied unit's buffer too)
        QTest::newRow("zero3 on 2 ranks, tied head, 3 micro-batches each, parameters offloaded")
            << 2 << "zero3" << 3 << "sgd" << 1e-6 << true << 6 << true;
        QTest::newRow("zero3 on 3 ranks, parameters offloaded") << 3 << "zero3" << 1 << "sgd" << 1e-6 << false << 6 << true;
        // the LLaMA shape (grouped-query attention, RMSNorm, SwiGLU, rotary positions): "llama" in the tag
        QTest::newRow("zero3 on 2 ranks, llama") << 2 << "zero3" << 1 << "sgd" << 1e-6 << false << 6 << false;
        QTest::newRow("zero2 on 2 ranks, llama, 3 micro-batches each") << 2 << "zero2" << 3 << "sgd" << 1e-6 << false << 6 << false;
    }

    void ranksEqualOneProcess() {
        QFETCH(int, ranks);
        QFETCH(QString, stage);
        QFETCH(int, accumulate);
        QFETCH(QString, optimizer);
        QFETCH(double, tolerance);
        QFETCH(bool, tied);
        QFETCH(int, batch);
        QFETCH(bool, offload);
        const bool llama = QString(QTest::currentDataTag()).contains(QLatin1String("llama"));
        const QString ref = llama ? QString("sgd-llama") : tied ? QString("%1-tied-b%2").arg(optimizer).arg(batch) : optimizer;
        const QString model = llama ? "llama" : tied ? "gpt-tied" : "gpt";
        const nlohmann::json& one = m_one[ref];
        const std::string work = m_dir + "/" + stage.toStdString() + "-" + std::to_string(ranks) + "-" +
                                 std::to_string(accumulate) + "-" + ref.toStdString() + (offload ? "-offload" : "");
        fs::create_directories(work);
        const QString w = QString::fromStdString(work), dir = QString::fromStdString(m_dir);
        QStringList args = QString(HR_MPIRUN_FLAGS).split(' ', Qt::SkipEmptyParts);
        args << "-np" << QString::number(ranks) << kHeadroom;
        args << runFlags(dir, optimizer, model, batch) << "--shard" << stage << "--accumulate" << QString::number(accumulate) << "--out" << w + "/out";
        if (offload) args << "--offload-params";
        const Result r = run(QStringLiteral(HR_MPIEXEC), args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        // the weights of one process with the same global batch
        const QString why = compareWeights(work + "/out/model.safetensors",
                                           m_dir + "/one-" + ref.toStdString() + "/model.safetensors", tolerance);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const double weights_rel = g_worst;
        if (tied) {  // the consolidated file has the head as the embedding's weight again, as one process's
            const SafeTensorsFile f = read_safetensors(work + "/out/model.safetensors");
            const SafeTensor* head = f.find("lm_head.weight");
            const SafeTensor* wte = f.find("transformer.wte.weight");
            QVERIFY(head && wte);
            QVERIFY2(head->data == wte->data, "lm_head.weight is not transformer.wte.weight");
        }
        // the same validation losses, at the same steps
        const nlohmann::json j = readJson(work + "/out/run.json");
        QCOMPARE(j["evals"].size(), one["evals"].size());
        double loss_rel = 0;
        for (std::size_t i = 0; i < j["evals"].size(); ++i) {
            QCOMPARE(j["evals"][i]["step"].get<int>(), one["evals"][i]["step"].get<int>());
            QCOMPARE(j["evals"][i]["tokens"].get<std::int64_t>(), one["evals"][i]["tokens"].get<std::int64_t>());
            const double a = j["evals"][i]["test_loss"].get<double>(), b = one["evals"][i]["test_loss"].get<double>();
            loss_rel = std::max(loss_rel, std::fabs(a - b) / std::fabs(b));
        }
        qInfo("%s on %d ranks (accumulate %d, %s%s) vs one process: weights %.3g, validation loss %.3g (relative)",
              qPrintable(stage), ranks, accumulate, qPrintable(optimizer), tied ? ", tied head" : "", weights_rel, loss_rel);
        QVERIFY2(loss_rel <= 1e-6, qPrintable(QString::number(loss_rel)));
        const double train_a = j["final"]["train_loss"].get<double>(), train_b = one["final"]["train_loss"].get<double>();
        QVERIFY2(std::fabs(train_a - train_b) <= 1e-6 * std::fabs(train_b), "the training loss is the global batch's");
        // the run's spread, in run.json; rank 0 alone wrote (byte tokens: no tokenizer file)
        QCOMPARE(j["distributed"]["world_size"].get<int>(), ranks);
        QCOMPARE(j["distributed"]["stage"].get<std::string>(), stage.toStdString());
        const nlohmann::json split = batch == 7 ? nlohmann::json({3, 2, 2})
                                     : ranks == 2 ? nlohmann::json({3, 3})
                                                  : nlohmann::json({2, 2, 2});
        QVERIFY2(j["distributed"]["rank_batch"] == split, j["distributed"].dump().c_str());
        QVERIFY(j["distributed"]["communication_bytes_per_step"].get<double>() > 0);
        // (a one-process run's folder: config.json, the last step's checkpoint, the weights, run.json)
        QCOMPARE(entries(work + "/out"),
                 (std::set<std::string>{"checkpoint-000000004.json", "checkpoint-000000004.safetensors", "config.json",
                                        "model.safetensors", "run.json"}));
        QCOMPARE(entries(work), (std::set<std::string>{"out"}));
        // each rank's ledger peak is the planner's prediction for it: in run.json and from `headroom plan`
        const nlohmann::json& measured = j["distributed"]["measured_peak_bytes"];
        QCOMPARE(measured.size(), std::size_t(ranks));
        QVERIFY2(j["distributed"]["predicted_peak_bytes"] == measured, j["distributed"].dump().c_str());
        QStringList planArgs{"plan", "--model", dir + "/" + model + ".json", "--batch", QString::number(batch), "--optimizer", optimizer,
                             "--threads", "1", "--device", "cpu", "--ranks", QString::number(ranks), "--shard", stage, "--accumulate",
                             QString::number(accumulate), "--json"};
        if (offload) planArgs << "--offload-params";
        const Result p = run(kHeadroom, planArgs, w);
        QVERIFY2(p.exit_code == 0, qPrintable(p.output));
        const nlohmann::json plan = nlohmann::json::parse(p.output.toStdString());
        QCOMPARE(plan["ranks"].size(), std::size_t(ranks));
        // the tied rows: the traffic counted is step_payload_bytes' replay of the schedule (with the tied unit
        // held from its forward, zero3 gathers each unit once a step, so the evaluations add no gather)
        if (tied)
            QVERIFY2(plan["communication_bytes_per_step"] == j["distributed"]["communication_bytes_per_step"],
                     qPrintable(QString("plan %1 B, sent %2 B a step")
                                    .arg(QString::fromStdString(plan["communication_bytes_per_step"].dump()))
                                    .arg(QString::fromStdString(j["distributed"]["communication_bytes_per_step"].dump()))));
        if (offload) {  // nothing of the model on the device; the bytes moved per step as the plan's
            const nlohmann::json& at_peak = j["memory"]["measured"]["at_peak"];
            QCOMPARE(at_peak["parameters"].get<std::int64_t>(), 0);
            QCOMPARE(at_peak["gradients"].get<std::int64_t>(), 0);
            QVERIFY(j["memory"]["measured_host"]["peak"]["parameters"].get<std::int64_t>() > 0);
            QVERIFY2(j["memory"]["predicted"]["host"] == j["memory"]["measured_host"]["peak"],
                     j["memory"].dump().c_str());
            if (tied)
                QVERIFY2(plan["offload_bytes_per_step"] == j["memory"]["offload_bytes_per_step"],
                         qPrintable(QString("plan %1 B, moved %2 B a step")
                                        .arg(QString::fromStdString(plan["offload_bytes_per_step"].dump()))
                                        .arg(QString::fromStdString(j["memory"]["offload_bytes_per_step"].dump()))));
            qInfo("  parameters offloaded: %s B host<->device per step (plan %s B)", j["memory"]["offload_bytes_per_step"].dump().c_str(),
                  plan["offload_bytes_per_step"].dump().c_str());
        }
        for (int k = 0; k < ranks; ++k)
            QVERIFY2(plan["ranks"][k]["device_total"] == measured[k],
                     qPrintable(QString("rank %1: plan %2, measured %3")
                                    .arg(k)
                                    .arg(QString::fromStdString(plan["ranks"][k]["device_total"].dump()))
                                    .arg(QString::fromStdString(measured[k].dump()))));
    }

    // zero3 with the tied head, 2 ranks: 2 steps, then --resume to 4 steps on 2 ranks gives the uninterrupted
    // 2-rank run's weights bit for bit, and as one process within 1e-6 (the reductions add in another
    // order); the checkpoint holds the head as the embedding's weight again (one process's tensors).
    void tiedZero3ResumedOnTwoRanksAndOneProcess() {
        const QString dir = QString::fromStdString(m_dir);
        const std::string work = m_dir + "/resume-tied";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        auto ranks2 = [&](QStringList flags) {
            QStringList args = QString(HR_MPIRUN_FLAGS).split(' ', Qt::SkipEmptyParts);
            args << "-np" << "2" << kHeadroom << flags;
            return run(QStringLiteral(HR_MPIEXEC), args, w);
        };
        auto flags = [&](int steps, const QString& out) {
            QStringList f = runFlags(dir, "sgd", "gpt-tied");
            f[f.indexOf("--steps") + 1] = QString::number(steps);
            return f << "--shard" << "zero3" << "--out" << w + "/" + out;
        };
        Result r = ranks2(flags(4, "ref"));
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        r = ranks2(flags(2, "half"));
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        {
            const SafeTensorsFile ck = read_safetensors(work + "/half/checkpoint-000000002.safetensors");
            const SafeTensor* head = ck.find("model.lm_head.weight");
            const SafeTensor* wte = ck.find("model.transformer.wte.weight");
            QVERIFY2(head && wte && head->data == wte->data, "the checkpoint's tied head is not the embedding's weight");
        }
        for (const char* name : {"again2", "one"}) fs::copy(work + "/half", work + "/" + name, fs::copy_options::recursive);
        r = ranks2({"train", "--resume", w + "/again2", "--steps", "4", "--no-history", "--quiet"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QString why = compareWeights(work + "/again2/model.safetensors", work + "/ref/model.safetensors", 0);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        r = run(kHeadroom, {"train", "--resume", w + "/one", "--steps", "4", "--no-history", "--quiet"}, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        why = compareWeights(work + "/one/model.safetensors", work + "/ref/model.safetensors", 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("zero3, tied head: 2-rank checkpoint resumed as one process vs 2 ranks throughout: %.3g relative", g_worst);
        for (const char* name : {"again2", "one"}) {
            const nlohmann::json j = readJson(work + "/" + name + "/run.json");
            QCOMPARE(j["resume"]["resumed_from_step"].get<int>(), 2);
            QCOMPARE(j["distributed"]["world_size"].get<int>(), std::string(name) == "one" ? 1 : 2);
            QVERIFY2(j["distributed"]["predicted_peak_bytes"] == j["distributed"]["measured_peak_bytes"],
                     j["distributed"].dump().c_str());
        }
    }

    // Parameter offload is a layout: a checkpoint of a run with --offload-params (zero3 on one process)
    // resumes without it as one process, bit for bit the uninterrupted one-process run (one rank's zero3 adds
    // the same values in the same order, through the host), and on 2 ranks with it, within 1e-6; a plain
    // one-process checkpoint resumes with it, bit for bit again.
    void offloadedCheckpointResumesOnOtherLayouts() {
        const QString dir = QString::fromStdString(m_dir);
        const std::string work = m_dir + "/resume-offload";
        fs::create_directories(work);
        const QString w = QString::fromStdString(work);
        auto flags = [&](int steps, const QString& out) {
            QStringList f = runFlags(dir, "sgd", "gpt-tied");
            f[f.indexOf("--steps") + 1] = QString::number(steps);
            return f << "--out" << w + "/" + out;
        };
        Result r = run(kHeadroom, flags(2, "off") << "--shard" << "zero3" << "--offload-params", w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        r = run(kHeadroom, flags(2, "plain"), w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        for (const char* name : {"off-none", "off-2"}) fs::copy(work + "/off", work + "/" + name, fs::copy_options::recursive);
        r = run(kHeadroom, {"train", "--resume", w + "/off-none", "--steps", "4", "--shard", "none", "--no-history", "--quiet"}, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const std::string one = m_dir + "/one-sgd-tied-b6/model.safetensors";
        QString why = compareWeights(work + "/off-none/model.safetensors", one, 0);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        r = run(kHeadroom, {"train", "--resume", w + "/plain", "--steps", "4", "--shard", "zero3", "--offload-params",
                            "--no-history", "--quiet"}, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        why = compareWeights(work + "/plain/model.safetensors", one, 0);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const nlohmann::json resumed = readJson(work + "/plain/run.json");
        QVERIFY(resumed["config"]["strategy"]["offload_parameters"].get<bool>());
        QCOMPARE(resumed["memory"]["measured"]["at_peak"]["parameters"].get<std::int64_t>(), 0);
        QStringList args = QString(HR_MPIRUN_FLAGS).split(' ', Qt::SkipEmptyParts);
        args << "-np" << "2" << kHeadroom << "train" << "--resume" << w + "/off-2" << "--steps" << "4" << "--no-history" << "--quiet";
        r = run(QStringLiteral(HR_MPIEXEC), args, w);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        why = compareWeights(work + "/off-2/model.safetensors", one, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("parameter offload: resumed without it and with it bit-identical to one process; on 2 ranks %.3g", g_worst);
        const nlohmann::json two = readJson(work + "/off-2/run.json");
        QCOMPARE(two["distributed"]["world_size"].get<int>(), 2);
        QVERIFY(two["config"]["strategy"]["offload_parameters"].get<bool>());
        // --offload-params without zero3: one message naming both flags, nothing written
        r = run(kHeadroom, flags(2, "refused") << "--offload-params", w);
        QVERIFY(r.exit_code != 0);
        QVERIFY2(r.output.contains("--offload-params") && r.output.contains("--shard zero3"), qPrintable(r.output));
        QVERIFY(!fs::exists(work + "/refused"));
    }

    // Ctrl-C mid-run (evaluations every 3 steps, so it may land next to one): every rank stops together.
    void ctrlCStopsEveryRankTogether() {
        const QString dir = QString::fromStdString(m_dir);
        auto interrupted = [&](const QString& out, int ranks) {
            QStringList args = runFlags(dir, "sgd");
            args.removeAll("--quiet");
            args[args.indexOf("--steps") + 1] = "1000000";
            args[args.indexOf("--eval-every") + 1] = "3";
            args << "--out" << out;
            if (ranks > 1) args << "--ranks" << QString::number(ranks) << "--shard" << "zero3";
            QProcess p;
            p.setWorkingDirectory(dir);
            p.setProcessChannelMode(QProcess::MergedChannels);
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("OMP_NUM_THREADS", "1");
            p.setProcessEnvironment(env);
            p.start(kHeadroom, args);
            QString output;
            QElapsedTimer t;
            t.start();
            while (!output.contains("training gpt-ranks") && t.elapsed() < 60000 && p.state() == QProcess::Running) {
                p.waitForReadyRead(200);
                output += QString::fromLocal8Bit(p.readAll());
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            ::kill(static_cast<pid_t>(p.processId()), SIGINT);
            const bool ended = p.waitForFinished(60000);
            output += QString::fromLocal8Bit(p.readAll());
            if (!ended) p.kill(), p.waitForFinished(5000);
            return std::make_pair(ended ? p.exitCode() : -1, output);
        };
        const auto [one_code, one_out] = interrupted(dir + "/stop-one", 1);
        QVERIFY2(one_code >= 0, qPrintable(one_out));
        const auto [code, out] = interrupted(dir + "/stop-three", 3);
        QVERIFY2(code == one_code, qPrintable(QString("exit %1 vs one process's %2: %3").arg(code).arg(one_code).arg(out)));
        const nlohmann::json j = readJson(m_dir + "/stop-three/run.json");
        QCOMPARE(j["status"].get<std::string>(), std::string("stopped"));
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 3);
        QVERIFY(j["final"]["steps"].get<std::int64_t>() > 0);
        QVERIFY(fs::exists(m_dir + "/stop-three/model.safetensors"));
        qInfo("3 ranks stopped together after step %lld", static_cast<long long>(j["final"]["steps"].get<std::int64_t>()));
    }
};

QTEST_GUILESS_MAIN(LmRanksTest)
#include "test_lm_ranks.moc"
