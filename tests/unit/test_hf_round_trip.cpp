// A Hugging Face model folder in and out, against PyTorch 1.13 (tests/support/hf_round_trip.py): a small
// LLaMA (GQA, 2 blocks, untied head) written with plain Python as two shards with their index, the embedding
// in bf16, is read from its config.json and folder (memory-mapped, bf16 widened), trained one SGD step, and
// exported as a sharded folder; PyTorch's loss of the same batch in plain torch ops equals Headroom's, and the
// exported weights equal PyTorch's after the same step. A peft adapter on that base merges into the weights
// as W + alpha / r * B A (the product written here). A missing shard, a config whose sizes differ from the
// weights and an export of another layout are refused with the model and the disk unchanged. Skips where
// /usr/bin/python3 cannot import torch.
#include <QProcess>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "io/hf_folder.h"
#include "memory/ledger.h"
#include "nn/hf_config.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "test_support.h"
#include "train/checkpoint.h"
#include "train/hf_model.h"

using namespace hr;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const QString kRoundTripScript = hrtest::qsource_path("tests/support/hf_round_trip.py");

// Runs the reference script; "" with *skip set when there is no PyTorch.
QString hfrt_python(const QStringList& args, QString* skip) {
    QProcess py;
    py.start(QStringLiteral("/usr/bin/python3"), QStringList{kRoundTripScript} + args);
    if (!py.waitForFinished(120000) || py.exitCode() != 0) {
        const QString err = QString::fromUtf8(py.readAllStandardError());
        if (err.contains(QLatin1String("No module named 'torch'")) || py.error() == QProcess::FailedToStart) *skip = err;
        else qWarning("%s", qPrintable(err));
        return {};
    }
    return QString::fromUtf8(py.readAllStandardOutput());
}

json hfrt_read_json(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}

std::vector<double> hfrt_tensor(Model& m, const std::string& name) {
    for (const NamedTensor& n : m.state_dict())
        if (n.name == name) return std::vector<double>(n.tensor.data<double>(), n.tensor.data<double>() + n.tensor.numel());
    return {};
}

}  // namespace

class TestHfRoundTrip : public QObject {
    Q_OBJECT

    std::unique_ptr<Backend> be_ = make_cpu_backend(2, std::make_shared<MemoryLedger>());
    QTemporaryDir tmp_;
    fs::path dir_;
    bool ready_ = false;
    QString skip_;

    std::unique_ptr<Model> model(const fs::path& config, std::int64_t seq) {
        const ModelSpec spec = hf_model_spec(load_hf_config(config.string()), seq);
        ModelOptions o;
        o.batch = 2;
        o.dtype = DType::f64;
        o.seed = 3;
        return std::make_unique<Model>(spec, *be_, o);
    }

private slots:
    void initTestCase() {
        dir_ = tmp_.path().toStdString();
        if (hfrt_python({QStringLiteral("make"), tmp_.path()}, &skip_).isNull() && !skip_.isEmpty()) return;
        ready_ = fs::exists(dir_ / "ref.json");
        QVERIFY2(ready_, "the reference script failed");
    }

    void importTrainExport() {
        if (!ready_) QSKIP(qPrintable(QStringLiteral("no PyTorch for the reference: %1").arg(skip_.left(200))));
        const json batch = hfrt_read_json(dir_ / "batch.json"), ref = hfrt_read_json(dir_ / "ref.json");
        const std::int64_t N = batch["n"], T = batch["t"];
        auto m = model(dir_ / "base", T);
        QVERIFY(is_llama_layout(m->spec()));
        load_hf_folder_weights(*m, (dir_ / "base").string());
        Tensor x = Tensor::empty(be_->allocator(), {N, T}, DType::i64, MemCategory::other);
        Tensor y = Tensor::empty(be_->allocator(), {N * T}, DType::i64, MemCategory::other);
        for (std::int64_t i = 0; i < N * T; ++i) {
            x.data<std::int64_t>()[i] = batch["x"][i].get<std::int64_t>();
            y.data<std::int64_t>()[i] = batch["y"][i].get<std::int64_t>();
        }
        m->zero_grad();
        Tensor logits = m->forward(x, true, 0);
        const std::int64_t V = logits.shape().back();
        Tensor lv = logits.reshape({N * T, V});
        const double loss = be_->cross_entropy_inplace(lv, y, true, 1.0f).loss;
        m->backward(logits);
        QVERIFY2(std::abs(loss - ref["loss"].get<double>()) < 1e-9 * std::abs(ref["loss"].get<double>()),
                 qPrintable(QStringLiteral("loss %1, PyTorch %2").arg(loss, 0, 'g', 17).arg(ref["loss"].get<double>(), 0, 'g', 17)));
        // one SGD step over the flat buffers (what the optimizer does for plain SGD without momentum)
        const double lr = batch["lr"];
        double* p = m->parameters().data<double>();
        const double* g = m->gradients().data<double>();
        for (std::int64_t i = 0; i < m->flat_param_numel(); ++i) p[i] -= lr * g[i];
        // the run's weights file, then the export: small shards so that there are several
        const fs::path run = dir_ / "run", out = dir_ / "exported";
        fs::create_directories(run);
        write_safetensors((run / "model.safetensors").string(), model_state_file(*m));
        const HfExportResult r = export_hf_folder(run.string(), out.string(), 4096);
        QCOMPARE(r.files.front(), std::string("config.json"));
        QCOMPARE(r.files.back(), std::string(kHfIndexFile));
        QString none;
        const QString verdict = hfrt_python({QStringLiteral("check"), tmp_.path(), QString::fromStdString(out.string())}, &none);
        QVERIFY2(!verdict.isEmpty(), "the check script failed");
        const json v = json::parse(verdict.toStdString());
        QVERIFY2(v["config_same"].get<bool>(), qPrintable(verdict));
        QVERIFY(v["shards"].get<int>() >= 2);
        // float32 on disk: the step's weights to f32's rounding (values below 2)
        QVERIFY2(v["max_abs_diff"].get<double>() < 3e-7, qPrintable(verdict));
        // and the export reads back into Headroom as the same model
        auto back = model(out, T);
        load_hf_folder_weights(*back, out.string());
        const auto a = hfrt_tensor(*m, "model.layers.1.mlp.down_proj.weight"), b = hfrt_tensor(*back, "model.layers.1.mlp.down_proj.weight");
        QCOMPARE(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) QVERIFY(std::abs(a[i] - b[i]) < 3e-7);
    }

