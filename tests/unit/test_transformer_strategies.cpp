// Memory strategies on a small GPT (token inputs, tied head, dropout everywhere) on the CPU backend:
// checkpointing per block and selective attention recompute give bit-identical gradients, accumulation
// equals one batch, offload equals the on-device update, bf16 and fp16 train, AdamW decays the matrices
// only, and gradient clipping scales the update by max_norm / norm.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "nn/transformer_spec.h"
#include "plan/planner.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

ModelSpec small_gpt(double p = 0.1) {
    ModelSpec s;
    s.name = "gpt-test";
    s.input_shape = {16};
    s.num_classes = 32;
    s.layers = {L("token_embedding", {{"vocab_size", 32}, {"dim", 16}}),
                L("position_embedding", {{"max_positions", 16}, {"dim", 16}}),
                L("dropout", {{"p", p}}),
                L("transformer_block", {{"dim", 16}, {"heads", 2}, {"dropout", p}}),
                L("transformer_block", {{"dim", 16}, {"heads", 2}, {"dropout", p}}),
                L("transformer_block", {{"dim", 16}, {"heads", 2}, {"dropout", p}}),
                L("layernorm", {{"dim", 16}}),
                L("lm_head", {{"dim", 16}, {"vocab_size", 32}})};
    return s;
}

// The CPU backend, counting the FLOPs it is asked for (a multiply-add is 2): every matrix product, and
// the attention core's two products (q k^T and p v; below the diagonal only when causal, as the kernels).
class FlopCountingCpu : public CpuBackend {
public:
    using CpuBackend::CpuBackend;
    double flops = 0;
protected:
    void do_gemm(bool ta, bool tb, float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& c) override {
        const double K = static_cast<double>(ta ? a.dim(0) : a.dim(1));
        flops += 2.0 * static_cast<double>(c.dim(0)) * static_cast<double>(c.dim(1)) * K;
        CpuBackend::do_gemm(ta, tb, alpha, a, b, beta, c);
    }
    void do_attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                              Tensor& workspace) override {
        const double B = static_cast<double>(qkv.dim(0)), T = static_cast<double>(qkv.dim(1)),
                     C = static_cast<double>(qkv.dim(2)) / 3;
        flops += (p.causal ? 0.5 : 1.0) * 4 * T * T * C * B;
        CpuBackend::do_attention_forward(qkv, out, lse, p, workspace);
    }
};

struct Run {
    std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>();
    std::shared_ptr<MemoryLedger> host_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be;
    std::unique_ptr<Backend> host = make_cpu_backend(2, host_ledger);
    std::unique_ptr<TrainingState> st;

    Run(const ModelSpec& spec, const StrategyConfig& s, std::int64_t batch, OptimizerConfig o = {},
        bool count_flops = false)
        : be(count_flops ? std::make_unique<FlopCountingCpu>(2, ledger) : make_cpu_backend(2, ledger)) {
        if (o.kind == "sgd" && o.lr == 0.01) {
            o.kind = "adamw";
            o.lr = 3e-3;
        }
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(s, spec, batch), 3, *be, be->allocator(), *host,
                                             host->allocator());
    }
    // One optimizer step over host tokens x and targets y (B x T each), as the trainer does it.
    double step(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y, std::int64_t B,
                std::uint64_t step_no, double lr = 3e-3) {
        Model& m = st->model();
        const std::int64_t T = m.spec().input_shape[0], V = m.spec().num_classes;
        const std::int64_t M = st->strategy().micro_batch;
        m.zero_grad();
        double loss = 0;
        for (std::int64_t r0 = 0; r0 < B; r0 += M) {
            const std::int64_t n = std::min(M, B - r0);
            Tensor xs = st->x_staging.slice0(0, n), ys = st->labels.slice0(0, n);
            be->copy_from_host(x.data() + r0 * T, xs);
            be->copy_from_host(y.data() + r0 * T, ys);
            Tensor logits = m.forward(xs, true, step_no * static_cast<std::uint64_t>(B) + static_cast<std::uint64_t>(r0));
            const float share = float(double(n) / double(B));
            Tensor lv = logits.reshape({n * T, V});
            loss += be->cross_entropy_inplace(lv, ys.reshape({n * T}), true, share * st->loss_scale()).loss * share;
            m.backward(logits);
        }
        st->optimizer_step(lr);
        return loss;
    }
    std::vector<float> f32(const Tensor& t) {
        std::vector<float> out(static_cast<std::size_t>(t.numel()));
        CpuAllocator a;
        Tensor tmp = Tensor::empty(a, t.shape(), DType::f32, MemCategory::other);
        be->copy(t, tmp);
        std::memcpy(out.data(), tmp.raw(), out.size() * 4);
        return out;
    }
    std::vector<float> params() { return f32(st->model().parameters()); }
    std::vector<float> grads() { return f32(st->model().gradients()); }
};

