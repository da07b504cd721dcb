// GPT weights and PyTorch (docs/design.md decision 6, issue 12): a Headroom GPT's model.safetensors loads into
// nanoGPT's GPT with load_state_dict(strict=True) and gives the same logits to 1e-5; weights trained in
// PyTorch load back into Headroom and training continues from them; a Hugging Face GPT2Model file
// (Conv1D weights [in, out], mask buffers, no "transformer." prefix) loads too, its spec reconstructed
// from its tensors. The PyTorch side is bench/gpt_interop.py (Debian's python3-torch); the test skips
// where /usr/bin/python3 cannot import torch.
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonArray>
#include <QProcess>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "strategy/training_state.h"
#include "test_support.h"
#include "train/checkpoint.h"

using namespace hr;

namespace {

const char* kPython = "/usr/bin/python3";

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

ModelSpec gpt(int vocab, int T, int dim, int heads, int blocks, bool bias = true) {
    ModelSpec s;
    s.name = "gpt-interop";
    s.input_shape = {T};
    s.num_classes = vocab;
    s.layers.push_back(L("token_embedding", {{"vocab_size", vocab}, {"dim", dim}}));
    s.layers.push_back(L("position_embedding", {{"max_positions", T}, {"dim", dim}}));
    for (int i = 0; i < blocks; ++i) s.layers.push_back(L("transformer_block", {{"dim", dim}, {"heads", heads}, {"bias", bias}}));
    s.layers.push_back(L("layernorm", {{"dim", dim}, {"bias", bias}}));
    s.layers.push_back(L("lm_head", {{"dim", dim}, {"vocab_size", vocab}}));
    return s;
}

template <class T>
void write_raw(const std::string& path, const std::vector<T>& v) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}
std::vector<float> read_f32(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
}

struct Net {
    std::unique_ptr<Backend> be = make_cpu_backend(2, std::make_shared<MemoryLedger>());
    std::unique_ptr<Model> model;
    Net(const ModelSpec& s, std::int64_t batch, std::uint64_t seed = 7) {
        ModelOptions o;
        o.batch = batch;
        o.seed = seed;
        model = std::make_unique<Model>(s, *be, o);
    }
    std::vector<float> logits(const std::vector<std::int64_t>& tokens, std::int64_t n, std::int64_t t) {
        Tensor x = Tensor::empty(be->allocator(), {n, t}, DType::i64, MemCategory::data);
        be->copy_from_host(tokens.data(), x);
        Tensor y = model->forward(x, false);
        std::vector<float> out(static_cast<std::size_t>(y.numel()));
        be->copy_to_host(y, out.data());
        return out;
    }
};

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
    return d;
}

}  // namespace

class GptInteropTest : public QObject {
    Q_OBJECT

private:
    bool m_haveTorch = false;
    QString m_whyNot;

    QJsonObject python(const QStringList& args) {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QString::fromUtf8(kPython), QStringList{hrtest::qsource_path("bench/gpt_interop.py")} + args);
        if (!p.waitForFinished(600000)) return {{"error", "gpt_interop.py did not finish within 10 minutes"}};
        const QByteArray text = p.readAll();
        qInfo("%s", text.trimmed().constData());
        QJsonObject o = QJsonDocument::fromJson(text.trimmed().split('\n').last()).object();
        o.insert(QStringLiteral("exit"), p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1);
        return o;
    }

    static std::vector<std::int64_t> tokens(std::int64_t n, std::int64_t V, std::uint64_t seed) {
        std::mt19937_64 g(seed);
        std::vector<std::int64_t> t(static_cast<std::size_t>(n));
        for (auto& v : t) v = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(V));
        return t;
    }

