// CUDA graphs and the step without host synchronisation on a GPU (issue 11): a TrainingState step
// captured once (Backend::capture, backend/cuda/cuda_graph.h) and replayed gives the same per-step
// figures and the same weights, bit for bit, as the same step run op by op; the partial last batch
// runs outside the graph; capture refuses work that waits for the device. The backend comes through
// the module loader. Skips without a CUDA device.
#include <QtTest>

#include <cstring>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/step_figures.h"
#include "base/error.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

struct Data {
    std::vector<float> x;
    std::vector<std::int64_t> y;
};

Data batch_of(const ModelSpec& spec, std::int64_t B, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<float> d(0, 1);
    Data b;
    b.x.resize(static_cast<std::size_t>(B * shape_numel(spec.input_shape)));
    for (auto& v : b.x) v = d(g);
    for (std::int64_t i = 0; i < B; ++i) b.y.push_back(static_cast<std::int64_t>(g() % 10));
    return b;
}

struct GpuRun {
    std::unique_ptr<Backend> be = make_cuda_backend(0, std::make_shared<MemoryLedger>());
    std::unique_ptr<Backend> host = make_cpu_backend(1, std::make_shared<MemoryLedger>());
    std::unique_ptr<TrainingState> st;
    std::unique_ptr<StepFigureRing> ring;
    ModelSpec spec;
    GpuRun(const ModelSpec& s, const StrategyConfig& sc, const OptimizerConfig& o, std::int64_t B) : spec(s) {
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(sc, spec, B), 7, *be, be->allocator(), *host,
                                             host->allocator());
        ring = std::make_unique<StepFigureRing>(*be, 8);
    }
    void upload(const Data& d, std::int64_t n) {
        Tensor xs = st->x_staging.slice0(0, n), yb = st->labels.slice0(0, n);
        be->copy_from_host(d.x.data(), xs);
        be->copy_from_host(d.y.data(), yb);
    }
    std::vector<StepFigures> figures;
    void push(std::int64_t step) {
        for (const auto& f : ring->push(step, st->stats, st->control)) figures.push_back(f);
    }
    std::vector<unsigned char> weights() {
        Tensor& p = st->model().parameters();
        std::vector<unsigned char> out(p.nbytes());
        be->copy_to_host(p, out.data());
        return out;
    }
};

}  // namespace

