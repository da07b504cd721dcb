// The step without host synchronisation (backend.h, TrainingState's device step) on the CPU backend,
// against the host step it replaces: the same losses, accuracy, loss-scale decisions and weights, bit
// for bit (the CPU's device ops are the reference the GPU agrees with; tests/cuda compare the two).
// Also the ops' own rules (bad labels, NaN rows, loss-scale bookkeeping), the per-step figure ring,
// BatchNorm's device counter and --device auto's self-test; and the trainer's own run on that step (what a
// GPU run takes: HEADROOM_DEVICE_STEP=1 takes it on the CPU) against its host step, run for run.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <cstring>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "backend/step_figures.h"
#include "base/error.h"
#include "io/safetensors.h"
#include "strategy/training_state.h"
#include "test_support.h"
#include "train/device.h"
#include "train/trainer.h"

using namespace hr;

namespace {

struct Data {
    std::vector<float> x;
    std::vector<std::int64_t> y;
};

Data random_batch(const ModelSpec& spec, std::int64_t B, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<float> d(0, 1);
    Data b;
    b.x.resize(static_cast<std::size_t>(B * shape_numel(spec.input_shape)));
    for (auto& v : b.x) v = d(g);
    b.y.resize(static_cast<std::size_t>(B));
    for (std::int64_t i = 0; i < B; ++i) b.y[i] = static_cast<std::int64_t>(g() % std::uint64_t(spec.num_classes));
    return b;
}

struct Run {
    std::unique_ptr<Backend> be = make_cpu_backend(2, std::make_shared<MemoryLedger>());
    std::unique_ptr<Backend> host = make_cpu_backend(2, std::make_shared<MemoryLedger>());
    std::unique_ptr<TrainingState> st;
    ModelSpec spec;
    std::int64_t B;