// "text" whose next token is predictable: x_t = (3 t + 5 s) mod V per sequence s, y = the next one
void batch(std::int64_t B, std::int64_t T, std::int64_t V, std::vector<std::int64_t>& x, std::vector<std::int64_t>& y,
           int shift = 0) {
    x.resize(static_cast<std::size_t>(B * T));
    y.resize(x.size());
    for (std::int64_t s = 0; s < B; ++s)
        for (std::int64_t t = 0; t < T; ++t) {
            x[s * T + t] = (3 * (t + shift) + 5 * s) % V;
            y[s * T + t] = (3 * (t + shift + 1) + 5 * s) % V;
        }
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

}  // namespace

class TransformerStrategiesTest : public QObject {
    Q_OBJECT

private slots:
    void recomputeIsBitIdentical_data() {
        QTest::addColumn<QString>("checkpoint");
        for (const char* c : {"all", "every:2", "list:1,3", "attention", "attention+all", "attention+every:2"})
            QTest::newRow(c) << c;
    }
    void recomputeIsBitIdentical() {
        QFETCH(QString, checkpoint);
        const ModelSpec spec = small_gpt();
        std::vector<std::int64_t> x, y;
        batch(4, 16, 32, x, y);
        StrategyConfig plain, ck;
        ck.checkpoint = checkpoint.toStdString();
        Run a(spec, plain, 4), b(spec, ck, 4);
        for (std::uint64_t s = 0; s < 2; ++s) {
            const double la = a.step(x, y, 4, s), lb = b.step(x, y, 4, s);
            QCOMPARE(la, lb);
            QVERIFY(same(a.grads(), b.grads()));
        }
        QVERIFY(same(a.params(), b.params()));
        // and it saves activation memory
        QVERIFY(at(b.ledger->snapshot().live, MemCategory::activations) <
                at(a.ledger->snapshot().live, MemCategory::activations));
    }