private slots:
    void initTestCase() {
        QProcess p;
        p.start(QString::fromUtf8(kPython), {QStringLiteral("-c"), QStringLiteral("import torch, numpy")});
        if (!p.waitForStarted(10000)) {
            m_whyNot = QStringLiteral("%1 is not available").arg(QString::fromUtf8(kPython));
            return;
        }
        p.waitForFinished(120000);
        m_haveTorch = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        if (!m_haveTorch) m_whyNot = QStringLiteral("%1 cannot import torch and numpy").arg(QString::fromUtf8(kPython));
    }

    void loadsIntoNanoGpt_data() {
        QTest::addColumn<QString>("which");
        QTest::newRow("small, biases") << "small";
        QTest::newRow("small, no biases") << "nobias";
        QTest::newRow("gpt-tiny preset") << "gpt-tiny";
    }
    void loadsIntoNanoGpt() {
        if (!m_haveTorch) QSKIP(qPrintable(m_whyNot));
        QFETCH(QString, which);
        const ModelSpec s = which == "gpt-tiny" ? preset_model("gpt-tiny") : gpt(61, 16, 32, 4, 2, which == "small");
        QVERIFY(is_gpt_layout(s));
        const std::int64_t n = 3, t = model_sequence_length(s), V = s.num_classes;
        Net net(s, n);
        const auto tok = tokens(n * t, V, 5);
        const auto ours = net.logits(tok, n, t);
        const std::string dir = hrtest::temp_dir("gpt-interop");
        SafeTensorsFile f = model_state_file(*net.model);
        QVERIFY(f.find("transformer.wte.weight") && f.find("lm_head.weight") && f.find("transformer.h.1.attn.c_proj.weight"));
        QVERIFY(f.find("transformer.ln_f.weight"));
        QVERIFY(f.find("lm_head.weight")->data == f.find("transformer.wte.weight")->data);
        write_safetensors(dir + "/model.safetensors", f);
        write_raw(dir + "/tokens.i64", tok);
        write_raw(dir + "/logits.f32", ours);
        const QJsonObject o = python({"logits", QString::fromStdString(dir + "/model.safetensors"),
                                      QString::fromStdString(dir + "/tokens.i64"), QString::number(n), QString::number(t),
                                      QString::fromStdString(dir + "/logits.f32")});
        QVERIFY2(o.value("exit").toInt() == 0, "PyTorch did not load the weights strictly or computed other logits");
        QVERIFY(o.value("max_abs_diff").toDouble() < 1e-5);
        QCOMPARE(o.value("loaded").toInt(), static_cast<int>(f.tensors.size()));
    }

    void trainedInPyTorchContinuesHere() {
        if (!m_haveTorch) QSKIP(qPrintable(m_whyNot));
        const ModelSpec s = gpt(37, 12, 32, 2, 2);
        const std::int64_t n = 4, t = 12, V = 37;
        // a learnable sequence: each row counts up from a random start
        std::vector<std::int64_t> data(static_cast<std::size_t>(n * (t + 1)));
        for (std::int64_t r = 0; r < n; ++r)
            for (std::int64_t i = 0; i <= t; ++i) data[r * (t + 1) + i] = (r * 7 + i * 3) % V;
        Net start(s, n);
        const std::string dir = hrtest::temp_dir("gpt-train");
        write_safetensors(dir + "/start.safetensors", model_state_file(*start.model));
        write_raw(dir + "/data.i64", data);
        const QJsonObject o = python({"train", QString::fromStdString(dir + "/start.safetensors"),
                                      QString::fromStdString(dir + "/data.i64"), QString::number(n), QString::number(t),
                                      "20", QString::fromStdString(dir + "/torch.safetensors"),
                                      QString::fromStdString(dir + "/torch_logits.f32")});
        QCOMPARE(o.value("exit").toInt(), 0);
        const QJsonArray losses = o.value("losses").toArray();
        QVERIFY(losses.size() == 20 && losses.last().toDouble() < losses.first().toDouble());
        // the PyTorch file: nanoGPT names, no Headroom metadata; it loads into the same spec
        SafeTensorsFile tf = read_safetensors(dir + "/torch.safetensors");
        QVERIFY(tf.metadata.find("model_spec") == tf.metadata.end());
        auto be = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        OptimizerConfig adamw;
        adamw.kind = "adamw";
        adamw.lr = 3e-3;
        adamw.weight_decay = 0;
        TrainingState st(s, adamw, resolve_strategy(StrategyConfig{}, s, n), 1, *be, be->allocator(), *be, be->allocator());
        load_model_state(st.model(), tf, dir + "/torch.safetensors");
        // the same function: Headroom's logits equal PyTorch's
        std::vector<std::int64_t> x(static_cast<std::size_t>(n * t)), y(x.size());
        for (std::int64_t r = 0; r < n; ++r)
            for (std::int64_t i = 0; i < t; ++i) {
                x[r * t + i] = data[r * (t + 1) + i];
                y[r * t + i] = data[r * (t + 1) + i + 1];
            }
        Tensor xs = st.x_staging.slice0(0, n), ys = st.labels.slice0(0, n);
        be->copy_from_host(x.data(), xs);
        be->copy_from_host(y.data(), ys);
        {
            Tensor lg = st.model().forward(xs, false);
            std::vector<float> ours(static_cast<std::size_t>(lg.numel()));
            be->copy_to_host(lg, ours.data());
            QVERIFY2(max_diff(ours, read_f32(dir + "/torch_logits.f32")) < 1e-5,
                     qPrintable(QString::number(max_diff(ours, read_f32(dir + "/torch_logits.f32")))));
        }
        // and training continues from there: the loss keeps falling
        // (the master copy of the optimizer is the model's parameters in fp32: nothing else to load)
        double first = 0, last = 0;
        for (int step = 0; step < 20; ++step) {
            st.model().zero_grad();
            Tensor lg = st.model().forward(xs, true, static_cast<std::uint64_t>(step) * n);
            Tensor lv = lg.reshape({n * t, V});
            const double loss = be->cross_entropy_inplace(lv, ys.reshape({n * t}), true, 1.0f).loss;
            st.model().backward(lg);
            st.optimizer_step(3e-3);
            if (step == 0) first = loss;
            last = loss;
        }
        QVERIFY2(first < losses.first().toDouble(), "Headroom starts from the trained weights, not from scratch");
        QVERIFY2(last < first, qPrintable(QStringLiteral("%1 -> %2").arg(first).arg(last)));
    }

    void huggingFaceGpt2FileLoads() {
        if (!m_haveTorch) QSKIP(qPrintable(m_whyNot));
        const ModelSpec s = gpt(97, 20, 128, 2, 2);  // head size 64, as every GPT-2
        const std::int64_t n = 2, t = 20;
        Net a(s, n, 13);
        const auto tok = tokens(n * t, 97, 9);
        const auto want = a.logits(tok, n, t);
        const std::string dir = hrtest::temp_dir("gpt-hf");
        write_safetensors(dir + "/headroom.safetensors", model_state_file(*a.model));
        const QJsonObject o = python({"hf", QString::fromStdString(dir + "/headroom.safetensors"),
                                      QString::fromStdString(dir + "/hf.safetensors")});
        QCOMPARE(o.value("exit").toInt(), 0);
        SafeTensorsFile hf = read_safetensors(dir + "/hf.safetensors");
        QVERIFY(hf.find("h.0.attn.c_attn.weight") && hf.find("h.0.attn.bias") && !hf.find("lm_head.weight"));
        QCOMPARE(hf.find("h.0.attn.c_attn.weight")->shape, (Shape{128, 384}));  // Conv1D: [in, out]
        const ModelSpec back = model_spec_of(hf, "hf.safetensors");
        QVERIFY(is_gpt_layout(back));
        QCOMPARE(model_vocabulary(back), std::int64_t(97));
        QCOMPARE(model_sequence_length(back), std::int64_t(20));
        QCOMPARE(transformer_layer_count(back), 2);
        Net b(back, n, 99);  // different initial weights: all of them must come from the file
        load_model_state(*b.model, hf, "hf.safetensors");
        QVERIFY2(max_diff(b.logits(tok, n, t), want) < 1e-6, "a Hugging Face file gives the same model");
    }
};

QTEST_GUILESS_MAIN(GptInteropTest)
#include "test_gpt_interop.moc"