    Run(const ModelSpec& s, const StrategyConfig& sc, std::int64_t batch, const OptimizerConfig& o) : spec(s), B(batch) {
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(sc, spec, batch), 5, *be, be->allocator(), *host,
                                             host->allocator());
    }
    void upload(const Data& d, std::int64_t r0, std::int64_t n) {
        const std::int64_t per = shape_numel(spec.input_shape);
        Tensor xs = st->x_staging.slice0(0, n), yb = st->labels.slice0(0, n);
        be->copy_from_host(d.x.data() + r0 * per, xs);
        be->copy_from_host(d.y.data() + r0, yb);
        if (spec.loss.type == "mse") {
            std::vector<float> onehot(static_cast<std::size_t>(n * spec.num_classes), 0.0f);
            for (std::int64_t i = 0; i < n; ++i) onehot[static_cast<std::size_t>(i * spec.num_classes + d.y[r0 + i])] = 1;
            Tensor ts = st->target_staging.slice0(0, n);
            be->copy_from_host(onehot.data(), ts);
        }
    }
    // The host step (as the trainer runs it today): loss and accuracy back per micro-batch.
    std::pair<double, std::int64_t> host_step(const Data& d, std::int64_t step, double lr, bool& applied) {
        Model& m = st->model();
        const std::int64_t M = st->strategy().micro_batch;
        const bool lowp = st->strategy().compute_dtype != DType::f32;
        m.zero_grad();
        double loss = 0;
        std::int64_t correct = 0;
        for (std::int64_t r0 = 0; r0 < B; r0 += M) {
            const std::int64_t n = std::min(M, B - r0);
            upload(d, r0, n);
            Tensor xs = st->x_staging.slice0(0, n), xm = lowp ? st->x_model.slice0(0, n) : xs;
            if (lowp) be->copy(xs, xm);
            Tensor logits = m.forward(xm, true, static_cast<std::uint64_t>(step * B + r0));
            Tensor g = st->dlogits.slice0(0, n);
            const float share = static_cast<float>(double(n) / double(B));
            LossResult r;
            if (spec.loss.type == "mse") {
                Tensor ts = st->target_staging.slice0(0, n), tm = lowp ? st->target_model.slice0(0, n) : ts;
                if (lowp) be->copy(ts, tm);
                r = be->mse_loss(logits, tm, g, share * st->loss_scale());
            } else {
                Tensor yb = st->labels.slice0(0, n);
                r = be->softmax_cross_entropy(logits, yb, 0.0f, g, share * st->loss_scale());
            }
            loss += r.loss * share;
            correct += r.correct;
            m.backward(g);
        }
        applied = st->optimizer_step(lr);
        return {loss, correct};
    }
    // The device step: nothing returns to the host inside; the figures come through the ring; the
    // input goes through upload_next / take_upload (on the CPU: copied at once).
    void device_step(const Data& d, std::int64_t step, double lr, StepFigureRing& ring) {
        const std::int64_t M = st->strategy().micro_batch;
        const std::int64_t per = shape_numel(spec.input_shape);
        st->begin_device_step(lr);
        for (std::int64_t r0 = 0; r0 < B; r0 += M) {
            const std::int64_t n = std::min(M, B - r0);
            std::vector<float> onehot;
            if (spec.loss.type == "mse") {
                onehot.assign(static_cast<std::size_t>(n * spec.num_classes), 0.0f);
                for (std::int64_t i = 0; i < n; ++i)
                    onehot[static_cast<std::size_t>(i * spec.num_classes + d.y[r0 + i])] = 1;
            }
            st->upload_next(d.x.data() + r0 * per, d.y.data() + r0, onehot.empty() ? nullptr : onehot.data(), n);
            st->take_upload(n);
            st->device_micro_step(n, static_cast<float>(double(n) / double(B)), static_cast<std::uint64_t>(step * B + r0));
        }
        st->device_optimizer_step();
        ring.push(step, st->stats, st->control);
    }
    std::vector<float> master_or_params() {
        Tensor& p = st->model().parameters();
        std::vector<float> out(static_cast<std::size_t>(p.numel()));
        if (p.dtype() == DType::f32) {
            be->copy_to_host(p, out.data());
        } else {
            std::vector<std::uint16_t> h(out.size());
            be->copy_to_host(p, h.data());
            for (std::size_t i = 0; i < h.size(); ++i)
                out[i] = p.dtype() == DType::bf16 ? bf16_to_f32(h[i]) : f16_to_f32(h[i]);
        }
        return out;
    }
};

ModelSpec small_resnet() { return preset_model("resnet-mini", {1, 12, 12}, 10); }

}  // namespace