class CudaGraphTest : public QObject {
    Q_OBJECT

private slots:
    void replayedStepEqualsPlainStep_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("precision");
        QTest::addColumn<QString>("optimizer");
        QTest::newRow("seed-cnn fp32 sgd+momentum") << "seed-cnn" << "fp32" << "sgd";
        QTest::newRow("resnet-mini bf16 adamw") << "resnet-mini" << "bf16" << "adamw";
        QTest::newRow("seed-cnn fp16 sgd (loss scaling)") << "seed-cnn" << "fp16" << "sgd";
    }
    void replayedStepEqualsPlainStep() {
        if (cuda_device_count() == 0) QSKIP("no CUDA device (cuda_device_count() == 0)");
        QFETCH(QString, preset);
        QFETCH(QString, precision);
        QFETCH(QString, optimizer);
        const ModelSpec spec = preset_model(preset.toStdString());
        StrategyConfig sc;
        sc.precision = precision.toStdString();
        sc.loss_scale_init = 1048576.0;  // fp16: overflows first (skipped steps), then grows every 3
        sc.loss_scale_growth_interval = 3;
        OptimizerConfig o;
        o.kind = optimizer.toStdString();
        o.lr = optimizer == "sgd" ? 0.05 : 1e-3;
        o.momentum = optimizer == "sgd" ? 0.9 : 0.0;
        o.weight_decay = 1e-4;
        const std::int64_t B = 64;
        GpuRun plain(spec, sc, o, B), graphed(spec, sc, o, B);
        QVERIFY(graphed.st->graph_capturable());
        std::unique_ptr<Backend::CapturedWork> graph;
        const int steps = 12;
        for (int s = 0; s < steps; ++s) {
            const Data d = batch_of(spec, B, 50 + s);
            const double lr = o.lr * (1.0 - 0.05 * s);  // changes every step: read from the device
            plain.upload(d, B);
            plain.st->begin_device_step(lr);
            plain.st->device_micro_step(B, 1.0f, std::uint64_t(s * B));
            plain.st->device_optimizer_step();
            plain.push(s);
            // the graphed run's input goes through the landing buffer (upload_next: the copy overlaps
            // the step before; take_upload: the device waits for it and moves it into place)
            if (s == 0) graphed.st->upload_next(d.x.data(), d.y.data(), nullptr, B);
            graphed.st->take_upload(B);
            if (s + 1 < steps) {
                const Data next = batch_of(spec, B, 50 + s + 1);
                graphed.st->upload_next(next.x.data(), next.y.data(), nullptr, B);  // before this step runs
            }
            graphed.st->begin_device_step(lr);
            if (s == 0) {  // run once op by op (plans, lazily loaded kernels), then capture
                graphed.st->device_micro_step(B, 1.0f, 0);
                graphed.st->device_optimizer_step();
                graph = graphed.be->capture([&] {
                    graphed.st->device_micro_step(B, 1.0f, 0);
                    graphed.st->device_optimizer_step();
                });
                QVERIFY(graph != nullptr);
            } else {
                graph->replay();
            }
            graphed.push(s);
        }
        // the partial last batch of an epoch: outside the graph, on both
        const std::int64_t n = 23;
        const Data last = batch_of(spec, n, 999);
        for (GpuRun* r : {&plain, &graphed}) {
            r->upload(last, n);
            r->st->begin_device_step(o.lr * 0.3);
            r->st->device_micro_step(n, 1.0f, std::uint64_t(steps * B));
            r->st->device_optimizer_step();
            r->push(steps);
            for (const auto& f : r->ring->drain()) r->figures.push_back(f);
        }
        QCOMPARE(plain.figures.size(), std::size_t(steps + 1));
        QCOMPARE(graphed.figures.size(), plain.figures.size());
        int skipped = 0;
        for (std::size_t i = 0; i < plain.figures.size(); ++i) {
            const StepFigures &a = plain.figures[i], &b = graphed.figures[i];
            QCOMPARE(b.step, a.step);
            QCOMPARE(b.loss, a.loss);
            QCOMPARE(b.correct, a.correct);
            QCOMPARE(b.skipped, a.skipped);
            QCOMPARE(b.loss_scale, a.loss_scale);
            QVERIFY(std::isfinite(a.loss));
            skipped += a.skipped;
        }
        if (precision == "fp16") QVERIFY(skipped >= 1);
        QVERIFY(plain.weights() == graphed.weights());
        // and it trained: the loss of the last full steps is below the first's
        QVERIFY(plain.figures[steps - 1].loss < plain.figures[0].loss);
    }

    void captureRefusesWorkThatWaits() {
        if (cuda_device_count() == 0) QSKIP("no CUDA device (cuda_device_count() == 0)");
        auto be = make_cuda_backend(0, std::make_shared<MemoryLedger>());
        Tensor x = Tensor::empty(be->allocator(), {1000}, DType::f32, MemCategory::other);
        be->fill(x, 2.0);
        try {
            be->capture([&] { (void)be->sum_squares(x); });
            QFAIL("a capture that waits for the device must fail");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("during a capture") != std::string::npos, e.what());
        }
        try {
            be->capture([&] { Tensor y = Tensor::empty(be->allocator(), {1 << 22}, DType::f32, MemCategory::other); });
            QFAIL("an allocation during a capture must fail");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("allocation during a captured step") != std::string::npos, e.what());
        }
        // the backend is usable afterwards, and a capture of plain work replays it
        auto g = be->capture([&] { be->scale(x, 3.0f); });
        QCOMPARE(be->sum_squares(x), 4.0 * 1000);  // captured, not run
        g->replay();
        g->replay();
        QCOMPARE(be->sum_squares(x), 2.0 * 3 * 3 * 2.0 * 3 * 3 * 1000);
    }
};

QTEST_APPLESS_MAIN(CudaGraphTest)
#include "test_cuda_graph.moc"
