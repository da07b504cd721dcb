// `headroom train --init-from` for a language model, against PyTorch: a small GPT trained 20 steps in
// PyTorch 1.13 (nanoGPT's model, tests/support/lm_init_from.py) and saved as safetensors with nanoGPT's
// names, as Hugging Face's GPT2LMHeadModel and as GPT2Model (Conv1D weights [in, out], mask buffers, the
// tied head under either name or not at all) starts a Headroom run whose validation loss (learning rate 1e-20,
// one step, every validation window) equals PyTorch's loss of the trained model on the same windows to
// 1e-5 relative, on one process and on 2 ranks (dp and 2 pipeline stages, through --ranks 2 when mpirun is
// there); without
// --init-from it does not; the --prune/--quantize what-if of the run and of headroom eval equals PyTorch's
// (tests/support/lm_what_if.py); a file for another model is refused (exit 2) before anything is written. Skips where /usr/bin/python3 cannot import torch or the headroom binary is missing.
#include <QProcess>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "test_support.h"
#include "train/checkpoint.h"
#include "programs.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

const char* kPython = "/usr/bin/python3";
const QString kHeadroom = hrtest::qbinary_path("headroom");

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

// nanoGPT's shape with a byte vocabulary: 16 positions, 2 blocks of width 32, tied head, no dropout.
ModelSpec small_gpt(int dim = 32) {
    ModelSpec s;
    s.name = "gpt-init-from";
    s.input_shape = {16};
    s.num_classes = 256;
    s.layers.push_back(L("token_embedding", {{"vocab_size", 256}, {"dim", dim}}));
    s.layers.push_back(L("position_embedding", {{"max_positions", 16}, {"dim", dim}}));
    for (int i = 0; i < 2; ++i) s.layers.push_back(L("transformer_block", {{"dim", dim}, {"heads", 2}}));
    s.layers.push_back(L("layernorm", {{"dim", dim}}));
    s.layers.push_back(L("lm_head", {{"dim", dim}, {"vocab_size", 256}}));
    return s;
}

std::string corpus() {
    const char* words[] = {"a", "model", "starts", "from", "weights", "trained", "elsewhere", "and", "its", "loss",
                           "is", "the", "same", "on", "every", "window", "of", "text", "here", "there"};
    std::mt19937 g(5);
    std::string text;
    for (int line = 0; line < 200; ++line) {
        const int n = 3 + static_cast<int>(g() % 6);
        for (int w = 0; w < n; ++w) text += std::string(w ? " " : "") + words[g() % 20];
        text += ".\n";
    }
    return text;
}

using Result = hrtest::ProcessResult;

Result run(const QString& program, const QStringList& args, int timeout_ms = 300000) {
    return hrtest::run_program(program, args, QString(), timeout_ms);
}

nlohmann::json readJson(const std::string& path) { return hrtest::read_json(path); }

}  // namespace

class LmInitFromTest : public QObject {
    Q_OBJECT

    std::string m_dir;
    double m_torch_loss = 0;
    bool m_ready = false;
    QString m_whyNot;

    // one step of learning rate 1e-20 (no change a float can hold), every validation window: the run's
    // validation loss is the loaded weights' loss
    QStringList flags(const QString& out) const {
        const QString d = QString::fromStdString(m_dir);
        return {"train", "--model", d + "/gpt.json", "--data", "text:" + d + "/corpus.txt", "--tokenizer", "byte",
                "--batch", "2", "--steps", "1", "--lr", "1e-20", "--optimizer", "adamw", "--eval-tokens", "0",
                "--threads", "1", "--device", "cpu", "--seed", "4", "--no-history", "--quiet", "--out", out};
    }
    double validationLoss(const std::string& out) const {
        const nlohmann::json j = readJson(out + "/run.json");
        return j["evals"].back()["test_loss"].get<double>();
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        const Result probe = run(QString::fromUtf8(kPython), {"-c", "import torch, numpy"}, 120000);
        if (probe.exit_code != 0) QSKIP("/usr/bin/python3 cannot import torch and numpy");
        m_dir = hrtest::temp_dir("hr-lm-init-from");
        {
            std::ofstream spec(m_dir + "/gpt.json");
            spec << model_spec_to_json(small_gpt()).dump(2);
            std::ofstream text(m_dir + "/corpus.txt", std::ios::binary);
            text << corpus();
        }
        // PyTorch's initial weights are Headroom's (seed 9), trained there, written in three layouts
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        ModelOptions o;
        o.batch = 8;
        o.seed = 9;
        Model m(small_gpt(), *be, o);
        write_safetensors(m_dir + "/start.safetensors", model_state_file(m));
        const Result r = run(QString::fromUtf8(kPython),
                             {hrtest::qsource_path("tests/support/lm_init_from.py"),
                              QString::fromStdString(m_dir + "/start.safetensors"),
                              QString::fromStdString(m_dir + "/corpus.txt"), "16", "20", QString::fromStdString(m_dir)});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const nlohmann::json j = nlohmann::json::parse(r.output.trimmed().split('\n').last().toStdString());
        m_torch_loss = j["val_loss"].get<double>();
        QVERIFY(j["windows"].get<int>() > 10);
        QVERIFY2(j["losses"].back().get<double>() < j["losses"].front().get<double>() - 0.5, "PyTorch trained it");
        // the files are what they claim to be
        const SafeTensorsFile lm = read_safetensors(m_dir + "/hf_lmhead.safetensors");
        const SafeTensorsFile hm = read_safetensors(m_dir + "/hf_model.safetensors");
        QVERIFY(lm.find("transformer.h.0.attn.c_attn.weight") && lm.find("lm_head.weight") && lm.find("transformer.h.0.attn.bias"));
        QCOMPARE(lm.find("transformer.h.0.attn.c_attn.weight")->shape, (Shape{32, 96}));  // Conv1D [in, out]
        QVERIFY(hm.find("h.1.mlp.c_fc.weight") && !hm.find("lm_head.weight") && !hm.find("transformer.wte.weight"));
        m_ready = true;
    }

