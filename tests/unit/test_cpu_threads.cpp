// The CPU backend's thread pool (backend/cpu/thread_pool.h): every chunk runs exactly once, slots are
// never shared by two running chunks, nested and concurrent calls complete, exceptions reach the caller;
// and what the backend computes on it is bitwise reproducible, for convolutions and batch norm even
// across thread counts.
#include <QtTest/QtTest>

#include <sched.h>

#include <atomic>
#include <mutex>
#include <set>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "nn/model.h"
#include "nn/model_spec.h"

using namespace hr;

namespace {

Tensor random_tensor(Backend& be, const Shape& s, std::uint64_t seed) {
    Tensor t = Tensor::empty(be.allocator(), s, DType::f32, MemCategory::other);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(g);
    return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
    return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

// conv forward/backward and batch norm at C -> K channels with 1, 2 and 3 threads: the same bits
static void conv_and_batch_norm_at_channels(std::int64_t C, std::int64_t K) {
    std::vector<std::unique_ptr<CpuBackend>> bes;
    for (int t : {1, 2, 3}) bes.push_back(std::make_unique<CpuBackend>(t, nullptr));
    Conv2dParams p;
    p.pad_h = p.pad_w = 1;
    const Shape xs{20, C, 12, 12}, ws{K, C, 3, 3}, ys{20, K, 12, 12};
    std::vector<Tensor> ys_, dxs, dws, bny, bndx, dxs2, dws2;
    for (auto& be : bes) {
        Tensor x = random_tensor(*be, xs, 1), w = random_tensor(*be, ws, 2), dy = random_tensor(*be, ys, 3);
        Tensor y = Tensor::empty(be->allocator(), ys, DType::f32, MemCategory::other);
        Tensor dx = Tensor::empty(be->allocator(), xs, DType::f32, MemCategory::other);
        Tensor dw = Tensor::empty(be->allocator(), ws, DType::f32, MemCategory::other);
        be->fill(dw, 0.0);
        Tensor work = Tensor::empty(be->allocator(), {std::int64_t(be->conv2d_workspace_bytes(xs, ws, ys, p, DType::f32))},
                                    DType::u8, MemCategory::workspace);
        be->conv2d_forward(x, w, Tensor(), y, p, work);
        be->conv2d_backward_data(dy, w, dx, p, work);
        Tensor no_bias;
        be->conv2d_backward_filter(x, dy, dw, no_bias, p, work);
        ys_.push_back(y);
        dxs.push_back(dx);
        dws.push_back(dw);
        // and both backward calls in one (Backend::conv2d_backward)
        Tensor dx2 = Tensor::empty(be->allocator(), xs, DType::f32, MemCategory::other);
        Tensor dw2 = Tensor::empty(be->allocator(), ws, DType::f32, MemCategory::other);
        be->fill(dw2, 0.0);
        be->conv2d_backward(x, dy, w, dx2, dw2, no_bias, p, work);
        dxs2.push_back(dx2);
        dws2.push_back(dw2);
        Tensor g = random_tensor(*be, {K}, 4), b = random_tensor(*be, {K}, 5);
        Tensor m = Tensor::empty(be->allocator(), {K}, DType::f32, MemCategory::other), is = m;
        is = Tensor::empty(be->allocator(), {K}, DType::f32, MemCategory::other);
        Tensor out = Tensor::empty(be->allocator(), ys, DType::f32, MemCategory::other);
        Tensor bdx = Tensor::empty(be->allocator(), ys, DType::f32, MemCategory::other);
        Tensor dg = Tensor::empty(be->allocator(), {K}, DType::f32, MemCategory::other), db = dg;
        db = Tensor::empty(be->allocator(), {K}, DType::f32, MemCategory::other);
        be->fill(dg, 0.0);
        be->fill(db, 0.0);
        Tensor none;
        be->batchnorm_forward_train(y, g, b, out, m, is, none, none, 0.1f, 1e-5f);
        be->batchnorm_backward(y, dy, g, m, is, bdx, dg, db);
        bny.push_back(out);
        bndx.push_back(bdx);
    }
    for (std::size_t i = 1; i < bes.size(); ++i) {
        QVERIFY(same_bits(ys_[0], ys_[i]));
        QVERIFY(same_bits(dxs[0], dxs[i]));
        QVERIFY(same_bits(dws[0], dws[i]));
        QVERIFY(same_bits(dxs2[0], dxs2[i]));
        QVERIFY(same_bits(dws2[0], dws2[i]));
        QVERIFY(same_bits(bny[0], bny[i]));
        QVERIFY(same_bits(bndx[0], bndx[i]));
    }
}

class TestCpuThreads : public QObject {
    Q_OBJECT

public:
    // The pool stops yielding to a foreground thread busy for more than 25 ms on end; a loaded test
    // machine can take longer than that between two lines, so the tests hold it for 10 minutes.
    TestCpuThreads() {
        qputenv("HEADROOM_CPU_GUI_HOLD_MS", "600000");
        qputenv("HEADROOM_CPU_YIELD_TO_GUI", "1");  // opt-in (off by default): read once, at the pool's first use
    }

private slots:
    void everyChunkOnce() {
        for (int threads : {1, 2, 3, 8})
            for (std::int64_t n : {0, 1, 2, 7, 1000}) {
                std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
                for (auto& h : hits) h = 0;
                std::atomic<int> bad_slot{0};
                cpu::parallel_for_slots(threads, n, [&](std::int64_t c, int slot) {
                    if (slot < 0 || slot >= cpu::thread_slots(threads)) bad_slot = 1;
                    hits[static_cast<std::size_t>(c)].fetch_add(1);
                });
                for (auto& h : hits) QCOMPARE(h.load(), 1);
                QCOMPARE(bad_slot.load(), 0);
            }
    }

    void slotsAreExclusive() {
        // Chunks that sleep a little overlap in time; a slot must never be in use twice at once.
        const int threads = 4;
        std::vector<std::atomic<int>> in_use(cpu::thread_slots(threads));
        for (auto& u : in_use) u = 0;
        std::atomic<int> clash{0}, ran{0};
        cpu::parallel_for_slots(threads, 64, [&](std::int64_t, int slot) {
            if (in_use[slot].fetch_add(1) != 0) clash = 1;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            in_use[slot].fetch_sub(1);
            ran.fetch_add(1);
        });
        QCOMPARE(ran.load(), 64);
        QCOMPARE(clash.load(), 0);
    }

    void nestedAndConcurrentCalls() {
        std::atomic<long> total{0};
        cpu::parallel_for(2, 8, [&](std::int64_t) {
            cpu::parallel_for(2, 10, [&](std::int64_t) { total.fetch_add(1); });  // runs serially inside
        });
        QCOMPARE(total.load(), 80L);
        // two threads calling at once: one gets the pool, the other runs serially; both complete
        std::atomic<long> a{0}, b{0};
        std::thread other([&] {
            for (int r = 0; r < 200; ++r) cpu::parallel_for(2, 16, [&](std::int64_t) { b.fetch_add(1); });
        });
        for (int r = 0; r < 200; ++r) cpu::parallel_for(2, 16, [&](std::int64_t) { a.fetch_add(1); });
        other.join();
        QCOMPARE(a.load(), 3200L);
        QCOMPARE(b.load(), 3200L);
    }

    void exceptionReachesCaller() {
        bool caught = false;
        try {
            cpu::parallel_for(2, 50, [&](std::int64_t c) {
                if (c == 37) throw std::runtime_error("chunk 37");
            });
        } catch (const std::runtime_error& e) {
            caught = std::string(e.what()) == "chunk 37";
        }
        QVERIFY(caught);
        std::atomic<int> after{0};
        cpu::parallel_for(2, 20, [&](std::int64_t) { after.fetch_add(1); });
        QCOMPARE(after.load(), 20);
    }

    void manySmallCalls() {
        // the hand-over between caller and worker, thousands of times (no lost wake-ups, no hangs)
        std::atomic<long> total{0};
        for (int r = 0; r < 20000; ++r) cpu::parallel_for(2, 2, [&](std::int64_t c) { total.fetch_add(c + 1); });
        QCOMPARE(total.load(), 60000L);
        QVERIFY(cpu::pool_workers() >= 1);
    }

    void convAndBatchNormIndependentOfThreadCount() {
        // fast paths: per-sample chunks and fixed 16-chunk batch sums, so 1, 2 and 3 threads agree bitwise;
        // 8 -> 16 channels on the tap kernels, 16 -> 32 on oneDNN where the build has it (cpu_conv_dnnl.h)
        for (const std::int64_t C : {8, 16}) {
            conv_and_batch_norm_at_channels(C, 2 * C);
            if (QTest::currentTestFailed()) return;
        }
    }

    void foregroundWorkTakesThreads() {
        // While a foreground thread (the GUI) works and the call's threads plus it exceed the CPUs the OS
        // lets this process use (sched_getaffinity, read here independently), a call runs on fewer
        // threads: on 2 CPUs, 2 threads become the caller alone. Afterwards the workers come back.
        cpu_set_t set;
        CPU_ZERO(&set);
        QCOMPARE(sched_getaffinity(0, sizeof set, &set), 0);
        const int cpus = CPU_COUNT(&set);
        QCOMPARE(cpu::available_cpus(), cpus);
        const int threads = std::min(cpus, cpu::kMaxThreads);
        QCOMPARE(cpu::effective_threads(threads), threads);
        auto distinct_threads = [&] {
            std::mutex mu;
            std::set<std::thread::id> ids;
            for (int r = 0; r < 50; ++r)
                cpu::parallel_for(threads, 64, [&](std::int64_t) {
                    volatile double x = 0;
                    for (int i = 0; i < 20000; ++i) x = x + i;
                    std::lock_guard<std::mutex> lock(mu);
                    ids.insert(std::this_thread::get_id());
                });
            return int(ids.size());
        };
        cpu::foreground_begin();
        const int want = std::max(1, cpus - 1);
        QCOMPARE(cpu::effective_threads(threads), std::min(threads, want));
        const int during = distinct_threads();
        cpu::foreground_end();
        QVERIFY2(during <= std::min(threads, want), qPrintable(QString("%1 threads ran").arg(during)));
        QCOMPARE(cpu::effective_threads(threads), threads);
        if (threads >= 2) QVERIFY(distinct_threads() >= 2);  // the workers wake up again
    }

    void foregroundWorkKeepsResults() {
        // The same resnet-mini step at 2 threads with and without foreground work: bitwise equal gradients.
        ModelSpec spec = preset_model("resnet-mini");
        std::vector<std::vector<float>> grads;
        for (int run = 0; run < 2; ++run) {
            if (run == 1) cpu::foreground_begin();
            CpuBackend be(2, nullptr);
            ModelOptions o;
            o.batch = 16;
            Model m(spec, be, o);
            Tensor x = random_tensor(be, with_batch(16, spec.input_shape), 7);
            Tensor logits = m.forward(x, true, 0);
            Tensor dl = random_tensor(be, logits.shape(), 8);
            m.zero_grad();
            m.backward(dl);
            std::vector<float> g(static_cast<std::size_t>(m.gradients().numel()));
            be.copy_to_host(m.gradients(), g.data());
            grads.push_back(g);
            if (run == 1) cpu::foreground_end();
        }
        QVERIFY(std::memcmp(grads[0].data(), grads[1].data(), grads[0].size() * sizeof(float)) == 0);
    }

    void trainingStepReproducible() {
        // the same resnet-mini step twice at 2 threads: gradients bitwise equal
        ModelSpec spec = preset_model("resnet-mini");
        std::vector<std::vector<float>> grads;
        for (int run = 0; run < 2; ++run) {
            CpuBackend be(2, nullptr);
            ModelOptions o;
            o.batch = 16;
            Model m(spec, be, o);
            Tensor x = random_tensor(be, with_batch(16, spec.input_shape), 7);
            Tensor logits = m.forward(x, true, 0);
            Tensor dl = random_tensor(be, logits.shape(), 8);
            m.zero_grad();
            m.backward(dl);
            std::vector<float> g(static_cast<std::size_t>(m.gradients().numel()));
            be.copy_to_host(m.gradients(), g.data());
            grads.push_back(g);
        }
        QVERIFY(grads[0].size() > 1000);
        QVERIFY(std::memcmp(grads[0].data(), grads[1].data(), grads[0].size() * sizeof(float)) == 0);
    }
};

QTEST_APPLESS_MAIN(TestCpuThreads)
#include "test_cpu_threads.moc"