    void peftAdapterMergesOntoItsBase() {
        if (!ready_) QSKIP("no PyTorch for the reference");
        const std::string q = "model.layers.0.self_attn.q_proj";
        auto plain = model(dir_ / "base", 8);
        load_hf_folder_weights(*plain, (dir_ / "base").string());
        const std::vector<double> w0 = hfrt_tensor(*plain, q + ".weight");
        // an adapter of rank 2 on q_proj (16 x 16), alpha 8: scale 4
        const int R = 2, C = 16;
        SafeTensorsFile ad;
        SafeTensor a, b;
        a.name = q + ".lora_A", a.shape = {R, C}, a.data.resize(R * C * 4);
        b.name = q + ".lora_B", b.shape = {C, R}, b.data.resize(C * R * 4);
        std::vector<float> A(R * C), B(C * R);
        for (int i = 0; i < R * C; ++i) A[i] = 0.01f * static_cast<float>((i * 7) % 13 - 6);
        for (int i = 0; i < C * R; ++i) B[i] = 0.02f * static_cast<float>((i * 5) % 11 - 5);
        std::memcpy(a.data.data(), A.data(), A.size() * 4);
        std::memcpy(b.data.data(), B.data(), B.size() * 4);
        ad.tensors = {a, b};
        PeftAdapterConfig pc;
        pc.r = R;
        pc.lora_alpha = 8;
        pc.target_modules = {"q_proj"};
        pc.base_model_name_or_path = "../base";  // relative to the adapter's folder, as peft writes a local path
        const fs::path adapter = dir_ / "adapter";
        fs::create_directories(adapter);
        write_peft_adapter(adapter.string(), pc, ad);
        auto merged = model(dir_ / "base", 8);
        load_hf_folder_weights(*merged, adapter.string());
        const std::vector<double> w1 = hfrt_tensor(*merged, q + ".weight");
        QCOMPARE(w1.size(), w0.size());
        double worst = 0;
        for (int o = 0; o < C; ++o)
            for (int i = 0; i < C; ++i) {
                double ba = 0;
                for (int r = 0; r < R; ++r) ba += double(B[o * R + r]) * double(A[r * C + i]);
                worst = std::max(worst, std::abs(w1[o * C + i] - (w0[o * C + i] + 4.0 * ba)));
            }
        QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
        // the other weights are the base's
        QCOMPARE(hfrt_tensor(*merged, "model.layers.0.self_attn.k_proj.weight"), hfrt_tensor(*plain, "model.layers.0.self_attn.k_proj.weight"));
    }

    void badFoldersChangeNothing() {
        if (!ready_) QSKIP("no PyTorch for the reference");
        auto m = model(dir_ / "base", 8);
        const std::vector<double> before(m->parameters().data<double>(), m->parameters().data<double>() + m->flat_param_numel());
        auto refused = [&](const fs::path& folder) -> QString {
            try {
                load_hf_folder_weights(*m, folder.string());
            } catch (const InputError& e) {
                return QString::fromStdString(e.what());
            }
            return {};
        };
        // a missing shard
        const fs::path broken = dir_ / "broken";
        fs::copy(dir_ / "base", broken, fs::copy_options::recursive);
        fs::remove(broken / "model-00002-of-00002.safetensors");
        QVERIFY(refused(broken).contains(QLatin1String("names the shard model-00002-of-00002.safetensors, which is not in")));
        // a config whose MLP is narrower than the weights: the model built from it does not take them
        json cfg = hfrt_read_json(dir_ / "base" / "config.json");
        cfg["intermediate_size"] = 20;
        const fs::path other = dir_ / "other";
        fs::copy(dir_ / "base", other, fs::copy_options::recursive);
        std::ofstream(other / "config.json") << cfg.dump();
        auto narrow = model(other, 8);
        try {
            load_hf_folder_weights(*narrow, (dir_ / "base").string());
            QFAIL("weights of another shape were taken");
        } catch (const InputError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains(QLatin1String("has shape (24, 16) but the model needs (20, 16)")), e.what());
        }
        const std::vector<double> after(m->parameters().data<double>(), m->parameters().data<double>() + m->flat_param_numel());
        QVERIFY(before == after);
        // a model of another layout is not exported, and nothing is created
        ModelSpec mlp = preset_model("mlp");
        ModelOptions o;
        o.batch = 2;
        Model small(mlp, *be_, o);
        const fs::path run = dir_ / "mlp-run";
        fs::create_directories(run);
        write_safetensors((run / "model.safetensors").string(), model_state_file(small));
        try {
            export_hf_folder(run.string(), (dir_ / "mlp-export").string());
            QFAIL("an MLP was exported as a Hugging Face model");
        } catch (const InputError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains(QLatin1String("not in the LLaMA layout")));
        }
        QVERIFY(!fs::exists(dir_ / "mlp-export"));
    }
};

QTEST_GUILESS_MAIN(TestHfRoundTrip)
#include "test_hf_round_trip.moc"
