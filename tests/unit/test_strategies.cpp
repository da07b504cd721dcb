// Memory strategies on the CPU backend: each one's equivalence claim, and its memory effect.
#include <QtTest>

#include <cstring>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "strategy/training_state.h"
#include "train/trainer.h"

using namespace hr;

namespace {

struct Run {
    std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>();
    std::shared_ptr<MemoryLedger> host_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be = make_cpu_backend(2, ledger);
    std::unique_ptr<Backend> host = make_cpu_backend(2, host_ledger);
    std::unique_ptr<TrainingState> st;

    Run(const ModelSpec& spec, const StrategyConfig& s, std::int64_t batch, const OptimizerConfig& o = {}) {
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(s, spec, batch), 3, *be, be->allocator(), *host,
                                             host->allocator());
    }
    // one optimizer step over the given host batch (f32 images, labels), returns the loss
    double step(const std::vector<float>& x, const std::vector<std::int64_t>& y, std::int64_t B, std::uint64_t step_no) {
        Model& m = st->model();
        const auto& spec = m.spec();
        const std::int64_t M = st->strategy().micro_batch, per = shape_numel(spec.input_shape);
        m.zero_grad();
        double loss = 0;
        for (std::int64_t r0 = 0; r0 < B; r0 += M) {
            const std::int64_t n = std::min(M, B - r0);
            Tensor xs = st->x_staging.slice0(0, n), yb = st->labels.slice0(0, n);
            be->copy_from_host(x.data() + r0 * per, xs);
            be->copy_from_host(y.data() + r0, yb);
            Tensor xm = xs;
            if (st->x_model.dtype() != DType::f32) {
                xm = st->x_model.slice0(0, n);
                be->copy(xs, xm);
            }
            Tensor logits = m.forward(xm, true, step_no * static_cast<std::uint64_t>(B) + static_cast<std::uint64_t>(r0));
            Tensor g = st->dlogits.slice0(0, n);
            const float share = float(double(n) / double(B));
            loss += be->softmax_cross_entropy(logits, yb, 0.0f, g, share * st->loss_scale()).loss * share;
            m.backward(g);
        }
        st->optimizer_step(0.05);
        return loss;
    }
    std::vector<float> params() {
        Tensor& p = st->model().parameters();
        std::vector<float> out(static_cast<std::size_t>(p.numel()));
        if (p.dtype() == DType::f32) be->copy_to_host(p, out.data());
        return out;
    }
    std::vector<float> grads() {
        Tensor& g = st->model().gradients();
        std::vector<float> out(static_cast<std::size_t>(g.numel()));
        be->copy_to_host(g, out.data());
        return out;
    }
};