    // A recompute stops short of the output projection of a layer whose output is kept (the block's last),
    // but runs it in full where the output lives in the recompute arena (a layernorm after it in the same
    // block reads it): both give the gradients of the run without checkpointing, bit for bit.
    void recomputeOfKeptAndArenaOutputsIsBitIdentical_data() {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<QString>("checkpoint");
        for (const char* l : {"block+layernorm", "attention,mlp"})
            for (const char* c : {"all", "attention+all", "list:1,2"}) QTest::newRow((std::string(l) + " " + c).c_str()) << l << c;
    }
    void recomputeOfKeptAndArenaOutputsIsBitIdentical() {
        QFETCH(QString, layout);
        QFETCH(QString, checkpoint);
        const double p = 0.1;
        ModelSpec spec = small_gpt(p);
        const LayerSpec ln = L("layernorm", {{"dim", 16}});
        const LayerSpec tb = L("transformer_block", {{"dim", 16}, {"heads", 2}, {"dropout", p}});
        const LayerSpec sa = L("self_attention", {{"dim", 16}, {"heads", 2}, {"dropout", p}});
        const LayerSpec mlp = L("mlp", {{"dim", 16}, {"dropout", p}});
        std::vector<LayerSpec> body = layout == "block+layernorm" ? std::vector<LayerSpec>{tb, ln, tb, ln, tb, ln}
                                                                  : std::vector<LayerSpec>{sa, mlp, sa, ln, mlp, ln};
        spec.layers.erase(spec.layers.begin() + 3, spec.layers.end() - 1);  // keep the embeddings and the head
        spec.layers.insert(spec.layers.begin() + 3, body.begin(), body.end());
        std::vector<std::int64_t> x, y;
        batch(4, 16, 32, x, y);
        StrategyConfig plain, ck;
        ck.checkpoint = checkpoint.toStdString();
        Run a(spec, plain, 4), b(spec, ck, 4);
        for (std::uint64_t s = 0; s < 2; ++s) {
            const double la = a.step(x, y, 4, s), lb = b.step(x, y, 4, s);
            QCOMPARE(la, lb);
            QVERIFY(same(a.grads(), b.grads()));
        }
        QVERIFY(same(a.params(), b.params()));
        QVERIFY(at(b.ledger->snapshot().live, MemCategory::activations) <
                at(a.ledger->snapshot().live, MemCategory::activations));
    }

    // The planner's recompute FLOPs are the work a checkpointed step repeats: counted on the backend, a
    // step with checkpointing minus the same step without. The block whose tensors the arena still holds
    // after the forward is not recomputed, and a block's kept output stops at its MLP's first projection;
    // what the counter does not see (layer norms, GELU, residual sums) is a few per cent here.
    void plannedRecomputeFlopsAreTheRepeatedWork_data() {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<int>("accumulate");
        // (every:2 would be the embeddings and block 2, whose tensors the arena holds: nothing to count)
        for (const char* c : {"all", "list:1,3", "list:1,2"}) QTest::newRow(c) << c << 1;
        QTest::newRow("all, 2 micro-batches") << "all" << 2;
    }
    void plannedRecomputeFlopsAreTheRepeatedWork() {
        QFETCH(QString, checkpoint);
        QFETCH(int, accumulate);
        ModelSpec spec = small_gpt(0.0);
        for (auto& l : spec.layers) {  // wide enough that matrix products dominate, as in real models
            if (l.attrs.contains("dim")) l.attrs["dim"] = 96;
            if (l.attrs.contains("heads")) l.attrs["heads"] = 4;
        }
        const std::int64_t B = 4, T = 16, V = 32;
        std::vector<std::int64_t> x, y;
        batch(B, T, V, x, y);
        StrategyConfig plain, ck;
        plain.accumulate = ck.accumulate = accumulate;
        ck.checkpoint = checkpoint.toStdString();
        Run a(spec, plain, B, {}, true), b(spec, ck, B, {}, true);
        a.step(x, y, B, 0);
        b.step(x, y, B, 0);
        const double measured = static_cast<FlopCountingCpu&>(*b.be).flops - static_cast<FlopCountingCpu&>(*a.be).flops;
        PlanRequest req;
        req.spec = spec;
        req.batch = B;
        req.strategy = ck;
        req.optimizer.kind = "adamw";
        const MemoryPlan plan = predict_memory(req);
        qInfo("%s: planned %.0f FLOPs of recompute, counted %.0f", qPrintable(checkpoint), plan.recompute_flops, measured);
        QVERIFY(measured > 0);
        QVERIFY2(std::fabs(plan.recompute_flops - measured) <= 0.05 * measured,
                 qPrintable(QString("planned %1, counted %2").arg(plan.recompute_flops).arg(measured)));
    }