class DeviceStepTest : public QObject {
    Q_OBJECT

private slots:
    void deviceStepEqualsHostStep_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("precision");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<int>("micro");
        QTest::addColumn<bool>("mse");
        QTest::newRow("seed-cnn fp32 sgd+momentum") << "seed-cnn" << "fp32" << "sgd" << 0 << false;
        QTest::newRow("resnet-mini fp32 adamw, 2 micro-batches") << "resnet-mini" << "fp32" << "adamw" << 4 << false;
        QTest::newRow("resnet-mini bf16 adam (master weights)") << "resnet-mini" << "bf16" << "adam" << 0 << false;
        QTest::newRow("seed-cnn fp16 sgd (loss scaling, overflow skips)") << "seed-cnn" << "fp16" << "sgd" << 0 << false;
        QTest::newRow("mlp fp32 sgd, mse loss") << "mlp" << "fp32" << "sgd" << 0 << true;
    }
    void deviceStepEqualsHostStep() {
        QFETCH(QString, preset);
        QFETCH(QString, precision);
        QFETCH(QString, optimizer);
        QFETCH(int, micro);
        QFETCH(bool, mse);
        ModelSpec spec = preset == "resnet-mini" ? small_resnet() : preset_model(preset.toStdString());
        if (mse) spec.loss.type = "mse";
        StrategyConfig sc;
        sc.precision = precision.toStdString();
        sc.micro_batch = micro;
        // fp16: a large initial scale overflows first, so the first steps are skipped and halve it, and
        // a growth interval of 2 doubles it again: every branch of the loss-scale rule runs
        sc.loss_scale_init = 1048576.0;
        sc.loss_scale_growth_interval = 2;
        OptimizerConfig o;
        o.kind = optimizer.toStdString();
        o.lr = optimizer == "sgd" ? 0.05 : 1e-3;
        o.momentum = optimizer == "sgd" ? 0.9 : 0.0;
        o.weight_decay = 1e-3;
        const std::int64_t B = 8;
        Run host(spec, sc, B, o), dev(spec, sc, B, o);
        StepFigureRing ring(*dev.be, 4);
        std::vector<StepFigures> figures;
        std::vector<std::pair<double, std::int64_t>> host_figures;
        std::vector<bool> applied;
        const int steps = 8;
        for (int s = 0; s < steps; ++s) {
            const Data d = random_batch(spec, B, 100 + s);
            const double lr = o.lr * (1.0 - 0.1 * s);  // a schedule: the rate changes every step
            bool ok = false;
            host_figures.push_back(host.host_step(d, s, lr, ok));
            applied.push_back(ok);
            dev.device_step(d, s, lr, ring);
            for (const auto& f : ring.drain()) figures.push_back(f);
        }
        QCOMPARE(int(figures.size()), steps);
        int skipped = 0;
        for (int s = 0; s < steps; ++s) {
            QCOMPARE(figures[s].step, std::int64_t(s));
            QCOMPARE(figures[s].loss, host_figures[s].first);  // bit for bit
            QCOMPARE(figures[s].correct, host_figures[s].second);
            QCOMPARE(figures[s].skipped, !applied[s]);
            QCOMPARE(figures[s].bad_labels, std::int64_t(0));
            skipped += !applied[s];
        }
        if (precision == "fp16") QVERIFY2(skipped >= 1, "the 2^20 loss scale must overflow at least once");
        else QCOMPARE(skipped, 0);
        QCOMPARE(figures.back().skipped_total, host.st->skipped_steps());
        QCOMPARE(figures.back().loss_scale, double(host.st->loss_scale()));
        QCOMPARE(figures.back().optimizer_steps, std::int64_t(steps - skipped));
        dev.st->sync_control_to_host();
        QCOMPARE(dev.st->loss_scale(), host.st->loss_scale());
        QCOMPARE(dev.st->skipped_steps(), host.st->skipped_steps());
        const auto a = host.master_or_params(), b = dev.master_or_params();
        QCOMPARE(a.size(), b.size());
        QVERIFY(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
        // and the run really trained: the weights moved from where the same seed starts
        Run fresh(spec, sc, B, o);
        const auto c = fresh.master_or_params();
        QVERIFY(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) != 0);
    }

    void badLabelIsRecordedAndWritesNothing() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        Allocator& a = be->allocator();
        Tensor z = Tensor::empty(a, {4, 3}, DType::f32, MemCategory::other);
        Tensor dz = Tensor::empty(a, {4, 3}, DType::f32, MemCategory::other);
        Tensor lab = Tensor::empty(a, {4}, DType::i64, MemCategory::other);
        Tensor stats = Tensor::empty(a, {kStepStatsFields}, DType::f64, MemCategory::other);
        Tensor none;
        const float zv[12] = {0.1f, 0.2f, 0.3f, 1, 2, 3, -1, 0, 1, 0.5f, 0.5f, 0.5f};
        const std::int64_t lv[4] = {0, 2, 7, -1};
        be->copy_from_host(zv, z);
        be->copy_from_host(lv, lab);
        be->fill(dz, 42.0);
        be->softmax_cross_entropy_into(z, lab, 0.0f, dz, 1.0f, none, stats, 1.0);
        double s[kStepStatsFields];
        be->copy_to_host(stats, s);
        QCOMPARE(s[kStatBadLabels], 2.0);
        QCOMPARE(s[kStatBadLabel], 7.0);
        QCOMPARE(s[kStatBadRow], 2.0);
        QCOMPARE(s[kStatLoss], 0.0);
        for (int i = 0; i < 12; ++i) QCOMPARE(dz.data<float>()[i], 42.0f);  // validated first: not written
        try {
            be->softmax_cross_entropy(z, lab, 0.0f, dz, 1.0f);
            QFAIL("expected an error naming the label");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("label 7 in row 2") != std::string::npos, e.what());
        }
        for (int i = 0; i < 12; ++i) QCOMPARE(dz.data<float>()[i], 42.0f);
    }

    void nanRowsArgmaxIsTheFirstNaN() {
        // as torch.argmax: a row with a NaN has its (first) NaN as the maximum
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        Allocator& a = be->allocator();
        Tensor z = Tensor::empty(a, {3, 4}, DType::f32, MemCategory::other);
        Tensor lab = Tensor::empty(a, {3}, DType::i64, MemCategory::other);
        const float nan = std::nanf("");
        const float zv[12] = {0.5f, nan, 9.0f, nan, /**/ nan, 1, 2, 3, /**/ 1, 5, 2, 5};
        const std::int64_t lv[3] = {1, 0, 1};  // first NaN at 1; first NaN at 0; first maximum at 1
        be->copy_from_host(zv, z);
        be->copy_from_host(lv, lab);
        Tensor none;
        const LossResult r = be->softmax_cross_entropy(z, lab, 0.0f, none, 1.0f);
        QCOMPARE(r.correct, std::int64_t(3));
        QVERIFY(std::isnan(r.loss));
        Tensor t = Tensor::empty(a, {3, 4}, DType::f32, MemCategory::other);
        const float tv[12] = {0, 1, 0, 0, /**/ 1, 0, 0, 0, /**/ 0, 1, 0, 0};
        be->copy_from_host(tv, t);
        QCOMPARE(be->mse_loss(z, t, none, 1.0f).correct, std::int64_t(3));
    }

    void stepControlRules() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        Tensor c = Tensor::empty(be->allocator(), {kStepControlFields}, DType::f64, MemCategory::other);
        double v[kStepControlFields] = {};
        v[kCtlLossScale] = 8;
        be->copy_from_host(v, c);
        auto read = [&] {
            be->copy_to_host(c, v);
            return std::vector<double>(v, v + kStepControlFields);
        };
        // two good steps with growth interval 2: the scale doubles, the count restarts
        be->step_control_end(c, true, 2);
        QCOMPARE(read()[kCtlGoodSteps], 1.0);
        be->step_control_end(c, true, 2);
        auto r = read();
        QCOMPARE(r[kCtlLossScale], 16.0);
        QCOMPARE(r[kCtlGoodSteps], 0.0);
        QCOMPARE(r[kCtlOptStep], 2.0);
        // an overflow: skipped, halved, count restarted, the optimizer step count unchanged
        Tensor g = Tensor::empty(be->allocator(), {5}, DType::f32, MemCategory::other);
        const float gv[5] = {1, 2, INFINITY, 4, 5};
        be->copy_from_host(gv, g);
        be->all_finite_into(g, c);
        QCOMPARE(read()[kCtlFoundInf], 1.0);
        be->step_control_end(c, true, 2);
        r = read();
        QCOMPARE(r[kCtlSkipped], 1.0);
        QCOMPARE(r[kCtlLossScale], 8.0);
        QCOMPARE(r[kCtlOptStep], 2.0);
        // the scale never drops below 1
        v[kCtlLossScale] = 1;
        v[kCtlFoundInf] = 1;
        be->copy_from_host(v, c);
        be->step_control_end(c, true, 2);
        QCOMPARE(read()[kCtlLossScale], 1.0);
        // an update with found_inf set changes nothing
        Tensor p = Tensor::empty(be->allocator(), {5}, DType::f32, MemCategory::other);
        be->fill(p, 1.0);
        SgdArgs a;
        Tensor none;
        be->sgd_update_ctl(p, g, none, a, c);
        for (int i = 0; i < 5; ++i) QCOMPARE(p.data<float>()[i], 1.0f);
    }

    void figureRingKeepsOrderAndBoundsTheLead() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        Tensor stats = Tensor::empty(be->allocator(), {kStepStatsFields}, DType::f64, MemCategory::other);
        Tensor c = Tensor::empty(be->allocator(), {kStepControlFields}, DType::f64, MemCategory::other);
        StepFigureRing ring(*be, 3);
        std::vector<StepFigures> out;
        for (int s = 0; s < 7; ++s) {
            double v[kStepStatsFields] = {};
            v[kStatLoss] = 0.5 * s;
            v[kStatCorrect] = s;
            be->copy_from_host(v, stats);
            for (const auto& f : ring.push(s, stats, c)) out.push_back(f);
            QVERIFY(ring.pending() <= 3);
        }
        for (const auto& f : ring.drain()) out.push_back(f);
        QCOMPARE(int(out.size()), 7);
        for (int s = 0; s < 7; ++s) {
            QCOMPARE(out[s].step, std::int64_t(s));
            QCOMPARE(out[s].loss, 0.5 * s);  // each slot kept its own step's figures
            QCOMPARE(out[s].correct, std::int64_t(s));
        }
    }

    void batchNormCountsBatchesOnTheDevice() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        ModelSpec spec = small_resnet();
        ModelOptions mo;
        mo.batch = 4;
        // checkpointed blocks recompute their forward in backward (all but the last): no second count
        for (int b = 0; b < static_cast<int>(checkpoint_blocks(spec).size()); ++b) mo.checkpoint_blocks.push_back(b);
        QVERIFY(mo.checkpoint_blocks.size() >= 2);
        Model m(spec, *be, mo);
        const Data d = random_batch(spec, 4, 3);
        Tensor x = Tensor::empty(be->allocator(), {4, 1, 12, 12}, DType::f32, MemCategory::data);
        be->copy_from_host(d.x.data(), x);
        for (int i = 0; i < 3; ++i) {
            Tensor logits = m.forward(x, true, 0);
            Tensor g = Tensor::empty(be->allocator(), logits.shape(), DType::f32, MemCategory::other);
            be->fill(g, 0.01);
            m.backward(g);
        }
        m.forward(x, false, 0);  // evaluation does not count
        int counters = 0;
        for (const auto& t : m.state_dict())
            if (t.name.find("num_batches_tracked") != std::string::npos) {
                std::int64_t n = -1;
                be->copy_to_host(t.tensor, &n);
                QCOMPARE(n, std::int64_t(3));
                ++counters;
            }
        QVERIFY(counters >= 5);
        Tensor single = Tensor::empty(be->allocator(), {1}, DType::i64, MemCategory::other);
        be->increment(single, 41);
        be->increment(single);
        QCOMPARE(single.data<std::int64_t>()[0], std::int64_t(42));
    }

    void selfTestComparesAgainstTheCpu() {
        auto a = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        auto b = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        const SelfTestResult ok = backend_self_test(*a, *b);
        QVERIFY2(ok.ok, ok.detail.c_str());
        // a backend whose GEMM is off by a little fails, naming it
        struct BadGemm : CpuBackend {
            using CpuBackend::CpuBackend;
            void do_gemm(bool ta, bool tb, float alpha, const Tensor& x, const Tensor& w, float beta,
                         Tensor& c) override {
                CpuBackend::do_gemm(ta, tb, alpha * 1.01f, x, w, beta, c);
            }
        } bad(1, std::make_shared<MemoryLedger>());
        const SelfTestResult r = backend_self_test(bad, *b);
        QVERIFY(!r.ok);
        QVERIFY2(r.detail.find("gemm differs from the CPU") != std::string::npos, r.detail.c_str());
        // one whose convolution throws fails, saying so
        struct BadConv : CpuBackend {
            using CpuBackend::CpuBackend;
            void do_conv2d_backward_data(const Tensor&, const Tensor&, Tensor&, const Conv2dParams&, Tensor&) override {
                throw Error("no kernel for this shape");
            }
        } bad2(1, std::make_shared<MemoryLedger>());
        const SelfTestResult r2 = backend_self_test(bad2, *b);
        QVERIFY(!r2.ok);
        QVERIFY2(r2.detail.find("convolution failed: no kernel for this shape") != std::string::npos, r2.detail.c_str());
    }

    void autoDeviceSaysWhichAndWhy() {
        const AutoDevice& a = auto_device();
        const std::string note = a.note.english();
        qInfo("%s", note.c_str());
        QVERIFY2(note.rfind("device auto: ", 0) == 0, note.c_str());
        if (cuda_status().state != CudaStatus::State::available) {
            QCOMPARE(a.device, std::string("cpu"));
            // the reason, except on a machine without an NVIDIA driver and without the module, where the
            // missing module is not the reason (a build with no GPU to use builds none)
            const bool no_driver = !std::filesystem::exists("/proc/driver/nvidia/version");
            if (cuda_status().state == CudaStatus::State::module_missing && no_driver)
                QCOMPARE(a.note.id, std::string("device.auto_no_nvidia"));
            else
                QVERIFY2(note.find(cuda_status().reason) != std::string::npos, note.c_str());
            QVERIFY2(note.find("training on the CPU") != std::string::npos, note.c_str());
        } else {
            QCOMPARE(a.device, std::string(a.self_test.ok ? "cuda:0" : "cpu"));
        }
        QCOMPARE(resolve_device("auto"), a.device);
        Message made;
        auto be = make_backend("auto", 1, nullptr, false, &made);
        QCOMPARE(made.english(), note);
        QVERIFY(made.translatable());  // the window and the CLI show it in the user's language
        QCOMPARE(be->device().str(), a.device);
    }

    void devicesReportSaysWhy() {
        // what `headroom devices` prints (app/ calls device_report / device_report_text)
        const DeviceReport r = device_report();
        const std::string text = device_report_text(r);
        qInfo("%s", text.c_str());
        QVERIFY2(text.rfind("cpu      ", 0) == 0, text.c_str());
        QVERIFY(r.cpu.capacity_bytes > 0);
        QCOMPARE(int(r.cuda.state), int(cuda_status().state));
        if (r.cuda.state != CudaStatus::State::available) {
            QVERIFY(r.gpus.empty());
            const std::string want = std::string("cuda     not available (") + cuda_state_name(r.cuda.state) + "): " + r.cuda.reason;
            QVERIFY2(text.find(want) != std::string::npos, text.c_str());
            QCOMPARE(r.cuda_line.id, std::string("device.cuda_unavailable"));
        } else {
            QCOMPARE(int(r.gpus.size()), cuda_device_count());
            QVERIFY2(text.find("CUDA context") != std::string::npos, text.c_str());
            QVERIFY2(text.find("cuBLAS workspace") != std::string::npos, text.c_str());
        }
    }

    // The trainer on the device step (figures through the ring, a few steps late) against the host step:
    // the same step events, epoch figures, test accuracy and final weights, bit for bit; with gradient
    // accumulation and a partial last batch; a checkpoint and a stop in the middle land on the right step.
    void trainerDeviceStepEqualsItsHostStep() {
        struct Run {
            TrainResult result;
            std::vector<StepEvent> steps;
            SafeTensorsFile weights;
            bool said_device_step = false;  // the log's line about the step on the device
        };
        auto run = [](const char* mode, std::int64_t micro, const std::string& folder, int stop_at) -> Run {
            qputenv("HEADROOM_DEVICE_STEP", mode);
            TrainConfig c;
            c.model = preset_model("seed-cnn");
            c.data = "synthetic";
            c.device = "cpu";
            c.threads = 2;
            c.batch = 24;
            c.strategy.micro_batch = micro;
            c.epochs = 2;
            c.train_limit = 200;  // 8 full batches and one of 8 rows per epoch
            c.test_limit = 64;
            c.seed = 5;
            c.optimizer.lr = 0.05;
            c.save_every_steps = 5;
            Run r;
            Trainer* self = nullptr;
            TrainCallbacks cb;
            cb.on_step = [&](const StepEvent& e) {
                r.steps.push_back(e);
                if (stop_at > 0 && e.step == stop_at) self->request_stop();
            };
            std::vector<std::string> logs;
            cb.on_log = [&](const LogEvent& e) { logs.push_back(e.message); };
            Trainer t(c, cb);
            self = &t;
            if (!folder.empty()) t.set_run_folder(folder);
            r.result = t.run();
            const std::string w = hrtest::temp_dir("device-step-weights") + "/w.safetensors";
            t.save_weights(w);
            r.weights = read_safetensors(w);
            qunsetenv("HEADROOM_DEVICE_STEP");
            for (const auto& l : logs) r.said_device_step = r.said_device_step || l.find("without waiting for it") != std::string::npos;
            return r;
        };
        auto same = [](const Run& a, const Run& b) {
            QCOMPARE(a.result.status, b.result.status);
            QCOMPARE(a.result.steps, b.result.steps);
            QCOMPARE(a.steps.size(), b.steps.size());
            for (std::size_t i = 0; i < a.steps.size(); ++i) {
                QCOMPARE(a.steps[i].step, b.steps[i].step);
                QCOMPARE(a.steps[i].epoch, b.steps[i].epoch);
                QCOMPARE(a.steps[i].step_in_epoch, b.steps[i].step_in_epoch);
                QCOMPARE(a.steps[i].loss, b.steps[i].loss);  // bit for bit
                QCOMPARE(a.steps[i].accuracy, b.steps[i].accuracy);
                QCOMPARE(a.steps[i].lr, b.steps[i].lr);
            }
            QCOMPARE(a.result.epochs.size(), b.result.epochs.size());
            for (std::size_t i = 0; i < a.result.epochs.size(); ++i) {
                QCOMPARE(a.result.epochs[i].train_loss, b.result.epochs[i].train_loss);
                QCOMPARE(a.result.epochs[i].train_accuracy, b.result.epochs[i].train_accuracy);
                QCOMPARE(a.result.epochs[i].test_accuracy, b.result.epochs[i].test_accuracy);
            }
            QCOMPARE(a.weights.tensors.size(), b.weights.tensors.size());
            for (std::size_t i = 0; i < a.weights.tensors.size(); ++i) {
                QCOMPARE(a.weights.tensors[i].name, b.weights.tensors[i].name);
                QVERIFY2(a.weights.tensors[i].data == b.weights.tensors[i].data, a.weights.tensors[i].name.c_str());
            }
        };
        for (std::int64_t micro : {std::int64_t(0), std::int64_t(8)}) {  // one micro-batch a step; three
            const Run host = run("0", micro, "", 0), dev = run("1", micro, "", 0);
            QVERIFY(!host.said_device_step);
            QVERIFY2(dev.said_device_step, "the run did not say it takes the step on the device");
            QCOMPARE(host.result.steps, std::int64_t(18));
            QCOMPARE(int(host.steps.size()), 18);
            same(host, dev);
        }
        // a run folder (a checkpoint every 5 steps) and a stop at step 7: the same checkpoints, the same stop
        const std::string hf = hrtest::temp_dir("device-step-host"), df = hrtest::temp_dir("device-step-dev");
        const Run host = run("0", 0, hf, 7), dev = run("1", 0, df, 7);
        QCOMPARE(host.result.status, std::string("stopped"));
        same(host, dev);
        for (const char* ck : {"checkpoint-000000005.safetensors", "checkpoint-000000007.safetensors"}) {
            const std::string a = hf + "/" + ck, b = df + "/" + ck;
            QVERIFY2(std::filesystem::exists(a), a.c_str());
            QVERIFY2(std::filesystem::exists(b), b.c_str());
            const SafeTensorsFile fa = read_safetensors(a), fb = read_safetensors(b);
            QCOMPARE(fa.tensors.size(), fb.tensors.size());
            for (std::size_t i = 0; i < fa.tensors.size(); ++i)
                QVERIFY2(fa.tensors[i].data == fb.tensors[i].data, (std::string(ck) + " " + fa.tensors[i].name).c_str());
        }
    }
};

QTEST_APPLESS_MAIN(DeviceStepTest)
#include "test_device_step.moc"
