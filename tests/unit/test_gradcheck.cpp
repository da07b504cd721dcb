// Finite-difference gradient checks in f64 for every layer and loss, and for whole models with
// residual blocks (tolerances as torch.autograd.gradcheck: eps 1e-6, atol 1e-5, rtol 1e-3).
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "gradcheck.h"
#include "nn/layer.h"
#include "nn/model.h"

using namespace hr;
using hrtest::compare;
using hrtest::Mismatch;
using hrtest::random_vec;

namespace {

struct LayerCase {
    LayerSpec spec;
    Shape in;  // per sample
    std::int64_t batch = 3;
};

}  // namespace

class GradCheckTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> be_ = make_cpu_backend(2, std::make_shared<MemoryLedger>());

    Tensor t(const Shape& s, DType dt = DType::f64) {
        return Tensor::empty(be_->allocator(), s, dt, MemCategory::other);
    }

    void check_layer(const LayerCase& c) {
        std::mt19937_64 g(42);
        auto layer = make_layer(c.spec);
        Shape out = layer->output_shape(c.in);
        LayerIO io;
        io.backend = be_.get();
        io.training = true;
        io.x = t(with_batch(c.batch, c.in));
        io.y = t(with_batch(c.batch, out));
        io.dy = t(with_batch(c.batch, out));
        io.dx = t(with_batch(c.batch, c.in));
        io.seed = 7;
        io.counter = 11;
        for (auto& p : layer->params(c.in)) {
            io.params.push_back(t(p.shape));
            io.grads.push_back(t(p.shape));
        }
        for (auto& b : layer->buffers(c.in)) {
            Tensor bt = t(b.shape, b.dtype);
            be_->fill(bt, b.init);
            io.buffers.push_back(bt);
        }
        for (auto& s : layer->saved(c.batch, c.in)) io.saved.push_back(t(s.shape, s.compute_dtype ? DType::f64 : s.dtype));
        std::size_t ws = layer->workspace_bytes(*be_, c.batch, c.in, DType::f64);
        if (ws) io.workspace = t({static_cast<std::int64_t>(ws)}, DType::u8);

        auto xv = random_vec(io.x.numel(), g);
        std::memcpy(io.x.data<double>(), xv.data(), xv.size() * 8);
        for (auto& p : io.params) {
            auto pv = random_vec(p.numel(), g, -0.5, 0.5);
            std::memcpy(p.data<double>(), pv.data(), pv.size() * 8);
        }
        auto r = random_vec(io.y.numel(), g);  // L = sum(y * r), so dL/dy = r
        std::memcpy(io.dy.data<double>(), r.data(), r.size() * 8);

        auto loss = [&]() {
            layer->forward(io);
            double s = 0;
            const double* y = io.y.data<double>();
            for (std::int64_t i = 0; i < io.y.numel(); ++i) s += y[i] * r[i];
            return s;
        };
        loss();
        for (auto& gr : io.grads) be_->fill(gr, 0.0);
        layer->backward(io);
        std::vector<Mismatch> bad;
        std::vector<double> dx(io.dx.data<double>(), io.dx.data<double>() + io.dx.numel());
        compare("dx", io.x.data<double>(), io.x.numel(), dx, loss, bad);
        for (std::size_t k = 0; k < io.params.size(); ++k) {
            std::vector<double> dp(io.grads[k].data<double>(), io.grads[k].data<double>() + io.grads[k].numel());
            compare(("param" + std::to_string(k)).c_str(), io.params[k].data<double>(), io.params[k].numel(), dp, loss,
                    bad);
        }
        for (auto& m : bad) qWarning("%s %s: analytic %.10g numeric %.10g", c.spec.type.c_str(), m.where.c_str(),
                                     m.analytic, m.numeric);
        QVERIFY2(bad.empty(), qPrintable(QString::fromStdString(c.spec.type) + " gradient mismatch"));
        // backward accumulates into parameter gradients: a second backward doubles them
        if (!io.grads.empty()) {
            std::vector<double> before(io.grads[0].data<double>(), io.grads[0].data<double>() + io.grads[0].numel());
            layer->backward(io);
            for (std::size_t i = 0; i < before.size(); ++i)
                QVERIFY(std::abs(io.grads[0].data<double>()[i] - 2 * before[i]) <= 1e-12 + 1e-9 * std::abs(before[i]));
        }
    }

    static LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
        LayerSpec s = default_layer(type);
        for (auto& [k, v] : a) s.attrs[k] = v;
        return s;
    }