    void selectiveRecomputeSavesAttentionOutputAndLse() {
        // per block: att (B, T, C) in the activation dtype and lse (B, H, T) f32 leave the activations;
        // the shared workspace gains one copy of them
        const ModelSpec spec = small_gpt(0.0);
        StrategyConfig plain, sel;
        sel.checkpoint = "attention";
        Run a(spec, plain, 4), b(spec, sel, 4);
        const std::size_t B = 4, T = 16, C = 16, H = 2, blocks = 3;
        const std::size_t per = B * T * C * 4 + B * H * T * 4;
        const auto la = a.ledger->snapshot().live, lb = b.ledger->snapshot().live;
        QCOMPARE(at(la, MemCategory::activations) - at(lb, MemCategory::activations), blocks * per);
        QVERIFY(at(lb, MemCategory::workspace) > at(la, MemCategory::workspace));
        QVERIFY(at(lb, MemCategory::workspace) - at(la, MemCategory::workspace) <= per + 2 * 256);
    }

    void accumulationEqualsOneBatch() {
        const ModelSpec spec = small_gpt();
        std::vector<std::int64_t> x, y;
        batch(8, 16, 32, x, y);
        StrategyConfig one, acc;
        acc.accumulate = 4;
        Run a(spec, one, 8), b(spec, acc, 8);
        for (std::uint64_t s = 0; s < 3; ++s) {
            const double la = a.step(x, y, 8, s), lb = b.step(x, y, 8, s);
            QVERIFY(std::abs(la - lb) < 1e-5);
        }
        const auto pa = a.params(), pb = b.params();
        double e = 0;
        for (std::size_t i = 0; i < pa.size(); ++i) e = std::max(e, double(std::abs(pa[i] - pb[i])));
        QVERIFY2(e < 1e-5, qPrintable(QString::number(e)));
    }

    void offloadIsBitIdentical() {
        const ModelSpec spec = small_gpt();
        std::vector<std::int64_t> x, y;
        batch(4, 16, 32, x, y);
        StrategyConfig dev, off;
        off.offload_optimizer = true;
        Run a(spec, dev, 4), b(spec, off, 4);
        for (std::uint64_t s = 0; s < 3; ++s) QCOMPARE(a.step(x, y, 4, s), b.step(x, y, 4, s));
        QVERIFY(same(a.params(), b.params()));
        QVERIFY(at(b.host_ledger->snapshot().live, MemCategory::optimizer_state) > 0);
        QCOMPARE(at(b.ledger->snapshot().live, MemCategory::optimizer_state), std::size_t(0));
    }

    void lowPrecisionTrainsAndHalvesActivations_data() {
        QTest::addColumn<QString>("precision");
        QTest::newRow("bf16") << "bf16";
        QTest::newRow("fp16") << "fp16";
    }
    void lowPrecisionTrainsAndHalvesActivations() {
        QFETCH(QString, precision);
        const ModelSpec spec = small_gpt(0.0);
        std::vector<std::int64_t> x, y;
        batch(8, 16, 32, x, y);
        StrategyConfig f32, lp;
        lp.precision = precision.toStdString();
        lp.checkpoint = "attention+every:2";  // strategies compose
        lp.accumulate = 2;
        OptimizerConfig o;
        o.kind = "adamw";
        o.lr = 1e-2;
        Run a(spec, f32, 8, o), b(spec, lp, 8, o);
        double first = 0, last = 0;
        for (int s = 0; s < 40; ++s) {
            const double l = b.step(x, y, 8, std::uint64_t(s), 1e-2);
            if (s == 0) first = l;
            last = l;
        }
        QVERIFY2(std::isfinite(last) && last < 0.5 * first, qPrintable(QStringLiteral("%1 -> %2").arg(first).arg(last)));
        // activations: 16-bit storage halves everything but the f32 statistics (LayerNorm, lse)
        StrategyConfig lp_only;
        lp_only.precision = precision.toStdString();
        Run c(spec, lp_only, 8, o);
        const double ratio = double(at(c.ledger->snapshot().live, MemCategory::activations)) /
                             double(at(a.ledger->snapshot().live, MemCategory::activations));
        QVERIFY2(ratio < 0.6 && ratio > 0.45, qPrintable(QString::number(ratio)));
    }