void random_batch(const ModelSpec& spec, std::int64_t B, std::vector<float>& x, std::vector<std::int64_t>& y) {
    std::mt19937_64 g(11);
    std::normal_distribution<float> d(0, 1);
    x.resize(static_cast<std::size_t>(B * shape_numel(spec.input_shape)));
    for (auto& v : x) v = d(g);
    y.resize(static_cast<std::size_t>(B));
    for (std::int64_t i = 0; i < B; ++i) y[i] = i % spec.num_classes;
}

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
        ModelSpec spec = preset == "seed-cnn+dropout" ? with_dropout(preset_model("seed-cnn"))
                                                      : preset_model(preset.toStdString());
        std::vector<float> x;
        std::vector<std::int64_t> y;
        random_batch(spec, 16, x, y);
        StrategyConfig plain, ck;
        ck.checkpoint = checkpoint.toStdString();
        Run a(spec, plain, 16), b(spec, ck, 16);
        for (std::uint64_t s = 0; s < 2; ++s) {  // two steps: BatchNorm running stats must not double-update
            a.step(x, y, 16, s);
            b.step(x, y, 16, s);
            auto ga = a.grads(), gb = b.grads();
            QVERIFY(std::memcmp(ga.data(), gb.data(), ga.size() * 4) == 0);
        }
        auto pa = a.params(), pb = b.params();
        QVERIFY(std::memcmp(pa.data(), pb.data(), pa.size() * 4) == 0);
        // and the running statistics match (state_dict buffers)
        auto sa = a.st->model().state_dict(), sb = b.st->model().state_dict();
        for (std::size_t i = 0; i < sa.size(); ++i) {
            if (sa[i].trainable) continue;
            QVERIFY(std::memcmp(sa[i].tensor.raw(), sb[i].tensor.raw(), sa[i].tensor.nbytes()) == 0);
        }
        // checkpointing never stores more (one checkpointed block alone needs its own size in the arena;
        // the saving comes from blocks sharing it)
        QVERIFY(b.ledger->live_bytes(MemCategory::activations) <= a.ledger->live_bytes(MemCategory::activations));
        // (an MLP's blocks are linear + in-place ReLU, whose one tensor is the kept output: nothing to save)
        if (checkpoint == "all" && preset != "mlp")
            QVERIFY(b.ledger->live_bytes(MemCategory::activations) < a.ledger->live_bytes(MemCategory::activations));
    }

    void fullCheckpointCutsActivations() {
        ModelSpec spec = preset_model("resnet-mini");
        StrategyConfig plain, ck;
        ck.checkpoint = "all";
        Run a(spec, plain, 64), b(spec, ck, 64);
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
        std::vector<float> x;
        std::vector<std::int64_t> y;
        random_batch(spec, 32, x, y);
        StrategyConfig big, acc;
        acc.accumulate = 4;
        OptimizerConfig o;
        o.momentum = 0.9;
        Run a(spec, big, 32, o), b(spec, acc, 32, o);
        QCOMPARE(b.st->strategy().micro_batch, std::int64_t(8));
        double la = 0, lb = 0;
        for (std::uint64_t s = 0; s < 3; ++s) {
            la = a.step(x, y, 32, s);
            lb = b.step(x, y, 32, s);
        }
        QVERIFY(std::abs(la - lb) < 1e-5);
        auto pa = a.params(), pb = b.params();
        double maxd = 0;
        for (std::size_t i = 0; i < pa.size(); ++i) maxd = std::max(maxd, double(std::abs(pa[i] - pb[i])));
        QVERIFY2(maxd < 1e-5, qPrintable(QString::number(maxd)));
        // the micro-batch buffers are a quarter of the size
        QVERIFY(b.ledger->live_bytes(MemCategory::activations) * 4 == a.ledger->live_bytes(MemCategory::activations));
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
        std::vector<float> x;
        std::vector<std::int64_t> y;
        random_batch(spec, 16, x, y);
        StrategyConfig dev, off;
        dev.precision = off.precision = precision.toStdString();
        off.offload_optimizer = true;
        OptimizerConfig o;
        o.kind = optimizer.toStdString();
        o.momentum = o.kind == "sgd" ? 0.9 : 0.0;
        Run a(spec, dev, 16, o), b(spec, off, 16, o);
        for (std::uint64_t s = 0; s < 3; ++s) {
            a.step(x, y, 16, s);
            b.step(x, y, 16, s);
        }
        Tensor& pa = a.st->model().parameters();
        Tensor& pb = b.st->model().parameters();
        QVERIFY(std::memcmp(pa.raw(), pb.raw(), pa.nbytes()) == 0);
        // optimizer state and master weights left the device for the host
        QCOMPARE(b.ledger->live_bytes(MemCategory::optimizer_state), std::size_t(0));
        QCOMPARE(b.ledger->live_bytes(MemCategory::master_weights), std::size_t(0));
        QVERIFY(b.host_ledger->live_bytes(MemCategory::optimizer_state) > 0);
        QCOMPARE(b.host_ledger->live_bytes(MemCategory::master_weights), std::size_t(pa.numel() * 4));
    }

    void bf16HalvesActivationsAndLearns() {
        ModelSpec spec = preset_model("seed-cnn");
        StrategyConfig fp32, bf16;
        bf16.precision = "bf16";
        Run a(spec, fp32, 64), b(spec, bf16, 64);
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
        s.loss_scale_init = 1e30;  // overflows f16 at once: the first steps must be skipped
        s.loss_scale_growth_interval = 3;
        std::vector<float> x;
        std::vector<std::int64_t> y;
        random_batch(spec, 16, x, y);
        Run r(spec, s, 16);
        std::vector<float> before(static_cast<std::size_t>(r.st->model().flat_param_numel()));
        Tensor& p = r.st->model().parameters();
        std::vector<std::uint16_t> h0(static_cast<std::size_t>(p.numel())), h1(h0.size());
        r.be->copy_to_host(p, h0.data());
        r.step(x, y, 16, 0);
        QCOMPARE(r.st->skipped_steps(), std::int64_t(1));
        r.be->copy_to_host(p, h1.data());
        QVERIFY(h0 == h1);  // a skipped step leaves the weights alone
        // each skipped step halves the scale until the gradients fit in f16
        int i = 1;
        for (; i < 200 && r.st->skipped_steps() == i; ++i) r.step(x, y, 16, i);
        const std::int64_t skipped = r.st->skipped_steps();
        QVERIFY(skipped > 10 && skipped < 200);
        const double expect = 1e30 / std::pow(2.0, double(skipped));
        QVERIFY(std::abs(double(r.st->loss_scale()) / expect - 1.0) < 1e-6);
        // after 3 good steps in a row the scale doubles
        const float settled = r.st->loss_scale();
        for (int k = 0; k < 2; ++k) r.step(x, y, 16, 300 + k);
        if (r.st->skipped_steps() == skipped) QCOMPARE(r.st->loss_scale(), settled * 2);
        r.be->copy_to_host(p, h1.data());
        QVERIFY(h0 != h1);
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
    }
};

QTEST_APPLESS_MAIN(StrategiesTest)
#include "test_strategies.moc"
