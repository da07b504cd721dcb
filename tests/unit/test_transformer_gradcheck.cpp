// Finite-difference gradient checks in f64 for every transformer layer (nn/transformer_layers.h), the
// fused cross-entropy and whole GPT / ViT models through the graph (tolerances as
// torch.autograd.gradcheck: eps 1e-6, atol 1e-5, rtol 1e-3); the attention op against a naive T x T
// reference; and the low-precision paths against f64.
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "gradcheck.h"
#include "backend/cpu/cpu_transformer_math.h"
#include "nn/layer.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "train/checkpoint.h"

using namespace hr;
using hrtest::compare;
using hrtest::Mismatch;
using hrtest::random_vec;

namespace {

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

struct LayerCase {
    LayerSpec spec;
    Shape in;                  // per sample
    std::int64_t batch = 2;
    bool token_input = false;  // ids in [0, vocab)
    std::int64_t vocab = 0;
    LayerOptions options;
    bool frozen_base = false;  // LoRA: only the adapters have gradient tensors (the model's frozen base)
};

}  // namespace

class TransformerGradCheckTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> be_ = make_cpu_backend(2, std::make_shared<MemoryLedger>());

    Tensor t(const Shape& s, DType dt = DType::f64) { return Tensor::empty(be_->allocator(), s, dt, MemCategory::other); }
    static void put(Tensor& x, const std::vector<double>& v) { std::memcpy(x.data<double>(), v.data(), v.size() * 8); }
    static std::vector<double> get(const Tensor& x) {
        return std::vector<double>(x.data<double>(), x.data<double>() + x.numel());
    }

    void check_layer(const LayerCase& c) {
        std::mt19937_64 g(42);
        auto layer = make_layer(c.spec, c.options);
        const Shape out = layer->output_shape(c.in);
        LayerIO io;
        io.backend = be_.get();
        io.training = true;
        io.x = t(with_batch(c.batch, c.in), c.token_input ? DType::i64 : DType::f64);
        io.y = t(with_batch(c.batch, out));
        io.dy = t(with_batch(c.batch, out));
        if (!c.token_input) io.dx = t(with_batch(c.batch, c.in));
        io.seed = 7;
        io.first_sample = 3;
        io.counter = 3 * static_cast<std::uint64_t>(shape_numel(out));
        for (auto& p : layer->params(c.in)) {
            io.params.push_back(t(p.shape));
            io.grads.push_back(c.frozen_base && !p.lora_adapter() ? Tensor() : t(p.shape));
        }
        if (c.frozen_base) QVERIFY(layer->skips_frozen_gradients());
        for (auto& s : layer->saved(c.batch, c.in)) io.saved.push_back(t(s.shape, s.compute_dtype ? DType::f64 : s.dtype));
        const std::size_t ws = layer->workspace_bytes(*be_, c.batch, c.in, DType::f64);
        if (ws) io.workspace = t({static_cast<std::int64_t>(ws)}, DType::u8);
        if (c.token_input) {
            for (std::int64_t i = 0; i < io.x.numel(); ++i)
                io.x.data<std::int64_t>()[i] = static_cast<std::int64_t>((i * 7 + i / 3) % c.vocab);  // repeats
        } else {
            put(io.x, random_vec(static_cast<std::size_t>(io.x.numel()), g));
        }
        for (auto& p : io.params) put(p, random_vec(static_cast<std::size_t>(p.numel()), g, -0.5, 0.5));
        const auto r = random_vec(static_cast<std::size_t>(io.y.numel()), g);  // L = sum(y * r): dL/dy = r
        put(io.dy, r);
        auto loss = [&]() {
            layer->forward(io);
            double s = 0;
            const double* y = io.y.data<double>();
            for (std::int64_t i = 0; i < io.y.numel(); ++i) s += y[i] * r[i];
            return s;
        };
        loss();
        for (auto& gr : io.grads)
            if (gr.defined()) be_->fill(gr, 0.0);
        layer->backward(io);
        std::vector<Mismatch> bad;
        if (io.dx.defined()) compare("dx", io.x.data<double>(), io.x.numel(), get(io.dx), loss, bad);
        for (std::size_t k = 0; k < io.params.size(); ++k)
            if (io.grads[k].defined())
                compare("param" + std::to_string(k), io.params[k].data<double>(), io.params[k].numel(), get(io.grads[k]),
                        loss, bad);
        for (auto& m : bad)
            qWarning("%s %s: analytic %.10g numeric %.10g", c.spec.type.c_str(), m.where.c_str(), m.analytic, m.numeric);
        QVERIFY2(bad.empty(), qPrintable(QString::fromStdString(c.spec.type) + " gradient mismatch"));
        // parameter gradients accumulate: a second backward doubles them (each of them)
        std::vector<std::vector<double>> before;
        for (const Tensor& gr : io.grads) before.push_back(gr.defined() ? get(gr) : std::vector<double>());
        if (!io.grads.empty()) layer->backward(io);
        for (std::size_t k = 0; k < io.grads.size(); ++k)
            for (std::size_t i = 0; i < before[k].size(); ++i)
                QVERIFY(std::abs(io.grads[k].data<double>()[i] - 2 * before[k][i]) <= 1e-12 + 1e-9 * std::abs(before[k][i]));
    }

    // Naive attention in f64: S = q k^T / sqrt(D) (+ mask), P = softmax, O = P v; also the log-sum-exp.
    static void naive_attention(const std::vector<double>& qkv, std::int64_t B, std::int64_t T, std::int64_t C,
                                std::int64_t H, bool causal, std::vector<double>& out, std::vector<double>& lse) {
        const std::int64_t D = C / H;
        out.assign(static_cast<std::size_t>(B * T * C), 0.0);
        lse.assign(static_cast<std::size_t>(B * H * T), 0.0);
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < H; ++h)
                for (std::int64_t i = 0; i < T; ++i) {
                    std::vector<double> s(static_cast<std::size_t>(T), -INFINITY);
                    double mx = -INFINITY;
                    for (std::int64_t j = 0; j < T; ++j) {
                        if (causal && j > i) continue;
                        double d = 0;
                        for (std::int64_t e = 0; e < D; ++e)
                            d += qkv[(b * T + i) * 3 * C + h * D + e] * qkv[(b * T + j) * 3 * C + C + h * D + e];
                        s[j] = d / std::sqrt(double(D));
                        mx = std::max(mx, s[j]);
                    }
                    double sum = 0;
                    for (std::int64_t j = 0; j < T; ++j) sum += std::isinf(s[j]) ? 0.0 : std::exp(s[j] - mx);
                    lse[(b * H + h) * T + i] = mx + std::log(sum);
                    for (std::int64_t j = 0; j < T; ++j) {
                        if (std::isinf(s[j])) continue;
                        const double p = std::exp(s[j] - mx) / sum;
                        for (std::int64_t e = 0; e < D; ++e)
                            out[(b * T + i) * C + h * D + e] += p * qkv[(b * T + j) * 3 * C + 2 * C + h * D + e];
                    }
                }
    }

    ModelSpec tiny_gpt(bool dropout) {
        ModelSpec s;
        s.name = "gpt-gradcheck";
        s.input_shape = {5};
        s.num_classes = 11;
        const double p = dropout ? 0.2 : 0.0;
        s.layers = {L("token_embedding", {{"vocab_size", 11}, {"dim", 8}}),
                    L("position_embedding", {{"max_positions", 7}, {"dim", 8}}),
                    L("dropout", {{"p", p}}),
                    L("transformer_block", {{"dim", 8}, {"heads", 2}, {"dropout", p}}),
                    L("transformer_block", {{"dim", 8}, {"heads", 2}, {"hidden", 12}, {"dropout", p}}),
                    L("layernorm", {{"dim", 8}}),
                    L("lm_head", {{"dim", 8}, {"vocab_size", 11}})};
        return s;
    }

    // lora > 0: LoRA of that rank; the flat buffers (what is checked) hold only the adapters, moved off
    // their initial B = 0 so that every term of their gradients counts
    void check_model(const ModelSpec& s, bool tokens, bool selective, std::vector<int> ckpt = {}, int lora = 0,
                     double lora_dropout = 0) {
        ModelOptions o;
        o.batch = 2;
        o.dtype = DType::f64;
        o.seed = 5;
        o.recompute_attention = selective;
        o.checkpoint_blocks = ckpt;
        o.lora_rank = lora;
        o.lora_alpha = 3;
        o.lora_dropout = lora_dropout;
        Model m(s, *be_, o);
        std::mt19937_64 g(9);
        if (lora > 0) {
            QVERIFY(m.lora_param_count() > 0 && m.frozen_param_count() == analyze_model_spec(s).total_params);
            std::vector<double> p = get(m.parameters());
            for (double& v : p) v += 0.3 * (static_cast<double>(g() % 1000) / 1000.0 - 0.5);
            put(m.parameters(), p);
        }
        const std::int64_t N = 2;
        Tensor x = tokens ? t(with_batch(N, s.input_shape), DType::i64) : t(with_batch(N, s.input_shape));
        const std::int64_t rows = tokens ? N * s.input_shape[0] : N;
        Tensor targets = t({rows}, DType::i64);
        if (tokens) {
            for (std::int64_t i = 0; i < x.numel(); ++i) x.data<std::int64_t>()[i] = (i * 5 + 3) % s.num_classes;
        } else {
            put(x, random_vec(static_cast<std::size_t>(x.numel()), g));
        }
        for (std::int64_t i = 0; i < rows; ++i) targets.data<std::int64_t>()[i] = (i * 3 + 1) % s.num_classes;
        Tensor scratch = t({rows, s.num_classes});
        auto loss = [&] {
            Tensor logits = m.forward(x, true, 4);
            be_->copy(logits, scratch);
            return be_->cross_entropy_inplace(scratch, targets, false, 1.0f).loss;
        };
        m.zero_grad();
        Tensor logits = m.forward(x, true, 4);
        Tensor lv = logits.reshape({rows, s.num_classes});
        be_->cross_entropy_inplace(lv, targets, true, 1.0f);  // the gradient overwrites the logits
        m.backward(logits);
        std::vector<double> ana = get(m.gradients());
        std::vector<Mismatch> bad;
        compare("params", m.parameters().data<double>(), m.flat_param_numel(), ana, loss, bad, 200);
        for (auto& b : bad) qWarning("%s: analytic %.10g numeric %.10g", b.where.c_str(), b.analytic, b.numeric);
        QVERIFY(bad.empty());
        QCOMPARE(m.param_count(), analyze_model_spec(s).total_params);
    }