private slots:
    void linear() { check_layer({L("linear", {{"in_features", 7}, {"out_features", 5}}), {7}}); }
    // LoRA (the model sets these attributes): W, b, A and B and the input gradient against finite differences,
    // on a sequence input too ((T, in) rows share the adapters)
    void linearLora() {
        check_layer({L("linear", {{"in_features", 7}, {"out_features", 5}, {"lora_rank", 2}, {"lora_alpha", 3}}), {7}});
    }
    void linearLoraSequence() {
        check_layer({L("linear", {{"in_features", 4}, {"out_features", 3}, {"bias", false}, {"lora_rank", 3}, {"lora_alpha", 6}}),
                     {5, 4}});
    }
    // LoRA dropout (peft's lora_dropout): the adapter's input dropped, the mask drawn again in backward
    void linearLoraDropout() {
        check_layer({L("linear", {{"in_features", 7}, {"out_features", 5}, {"lora_rank", 2}, {"lora_alpha", 3},
                                  {"lora_dropout", 0.4}}),
                     {7}});
        check_layer({L("linear", {{"in_features", 4}, {"out_features", 3}, {"bias", false}, {"lora_rank", 3},
                                  {"lora_alpha", 6}, {"lora_dropout", 0.2}}),
                     {5, 4}});
    }
    // LoRA dropout's masks, seen through the adapter's kept h = dropout(x) A^T with A = I and x = 1: over
    // 64 x 256 inputs the kept fraction is 1 - p (within 4.5 standard deviations), a kept value is exactly
    // 1 / (1 - p); at eval h = x; and the masks follow the run-wide sample, so a batch of 4 taken as two of 2
    // (micro-batches, ranks) draws the same masks as the whole batch
    void linearLoraDropoutMask() {
        const std::int64_t in = 256, N = 64;
        const double p = 0.3;
        LayerSpec s = L("linear", {{"in_features", in}, {"out_features", 2}, {"lora_rank", in}, {"lora_alpha", in},
                                   {"lora_dropout", p}});
        auto layer = make_layer(s);
        auto h_of = [&](std::int64_t batch, std::uint64_t first, bool training) {
            LayerIO io;
            io.backend = be_.get();
            io.training = training;
            io.x = t({batch, in});
            io.y = t({batch, 2});
            be_->fill(io.x, 1.0);
            for (auto& d : layer->params({in})) {
                io.params.push_back(t(d.shape));
                be_->fill(io.params.back(), 0.0);
            }
            Tensor& A = io.params[2];  // (weight, bias, lora_A, lora_B)
            for (std::int64_t i = 0; i < in; ++i) A.data<double>()[i * in + i] = 1.0;
            for (auto& d : layer->saved(batch, {in})) io.saved.push_back(t(d.shape, DType::f64));
            io.workspace = t({static_cast<std::int64_t>(layer->workspace_bytes(*be_, batch, {in}, DType::f64))}, DType::u8);
            io.seed = 11;
            io.first_sample = first;
            layer->forward(io);
            return std::vector<double>(io.saved[0].data<double>(), io.saved[0].data<double>() + batch * in);
        };
        const std::vector<double> h = h_of(N, 0, true);
        std::int64_t kept = 0;
        for (double v : h) {
            QVERIFY(v == 0.0 || v == 1.0 / (1.0 - double(float(p))));  // (p reaches the op as a float)
            kept += v != 0.0;
        }
        const double n = double(h.size()), frac = double(kept) / n;
        QVERIFY2(std::abs(frac - (1 - p)) <= 4.5 * std::sqrt(p * (1 - p) / n), qPrintable(QString::number(frac)));
        for (double v : h_of(N, 0, false)) QCOMPARE(v, 1.0);  // eval: identity
        const std::vector<double> whole = h_of(4, 8, true), a = h_of(2, 8, true), b = h_of(2, 10, true);
        QVERIFY(std::equal(a.begin(), a.end(), whole.begin()));
        QVERIFY(std::equal(b.begin(), b.end(), whole.begin() + 2 * in));
        QVERIFY(!std::equal(a.begin(), a.end(), b.begin()));
    }
    void linearNoBias() { check_layer({L("linear", {{"in_features", 4}, {"out_features", 3}, {"bias", false}}), {4}}); }
    void conv2d() {
        check_layer({L("conv2d", {{"in_channels", 2}, {"out_channels", 3}, {"kernel_size", 3}}), {2, 6, 5}});
    }
    void conv2dStridePadDilation() {
        check_layer({L("conv2d", {{"in_channels", 3}, {"out_channels", 2}, {"kernel_size", 3}, {"stride", 2},
                                  {"padding", 1}, {"dilation", 2}}),
                     {3, 7, 8}});
    }
    void maxpool() { check_layer({L("maxpool2d", {{"kernel_size", 2}}), {2, 6, 6}}); }
    void maxpoolStridePad() {
        check_layer({L("maxpool2d", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}), {2, 7, 6}});
    }
    void avgpool() { check_layer({L("avgpool2d", {{"kernel_size", 2}}), {2, 6, 4}}); }
    void avgpoolPad() { check_layer({L("avgpool2d", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}), {1, 5, 5}}); }
    void relu() { check_layer({L("relu"), {2, 3, 3}}); }
    void leakyRelu() { check_layer({L("leaky_relu", {{"negative_slope", 0.1}}), {10}}); }
    void tanhLayer() { check_layer({L("tanh"), {10}}); }
    void sigmoid() { check_layer({L("sigmoid"), {10}}); }
    void gelu() { check_layer({L("gelu"), {12}}); }
    void dropout() { check_layer({L("dropout", {{"p", 0.3}}), {20}}); }
    void flatten() { check_layer({L("flatten"), {2, 3, 2}}); }
    void batchnormTrain() { check_layer({L("batchnorm2d", {{"num_features", 3}}), {3, 4, 3}, 4}); }

    void crossEntropy_data() {
        QTest::addColumn<double>("smoothing");
        QTest::newRow("plain") << 0.0;
        QTest::newRow("label smoothing 0.1") << 0.1;
    }
    void crossEntropy() {
        QFETCH(double, smoothing);
        std::mt19937_64 g(3);
        const std::int64_t N = 4, K = 5;
        Tensor logits = t({N, K}), dlogits = t({N, K}), labels = t({N}, DType::i64);
        auto lv = random_vec(N * K, g, -2, 2);
        std::memcpy(logits.data<double>(), lv.data(), lv.size() * 8);
        for (std::int64_t i = 0; i < N; ++i) labels.data<std::int64_t>()[i] = (i * 3) % K;
        Tensor none;
        auto loss = [&] { return be_->softmax_cross_entropy(logits, labels, float(smoothing), none, 1.0f).loss; };
        be_->softmax_cross_entropy(logits, labels, float(smoothing), dlogits, 1.0f);
        std::vector<double> ana(dlogits.data<double>(), dlogits.data<double>() + N * K);
        std::vector<Mismatch> bad;
        compare("dlogits", logits.data<double>(), N * K, ana, loss, bad);
        QVERIFY(bad.empty());
        // value: plain CE of uniform logits is log(K)
        be_->fill(logits, 0.0);
        QVERIFY(std::abs(loss() - std::log(double(K))) < 1e-9);
    }
    void mse() {
        std::mt19937_64 g(4);
        const std::int64_t N = 3, K = 4;
        Tensor pred = t({N, K}), target = t({N, K}), dpred = t({N, K});
        auto pv = random_vec(N * K, g), tv = random_vec(N * K, g);
        std::memcpy(pred.data<double>(), pv.data(), pv.size() * 8);
        std::memcpy(target.data<double>(), tv.data(), tv.size() * 8);
        Tensor none;
        auto loss = [&] { return be_->mse_loss(pred, target, none, 1.0f).loss; };
        be_->mse_loss(pred, target, dpred, 1.0f);
        std::vector<double> ana(dpred.data<double>(), dpred.data<double>() + N * K);
        std::vector<Mismatch> bad;
        compare("dpred", pred.data<double>(), N * K, ana, loss, bad);
        QVERIFY(bad.empty());
    }

    // Whole models through the graph, residual blocks (identity and projection shortcuts) included.
    void modelWithResidualBlocks() {
        ModelSpec s;
        s.name = "res";
        s.input_shape = {2, 6, 6};
        s.num_classes = 3;
        LayerSpec res1 = default_layer("residual");
        res1.body = {L("conv2d", {{"in_channels", 2}, {"out_channels", 2}, {"kernel_size", 3}, {"padding", 1}}),
                     L("batchnorm2d", {{"num_features", 2}}), L("tanh")};
        LayerSpec res2 = default_layer("residual");
        res2.body = {L("conv2d", {{"in_channels", 2}, {"out_channels", 4}, {"kernel_size", 3}, {"stride", 2}, {"padding", 1}}),
                     L("gelu")};
        res2.shortcut = {L("conv2d", {{"in_channels", 2}, {"out_channels", 4}, {"kernel_size", 1}, {"stride", 2}})};
        s.layers = {L("conv2d", {{"in_channels", 2}, {"out_channels", 2}, {"kernel_size", 1}}), res1, L("sigmoid"), res2,
                    L("avgpool2d", {{"kernel_size", 3}}), L("flatten"), L("linear", {{"in_features", 4}, {"out_features", 3}})};
        ModelOptions o;
        o.batch = 3;
        o.dtype = DType::f64;
        o.seed = 5;
        Model m(s, *be_, o);
        std::mt19937_64 g(9);
        Tensor x = t({3, 2, 6, 6}), labels = t({3}, DType::i64), dlogits = t({3, 3});
        auto xv = random_vec(x.numel(), g);
        std::memcpy(x.data<double>(), xv.data(), xv.size() * 8);
        for (int i = 0; i < 3; ++i) labels.data<std::int64_t>()[i] = i;
        Tensor none;
        auto loss = [&] {
            Tensor logits = m.forward(x, true, 0);
            return be_->softmax_cross_entropy(logits, labels, 0.0f, none, 1.0f).loss;
        };
        m.zero_grad();
        Tensor logits = m.forward(x, true, 0);
        be_->softmax_cross_entropy(logits, labels, 0.0f, dlogits, 1.0f);
        m.backward(dlogits);
        std::vector<double> ana(m.gradients().data<double>(), m.gradients().data<double>() + m.flat_param_numel());
        std::vector<Mismatch> bad;
        compare("params", m.parameters().data<double>(), m.flat_param_numel(), ana, loss, bad, 400);
        for (auto& b : bad) qWarning("%s: analytic %.10g numeric %.10g", b.where.c_str(), b.analytic, b.numeric);
        QVERIFY(bad.empty());
        QCOMPARE(m.param_count(), analyze_model_spec(s).total_params);
    }

    // A model with LoRA (ModelOptions::lora_rank): the flat buffers hold only the adapters, whose gradients
    // match finite differences of the loss through the frozen convolutions, batch norm and linear layers;
    // with B at zero the model computes the base model's logits, bit for bit.
    void modelWithLora() {
        ModelSpec s;
        s.name = "lora";
        s.input_shape = {2, 6, 6};
        s.num_classes = 3;
        s.layers = {L("conv2d", {{"in_channels", 2}, {"out_channels", 3}, {"kernel_size", 3}, {"padding", 1}}),
                    L("batchnorm2d", {{"num_features", 3}}), L("tanh"), L("avgpool2d", {{"kernel_size", 2}}), L("flatten"),
                    L("linear", {{"in_features", 27}, {"out_features", 8}}), L("gelu"),
                    L("linear", {{"in_features", 8}, {"out_features", 3}})};
        ModelOptions o;
        o.batch = 3;
        o.dtype = DType::f64;
        o.seed = 5;
        Model base(s, *be_, o);
        o.lora_rank = 2;
        o.lora_alpha = 4;
        Model m(s, *be_, o);
        QCOMPARE(m.lora_param_count(), std::int64_t(2 * 27 + 8 * 2 + 2 * 8 + 3 * 2));
        QCOMPARE(m.frozen_param_count(), analyze_model_spec(s).total_params);
        std::mt19937_64 g(9);
        Tensor x = t({3, 2, 6, 6}), labels = t({3}, DType::i64), dlogits = t({3, 3});
        auto xv = random_vec(x.numel(), g);
        std::memcpy(x.data<double>(), xv.data(), xv.size() * 8);
        for (int i = 0; i < 3; ++i) labels.data<std::int64_t>()[i] = i;
        {  // B = 0: the base model's function
            Tensor a = base.forward(x, false, 0), b = m.forward(x, false, 0);
            QVERIFY(std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
        }
        // random B too, so every term of the adapters' gradients is exercised
        std::vector<double> init(m.parameters().data<double>(), m.parameters().data<double>() + m.flat_param_numel());
        for (std::size_t i = 0; i < init.size(); ++i) init[i] += 0.2 * (static_cast<double>(g() % 1000) / 1000.0 - 0.5);
        std::memcpy(m.parameters().data<double>(), init.data(), init.size() * 8);
        Tensor none;
        auto loss = [&] {
            Tensor logits = m.forward(x, true, 0);
            return be_->softmax_cross_entropy(logits, labels, 0.0f, none, 1.0f).loss;
        };
        m.zero_grad();
        Tensor logits = m.forward(x, true, 0);
        be_->softmax_cross_entropy(logits, labels, 0.0f, dlogits, 1.0f);
        m.backward(dlogits);
        std::vector<double> ana(m.gradients().data<double>(), m.gradients().data<double>() + m.flat_param_numel());
        std::vector<Mismatch> bad;
        compare("adapters", m.parameters().data<double>(), m.flat_param_numel(), ana, loss, bad, 400);
        for (auto& b : bad) qWarning("%s: analytic %.10g numeric %.10g", b.where.c_str(), b.analytic, b.numeric);
        QVERIFY(bad.empty());
        // the flat (trained) buffers are the adapters' (aligned), the frozen values are elsewhere
        QVERIFY(m.flat_param_numel() < m.lora_param_count() + 4 * 64);
        int frozen = 0;
        for (const NamedTensor& nt : m.state_dict()) frozen += nt.frozen;
        QCOMPARE(frozen, 2 + 2 + 2 + 2);  // conv, batch norm and two linear layers' weights and biases
    }
};

QTEST_APPLESS_MAIN(GradCheckTest)
#include "test_gradcheck.moc"
