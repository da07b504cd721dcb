// Activation checkpointing lowers the planned activations of the language-model presets on every device the
// planner takes (the CPU, a GPU here or not, each GPU model of plan/device_description.h), at a micro-batch of
// one sample too: a micro-batch of one kept every saved tensor outside the recompute arena, because the model
// told "grows with the batch" apart by comparing the tensor at batch B with batch 1, so at B = 1
// `--checkpoint all` planned (and trained with) the activations of `--checkpoint none`. The run at batch 1
// with checkpointing is checked against the run without it: the same loss and gradients, bit for bit, less
// activation memory in the ledger, and the planner's activations equal to that ledger's.
#include <QtTest>

#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "nn/transformer_spec.h"
#include "plan/device_description.h"
#include "plan/planner.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

LayerSpec ckp_layer(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

// llama-tiny's layout at a test's size: embedding, two LLaMA blocks, RMSNorm, an untied head
ModelSpec small_llama() {
    ModelSpec s;
    s.name = "llama-test";
    s.input_shape = {8};
    s.num_classes = 32;
    s.layers = {ckp_layer("token_embedding", {{"vocab_size", 32}, {"dim", 16}})};
    for (int i = 0; i < 2; ++i)
        s.layers.push_back(ckp_layer("llama_block", {{"dim", 16}, {"heads", 4}, {"kv_heads", 2}, {"hidden", 24},
                                                     {"max_positions", 8}}));
    s.layers.push_back(ckp_layer("rmsnorm", {{"dim", 16}}));
    s.layers.push_back(ckp_layer("lm_head", {{"dim", 16}, {"vocab_size", 32}}));
    return s;
}

std::size_t planned_activations(const ModelSpec& spec, const std::string& device, std::int64_t batch,
                                const std::string& checkpoint, const std::string& precision, int lora) {
    PlanRequest r;
    r.spec = spec;
    r.batch = batch;
    r.device = device;
    r.threads = 2;
    r.strategy.checkpoint = checkpoint;
    r.strategy.precision = precision;
    r.strategy.lora_rank = lora;
    if (lora > 0) r.strategy.quantize_base = "nf4";
    r.optimizer.kind = "adamw";
    return at(predict_memory(r).device, MemCategory::activations);
}

struct CkpRun {
    std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>();
    std::shared_ptr<MemoryLedger> host_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be = make_cpu_backend(2, ledger);
    std::unique_ptr<Backend> host = make_cpu_backend(2, host_ledger);
    std::unique_ptr<TrainingState> st;
    std::size_t setup_activations = 0;

    CkpRun(const ModelSpec& spec, const StrategyConfig& s, std::int64_t batch, const OptimizerConfig& o) {
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(s, spec, batch), 3, *be, be->allocator(), *host,
                                             host->allocator());
        setup_activations = at(ledger->snapshot().live, MemCategory::activations);
    }
    // one optimizer step over B sequences of tokens x with targets y, micro-batch by micro-batch
    double step(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y, std::int64_t B) {
        Model& m = st->model();
        const std::int64_t T = m.spec().input_shape[0], V = m.spec().num_classes, M = st->strategy().micro_batch;
        m.zero_grad();
        double loss = 0;
        for (std::int64_t r0 = 0; r0 < B; r0 += M) {
            const std::int64_t n = std::min(M, B - r0);
            Tensor xs = st->x_staging.slice0(0, n), ys = st->labels.slice0(0, n);
            be->copy_from_host(x.data() + r0 * T, xs);
            be->copy_from_host(y.data() + r0 * T, ys);
            Tensor logits = m.forward(xs, true, static_cast<std::uint64_t>(r0));
            const float share = float(double(n) / double(B));
            Tensor lv = logits.reshape({n * T, V});
            loss += be->cross_entropy_inplace(lv, ys.reshape({n * T}), true, share * st->loss_scale()).loss * share;
            m.backward(logits);
        }
        return loss;
    }
    std::vector<float> grads() {
        const Tensor& g = st->model().gradients();
        std::vector<float> out(static_cast<std::size_t>(g.numel()));
        std::memcpy(out.data(), g.raw(), out.size() * 4);
        return out;
    }
};

}  // namespace