private slots:
    void tokenEmbedding() {
        check_layer({L("token_embedding", {{"vocab_size", 6}, {"dim", 5}}), {7}, 3, true, 6});
    }
    void positionEmbedding() {
        // a sequence shorter than the table: only its first rows are used (and get gradients)
        check_layer({L("position_embedding", {{"max_positions", 9}, {"dim", 4}}), {6, 4}});
    }
    void layerNorm() { check_layer({L("layernorm", {{"dim", 6}}), {5, 6}}); }
    void layerNormNoBias() { check_layer({L("layernorm", {{"dim", 7}, {"bias", false}, {"eps", 1e-3}}), {7}, 4}); }
    void geluTanh() { check_layer({L("gelu", {{"tanh", true}}), {3, 5}}); }
    void linearOnSequences() { check_layer({L("linear", {{"in_features", 5}, {"out_features", 3}}), {4, 5}}); }
    void causalSelfAttention() { check_layer({L("self_attention", {{"dim", 8}, {"heads", 2}}), {6, 8}}); }
    void selfAttentionNotCausal() {
        check_layer({L("self_attention", {{"dim", 6}, {"heads", 3}, {"causal", false}, {"bias", false}}), {5, 6}});
    }
    void selfAttentionDropout() {
        check_layer({L("self_attention", {{"dim", 8}, {"heads", 2}, {"dropout", 0.3}}), {7, 8}});
    }
    void selfAttentionSelectiveRecompute() {
        LayerCase c{L("self_attention", {{"dim", 8}, {"heads", 4}, {"dropout", 0.2}}), {6, 8}};
        c.options.recompute_attention = true;
        check_layer(c);
    }
    void selfAttentionSeveralTiles() {
        // 70 tokens: two query tiles of the CPU kernel (64 rows each), causal and not
        check_layer({L("self_attention", {{"dim", 4}, {"heads", 2}}), {70, 4}, 1});
        check_layer({L("self_attention", {{"dim", 4}, {"heads", 1}, {"causal", false}}), {67, 4}, 1});
    }
    void mlpTanh() { check_layer({L("mlp", {{"dim", 5}, {"hidden", 9}}), {4, 5}}); }
    void mlpErfDropout() {
        check_layer({L("mlp", {{"dim", 4}, {"gelu_tanh", false}, {"dropout", 0.25}, {"bias", false}}), {3, 4}});
    }
    void transformerBlock() { check_layer({L("transformer_block", {{"dim", 8}, {"heads", 2}}), {5, 8}}); }
    void transformerBlockDropoutNoBias() {
        check_layer({L("transformer_block", {{"dim", 6}, {"heads", 3}, {"hidden", 10}, {"dropout", 0.3}, {"bias", false}}),
                     {4, 6}});
    }
    void transformerBlockViT() {
        check_layer({L("transformer_block", {{"dim", 8}, {"heads", 2}, {"causal", false}, {"gelu_tanh", false}}), {5, 8}});
    }
    void transformerBlockSelective() {
        LayerCase c{L("transformer_block", {{"dim", 8}, {"heads", 2}, {"dropout", 0.1}}), {6, 8}};
        c.options.recompute_attention = true;
        c.options.transformer_layers = 4;
        check_layer(c);
    }
    // LoRA on the projections (the model sets lora_rank and lora_alpha): the adapters' A and B, every base
    // weight and the input against finite differences, B random so that every term counts; then with the base
    // frozen (no gradient tensors: the layer norms' go to the layer's scratch), the adapters' and the input's
    void transformerBlockLora() {
        check_layer({L("transformer_block", {{"dim", 8}, {"heads", 2}, {"lora_rank", 2}, {"lora_alpha", 3}}), {5, 8}});
        LayerCase c{L("transformer_block", {{"dim", 6}, {"heads", 3}, {"hidden", 10}, {"dropout", 0.3}, {"bias", false},
                                            {"lora_rank", 3}, {"lora_alpha", 6}}),
                    {4, 6}};
        c.frozen_base = true;
        check_layer(c);
    }
    void transformerBlockLoraFrozenSelective() {
        LayerCase c{L("transformer_block", {{"dim", 8}, {"heads", 2}, {"dropout", 0.1}, {"lora_rank", 2}, {"lora_alpha", 2}}),
                    {6, 8}};
        c.options.recompute_attention = true;
        c.frozen_base = true;
        check_layer(c);
    }
    // LoRA dropout (peft's lora_dropout; the model sets the attribute): each adapter's input dropped with its
    // own mask, which backward draws again (nothing kept): a mask backward drew otherwise than forward would
    // miss finite differences. Every projection of each layer, the base trained or frozen, selective recompute
    void loraDropoutGradcheck() {
        check_layer({L("transformer_block", {{"dim", 8}, {"heads", 2}, {"lora_rank", 2}, {"lora_alpha", 3}, {"lora_dropout", 0.4}}),
                     {5, 8}});
        LayerCase c{L("transformer_block", {{"dim", 6}, {"heads", 3}, {"hidden", 10}, {"dropout", 0.3}, {"bias", false},
                                            {"lora_rank", 3}, {"lora_alpha", 6}, {"lora_dropout", 0.25}}),
                    {4, 6}};
        c.frozen_base = true;
        check_layer(c);
        LayerCase sel{L("self_attention", {{"dim", 8}, {"heads", 2}, {"dropout", 0.2}, {"lora_rank", 2}, {"lora_alpha", 5},
                                           {"lora_dropout", 0.5}}),
                      {6, 8}};
        sel.options.recompute_attention = true;
        check_layer(sel);
        LayerCase m{L("mlp", {{"dim", 5}, {"hidden", 9}, {"lora_rank", 1}, {"lora_alpha", 1}, {"lora_dropout", 0.3}}), {4, 5}};
        m.frozen_base = true;
        check_layer(m);
        check_layer({L("mlp", {{"dim", 5}, {"lora_rank", 2}, {"lora_alpha", 2}, {"lora_dropout", 0.3}}), {5}});  // (B, C)
    }
    void selfAttentionAndMlpLora() {
        check_layer({L("self_attention", {{"dim", 8}, {"heads", 2}, {"lora_rank", 2}, {"lora_alpha", 5}}), {6, 8}});
        LayerCase c{L("mlp", {{"dim", 5}, {"hidden", 9}, {"lora_rank", 1}, {"lora_alpha", 1}}), {4, 5}};
        c.frozen_base = true;
        check_layer(c);
    }
    void lmHeadUntied() { check_layer({L("lm_head", {{"dim", 5}, {"vocab_size", 7}, {"tied", false}}), {3, 5}}); }
    void patchEmbedding() {
        check_layer({L("patch_embedding", {{"in_channels", 2}, {"dim", 5}, {"patch_size", 2}}), {2, 4, 6}});
    }
    void classToken() { check_layer({L("class_token", {{"dim", 4}}), {3, 4}, 3}); }
    void classTokenPool() { check_layer({L("class_token_pool"), {4, 5}, 3}); }

    void crossEntropyInPlace() {
        std::mt19937_64 g(3);
        const std::int64_t N = 6, V = 9;
        Tensor logits = t({N, V}), work = t({N, V}), targets = t({N}, DType::i64);
        put(logits, random_vec(N * V, g, -3, 3));
        for (std::int64_t i = 0; i < N; ++i) targets.data<std::int64_t>()[i] = (i * 4) % V;
        // reference: mean over rows of logsumexp(z) - z_y
        double ref = 0;
        for (std::int64_t r = 0; r < N; ++r) {
            double mx = -INFINITY, s = 0;
            for (std::int64_t k = 0; k < V; ++k) mx = std::max(mx, logits.data<double>()[r * V + k]);
            for (std::int64_t k = 0; k < V; ++k) s += std::exp(logits.data<double>()[r * V + k] - mx);
            ref += mx + std::log(s) - logits.data<double>()[r * V + targets.data<std::int64_t>()[r]];
        }
        ref /= double(N);
        auto loss = [&] {
            be_->copy(logits, work);
            return be_->cross_entropy_inplace(work, targets, false, 1.0f).loss;
        };
        QVERIFY(std::abs(loss() - ref) < 1e-12);
        QVERIFY(get(work) == get(logits));  // without want_grad the logits stay as they were
        be_->copy(logits, work);
        const LossResult lr = be_->cross_entropy_inplace(work, targets, true, 0.5f);
        QVERIFY(std::abs(lr.loss - ref) < 1e-12);
        std::vector<double> ana = get(work);  // the gradient, in the logits' memory
        for (auto& v : ana) v *= 2.0;         // grad_scale 0.5
        std::vector<Mismatch> bad;
        compare("dlogits", logits.data<double>(), N * V, ana, loss, bad);
        QVERIFY(bad.empty());
    }

    void attentionMatchesNaive_data() {
        QTest::addColumn<int>("T");
        QTest::addColumn<bool>("causal");
        QTest::newRow("T=5 causal") << 5 << true;
        QTest::newRow("T=130 causal (3 tiles)") << 130 << true;
        QTest::newRow("T=65 full") << 65 << false;
    }
    void attentionMatchesNaive() {
        QFETCH(int, T);
        QFETCH(bool, causal);
        const std::int64_t B = 2, C = 12, H = 3;
        std::mt19937_64 g(T);
        Tensor qkv = t({B, T, 3 * C}), out = t({B, T, C}), lse = t({B, H, T}, DType::f32);
        auto v = random_vec(static_cast<std::size_t>(qkv.numel()), g, -2, 2);
        put(qkv, v);
        AttentionParams p;
        p.heads = int(H);
        p.causal = causal;
        Tensor ws = t({static_cast<std::int64_t>(be_->attention_workspace_bytes(B, T, C, int(H), DType::f64))}, DType::u8);
        be_->attention_forward(qkv, out, lse, p, ws);
        std::vector<double> ro, rl;
        naive_attention(v, B, T, C, H, causal, ro, rl);
        double e = 0, el = 0;
        for (std::size_t i = 0; i < ro.size(); ++i) e = std::max(e, std::abs(ro[i] - out.data<double>()[i]));
        for (std::size_t i = 0; i < rl.size(); ++i) el = std::max(el, std::abs(rl[i] - lse.data<float>()[i]));
        QVERIFY2(e < 1e-12, qPrintable(QString::number(e)));
        QVERIFY2(el < 1e-5, qPrintable(QString::number(el)));  // lse is stored as f32
        // the same in f32 and bf16 storage (computed in f32): close to the f64 reference
        for (DType dt : {DType::f32, DType::bf16}) {
            Tensor q2 = t({B, T, 3 * C}, dt), o2 = t({B, T, C}, dt), o2f = t({B, T, C}, DType::f64);
            be_->copy(qkv, q2);
            Tensor ws2 = t({static_cast<std::int64_t>(be_->attention_workspace_bytes(B, T, C, int(H), dt))}, DType::u8);
            be_->attention_forward(q2, o2, lse, p, ws2);
            be_->copy(o2, o2f);
            // bf16: the inputs themselves are rounded to 8 bits of mantissa
            const double tol = dt == DType::f32 ? 1e-5 : 5e-2;
            double err = 0;
            for (std::size_t i = 0; i < ro.size(); ++i) err = std::max(err, std::abs(ro[i] - o2f.data<double>()[i]));
            QVERIFY2(err < tol, qPrintable(QStringLiteral("%1: %2").arg(dtype_name(dt)).arg(err)));
        }
    }

    void fastMathAgreesWithTheReference() {
        // the CPU kernels' inline dropout draw is backend.h's counter_uniform, bit for bit
        for (std::uint64_t c = 0; c < 100000; c += 7)
            QCOMPARE(cpu::counter_uniform_inline(12345, c * 1000003), counter_uniform(12345, c * 1000003));
        // exp within 3e-7 relative over the normal range; GELU (tanh form) against its definition
        for (float x = -80.f; x < 80.f; x += 0.01f) {
            const double e = std::exp(double(x));
            QVERIFY(std::abs(cpu::exp_fast(x) - e) <= 3e-7 * e);
        }
        for (float x = -6.f; x < 6.f; x += 0.001f) {
            const double ref = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * double(x) * x * x)));
            QVERIFY(std::abs(cpu::gelu_tanh_value(x) - ref) <= 1e-6 + 1e-5 * std::abs(ref));
        }
    }

    void attentionWorkspaceIsLinearInT() {
        // O(T) per head, not O(T^2): doubling T at most doubles the scratch (plus the fixed tile)
        const std::size_t a = be_->attention_workspace_bytes(8, 1024, 768, 12, DType::bf16);
        const std::size_t b = be_->attention_workspace_bytes(8, 2048, 768, 12, DType::bf16);
        QVERIFY(b <= 2 * a + 1024);
        QVERIFY(a < std::size_t(8) * 12 * 1024 * 1024 * 4 / 16);  // far below one f32 T x T per head
    }

    void gptModel() { check_model(tiny_gpt(false), true, false); }
    void gptModelDropoutSelective() { check_model(tiny_gpt(true), true, true); }
    void gptModelCheckpointedBlocks() {
        const ModelSpec s = tiny_gpt(true);
        const int nb = static_cast<int>(checkpoint_blocks(s).size());
        std::vector<int> all;
        for (int i = 0; i < nb; ++i) all.push_back(i);
        check_model(s, true, false, all);
    }
    // LoRA on a GPT (tied head: the frozen embedding serves both): the adapters' gradients through every
    // block and the frozen rest; the adapters of each block's four projections; with B = 0 the base model's
    // logits, bit for bit
    void gptModelLora() {
        const ModelSpec s = tiny_gpt(true);
        check_model(s, true, false, {}, 2);
        check_model(s, true, true, {0, 1}, 1);  // selective recompute and checkpointed blocks
        // LoRA dropout through the graph, with blocks checkpointed: the recompute draws the same masks
        check_model(s, true, false, {}, 2, 0.3);
        check_model(s, true, true, {0, 1}, 1, 0.3);
        ModelOptions o;
        o.batch = 2;
        o.dtype = DType::f64;
        o.seed = 5;
        Model base(tiny_gpt(false), *be_, o);
        o.lora_rank = 4;
        Model m(tiny_gpt(false), *be_, o);
        const std::int64_t C = 8, r = 4;
        QCOMPARE(m.lora_param_count(), r * ((C + 3 * C) + (C + C) + (C + 32) + (32 + C)) + r * ((C + 3 * C) + (C + C) + (C + 12) + (12 + C)));
        Tensor x = t({2, 5}, DType::i64);
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data<std::int64_t>()[i] = (i * 5 + 3) % 11;
        Tensor a = base.forward(x, false, 0), b = m.forward(x, false, 0);
        QVERIFY(std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
        int frozen = 0, adapters = 0;
        const NamedTensor *wte = nullptr, *head = nullptr;
        const std::vector<NamedTensor> sd = m.state_dict();  // (the pointers below are into it)
        for (const NamedTensor& nt : sd) {
            frozen += nt.frozen;
            adapters += nt.trainable;
            if (nt.name == "transformer.wte.weight") wte = &nt;
            if (nt.name == "lm_head.weight") head = &nt;
        }
        QVERIFY(wte && head && wte->frozen && head->frozen && head->tied);
        QCOMPARE(head->tensor.raw(), wte->tensor.raw());
        QCOMPARE(adapters, 2 * 4 * 2);  // two blocks, four projections, A and B
        QCOMPARE(frozen, 2 + 2 * 12 + 2 + 1);  // embeddings, the blocks' 12 tensors, ln_f, the tied head
    }
    // A LoRA GPT's weights read into a model without adapters (eval, --init-from, the what-ifs): each block
    // projection's adapters merged into its weight as W + s B A (PEFT's merge_and_unload), found by name;
    // the merged model computes the adapted one's logits, and not the base's
    void gptLoraMergesIntoAModelWithoutAdapters() {
        ModelOptions o;
        o.batch = 2;
        o.dtype = DType::f32;
        o.seed = 5;
        o.lora_rank = 3;
        o.lora_alpha = 6;
        Model m(tiny_gpt(false), *be_, o);
        std::mt19937_64 g(4);
        float* p = m.parameters().data<float>();
        for (std::int64_t i = 0; i < m.flat_param_numel(); ++i) p[i] += 0.4f * (static_cast<float>(g() % 1000) / 1000.0f - 0.5f);
        SafeTensorsFile f = model_state_file(m);
        f.metadata["lora_scale"] = "2";
        o.lora_rank = 0;
        o.seed = 77;  // other initial weights: every value must come from the file
        Model plain(tiny_gpt(false), *be_, o);
        o.seed = 5;
        Model base(tiny_gpt(false), *be_, o);
        load_model_state(plain, f, "lora.safetensors");
        Tensor x = t({2, 5}, DType::i64);
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data<std::int64_t>()[i] = (i * 3 + 1) % 11;
        Tensor a = m.forward(x, false, 0);
        std::vector<float> adapted(a.data<float>(), a.data<float>() + a.numel());
        Tensor b = plain.forward(x, false, 0);
        std::vector<float> merged(b.data<float>(), b.data<float>() + b.numel());
        Tensor c = base.forward(x, false, 0);
        double err = 0, moved = 0;
        for (std::size_t i = 0; i < adapted.size(); ++i) {
            err = std::max(err, double(std::abs(adapted[i] - merged[i])));
            moved = std::max(moved, double(std::abs(adapted[i] - c.data<float>()[i])));
        }
        QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
        QVERIFY2(moved > 1e-2, qPrintable(QString::number(moved)));
    }
    void vitModel() {
        ModelSpec s;
        s.name = "vit-gradcheck";
        s.input_shape = {1, 4, 4};
        s.num_classes = 3;
        s.layers = {L("patch_embedding", {{"in_channels", 1}, {"dim", 6}, {"patch_size", 2}}),
                    L("class_token", {{"dim", 6}}),
                    L("position_embedding", {{"max_positions", 5}, {"dim", 6}}),
                    L("transformer_block", {{"dim", 6}, {"heads", 2}, {"causal", false}, {"gelu_tanh", false}}),
                    L("layernorm", {{"dim", 6}}),
                    L("class_token_pool"),
                    L("linear", {{"in_features", 6}, {"out_features", 3}})};
        check_model(s, false, false);
    }

    void tiedHeadSharesOneGradient() {
        // the head has no parameters of its own, and its state_dict entry is the embedding's tensor
        const ModelSpec s = tiny_gpt(false);
        ModelOptions o;
        o.batch = 2;
        o.dtype = DType::f64;
        Model m(s, *be_, o);
        const auto sd = m.state_dict();
        const NamedTensor* wte = nullptr;
        const NamedTensor* head = nullptr;
        for (const auto& nt : sd) {
            if (nt.name == "transformer.wte.weight") wte = &nt;
            if (nt.name == "lm_head.weight") head = &nt;
        }
        QVERIFY(wte && head);
        QVERIFY(head->tied && !wte->tied);
        QCOMPARE(head->tensor.raw(), wte->tensor.raw());
        const std::int64_t V = 11, C = 8, F1 = 32, F2 = 12;
        const std::int64_t per_block = [&](std::int64_t F) { return 4 * C + 3 * C * C + 3 * C + C * C + C + 2 * C * F + F + C; }(F1);
        const std::int64_t block2 = 4 * C + 3 * C * C + 3 * C + C * C + C + 2 * C * F2 + F2 + C;
        QCOMPARE(m.param_count(), V * C + 7 * C + per_block + block2 + 2 * C);
    }
};

QTEST_APPLESS_MAIN(TransformerGradCheckTest)
#include "test_transformer_gradcheck.moc"