    void startsFromPyTorchWeights_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("nanoGPT names") << "nanogpt";
        QTest::newRow("GPT2LMHeadModel (Conv1D, transformer. prefix, lm_head)") << "hf_lmhead";
        QTest::newRow("GPT2Model (Conv1D, no prefix, no head)") << "hf_model";
    }
    void startsFromPyTorchWeights() {
        QVERIFY(m_ready);
        QFETCH(QString, file);
        const std::string out = m_dir + "/run-" + file.toStdString();
        const QString weights = QString::fromStdString(m_dir + "/" + file.toStdString() + ".safetensors");
        const Result r = run(kHeadroom, flags(QString::fromStdString(out)) << "--init-from" << weights);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const double ours = validationLoss(out);
        const double rel = std::fabs(ours - m_torch_loss) / m_torch_loss;
        qInfo("%s: Headroom's validation loss %.7f, PyTorch's %.7f (relative %.2g)", qPrintable(file), ours, m_torch_loss, rel);
        QVERIFY2(rel <= 1e-5, qPrintable(QString::number(rel)));
        const nlohmann::json j = readJson(out + "/run.json");
        QCOMPARE(QString::fromStdString(j["resume"]["init_from"].get<std::string>()), weights);
    }

    // Two CPU ranks (the launcher's mpirun), each loading the file: the same loss. As data-parallel replicas,
    // and as two pipeline stages (each takes its layers of the file; the tied head's copy on the second stage
    // is the file's embedding, which GPT2Model's file holds without a head).
    void startsFromPyTorchWeightsOnTwoRanks_data() {
        QTest::addColumn<QString>("layout");
        QTest::newRow("dp") << "--shard dp";
        QTest::newRow("pipeline 2") << "--pipeline 2";
    }
    void startsFromPyTorchWeightsOnTwoRanks() {
        QVERIFY(m_ready);
        QFETCH(QString, layout);
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty()) QSKIP("no mpirun on PATH");
        const std::string out = m_dir + "/run-ranks-" + layout.mid(2).replace(' ', '-').toStdString();
        const Result r = run(kHeadroom, flags(QString::fromStdString(out))
                                            << "--init-from" << QString::fromStdString(m_dir + "/hf_model.safetensors")
                                            << "--ranks" << "2" << layout.split(' '));
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const double rel = std::fabs(validationLoss(out) - m_torch_loss) / m_torch_loss;
        qInfo("2 ranks (%s): relative %.2g", qPrintable(layout), rel);
        QVERIFY2(rel <= 1e-5, qPrintable(QString::number(rel)));
        QCOMPARE(readJson(out + "/run.json")["distributed"]["world_size"].get<int>(), 2);
    }

    // The same run from Headroom's own initialisation is far from the trained loss: the test can tell.
    void withoutInitFromTheLossDiffers() {
        QVERIFY(m_ready);
        const std::string out = m_dir + "/run-fresh";
        const Result r = run(kHeadroom, flags(QString::fromStdString(out)));
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QVERIFY2(validationLoss(out) > m_torch_loss + 0.5, qPrintable(QString::number(validationLoss(out))));
    }

    // --prune/--quantize on a language model (issue 23 item 4): the run's what-if (50 % pruned, then int4) and
    // `headroom eval`'s (int8) on the PyTorch-trained weights give PyTorch's validation loss per token and
    // next-token accuracy after its own pruning (torch.nn.utils.prune) and rounding, to 1e-5 relative.
    void whatIfEqualsPyTorchs() {
        QVERIFY(m_ready);
        const std::string out = m_dir + "/run-what-if";
        const Result r = run(kHeadroom, flags(QString::fromStdString(out))
                                            << "--init-from" << QString::fromStdString(m_dir + "/nanogpt.safetensors")
                                            << "--prune" << "0.5" << "--quantize" << "int4");
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const std::string weights = out + "/model.safetensors";
        const Result py = run(QString::fromUtf8(kPython), {hrtest::qsource_path("tests/support/lm_what_if.py"),
                                                           QString::fromStdString(weights),
                                                           QString::fromStdString(m_dir + "/corpus.txt"), "16", "0.5:4", "0:8"});
        QVERIFY2(py.exit_code == 0, qPrintable(py.output));
        const nlohmann::json torch = nlohmann::json::parse(py.output.trimmed().split('\n').last().toStdString());
        const nlohmann::json c = readJson(out + "/run.json")["final"]["compression"];
        QVERIFY2(c.is_object(), "run.json has no final.compression");
        const auto rel = [](double a, double b) { return std::fabs(a - b) / std::fabs(b); };
        qInfo("what-if 50 %% + int4: Headroom %.7f -> %.7f, PyTorch %.7f -> %.7f per token", c["test_loss_before"].get<double>(),
              c["test_loss_after"].get<double>(), torch["before"]["loss"].get<double>(), torch["0.5:4"]["loss"].get<double>());
        QCOMPARE(c["test_tokens"].get<std::int64_t>(), torch["tokens"].get<std::int64_t>());
        QVERIFY(rel(c["test_loss_before"].get<double>(), torch["before"]["loss"].get<double>()) <= 1e-5);
        QVERIFY(rel(c["test_loss_after"].get<double>(), torch["0.5:4"]["loss"].get<double>()) <= 1e-5);
        // the transform changed the loss by far more than the bound: the comparison can tell
        QVERIFY(rel(torch["0.5:4"]["loss"].get<double>(), torch["before"]["loss"].get<double>()) > 1e-3);
        const double token = 1.0 / static_cast<double>(torch["tokens"].get<std::int64_t>());
        QVERIFY(std::fabs(c["test_accuracy_before"].get<double>() - torch["before"]["accuracy"].get<double>()) <= 2 * token);
        QVERIFY(std::fabs(c["test_accuracy_after"].get<double>() - torch["0.5:4"]["accuracy"].get<double>()) <= 2 * token);
        // the before is the run's own last evaluation of the same weights
        QVERIFY(rel(c["test_loss_before"].get<double>(), validationLoss(out)) <= 1e-9);
        // the embeddings, the four projections of each block and nothing else (the head is the tied embedding)
        QCOMPARE(c["tensors"].get<int>(), 2 + 4 * 2);
        // `headroom eval` on the same file: the tokenizer the run wrote next to it, every window, int8
        const Result e = run(kHeadroom, {"eval", "--weights", QString::fromStdString(weights), "--data",
                                         QString::fromStdString("text:" + m_dir + "/corpus.txt"), "--eval-tokens", "0",
                                         "--quantize", "int8", "--device", "cpu", "--threads", "1"});
        QVERIFY2(e.exit_code == 0, qPrintable(e.output));
        const auto value = [&](const char* key) {
            for (const QString& line : e.output.split('\n'))
                if (line.startsWith(QLatin1String(key) + QLatin1Char('='))) return line.section('=', 1).toDouble();
            return std::nan("");
        };
        qInfo("eval int8: Headroom %.7f, PyTorch %.7f per token", value("test_loss_after"), torch["0:8"]["loss"].get<double>());
        QVERIFY2(e.output.contains(QStringLiteral("validation tokens")), qPrintable(e.output));
        QVERIFY(rel(value("test_loss"), torch["before"]["loss"].get<double>()) <= 1e-5);
        QVERIFY(rel(value("test_loss_after"), torch["0:8"]["loss"].get<double>()) <= 1e-5);
        QVERIFY(std::fabs(value("test_accuracy_after") - torch["0:8"]["accuracy"].get<double>()) <= 1e-4 + 2 * token);
    }

    // Weights of another GPT (width 48): refused with the tensor named, exit 2, nothing written.
    void anotherModelsFileIsRefused() {
        QVERIFY(m_ready);
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        ModelOptions o;
        o.batch = 2;
        Model other(small_gpt(48), *be, o);
        write_safetensors(m_dir + "/other.safetensors", model_state_file(other));
        const std::string out = m_dir + "/run-other";
        const Result r = run(kHeadroom, flags(QString::fromStdString(out)) << "--init-from"
                                                                            << QString::fromStdString(m_dir + "/other.safetensors"));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.output.contains("other.safetensors") && r.output.contains("shape"), qPrintable(r.output));
        QVERIFY(!fs::exists(out + "/model.safetensors") && !fs::exists(out + "/run.json"));
    }
};

QTEST_GUILESS_MAIN(LmInitFromTest)
#include "test_lm_init_from.moc"