    void adamwDecaysMatricesOnly() {
        // zero gradients: AdamW's update is then the decay alone, p *= 1 - lr * wd, on 2-D tensors only
        const ModelSpec spec = small_gpt(0.0);
        OptimizerConfig o;
        o.kind = "adamw";
        o.lr = 0.1;
        o.weight_decay = 0.5;
        Run r(spec, StrategyConfig{}, 4, o);
        const std::vector<float> before = r.params();
        r.st->model().zero_grad();
        r.st->optimizer_step(0.1);
        const std::vector<float> after = r.params();
        const auto sd = r.st->model().state_dict();
        const float* base = r.st->model().parameters().data<float>();
        int decayed = 0, kept = 0;
        for (const auto& nt : sd) {
            if (nt.tied) continue;
            const std::size_t off = static_cast<std::size_t>(nt.tensor.data<float>() - base);
            for (std::int64_t i = 0; i < nt.tensor.numel(); ++i) {
                const float b = before[off + i], a = after[off + i];
                if (nt.tensor.ndim() >= 2)
                    QVERIFY(std::abs(a - b * 0.95f) <= 1e-7f + 1e-6f * std::abs(b));
                else
                    QCOMPARE(a, b);
            }
            (nt.tensor.ndim() >= 2 ? decayed : kept)++;
        }
        QCOMPARE(decayed, 1 + 1 + 3 * 4);  // wte, wpe, 4 matrices per block (the tied head is wte)
        QCOMPARE(kept, 3 * 8 + 2);         // per block 2 LayerNorms x 2 + 4 biases; ln_f weight and bias
        // "all" decays everything (as torch.optim.AdamW over model.parameters())
        o.decay_scope = "all";
        Run all(spec, StrategyConfig{}, 4, o);
        const std::vector<float> b2 = all.params();
        all.st->model().zero_grad();
        all.st->optimizer_step(0.1);
        const std::vector<float> a2 = all.params();
        for (std::size_t i = 0; i < b2.size(); ++i) QVERIFY(std::abs(a2[i] - b2[i] * 0.95f) <= 1e-7f + 1e-6f * std::abs(b2[i]));
    }

    void gradientClippingScalesTheUpdate() {
        const ModelSpec spec = small_gpt(0.0);
        std::vector<std::int64_t> x, y;
        batch(4, 16, 32, x, y);
        OptimizerConfig sgd;
        sgd.kind = "sgd";
        sgd.lr = 0.5;
        OptimizerConfig clipped = sgd;
        clipped.grad_clip = 0.01;
        Run a(spec, StrategyConfig{}, 4, sgd), b(spec, StrategyConfig{}, 4, clipped);
        const std::vector<float> p0 = a.params();
        a.step(x, y, 4, 0, 0.5);
        b.step(x, y, 4, 0, 0.5);
        // the norm the state reports is the gradients' L2 norm, computed here on the host
        const std::vector<float> g = b.grads();
        double ss = 0;
        for (float v : g) ss += double(v) * v;
        const double norm = std::sqrt(ss);
        QVERIFY(std::abs(b.st->last_grad_norm() - norm) <= 1e-5 * norm);
        QVERIFY(norm > 0.01);
        const double coef = 0.01 / (norm + 1e-6);
        const std::vector<float> pa = a.params(), pb = b.params();
        for (std::size_t i = 0; i < p0.size(); ++i) {
            const double da = pa[i] - p0[i], db = pb[i] - p0[i];
            QVERIFY(std::abs(db - coef * da) <= 1e-6 + 1e-4 * std::abs(da));
        }
    }

    void checkpointStrategyErrors() {
        const ModelSpec spec = small_gpt();
        StrategyConfig s;
        s.checkpoint = "attention+every:0";
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 4));
        s.checkpoint = "attention+list:1";
        QVERIFY(resolve_strategy(s, spec, 4).recompute_attention);
        QCOMPARE(resolve_strategy(s, spec, 4).checkpoint_blocks, std::vector<int>{1});
    }
};

QTEST_APPLESS_MAIN(TransformerStrategiesTest)
#include "test_transformer_strategies.moc"
