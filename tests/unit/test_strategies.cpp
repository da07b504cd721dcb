// Memory strategies on the CPU backend: each one's equivalence claim, and its memory effect.
#include <QtTest>

#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "strategy/training_state.h"
#include "io/safetensors.h"
#include "test_support.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace hr;

namespace {

// The training state a run of this spec and strategy builds (construction only: its memory layout and
// its initial weights, which the trainer's run with the same seed starts from).
struct State {
    std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>();
    std::shared_ptr<MemoryLedger> host_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be = make_cpu_backend(2, ledger);
    std::unique_ptr<Backend> host = make_cpu_backend(2, host_ledger);
    std::unique_ptr<TrainingState> st;

    State(const ModelSpec& spec, const StrategyConfig& s, std::int64_t batch, const OptimizerConfig& o = {},
          std::uint64_t seed = 1) {
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(s, spec, batch), seed, *be, be->allocator(), *host,
                                             host->allocator());
    }
};

// A run through hr::Trainer itself (synthetic data, the trainer's micro-batch loop): its result, the
// weights it saved (every state_dict tensor, BatchNorm statistics included) and its step events.
struct Trained {
    TrainResult result;
    SafeTensorsFile weights;
    std::vector<StepEvent> steps;
};

TrainConfig config(const ModelSpec& spec, const StrategyConfig& s, std::int64_t batch, std::int64_t steps,
                   const OptimizerConfig& o = {}) {
    TrainConfig c;
    c.model = spec;
    c.data = "synthetic";
    c.train_limit = 256;
    c.test_limit = 32;
    c.batch = batch;
    c.steps = steps;
    c.strategy = s;
    c.optimizer = o;
    c.threads = 2;
    c.device = "cpu";
    return c;
}

Trained train(const TrainConfig& c) {
    Trained t;
    TrainCallbacks cb;
    cb.on_step = [&t](const StepEvent& e) { t.steps.push_back(e); };
    Trainer trainer(c, cb);
    t.result = trainer.run();
    const std::string path = hrtest::temp_dir("hr-strategies") + "/model.safetensors";
    trainer.save_weights(path);
    t.weights = read_safetensors(path);
    return t;
}

bool sameBytes(const SafeTensorsFile& a, const SafeTensorsFile& b) {
    if (a.tensors.size() != b.tensors.size()) return false;
    for (const SafeTensor& t : a.tensors) {
        const SafeTensor* u = b.find(t.name);
        if (!u || u->dtype != t.dtype || u->shape != t.shape || u->data != t.data) return false;
    }
    return true;
}

// Largest |a - b| over the f32 tensors of two weight files.
double maxDifference(const SafeTensorsFile& a, const SafeTensorsFile& b) {
    double d = 0;
    for (const SafeTensor& t : a.tensors) {
        const SafeTensor* u = b.find(t.name);
        if (!u || t.dtype != DType::f32 || u->data.size() != t.data.size()) return INFINITY;
        const auto* x = reinterpret_cast<const float*>(t.data.data());
        const auto* y = reinterpret_cast<const float*>(u->data.data());
        for (std::size_t i = 0; i < t.data.size() / 4; ++i) d = std::max(d, double(std::abs(x[i] - y[i])));
    }
    return d;
}

std::size_t peak(const TrainResult& r, MemCategory c) { return at(r.ledger.peak, c); }

ModelSpec with_dropout(ModelSpec s) {
    LayerSpec d = default_layer("dropout");
    d.attrs["p"] = 0.25;
    s.layers.insert(s.layers.end() - 1, d);
    return s;
}

}  // namespace