class CheckpointPlanTest : public QObject {
    Q_OBJECT

private slots:
    void presetsCheckpointOnEveryDevice_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("device");
        std::vector<std::string> devices = {"cpu", "cuda:0"};
        for (const std::string& g : gpu_model_names()) devices.push_back(g);
        for (const char* p : {"gpt2-1.5b", "llama-3.1-8b", "llama-3.1-70b", "llama-tiny"})
            for (const std::string& d : devices) QTest::newRow((std::string(p) + " " + d).c_str()) << p << QString::fromStdString(d);
    }
    void presetsCheckpointOnEveryDevice() {
        QFETCH(QString, preset);
        QFETCH(QString, device);
        const ModelSpec spec = preset_model(preset.toStdString());
        // the preset's own length; batch 1 (the case that planned no saving) and 4; fp32, bf16, and QLoRA
        struct Case {
            std::int64_t batch;
            const char* precision;
            int lora;
        };
        for (const Case& c : {Case{1, "fp32", 0}, Case{4, "fp32", 0}, Case{1, "bf16", 0}, Case{1, "bf16", 16}}) {
            const std::size_t none = planned_activations(spec, device.toStdString(), c.batch, "none", c.precision, c.lora);
            const std::size_t all = planned_activations(spec, device.toStdString(), c.batch, "all", c.precision, c.lora);
            const std::size_t every2 = planned_activations(spec, device.toStdString(), c.batch, "every:2", c.precision, c.lora);
            const QByteArray what = QStringLiteral("batch %1 %2 lora %3: none %4, every:2 %5, all %6")
                                        .arg(c.batch)
                                        .arg(QLatin1String(c.precision))
                                        .arg(c.lora)
                                        .arg(none)
                                        .arg(every2)
                                        .arg(all)
                                        .toUtf8();
            // a model of L blocks keeps, checkpointed, about its blocks' inputs and one block's tensors: for
            // the published sizes less than half of what it keeps without. llama-tiny's two blocks: less; its
            // every:2 checkpoints the embedding and the last block, whose tensors the arena holds anyway
            if (preset == QLatin1String("llama-tiny")) {
                QVERIFY2(all < none && every2 <= none, what.constData());
            } else {
                QVERIFY2(all < none / 2, what.constData());
                QVERIFY2(every2 < none && all <= every2, what.constData());
            }
        }
    }

    // The run at batch 1 with checkpointing equals the run without it (loss and gradients, bit for bit), keeps
    // fewer activations in its ledger, and the planner predicts that ledger's activations exactly.
    void batchOneRunCheckpoints_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("micro");
        QTest::addColumn<double>("lora_dropout");  // > 0: LoRA rank 2 with this dropout (masks drawn again)
        // (every:2 of the small LLaMA checkpoints its embedding and its last block, whose tensors the arena
        // holds after the forward: nothing to save, so it is left out)
        for (const char* m : {"gpt", "llama"})
            for (const char* c : {"all", "every:2", "attention+all"}) {
                if (std::string(m) == "llama" && std::string(c) == "every:2") continue;
                QTest::newRow((std::string(m) + " " + c + " batch 1").c_str()) << m << c << 1 << 0 << 0.0;
                QTest::newRow((std::string(m) + " " + c + " micro-batch 1 of 3").c_str()) << m << c << 3 << 1 << 0.0;
            }
        // LoRA dropout: a checkpointed block's recompute draws its adapters' masks again, the same
        for (const char* m : {"gpt", "llama"})
            for (const char* c : {"all", "attention+all"}) {
                QTest::newRow((std::string(m) + " " + c + " lora dropout").c_str()) << m << c << 2 << 0 << 0.3;
                QTest::newRow((std::string(m) + " " + c + " lora dropout micro-batch 1 of 3").c_str()) << m << c << 3 << 1 << 0.3;
            }
    }
    void batchOneRunCheckpoints() {
        QFETCH(QString, model);
        QFETCH(QString, checkpoint);
        QFETCH(int, batch);
        QFETCH(int, micro);
        QFETCH(double, lora_dropout);
        if (model == QLatin1String("llama") && !find_layer_type("llama_block")) QSKIP("no llama_block in this build");
        ModelSpec spec = model == QLatin1String("llama") ? small_llama() : preset_model("gpt-tiny");
        if (model == QLatin1String("gpt")) apply_sequence_length(spec, 8);
        const std::int64_t T = spec.input_shape[0], V = spec.num_classes;
        std::vector<std::int64_t> x(static_cast<std::size_t>(batch * T)), y(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = static_cast<std::int64_t>((7 * i + 3) % static_cast<std::size_t>(V));
            y[i] = static_cast<std::int64_t>((7 * i + 10) % static_cast<std::size_t>(V));
        }
        OptimizerConfig o;
        o.kind = "adamw";
        StrategyConfig plain, ck;
        plain.micro_batch = ck.micro_batch = micro;
        if (micro > 0) plain.accumulate = ck.accumulate = batch / micro;
        if (lora_dropout > 0) {
            plain.lora_rank = ck.lora_rank = 2;
            plain.lora_dropout = ck.lora_dropout = lora_dropout;
            if (model == QLatin1String("llama"))
                plain.lora_targets = ck.lora_targets = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
        }
        ck.checkpoint = checkpoint.toStdString();
        CkpRun a(spec, plain, batch, o), b(spec, ck, batch, o);
        if (lora_dropout > 0) {  // B moved off zero, alike in both, so that every adapter's gradient counts
            for (CkpRun* run : {&a, &b}) {
                Tensor p = run->st->model().parameters();
                std::vector<float> v(static_cast<std::size_t>(p.numel()));
                std::memcpy(v.data(), p.raw(), v.size() * 4);
                for (std::size_t i = 0; i < v.size(); ++i) v[i] += 0.01f * float(int(i % 7) - 3);
                run->be->copy_from_host(v.data(), p);
            }
        }
        QVERIFY(b.setup_activations < a.setup_activations);
        for (int s = 0; s < 2; ++s) {
            QCOMPARE(a.step(x, y, batch), b.step(x, y, batch));
            const std::vector<float> ga = a.grads(), gb = b.grads();
            QVERIFY(ga.size() == gb.size() && std::memcmp(ga.data(), gb.data(), ga.size() * 4) == 0);
        }
        // the planner: the same activations as the ledger of the run it plans
        PlanRequest r;
        r.spec = spec;
        r.batch = batch;
        r.threads = 2;
        r.strategy = ck;
        r.optimizer = o;
        const MemoryPlan pb = predict_memory(r);
        QCOMPARE(at(pb.device, MemCategory::activations), b.setup_activations);
        r.strategy = plain;
        const MemoryPlan pa = predict_memory(r);
        QCOMPARE(at(pa.device, MemCategory::activations), a.setup_activations);
        // and the workspace (LoRA dropout's dropped input and mask are there), as the ledger's peak after the steps
        QCOMPARE(at(pb.device, MemCategory::workspace), at(b.ledger->snapshot().peak, MemCategory::workspace));
        QCOMPARE(at(pa.device, MemCategory::workspace), at(a.ledger->snapshot().peak, MemCategory::workspace));
    }
};

QTEST_APPLESS_MAIN(CheckpointPlanTest)
#include "test_checkpoint_plan.moc"