class StrategiesTest : public QObject {
    Q_OBJECT

private slots:
    void checkpointGradientsBitIdentical_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("checkpoint");
        for (auto& n : preset_names())
            for (const char* c : {"all", "every:2", "list:1"})
                QTest::newRow((n + " " + c).c_str()) << QString::fromStdString(n) << c;
        QTest::newRow("seed-cnn+dropout all") << "seed-cnn+dropout" << "all";
    }
    void checkpointGradientsBitIdentical() {
        QFETCH(QString, preset);
        QFETCH(QString, checkpoint);
        // every preset drawn for the synthetic data's (1, 28, 28) (resnet20's own input is CIFAR-10's)
        ModelSpec spec = preset == "seed-cnn+dropout" ? with_dropout(preset_model("seed-cnn"))
                                                      : preset_model(preset.toStdString(), {1, 28, 28}, 10);
        StrategyConfig plain, ck;
        ck.checkpoint = checkpoint.toStdString();
        // two steps: BatchNorm running stats must not double-update under recompute
        const Trained a = train(config(spec, plain, 16, 2)), b = train(config(spec, ck, 16, 2));
        QCOMPARE(a.result.status, std::string("finished"));
        QCOMPARE(b.result.status, std::string("finished"));
        QVERIFY(b.result.strategy.find("checkpoint") != std::string::npos);
        // bit-identical weights and running statistics (every state_dict tensor), step by step losses
        QVERIFY(sameBytes(a.weights, b.weights));
        QCOMPARE(b.steps.size(), a.steps.size());
        for (std::size_t i = 0; i < a.steps.size(); ++i) QCOMPARE(b.steps[i].loss, a.steps[i].loss);
        // checkpointing never stores more (one checkpointed block alone needs its own size in the arena;
        // the saving comes from blocks sharing it)
        QVERIFY(peak(b.result, MemCategory::activations) <= peak(a.result, MemCategory::activations));
        // (an MLP's blocks are linear + in-place ReLU, whose one tensor is the kept output: nothing to save;
        // tabular-mlp is such an MLP)
        if (checkpoint == "all" && preset != "mlp" && preset != "tabular-mlp")
            QVERIFY(peak(b.result, MemCategory::activations) < peak(a.result, MemCategory::activations));
    }

    void fullCheckpointCutsActivations() {
        ModelSpec spec = preset_model("resnet-mini");
        StrategyConfig plain, ck;
        ck.checkpoint = "all";
        State a(spec, plain, 64), b(spec, ck, 64);
        const double cut = 1.0 - double(b.ledger->live_bytes(MemCategory::activations)) /
                                     double(a.ledger->live_bytes(MemCategory::activations));
        qInfo("resnet-mini batch 64: full checkpointing cuts activation memory by %.1f%%", 100 * cut);
        QVERIFY(cut >= 0.45);
    }

    void accumulationEqualsLargeBatch_data() {
        QTest::addColumn<QString>("preset");
        QTest::newRow("seed-cnn") << "seed-cnn";
        QTest::newRow("mlp") << "mlp";
        QTest::newRow("lenet5") << "lenet5";
        // dropout masks follow the sample, not the micro-batch: 4 micro-batches draw the batch's masks
        QTest::newRow("mlp+dropout") << "mlp+dropout";
    }
    void accumulationEqualsLargeBatch() {
        QFETCH(QString, preset);
        ModelSpec spec = preset == "mlp+dropout" ? with_dropout(preset_model("mlp")) : preset_model(preset.toStdString());
        StrategyConfig big, acc;
        acc.accumulate = 4;
        OptimizerConfig o;
        o.momentum = 0.9;
        const Trained a = train(config(spec, big, 32, 3, o)), b = train(config(spec, acc, 32, 3, o));
        QCOMPARE(b.result.status, std::string("finished"));
        QVERIFY2(b.result.strategy.find("micro-batch 8 x 4") != std::string::npos, b.result.strategy.c_str());
        QCOMPARE(b.steps.size(), std::size_t(3));
        for (std::size_t i = 0; i < 3; ++i) QVERIFY(std::abs(a.steps[i].loss - b.steps[i].loss) < 1e-5);
        const double maxd = maxDifference(a.weights, b.weights);
        QVERIFY2(maxd < 1e-5, qPrintable(QString::number(maxd)));
        // the micro-batch buffers are a quarter of the size
        QCOMPARE(peak(b.result, MemCategory::activations) * 4, peak(a.result, MemCategory::activations));
    }

    void offloadEqualsOnDeviceUpdate_data() {
        QTest::addColumn<QString>("precision");
        QTest::addColumn<QString>("optimizer");
        QTest::newRow("fp32 adam") << "fp32" << "adam";
        QTest::newRow("fp32 sgd momentum") << "fp32" << "sgd";
        QTest::newRow("bf16 adamw") << "bf16" << "adamw";
    }
    void offloadEqualsOnDeviceUpdate() {
        QFETCH(QString, precision);
        QFETCH(QString, optimizer);
        ModelSpec spec = preset_model("seed-cnn");
        StrategyConfig dev, off;
        dev.precision = off.precision = precision.toStdString();
        off.offload_optimizer = true;
        OptimizerConfig o;
        o.kind = optimizer.toStdString();
        o.lr = o.kind == "sgd" ? 0.01 : 0.001;
        o.momentum = o.kind == "sgd" ? 0.9 : 0.0;
        const Trained a = train(config(spec, dev, 16, 3, o)), b = train(config(spec, off, 16, 3, o));
        QCOMPARE(b.result.status, std::string("finished"));
        QVERIFY(sameBytes(a.weights, b.weights));
        // optimizer state and master weights left the device for the host
        QCOMPARE(peak(b.result, MemCategory::optimizer_state), std::size_t(0));
        QCOMPARE(peak(b.result, MemCategory::master_weights), std::size_t(0));
        QVERIFY(at(b.result.host_ledger.peak, MemCategory::optimizer_state) > 0);
        const State layout(spec, off, 16, o);
        QCOMPARE(at(b.result.host_ledger.peak, MemCategory::master_weights),
                 std::size_t(layout.st->model().parameters().numel() * 4));
    }

    void bf16HalvesActivationsAndLearns() {
        ModelSpec spec = preset_model("seed-cnn");
        StrategyConfig fp32, bf16;
        bf16.precision = "bf16";
        State a(spec, fp32, 64), b(spec, bf16, 64);
        QCOMPARE(b.ledger->live_bytes(MemCategory::activations) * 2, a.ledger->live_bytes(MemCategory::activations) +
                                                                         /* i32 pool indices do not shrink */
                                                                         std::size_t(64 * (10 * 12 * 12 + 20 * 4 * 4) * 4));
        // 21,840 parameters in 8 tensors, each starting on a 256-byte boundary (128 bf16 values), the
        // f32 master copy laid out like the bf16 buffer
        const std::size_t flat = static_cast<std::size_t>(b.st->model().flat_param_numel());
        QVERIFY(flat >= 21840 && flat < 21840 + 8 * 128 && flat % 128 == 0);
        QCOMPARE(b.ledger->live_bytes(MemCategory::master_weights), flat * 4);
        QCOMPARE(b.ledger->live_bytes(MemCategory::parameters), flat * 2);
        TrainConfig c;
        c.model = spec;
        c.data = "synthetic";
        c.steps = 60;
        c.threads = 2;
        c.optimizer.momentum = 0.5;
        c.strategy.precision = "bf16";
        TrainResult r = Trainer(c).run();
        QCOMPARE(r.status, std::string("finished"));
        qInfo("bf16 synthetic: test accuracy %.3f", r.test_accuracy);
        QVERIFY(r.test_accuracy > 0.5);
    }

    void fp16LossScalingSkipsAndRecovers() {
        ModelSpec spec = preset_model("mlp");
        StrategyConfig s;
        s.precision = "fp16";
        s.loss_scale_init = 1e12;  // overflows f16 at once: the first steps must be skipped
        s.loss_scale_growth_interval = 3;
        // a skipped step leaves the weights alone: after one step they are the initial ones
        const State initial(spec, s, 16);
        const Trained one = train(config(spec, s, 16, 1));
        QCOMPARE(one.result.skipped_steps, std::int64_t(1));
        QVERIFY(one.steps.at(0).skipped);
        QVERIFY(sameBytes(one.weights, model_state_file(initial.st->model())));
        // The documented rule (docs/strategies.md), replayed over the trainer's own skip decisions: a skipped
        // step halves S (not below 1) and restarts the count; every 3rd good step in a row doubles S.
        const Trained t = train(config(spec, s, 16, 64));
        QCOMPARE(t.result.status, std::string("finished"));
        std::size_t k = 0;
        while (k < t.steps.size() && t.steps[k].skipped) ++k;
        QVERIFY2(k > 10 && k < 50, qPrintable(QString::number(k)));  // 1e12 overflows for a while, then fits
        double expect = 1e12;
        int good = 0, doublings = 0;
        std::int64_t skipped = 0;
        for (std::size_t i = 0; i < t.steps.size(); ++i) {
            if (t.steps[i].skipped) {
                expect = std::max(1.0, expect / 2);
                good = 0;
                ++skipped;
            } else if (++good >= 3) {
                expect *= 2;
                good = 0;
                ++doublings;
            }
            QVERIFY2(t.steps[i].loss_scale == double(float(expect)),  // reported as a float
                     qPrintable(QString("step %1: scale %2, the rule says %3").arg(i + 1).arg(t.steps[i].loss_scale).arg(expect)));
        }
        QVERIFY(doublings > 0);  // the growth half of the rule ran too
        QCOMPARE(t.result.skipped_steps, skipped);
        QCOMPARE(t.result.final_loss_scale, double(float(expect)));
        QVERIFY(!sameBytes(t.weights, model_state_file(initial.st->model())));
    }

    // LoRA (--lora 4 on mlp, through the trainer): only the adapters are trained, so gradients and Adam's state
    // are the adapters' alone; the frozen base leaves the run bit-identical to where it started (a run of the
    // same seed without LoRA, 0 steps: its initial weights), the adapters move, the test figures before
    // training are recorded, and the planner's prediction is the run's ledger.
    void loraTrainsTheAdaptersOnly() {
        const ModelSpec spec = preset_model("mlp");
        OptimizerConfig adam;
        adam.kind = "adam";
        adam.lr = 1e-2;
        StrategyConfig s;
        s.lora_rank = 4;
        const Trained lora = train(config(spec, s, 32, 6, adam));
        QCOMPARE(lora.result.status, std::string("finished"));
        State plain(spec, StrategyConfig{}, 32, adam);
        State st(spec, s, 32, adam);
        const std::int64_t A = st.st->model().flat_param_numel();  // the adapters, aligned
        QCOMPARE(st.st->model().lora_param_count(), std::int64_t(4 * 784 + 256 * 4 + 4 * 256 + 128 * 4 + 4 * 128 + 10 * 4));
        QVERIFY(A < st.st->model().lora_param_count() + 6 * 64);
        QCOMPARE(peak(lora.result, MemCategory::gradients), std::size_t(A) * 4);
        QCOMPARE(peak(lora.result, MemCategory::optimizer_state), std::size_t(2 * A) * 4);
        QVERIFY(peak(lora.result, MemCategory::optimizer_state) * 20 < at(plain.ledger->snapshot().live, MemCategory::optimizer_state));
        // the base, bit for bit the initial weights; the adapters trained
        const std::vector<NamedTensor> init = plain.st->model().state_dict();
        for (const NamedTensor& nt : init) {
            const SafeTensor* w = lora.weights.find(nt.name);
            QVERIFY2(w, nt.name.c_str());
            QVERIFY2(std::memcmp(w->data.data(), nt.tensor.raw(), nt.tensor.nbytes()) == 0, nt.name.c_str());
        }
        double moved = 0;
        for (const SafeTensor& t : lora.weights.tensors)
            if (is_lora_adapter(t.name) && t.name.find("lora_B") != std::string::npos)
                for (std::size_t i = 0; i < t.data.size() / 4; ++i)
                    moved = std::max(moved, double(std::abs(reinterpret_cast<const float*>(t.data.data())[i])));
        QVERIFY(moved > 0);
        QVERIFY(std::isfinite(lora.result.lora_before_accuracy) && std::isfinite(lora.result.lora_before_loss));
        QCOMPARE(lora.result.lora_params, st.st->model().lora_param_count());
        QCOMPARE(lora.result.evals.front().step, std::int64_t(0));
        // the ZeRO stages shard the adapters (dist/test_sharded_training), pipeline stages hold their layers'
        // (dist/test_pipeline); parameter offload is refused, with the flag named
        for (const char* shard : {"zero1", "zero2", "zero3"}) {
            StrategyConfig z = s;
            z.shard = shard;
            QCOMPARE(resolve_strategy(z, spec, 32, 2, 0).lora_rank, 4);
        }
        StrategyConfig pp = s;
        pp.pipeline = 2;
        QCOMPARE(resolve_strategy(pp, spec, 32, 2, 0).lora_rank, 4);
        StrategyConfig tp = s;  // a split head (dist/test_tp_head): its rows of the base and of B, A whole
        tp.tp_head = 2;
        QCOMPARE(resolve_strategy(tp, spec, 32, 2, 0).lora_rank, 4);
        // parameter offload, and QLoRA on a split linear head (its rows of a packed weight), are refused; a
        // language model's lm_head has no adapters and is not packed, so QLoRA splits it (dist/test_tp_head)
        {
            ModelSpec untied = preset_model("gpt-tiny");
            untied.layers.back().attrs["tied"] = false;
            StrategyConfig q = s;
            q.tp_head = 2;
            q.quantize_base = "int4";
            QCOMPARE(resolve_strategy(q, untied, 4, 2, 0).lora_base_bits, 4);
        }
        StrategyConfig off = s;
        off.shard = "zero3";
        off.offload_parameters = true;
        StrategyConfig qtp = tp;
        qtp.quantize_base = "int4";
        for (const auto& [z, id] : {std::pair{off, "strategy.lora_offload"}, std::pair{qtp, "strategy.quantize_base_tp"}}) {
            try {
                resolve_strategy(z, spec, 32, 2, 0);
                QFAIL("--lora took parameter offload, or QLoRA a split head");
            } catch (const InputError& e) {
                QCOMPARE(e.message().id, std::string(id));
            }
        }
        // a GPT: adapters on each block's four projections; the tied embedding is frozen with the rest
        State gpt(preset_model("gpt-tiny"), s, 4, adam);
        QCOMPARE(gpt.st->model().lora_param_count(), std::int64_t(2 * 4 * (4 * 128 + 2 * 128 + 5 * 128 + 5 * 128)));
        QCOMPARE(gpt.st->model().frozen_param_count(), gpt.st->model().param_count());
        QVERIFY(gpt.st->model().flat_param_numel() < gpt.st->model().lora_param_count() + 8 * 2 * 64);
    }

    void badStrategyFlags() {
        ModelSpec spec = preset_model("seed-cnn");
        StrategyConfig s;
        s.micro_batch = 10;
        s.accumulate = 4;
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64));
        s = {};
        s.accumulate = 5;
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64));
        s = {};
        s.checkpoint = "list:99";
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64));
        s = {};
        s.precision = "int8";
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64));
        s = {};
        s.micro_batch = 24;  // uneven: 24 + 24 + 16
        QCOMPARE(resolve_strategy(s, spec, 64).accumulate, std::int64_t(3));
        // parameter offload: zero3 only (any number of ranks, one too), and the optimizer on the host with it
        s = {};
        s.offload_parameters = true;
        for (const char* shard : {"none", "dp", "zero1", "zero2"}) {
            s.shard = shard;
            try {
                resolve_strategy(s, spec, 64, std::string(shard) == "none" ? 1 : 2, 0);
                QFAIL(shard);
            } catch (const InputError& e) {
                QCOMPARE(e.message().id, std::string("strategy.offload_parameters_zero3"));
                QVERIFY2(std::string(e.what()).find("--offload-params needs --shard zero3") != std::string::npos, e.what());
            }
        }
        s.shard = "zero3";
        const ResolvedStrategy r = resolve_strategy(s, spec, 64);
        QVERIFY(r.offload_parameters && r.offload_optimizer);
        QCOMPARE(r.describe(), std::string("fp32 + parameter offload + zero3 x 1 rank"));
        QCOMPARE(strategy_flags(s), std::string("--offload-params --shard zero3"));
    }
};

QTEST_APPLESS_MAIN(StrategiesTest)
#include "test_strategies.moc"
