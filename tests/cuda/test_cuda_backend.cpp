// The CUDA backend against the CPU reference (docs/design.md decision 4): every op, forward and backward,
// on random inputs at several shapes and dtypes. Tolerances are relative to the reference tensor's
// largest magnitude (no floor of 1: a zero result where the reference is not zero fails): f32 1e-5,
// tf32 1e-3, bf16/f16 1e-2; a NaN never passes. Also what issue 11 found by reading: a convolution at
// a batch smaller than its workspace was planned for, ops on offset views the way the model slices its
// flat buffers, grids beyond 65,535 blocks, an upload into a buffer a running kernel still reads,
// max-pool backward bit-identical run to run, the step-control ops against the CPU, ops from two
// threads. The backend comes through the module loader (cuda_backend.h). Skips without a CUDA device,
// except the checks of what happens when there is none (those run everywhere).
#include <QtTest/QtTest>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_sizes.h"
#include "backend/step_figures.h"
#include "base/dtype.h"
#include "base/error.h"

#include "op_diff.h"

using namespace hr;
using Vec = std::vector<double>;

namespace {

std::mt19937_64& rng() {
    static std::mt19937_64 g(2024);
    return g;
}

Vec random_vec(std::int64_t n, double lo = -1.0, double hi = 1.0) {
    std::uniform_real_distribution<double> d(lo, hi);
    Vec v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(rng());
    return v;
}

void write_host(void* p, DType dt, const Vec& v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
        switch (dt) {
            case DType::f32: static_cast<float*>(p)[i] = float(v[i]); break;
            case DType::f64: static_cast<double*>(p)[i] = v[i]; break;
            case DType::bf16: static_cast<std::uint16_t*>(p)[i] = f32_to_bf16(float(v[i])); break;
            case DType::f16: static_cast<std::uint16_t*>(p)[i] = f32_to_f16(float(v[i])); break;
            case DType::i32: static_cast<std::int32_t*>(p)[i] = std::int32_t(v[i]); break;
            case DType::i64: static_cast<std::int64_t*>(p)[i] = std::int64_t(v[i]); break;
            case DType::u8: static_cast<std::uint8_t*>(p)[i] = std::uint8_t(v[i]); break;
        }
    }
}

Vec read_host(const void* p, DType dt, std::int64_t n) {
    Vec v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        switch (dt) {
            case DType::f32: v[i] = static_cast<const float*>(p)[i]; break;
            case DType::f64: v[i] = static_cast<const double*>(p)[i]; break;
            case DType::bf16: v[i] = bf16_to_f32(static_cast<const std::uint16_t*>(p)[i]); break;
            case DType::f16: v[i] = f16_to_f32(static_cast<const std::uint16_t*>(p)[i]); break;
            case DType::i32: v[i] = static_cast<const std::int32_t*>(p)[i]; break;
            case DType::i64: v[i] = double(static_cast<const std::int64_t*>(p)[i]); break;
            case DType::u8: v[i] = static_cast<const std::uint8_t*>(p)[i]; break;
        }
    }
    return v;
}

double tol_for(DType dt) { return dt == DType::f32 ? 1e-5 : 1e-2; }

// |got - want| <= tol * max|want| elementwise (the reference's own scale, no floor: zeros where the
// reference has values fail); NaN anywhere fails. Reports the first mismatch.
bool close(const Vec& got, const Vec& want, double tol, const QString& what) {
    if (got.size() != want.size()) {
        qWarning("%s: size %zu vs %zu", qPrintable(what), got.size(), want.size());
        return false;
    }
    const double scale = hrtest::record_comparison(got, want, tol, what);  // the op-diff line's figure (op_diff.h)
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double d = std::abs(got[i] - want[i]);
        if (!(d <= tol * scale)) {  // false for NaN
            qWarning("%s: element %zu: gpu %.9g, cpu %.9g (|diff| %.3g > %.3g)", qPrintable(what), i, got[i], want[i],
                     d, tol * scale);
            return false;
        }
    }
    return true;
}

// The same tensor on the CPU reference (c) and on the GPU (g).
struct Pair {
    Tensor c, g;
};

class Harness {
public:
    std::unique_ptr<Backend> cpu = make_cpu_backend(1, std::make_shared<MemoryLedger>());
    std::unique_ptr<Backend> gpu;

    Tensor to_gpu(const Tensor& host) {
        Tensor t = Tensor::empty(gpu->allocator(), host.shape(), host.dtype(), MemCategory::other);
        gpu->copy_from_host(host.raw(), t);
        return t;
    }
    Pair make(const Shape& s, DType dt, const Vec& v) {
        Tensor c = Tensor::empty(cpu->allocator(), s, dt, MemCategory::other);
        write_host(c.raw(), dt, v);
        return {c, to_gpu(c)};
    }
    Pair rnd(const Shape& s, DType dt, double lo = -1.0, double hi = 1.0) {
        return make(s, dt, random_vec(shape_numel(s), lo, hi));
    }
    Pair zeros(const Shape& s, DType dt) {
        return {Tensor::empty(cpu->allocator(), s, dt, MemCategory::other),
                Tensor::empty(gpu->allocator(), s, dt, MemCategory::other)};
    }
    Vec read_gpu(const Tensor& g) {
        std::vector<unsigned char> buf(g.nbytes() + 1);
        gpu->copy_to_host(g, buf.data());
        return read_host(buf.data(), g.dtype(), g.numel());
    }
    static Vec read_cpu(const Tensor& c) { return read_host(c.raw(), c.dtype(), c.numel()); }
    bool same(const Pair& p, double tol, const QString& what) { return close(read_gpu(p.g), read_cpu(p.c), tol, what); }
};

const DType kFloatTypes[] = {DType::f32, DType::bf16, DType::f16};

}  // namespace

class CudaBackendTest : public QObject {
    Q_OBJECT

    std::unique_ptr<Harness> h;


private slots:
    void initTestCase() {
        if (cuda_device_count() > 0) {
            h = std::make_unique<Harness>();
            h->gpu = make_cuda_backend(0, std::make_shared<MemoryLedger>());
            qInfo("GPU backend: %s", h->gpu->name().c_str());
        }
    }

    // --- runs everywhere ----------------------------------------------------------------------------

    void comparisonRejectsNaN() {
        QVERIFY(!close({std::nan("")}, {1.0}, 1e-2, "nan vs number"));
        QVERIFY(!close({1.0}, {std::nan("")}, 1e-2, "number vs nan"));
        QVERIFY(!close({std::nan("")}, {std::nan("")}, 1e-2, "nan vs nan"));
        QVERIFY(close({1.0 + 1e-6}, {1.0}, 1e-5, "within tolerance"));
    }

    void comparisonRejectsZerosForSmallValues() {
        // small gradients (|x| ~ 1e-4): an all-zero result must fail (it passed with the old floor of 1)
        QVERIFY(!close({0.0, 0.0, 0.0}, {1e-4, -2e-4, 5e-5}, 1e-5, "zeros vs small values"));
        QVERIFY(close({1e-4, -2e-4 * (1 + 1e-6), 5e-5}, {1e-4, -2e-4, 5e-5}, 1e-5, "small values"));
        QVERIFY(close({0.0}, {0.0}, 1e-5, "zero vs zero"));
        QVERIFY(!close({1e-30}, {0.0}, 1e-5, "anything vs an all-zero reference"));
    }

    void devicesAndErrorsWithoutDriver() {
        const std::string versions = cuda_versions();
        const CudaStatus st = cuda_status();
        qInfo("cuda_versions(): %s", versions.c_str());
        // the module loaded (whatever the driver says): it names the libraries it was built with
        const bool loaded = st.state == CudaStatus::State::available || st.state == CudaStatus::State::no_driver ||
                            st.state == CudaStatus::State::driver_too_old ||
                            st.state == CudaStatus::State::no_device;
        if (loaded) QVERIFY2(versions.find("cuDNN 9.") != std::string::npos, versions.c_str());
        if (cuda_device_count() > 0) {
            const auto devs = cuda_devices();
            QCOMPARE(int(devs.size()), cuda_device_count());
            for (const auto& d : devs) {
                qInfo("cuda:%d %s, %zu of %zu bytes free, cc %d.%d", d.index, d.name.c_str(), d.free_bytes,
                      d.total_bytes, d.cc_major, d.cc_minor);
                QVERIFY(!d.name.empty());
                QVERIFY(d.total_bytes > 0 && d.free_bytes <= d.total_bytes);
                QVERIFY(d.cc_major >= 1);
            }
            QVERIFY(cuda_unavailable_reason().empty());
            QVERIFY(versions.rfind("CUDA runtime", 0) == 0);
            // A device index that does not exist is an input error naming the devices there are.
            try {
                make_cuda_backend(cuda_device_count(), nullptr);
                QFAIL("expected InputError");
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("does not exist") != std::string::npos, e.what());
            }
            return;
        }
        QCOMPARE(cuda_device_count(), 0);
        QVERIFY(cuda_devices().empty());
        QVERIFY2(versions.rfind("not available: ", 0) == 0, versions.c_str());
        QVERIFY(!cuda_unavailable_reason().empty());
        try {
            make_cuda_backend(0, std::make_shared<MemoryLedger>());
            QFAIL("expected InputError without a driver");
        } catch (const InputError& e) {
            const std::string m = e.what();
            qInfo("make_cuda_backend(0): %s", m.c_str());
            if (loaded)
                QVERIFY2(m.find("cudaGetDeviceCount") != std::string::npos || m.find("no CUDA device") != std::string::npos,
                         m.c_str());
            QVERIFY2(m.find(st.reason) != std::string::npos, m.c_str());
            QVERIFY2(m.find("use --device cpu") != std::string::npos, m.c_str());
        }
    }

    // --- data movement ------------------------------------------------------------------------------

    void fillCopyCast() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::i32, DType::i64, DType::u8, DType::f64}) {
            Pair p = h->zeros({3, 77}, dt);
            h->cpu->fill(p.c, 3.0);
            h->gpu->fill(p.g, 3.0);
            QVERIFY(h->same(p, 0.0, QString("fill %1").arg(dtype_name(dt))));
            h->cpu->fill(p.c, 0.0);
            h->gpu->fill(p.g, 0.0);
            QVERIFY(h->same(p, 0.0, QString("fill 0 %1").arg(dtype_name(dt))));
        }
        for (DType s : {DType::f32, DType::bf16, DType::f16, DType::f64})
            for (DType d : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
                Pair a = h->rnd({1000}, s, -300, 300);
                Pair b = h->zeros({10, 100}, d);
                h->cpu->copy(a.c, b.c);
                h->gpu->copy(a.g, b.g);
                QVERIFY(h->same(b, 0.0, QString("copy %1 -> %2").arg(dtype_name(s), dtype_name(d))));
            }
        // Integer tensors copy as they are; overlapping views behave as memmove.
        Pair labels = h->make({5}, DType::i64, {0, 1, 2, 3, 4});
        Pair l2 = h->zeros({5}, DType::i64);
        h->cpu->copy(labels.c, l2.c);
        h->gpu->copy(labels.g, l2.g);
        QVERIFY(h->same(l2, 0.0, "copy i64"));
        Pair m = h->rnd({100}, DType::f32);
        Tensor cs = m.c.view(0, {60}), cd = m.c.view(20, {60});
        Tensor gs = m.g.view(0, {60}), gd = m.g.view(20, {60});
        h->cpu->copy(cs, cd);
        h->gpu->copy(gs, gd);
        QVERIFY(h->same(m, 0.0, "overlapping copy"));
        // A copy bigger than the pinned staging buffer (32 MiB) goes in chunks.
        const std::int64_t n = (40 << 20) / 4 + 123;
        Vec v = random_vec(n);
        Pair big = h->make({n}, DType::f32, v);
        QVERIFY(h->same(big, 0.0, "40 MiB round trip"));
    }

    // --- elementwise --------------------------------------------------------------------------------

    void elementwise() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (std::int64_t n : {1, 1000, 300001}) {
                Pair a = h->rnd({n}, dt), b = h->rnd({n}, dt), o = h->zeros({n}, dt);
                h->cpu->add(a.c, b.c, o.c);
                h->gpu->add(a.g, b.g, o.g);
                QVERIFY(h->same(o, tol_for(dt), QString("add %1 n=%2").arg(dtype_name(dt)).arg(n)));
                h->cpu->scale(o.c, -0.37f);
                h->gpu->scale(o.g, -0.37f);
                QVERIFY(h->same(o, tol_for(dt), QString("scale %1").arg(dtype_name(dt))));
                for (DType xt : kFloatTypes) {
                    Pair x = h->rnd({n}, xt);
                    h->cpu->axpy(1.75f, x.c, o.c);
                    h->gpu->axpy(1.75f, x.g, o.g);
                    QVERIFY(h->same(o, tol_for(dt) + tol_for(xt),
                                    QString("axpy %1 into %2").arg(dtype_name(xt), dtype_name(dt))));
                }
            }
    }

    // --- linear algebra -----------------------------------------------------------------------------

    void gemm_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<bool>("tf32");
        QTest::newRow("f32") << int(DType::f32) << false;
        QTest::newRow("tf32") << int(DType::f32) << true;
        QTest::newRow("bf16") << int(DType::bf16) << false;
        QTest::newRow("f16") << int(DType::f16) << false;
    }
    void gemm() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        QFETCH(int, dtype);
        QFETCH(bool, tf32);
        const DType dt = DType(dtype);
        cuda_set_tf32(*h->gpu, tf32);
        const double tol = tf32 ? 1e-3 : tol_for(dt);
        struct Dims {
            int M, N, K;
        };
        for (Dims d : {Dims{1, 1, 1}, Dims{17, 33, 9}, Dims{64, 128, 256}, Dims{5, 3, 0}, Dims{130, 7, 61}})
            for (int ta = 0; ta < 2; ++ta)
                for (int tb = 0; tb < 2; ++tb)
                    for (float beta : {0.0f, 0.5f}) {
                        const Shape sa = ta ? Shape{d.K, d.M} : Shape{d.M, d.K};
                        const Shape sb = tb ? Shape{d.N, d.K} : Shape{d.K, d.N};
                        Pair a = h->rnd(sa, dt), b = h->rnd(sb, dt), c = h->rnd({d.M, d.N}, dt);
                        h->cpu->gemm(ta, tb, 1.5f, a.c, b.c, beta, c.c);
                        h->gpu->gemm(ta, tb, 1.5f, a.g, b.g, beta, c.g);
                        QVERIFY(h->same(c, tol,
                                        QString("gemm %1 M%2 N%3 K%4 ta%5 tb%6 beta%7")
                                            .arg(dtype_name(dt))
                                            .arg(d.M)
                                            .arg(d.N)
                                            .arg(d.K)
                                            .arg(ta)
                                            .arg(tb)
                                            .arg(beta)));
                    }
        cuda_set_tf32(*h->gpu, false);
    }

    void bias() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (Shape s : {Shape{8, 10}, Shape{4, 16, 7, 5}, Shape{1, 3, 1, 1}}) {
                Pair y = h->rnd(s, dt), b = h->rnd({s[1]}, dt);
                h->cpu->add_bias(y.c, b.c);
                h->gpu->add_bias(y.g, b.g);
                QVERIFY(h->same(y, tol_for(dt), QString("add_bias %1 %2").arg(dtype_name(dt), shape_str(s).c_str())));
                Pair db = h->rnd({s[1]}, dt);  // accumulates
                h->cpu->bias_grad(y.c, db.c);
                h->gpu->bias_grad(y.g, db.g);
                QVERIFY(h->same(db, tol_for(dt), QString("bias_grad %1 %2").arg(dtype_name(dt), shape_str(s).c_str())));
            }
    }

    // --- convolution --------------------------------------------------------------------------------

    void conv_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<bool>("tf32");
        QTest::newRow("f32") << int(DType::f32) << false;
        QTest::newRow("tf32") << int(DType::f32) << true;
        QTest::newRow("bf16") << int(DType::bf16) << false;
        QTest::newRow("f16") << int(DType::f16) << false;
    }
    void conv() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        QFETCH(int, dtype);
        QFETCH(bool, tf32);
        const DType dt = DType(dtype);
        cuda_set_tf32(*h->gpu, tf32);
        const double tol = tf32 ? 1e-3 : tol_for(dt);
        struct Case {
            Shape x, w;
            Conv2dParams p;
        };
        Conv2dParams s1p1;
        s1p1.pad_h = s1p1.pad_w = 1;
        Conv2dParams s2p2;
        s2p2.stride_h = s2p2.stride_w = 2;
        s2p2.pad_h = s2p2.pad_w = 2;
        Conv2dParams dil;
        dil.dilation_h = dil.dilation_w = 2;
        dil.pad_h = 2;
        Conv2dParams plain;
        const Case cases[] = {
            {{2, 3, 12, 12}, {8, 3, 3, 3}, s1p1},
            {{3, 4, 11, 9}, {5, 4, 5, 5}, s2p2},
            {{2, 16, 8, 8}, {32, 16, 1, 1}, plain},
            {{1, 2, 10, 10}, {3, 2, 3, 3}, dil},
            {{4, 1, 28, 28}, {16, 1, 5, 5}, plain},
        };
        for (const Case& c : cases) {
            const std::int64_t Ho = (c.x[2] + 2 * c.p.pad_h - c.p.dilation_h * (c.w[2] - 1) - 1) / c.p.stride_h + 1;
            const std::int64_t Wo = (c.x[3] + 2 * c.p.pad_w - c.p.dilation_w * (c.w[3] - 1) - 1) / c.p.stride_w + 1;
            const Shape ys{c.x[0], c.w[0], Ho, Wo};
            const QString what = QString("%1 x %2 w %3").arg(dtype_name(dt), shape_str(c.x).c_str(), shape_str(c.w).c_str());
            Pair x = h->rnd(c.x, dt), w = h->rnd(c.w, dt), b = h->rnd({c.w[0]}, dt), y = h->zeros(ys, dt);
            Tensor wsc = Tensor::empty(h->cpu->allocator(),
                                       {std::int64_t(h->cpu->conv2d_workspace_bytes(c.x, c.w, ys, c.p, dt))}, DType::u8,
                                       MemCategory::workspace);
            const std::size_t gws = h->gpu->conv2d_workspace_bytes(c.x, c.w, ys, c.p, dt);
            Tensor wsg = gws ? Tensor::empty(h->gpu->allocator(), {std::int64_t(gws)}, DType::u8, MemCategory::workspace)
                             : Tensor();
            h->cpu->conv2d_forward(x.c, w.c, b.c, y.c, c.p, wsc);
            h->gpu->conv2d_forward(x.g, w.g, b.g, y.g, c.p, wsg);
            QVERIFY(h->same(y, tol, "conv forward " + what));
            Pair dy = h->rnd(ys, dt), dx = h->rnd(c.x, dt);  // dx is written: start from garbage
            h->cpu->conv2d_backward_data(dy.c, w.c, dx.c, c.p, wsc);
            h->gpu->conv2d_backward_data(dy.g, w.g, dx.g, c.p, wsg);
            QVERIFY(h->same(dx, tol, "conv backward data " + what));
            Pair dw = h->rnd(c.w, dt), db = h->rnd({c.w[0]}, dt);  // accumulated
            h->cpu->conv2d_backward_filter(x.c, dy.c, dw.c, db.c, c.p, wsc);
            h->gpu->conv2d_backward_filter(x.g, dy.g, dw.g, db.g, c.p, wsg);
            QVERIFY(h->same(dw, tol, "conv backward filter " + what));
            QVERIFY(h->same(db, tol_for(dt), "conv backward bias " + what));
            Tensor none;
            h->cpu->conv2d_backward_filter(x.c, dy.c, dw.c, none, c.p, wsc);
            h->gpu->conv2d_backward_filter(x.g, dy.g, dw.g, none, c.p, wsg);
            QVERIFY(h->same(dw, tol, "conv backward filter (no bias) " + what));
        }
        cuda_set_tf32(*h->gpu, false);
    }

    // --- pooling ------------------------------------------------------------------------------------

    void pooling() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        Pool2dParams k2;
        Pool2dParams k3s2p1;
        k3s2p1.kernel_h = k3s2p1.kernel_w = 3;
        k3s2p1.pad_h = k3s2p1.pad_w = 1;
        Pool2dParams k3s1p1 = k3s2p1;
        k3s1p1.stride_h = k3s1p1.stride_w = 1;
        Pool2dParams k2x3;
        k2x3.kernel_w = 3;
        k2x3.stride_w = 1;
        for (DType dt : kFloatTypes)
            for (const Pool2dParams& p : {k2, k3s2p1, k3s1p1, k2x3})
                for (Shape xs : {Shape{2, 3, 8, 8}, Shape{1, 4, 13, 11}}) {
                    const std::int64_t Ho = (xs[2] + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
                    const std::int64_t Wo = (xs[3] + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
                    const Shape ys{xs[0], xs[1], Ho, Wo};
                    const QString what = QString("%1 x %2 kernel %3x%4 stride %5 pad %6")
                                             .arg(dtype_name(dt), shape_str(xs).c_str())
                                             .arg(p.kernel_h)
                                             .arg(p.kernel_w)
                                             .arg(p.stride_h)
                                             .arg(p.pad_h);
                    // Integers in a small range: ties happen, and the first maximum must win on both.
                    Vec xv = random_vec(shape_numel(xs), -4, 4);
                    for (auto& v : xv) v = std::round(v);
                    Pair x = h->make(xs, dt, xv), y = h->zeros(ys, dt), idx = h->zeros(ys, DType::i32);
                    h->cpu->maxpool2d_forward(x.c, y.c, idx.c, p);
                    h->gpu->maxpool2d_forward(x.g, y.g, idx.g, p);
                    QVERIFY(h->same(y, 0.0, "maxpool forward " + what));
                    QVERIFY(h->same(idx, 0.0, "maxpool indices " + what));
                    Pair dy = h->rnd(ys, dt), dx = h->rnd(xs, dt);
                    h->cpu->maxpool2d_backward(dy.c, idx.c, dx.c);
                    h->gpu->maxpool2d_backward(dy.g, idx.g, dx.g);
                    QVERIFY(h->same(dx, tol_for(dt), "maxpool backward " + what));
                    Pair xa = h->rnd(xs, dt), ya = h->zeros(ys, dt);
                    h->cpu->avgpool2d_forward(xa.c, ya.c, p);
                    h->gpu->avgpool2d_forward(xa.g, ya.g, p);
                    QVERIFY(h->same(ya, tol_for(dt), "avgpool forward " + what));
                    h->cpu->avgpool2d_backward(dy.c, dx.c, p);
                    h->gpu->avgpool2d_backward(dy.g, dx.g, p);
                    QVERIFY(h->same(dx, tol_for(dt), "avgpool backward " + what));
                }
    }

    // --- activations and dropout --------------------------------------------------------------------

    void activations() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        const ActivationKind kinds[] = {ActivationKind::relu, ActivationKind::leaky_relu, ActivationKind::tanh,
                                        ActivationKind::sigmoid, ActivationKind::gelu};
        for (DType dt : kFloatTypes)
            for (ActivationKind k : kinds) {
                const QString what = QString("%1 kind %2").arg(dtype_name(dt)).arg(int(k));
                Pair x = h->rnd({3, 1001}, dt, -4, 4), y = h->zeros({3, 1001}, dt);
                h->cpu->activation_forward(k, 0.1f, x.c, y.c);
                h->gpu->activation_forward(k, 0.1f, x.g, y.g);
                QVERIFY(h->same(y, tol_for(dt), "activation forward " + what));
                Pair dy = h->rnd({3, 1001}, dt), dx = h->zeros({3, 1001}, dt);
                h->cpu->activation_backward(k, 0.1f, x.c, y.c, dy.c, dx.c);
                h->gpu->activation_backward(k, 0.1f, x.g, y.g, dy.g, dx.g);
                QVERIFY(h->same(dx, tol_for(dt), "activation backward (x, y) " + what));
                Tensor none;
                h->cpu->activation_backward(k, 0.1f, x.c, none, dy.c, dx.c);
                h->gpu->activation_backward(k, 0.1f, x.g, none, dy.g, dx.g);
                QVERIFY(h->same(dx, tol_for(dt), "activation backward (x only) " + what));
                if (k == ActivationKind::relu || k == ActivationKind::tanh || k == ActivationKind::sigmoid) {
                    h->cpu->activation_backward(k, 0.1f, none, y.c, dy.c, dx.c);
                    h->gpu->activation_backward(k, 0.1f, none, y.g, dy.g, dx.g);
                    QVERIFY(h->same(dx, tol_for(dt), "activation backward (y only) " + what));
                }
            }
    }

    void dropout() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (float p : {0.0f, 0.1f, 0.5f, 1.0f}) {
                const std::int64_t n = 70001;
                const std::uint64_t seed = 99, offset = 123456789;
                Pair x = h->rnd({n}, dt), y = h->zeros({n}, dt), mask = h->zeros({n}, DType::u8);
                h->cpu->dropout_forward(x.c, y.c, mask.c, p, seed, offset);
                h->gpu->dropout_forward(x.g, y.g, mask.g, p, seed, offset);
                const QString what = QString("%1 p=%2").arg(dtype_name(dt)).arg(p);
                QVERIFY(h->same(mask, 0.0, "dropout mask " + what));  // the same counter-based RNG
                const Vec gm = h->read_gpu(mask.g);
                for (std::int64_t i = 0; i < n; i += 997)
                    QCOMPARE(gm[i], counter_uniform(seed, offset + std::uint64_t(i)) >= p ? 1.0 : 0.0);
                QVERIFY(h->same(y, tol_for(dt), "dropout forward " + what));
                Pair dy = h->rnd({n}, dt), dx = h->zeros({n}, dt);
                h->cpu->dropout_backward(dy.c, mask.c, p, dx.c);
                h->gpu->dropout_backward(dy.g, mask.g, p, dx.g);
                QVERIFY(h->same(dx, tol_for(dt), "dropout backward " + what));
            }
    }

    // --- batch norm ---------------------------------------------------------------------------------

    void batchnorm() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (Shape s : {Shape{8, 6, 5, 7}, Shape{32, 10}, Shape{2, 3, 1, 1}})
                for (bool affine : {true, false}) {
                    const std::int64_t C = s[1];
                    const QString what = QString("%1 %2 affine %3").arg(dtype_name(dt), shape_str(s).c_str()).arg(affine);
                    Pair x = h->rnd(s, dt, -2, 3), y = h->zeros(s, dt);
                    Pair g = affine ? h->rnd({C}, DType::f32, 0.5, 1.5) : Pair{};
                    Pair b = affine ? h->rnd({C}, DType::f32) : Pair{};
                    Pair mean = h->zeros({C}, DType::f32), invstd = h->zeros({C}, DType::f32);
                    Pair rm = h->rnd({C}, DType::f32), rv = h->rnd({C}, DType::f32, 0.5, 2);
                    h->cpu->batchnorm_forward_train(x.c, g.c, b.c, y.c, mean.c, invstd.c, rm.c, rv.c, 0.1f, 1e-5f);
                    h->gpu->batchnorm_forward_train(x.g, g.g, b.g, y.g, mean.g, invstd.g, rm.g, rv.g, 0.1f, 1e-5f);
                    QVERIFY(h->same(y, tol_for(dt), "bn forward y " + what));
                    QVERIFY(h->same(mean, 1e-5, "bn save_mean " + what));
                    QVERIFY(h->same(invstd, 1e-5, "bn save_invstd " + what));
                    QVERIFY(h->same(rm, 1e-5, "bn running_mean " + what));
                    QVERIFY(h->same(rv, 1e-5, "bn running_var " + what));
                    Pair yi = h->zeros(s, dt);
                    h->cpu->batchnorm_forward_infer(x.c, g.c, b.c, rm.c, rv.c, 1e-5f, yi.c);
                    h->gpu->batchnorm_forward_infer(x.g, g.g, b.g, rm.g, rv.g, 1e-5f, yi.g);
                    QVERIFY(h->same(yi, tol_for(dt), "bn infer " + what));
                    Pair dy = h->rnd(s, dt), dx = h->rnd(s, dt);
                    Pair dg = affine ? h->rnd({C}, DType::f32) : Pair{};
                    Pair dbt = affine ? h->rnd({C}, DType::f32) : Pair{};
                    h->cpu->batchnorm_backward(x.c, dy.c, g.c, mean.c, invstd.c, dx.c, dg.c, dbt.c);
                    h->gpu->batchnorm_backward(x.g, dy.g, g.g, mean.g, invstd.g, dx.g, dg.g, dbt.g);
                    QVERIFY(h->same(dx, tol_for(dt), "bn backward dx " + what));
                    if (affine) {
                        QVERIFY(h->same(dg, tol_for(dt), "bn backward dgamma " + what));
                        QVERIFY(h->same(dbt, tol_for(dt), "bn backward dbeta " + what));
                    }
                }
    }

    // --- losses and reductions ----------------------------------------------------------------------

    void softmaxCrossEntropy() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (auto [N, K] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {64, 10}, {7, 1000}, {300, 3}})
                for (float smoothing : {0.0f, 0.1f}) {
                    const QString what = QString("%1 N%2 K%3 smoothing %4").arg(dtype_name(dt)).arg(N).arg(K).arg(smoothing);
                    Pair z = h->rnd({N, K}, dt, -5, 5), dz = h->zeros({N, K}, dt);
                    Vec lv(static_cast<std::size_t>(N));
                    for (auto& v : lv) v = double(rng()() % std::uint64_t(K));
                    Pair labels = h->make({N}, DType::i64, lv);
                    const LossResult rc = h->cpu->softmax_cross_entropy(z.c, labels.c, smoothing, dz.c, 0.5f);
                    const LossResult rg = h->gpu->softmax_cross_entropy(z.g, labels.g, smoothing, dz.g, 0.5f);
                    QVERIFY2(close({rg.loss}, {rc.loss}, 1e-5, "loss " + what), qPrintable(what));
                    QCOMPARE(rg.correct, rc.correct);
                    QVERIFY(h->same(dz, tol_for(dt), "dlogits " + what));
                    Tensor none;
                    const LossResult r2 = h->gpu->softmax_cross_entropy(z.g, labels.g, smoothing, none, 1.0f);
                    QVERIFY(close({r2.loss}, {rc.loss}, 1e-5, "loss without grad " + what));
                }
        // A label outside [0, K) is an error naming it.
        Pair z = h->rnd({4, 3}, DType::f32);
        Pair bad = h->make({4}, DType::i64, {0, 2, 3, 1});
        Tensor none;
        try {
            h->gpu->softmax_cross_entropy(z.g, bad.g, 0.0f, none, 1.0f);
            QFAIL("expected an error for label 3 with 3 classes");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("label 3 in row 2") != std::string::npos, e.what());
        }
        // NaN logits give a NaN loss, never a number.
        Pair zn = h->make({1, 3}, DType::f32, {0.5, std::nan(""), 1.0});
        Pair l0 = h->make({1}, DType::i64, {0});
        QVERIFY(std::isnan(h->gpu->softmax_cross_entropy(zn.g, l0.g, 0.0f, none, 1.0f).loss));
    }

    void mse() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (Shape s : {Shape{16, 4}, Shape{5, 300}, Shape{1, 1}, Shape{7}}) {
                const QString what = QString("%1 %2").arg(dtype_name(dt), shape_str(s).c_str());
                Pair p = h->rnd(s, dt), t = h->rnd(s, dt), dp = h->zeros(s, dt);
                const LossResult rc = h->cpu->mse_loss(p.c, t.c, dp.c, 2.0f);
                const LossResult rg = h->gpu->mse_loss(p.g, t.g, dp.g, 2.0f);
                QVERIFY(close({rg.loss}, {rc.loss}, 1e-5, "mse loss " + what));
                QCOMPARE(rg.correct, rc.correct);
                QVERIFY(h->same(dp, tol_for(dt), "mse grad " + what));
            }
    }

    void reductions() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes)
            for (std::int64_t n : {1, 255, 1000, 1 << 20}) {
                const QString what = QString("%1 n=%2").arg(dtype_name(dt)).arg(n);
                Pair x = h->rnd({n}, dt, -3, 3);
                QVERIFY(close({h->gpu->sum_squares(x.g)}, {h->cpu->sum_squares(x.c)}, 1e-6, "sum_squares " + what));
                QVERIFY(h->gpu->all_finite(x.g));
                for (double bad : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                   std::nan("")}) {
                    Vec v = random_vec(n);
                    v[std::size_t(n - 1)] = bad;
                    Pair xb = h->make({n}, dt, v);
                    QCOMPARE(h->gpu->all_finite(xb.g), false);
                    QCOMPARE(h->cpu->all_finite(xb.c), false);
                }
            }
        Pair i = h->make({3}, DType::i64, {1, 2, 3});
        QVERIFY(h->gpu->all_finite(i.g));
    }

    // --- optimizers ---------------------------------------------------------------------------------

    void sgd() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        struct Case {
            float momentum, dampening, wd;
            bool nesterov;
            float grad_scale;
        };
        for (DType gt : kFloatTypes)
            for (Case c : {Case{0, 0, 0, false, 1}, Case{0.9f, 0, 1e-2f, false, 0.5f}, Case{0.9f, 0, 0, true, 1},
                           Case{0.8f, 0.1f, 5e-4f, false, 1}}) {
                const std::int64_t n = 10007;
                Pair p = h->rnd({n}, DType::f32), buf = h->zeros({n}, DType::f32);
                for (int step = 0; step < 3; ++step) {
                    Pair g = h->rnd({n}, gt);
                    SgdArgs a;
                    a.lr = 0.05f;
                    a.momentum = c.momentum;
                    a.dampening = c.dampening;
                    a.weight_decay = c.wd;
                    a.nesterov = c.nesterov;
                    a.grad_scale = c.grad_scale;
                    a.first_step = step == 0;
                    Tensor none;
                    h->cpu->sgd_update(p.c, g.c, c.momentum != 0 ? buf.c : none, a);
                    h->gpu->sgd_update(p.g, g.g, c.momentum != 0 ? buf.g : none, a);
                }
                const QString what = QString("grad %1 momentum %2 nesterov %3").arg(dtype_name(gt)).arg(c.momentum).arg(c.nesterov);
                QVERIFY(h->same(p, 1e-5, "sgd param " + what));
                QVERIFY(h->same(buf, 1e-5, "sgd momentum " + what));
            }
    }

    void adam() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType gt : kFloatTypes)
            for (bool decoupled : {false, true})
                for (float wd : {0.0f, 0.01f}) {
                    const std::int64_t n = 4099;
                    Pair p = h->rnd({n}, DType::f32), m = h->zeros({n}, DType::f32), v = h->zeros({n}, DType::f32);
                    for (int step = 1; step <= 4; ++step) {
                        Pair g = h->rnd({n}, gt);
                        AdamArgs a;
                        a.lr = 1e-2f;
                        a.weight_decay = wd;
                        a.decoupled_weight_decay = decoupled;
                        a.step = step;
                        a.grad_scale = 0.25f;
                        h->cpu->adam_update(p.c, g.c, m.c, v.c, a);
                        h->gpu->adam_update(p.g, g.g, m.g, v.g, a);
                    }
                    const QString what = QString("grad %1 decoupled %2 wd %3").arg(dtype_name(gt)).arg(decoupled).arg(wd);
                    QVERIFY(h->same(p, 1e-5, "adam param " + what));
                    QVERIFY(h->same(m, 1e-5, "adam m " + what));
                    QVERIFY(h->same(v, 1e-5, "adam v " + what));
                }
    }

    // --- issue 11: what reading found -------------------------------------------------------------

    void maxpoolBackwardIsDeterministicAndExact() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        Pool2dParams p;  // overlapping windows: many outputs pick the same input
        p.kernel_h = p.kernel_w = 3;
        p.stride_h = p.stride_w = 1;
        p.pad_h = p.pad_w = 1;
        for (DType dt : kFloatTypes) {
            const Shape xs{8, 16, 32, 32}, ys{8, 16, 32, 32};
            Vec xv = random_vec(shape_numel(xs), -2, 2);
            for (auto& v : xv) v = std::round(v);  // ties
            Pair x = h->make(xs, dt, xv), y = h->zeros(ys, dt), idx = h->zeros(ys, DType::i32);
            h->cpu->maxpool2d_forward(x.c, y.c, idx.c, p);
            h->gpu->maxpool2d_forward(x.g, y.g, idx.g, p);
            Pair dy = h->rnd(ys, dt), dx = h->zeros(xs, dt);
            h->cpu->maxpool2d_backward_windows(dy.c, idx.c, dx.c, p);
            h->gpu->maxpool2d_backward_windows(dy.g, idx.g, dx.g, p);
            const Vec first = h->read_gpu(dx.g);
            // in f32 and in the CPU's order: the same bits as the CPU, and as itself the next time
            QVERIFY(h->same(dx, 0.0, QString("maxpool backward (windows) %1").arg(dtype_name(dt))));
            Pair dx2 = h->zeros(xs, dt);
            h->gpu->maxpool2d_backward_windows(dy.g, idx.g, dx2.g, p);
            QVERIFY(h->read_gpu(dx2.g) == first);
            // without the windows: one thread per plane, still deterministic and (f32) exact
            Pair dx3 = h->rnd(xs, dt);
            h->gpu->maxpool2d_backward(dy.g, idx.g, dx3.g);
            const Vec plane = h->read_gpu(dx3.g);
            h->gpu->maxpool2d_backward(dy.g, idx.g, dx3.g);
            QVERIFY(h->read_gpu(dx3.g) == plane);
            if (dt == DType::f32) QVERIFY(plane == first);
            else QVERIFY(close(plane, first, tol_for(dt), "maxpool backward per plane"));
        }
    }

    void convolutionAtASmallerBatchThanPlanned() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        // the model sizes one workspace for its full batch; the last batch of an epoch is smaller
        for (DType dt : kFloatTypes)
            for (bool tf32 : {false, true}) {
                if (tf32 && dt != DType::f32) continue;
                cuda_set_tf32(*h->gpu, tf32);
                const double tol = tf32 ? 1e-3 : tol_for(dt);
                Conv2dParams p;
                p.pad_h = p.pad_w = 1;
                const Shape w_s{32, 16, 3, 3};
                const std::size_t planned =
                    h->gpu->conv2d_workspace_bytes({256, 16, 28, 28}, w_s, {256, 32, 28, 28}, p, dt);
                Tensor ws = planned ? Tensor::empty(h->gpu->allocator(), {std::int64_t(planned)}, DType::u8,
                                                    MemCategory::workspace)
                                    : Tensor();
                const std::size_t cpu_ws =
                    h->cpu->conv2d_workspace_bytes({256, 16, 28, 28}, w_s, {256, 32, 28, 28}, p, dt);
                Tensor wsc = Tensor::empty(h->cpu->allocator(), {std::int64_t(std::max<std::size_t>(cpu_ws, 1))},
                                           DType::u8, MemCategory::workspace);
                for (std::int64_t n : {std::int64_t(256), std::int64_t(37), std::int64_t(1)}) {
                    const QString what = QString("%1 tf32 %2 batch %3 (planned for 256: %4 bytes)")
                                             .arg(dtype_name(dt))
                                             .arg(tf32)
                                             .arg(n)
                                             .arg(planned);
                    Pair x = h->rnd({n, 16, 28, 28}, dt), w = h->rnd(w_s, dt), b = h->rnd({32}, dt),
                         y = h->zeros({n, 32, 28, 28}, dt);
                    h->cpu->conv2d_forward(x.c, w.c, b.c, y.c, p, wsc);
                    h->gpu->conv2d_forward(x.g, w.g, b.g, y.g, p, ws);
                    QVERIFY(h->same(y, tol, "forward " + what));
                    Pair dy = h->rnd({n, 32, 28, 28}, dt), dx = h->zeros({n, 16, 28, 28}, dt);
                    h->cpu->conv2d_backward_data(dy.c, w.c, dx.c, p, wsc);
                    h->gpu->conv2d_backward_data(dy.g, w.g, dx.g, p, ws);
                    QVERIFY(h->same(dx, tol, "backward data " + what));
                    Pair dw = h->zeros(w_s, dt), db = h->zeros({32}, dt);
                    h->cpu->conv2d_backward_filter(x.c, dy.c, dw.c, db.c, p, wsc);
                    h->gpu->conv2d_backward_filter(x.g, dy.g, dw.g, db.g, p, ws);
                    QVERIFY(h->same(dw, tol, "backward filter " + what));
                    QVERIFY(h->same(db, tol_for(dt), "backward bias " + what));
                }
            }
        cuda_set_tf32(*h->gpu, false);
    }

    void opsOnOffsetViews() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        // flat parameter/gradient buffers, each tensor at a 256-byte boundary (nn/model.h)
        for (DType dt : kFloatTypes) {
            const std::int64_t align = std::int64_t(256 / dtype_size(dt));
            const std::int64_t off_w = align, off_b = 3 * align + 50 * 30 / align * align, total = off_b + 4 * align;
            Pair flat = h->rnd({total}, dt), grads = h->rnd({total}, dt);
            Tensor wc = flat.c.view(off_w, {50, 30}), wg = flat.g.view(off_w, {50, 30});
            Tensor bc = flat.c.view(off_b, {50}), bg = flat.g.view(off_b, {50});
            Tensor dwc = grads.c.view(off_w, {50, 30}), dwg = grads.g.view(off_w, {50, 30});
            Tensor dbc = grads.c.view(off_b, {50}), dbg = grads.g.view(off_b, {50});
            Pair x = h->rnd({17, 30}, dt), y = h->zeros({17, 50}, dt), dy = h->rnd({17, 50}, dt);
            h->cpu->gemm(false, true, 1.0f, x.c, wc, 0.0f, y.c);  // Linear forward
            h->gpu->gemm(false, true, 1.0f, x.g, wg, 0.0f, y.g);
            h->cpu->add_bias(y.c, bc);
            h->gpu->add_bias(y.g, bg);
            QVERIFY(h->same(y, tol_for(dt), QString("linear forward on views %1").arg(dtype_name(dt))));
            h->cpu->gemm(true, false, 1.0f, dy.c, x.c, 1.0f, dwc);  // dW += dy^T x
            h->gpu->gemm(true, false, 1.0f, dy.g, x.g, 1.0f, dwg);
            h->cpu->bias_grad(dy.c, dbc);
            h->gpu->bias_grad(dy.g, dbg);
            QVERIFY(h->same(grads, tol_for(dt), QString("gradients into views %1").arg(dtype_name(dt))));
            // the optimizer over the whole flat buffer (f32 master) after the views were written
            Pair master = h->zeros({total}, DType::f32), mom = h->zeros({total}, DType::f32);
            h->cpu->copy(flat.c, master.c);
            h->gpu->copy(flat.g, master.g);
            SgdArgs a;
            a.lr = 0.1f;
            a.momentum = 0.9f;
            a.first_step = true;
            h->cpu->sgd_update(master.c, grads.c, mom.c, a);
            h->gpu->sgd_update(master.g, grads.g, mom.g, a);
            QVERIFY(h->same(master, tol_for(dt), QString("sgd over the flat buffer %1").arg(dtype_name(dt))));
            // odd element offsets (a row slice of an activation): elementwise ops do not care
            Tensor oc = flat.c.view(3, {101}), og = flat.g.view(3, {101});
            h->cpu->scale(oc, 0.5f);
            h->gpu->scale(og, 0.5f);
            QVERIFY(h->same(flat, tol_for(dt), QString("scale on an odd offset %1").arg(dtype_name(dt))));
        }
    }

    void gridStrideBeyond65535Blocks() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        // 256 threads x 65536 blocks cover 16.8 M elements per pass: this needs three passes
        const std::int64_t n = std::int64_t(65536) * 256 * 2 + 77;
        Tensor x = Tensor::empty(h->gpu->allocator(), {n}, DType::f32, MemCategory::other);
        Tensor y = Tensor::empty(h->gpu->allocator(), {n}, DType::f32, MemCategory::other);
        h->gpu->fill(x, 1.5);
        h->gpu->axpy(2.0f, x, y);
        h->gpu->scale(y, 0.5f);
        std::vector<float> host(static_cast<std::size_t>(n));
        h->gpu->copy_to_host(y, host.data());
        std::size_t wrong = 0;
        for (float v : host) wrong += v != 1.5f;
        QCOMPARE(wrong, std::size_t(0));
        QCOMPARE(h->gpu->sum_squares(x), 2.25 * double(n));
        const float inf = INFINITY;
        Tensor last = x.view(n - 1, {1});
        h->gpu->copy_from_host(&inf, last);
        QVERIFY(!h->gpu->all_finite(x));
    }

    void uploadWaitsForKernelsStillReading() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        // 40 queued kernels read x; an upload into x must not overwrite it before they are done
        const std::int64_t n = std::int64_t(16) << 20;  // 64 MiB: the upload takes several staging rounds
        Tensor x = Tensor::empty(h->gpu->allocator(), {n}, DType::f32, MemCategory::data);
        Tensor y = Tensor::empty(h->gpu->allocator(), {n}, DType::f32, MemCategory::other);
        h->gpu->fill(x, 1.0);
        h->gpu->synchronize();
        for (int i = 0; i < 40; ++i) h->gpu->axpy(1.0f, x, y);
        std::vector<float> twos(static_cast<std::size_t>(n), 2.0f);
        h->gpu->copy_from_host(twos.data(), x);
        h->gpu->axpy(1.0f, x, y);  // queued after the upload: sees the new data
        std::vector<float> host(static_cast<std::size_t>(n));
        h->gpu->copy_to_host(y, host.data());
        std::size_t wrong = 0;
        for (float v : host) wrong += v != 42.0f;
        QCOMPARE(wrong, std::size_t(0));
        // upload_async with an explicit fence: only the kernels before the fence are waited for, and
        // compute waits for the upload only when told to
        for (int i = 0; i < 40; ++i) h->gpu->axpy(1.0f, x, y);  // reads 2: y = 42 + 80
        auto reads_done = h->gpu->record_fence();
        std::vector<float> threes(static_cast<std::size_t>(n), 3.0f);
        auto uploaded = h->gpu->upload_async(threes.data(), x, reads_done.get());
        h->gpu->wait_fence(uploaded.get());
        h->gpu->axpy(1.0f, x, y);  // y = 122 + 3
        h->gpu->copy_to_host(y, host.data());
        wrong = 0;
        for (float v : host) wrong += v != 125.0f;
        QCOMPARE(wrong, std::size_t(0));
        QVERIFY(h->gpu->fence_done(uploaded.get()));
    }

    void stepOpsAgreeWithTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        for (DType dt : kFloatTypes) {
            const QString what = dtype_name(dt);
            Vec ctl(kStepControlFields, 0.0);
            ctl[kCtlLr] = 0.05;
            ctl[kCtlLossScale] = 4.0;
            ctl[kCtlOptStep] = 3;
            Pair control = h->make({kStepControlFields}, DType::f64, ctl);
            Pair stats = h->zeros({kStepStatsFields}, DType::f64);
            const std::int64_t N = 37, K = 11;
            Pair z = h->rnd({N, K}, dt, -4, 4), dz = h->zeros({N, K}, dt);
            Vec lv(N);
            for (std::int64_t i = 0; i < N; ++i) lv[std::size_t(i)] = double((i * 5) % K);
            Pair lab = h->make({N}, DType::i64, lv);
            for (int micro = 0; micro < 2; ++micro) {  // accumulates like micro-batches
                h->cpu->softmax_cross_entropy_into(z.c, lab.c, 0.1f, dz.c, 0.5f, control.c, stats.c, 0.5);
                h->gpu->softmax_cross_entropy_into(z.g, lab.g, 0.1f, dz.g, 0.5f, control.g, stats.g, 0.5);
            }
            QVERIFY(h->same(dz, tol_for(dt), "dlogits (scaled by the device loss scale) " + what));
            QVERIFY(h->same(stats, 1e-6, "stats " + what));
            Pair p = h->rnd({N, K}, dt), t = h->rnd({N, K}, dt), dp = h->zeros({N, K}, dt);
            h->cpu->mse_loss_into(p.c, t.c, dp.c, 1.0f, control.c, stats.c, 1.0);
            h->gpu->mse_loss_into(p.g, t.g, dp.g, 1.0f, control.g, stats.g, 1.0);
            QVERIFY(h->same(dp, tol_for(dt), "mse gradient " + what));
            QVERIFY(h->same(stats, 1e-6, "mse stats " + what));
            // a bad label: recorded, dlogits untouched
            lv[7] = double(K + 3);
            Pair bad = h->make({N}, DType::i64, lv);
            Pair dz2 = h->make({N, K}, dt, Vec(std::size_t(N * K), 0.25));
            h->cpu->softmax_cross_entropy_into(z.c, bad.c, 0.0f, dz2.c, 1.0f, control.c, stats.c, 1.0);
            h->gpu->softmax_cross_entropy_into(z.g, bad.g, 0.0f, dz2.g, 1.0f, control.g, stats.g, 1.0);
            QVERIFY(h->same(stats, 1e-6, "stats with a bad label " + what));
            QCOMPARE(h->read_gpu(stats.g)[kStatBadLabel], double(K + 3));
            QCOMPARE(h->read_gpu(stats.g)[kStatBadRow], 7.0);
            for (double v : h->read_gpu(dz2.g)) QCOMPARE(v, 0.25);
            // optimizers from the control tensor, and the finite check
            const std::int64_t n = 5001;
            Pair g = h->rnd({n}, dt);
            Pair w = h->rnd({n}, DType::f32), mom = h->zeros({n}, DType::f32);
            SgdArgs sa;
            sa.momentum = 0.9f;
            sa.weight_decay = 1e-3f;
            for (int i = 0; i < 2; ++i) {
                h->cpu->sgd_update_ctl(w.c, g.c, mom.c, sa, control.c);
                h->gpu->sgd_update_ctl(w.g, g.g, mom.g, sa, control.g);
            }
            QVERIFY(h->same(w, 1e-5, "sgd_update_ctl " + what));
            QVERIFY(h->same(mom, 1e-5, "sgd_update_ctl momentum " + what));
            Pair am = h->zeros({n}, DType::f32), av = h->zeros({n}, DType::f32);
            AdamArgs aa;
            aa.weight_decay = 0.01f;
            aa.decoupled_weight_decay = true;
            h->cpu->adam_update_ctl(w.c, g.c, am.c, av.c, aa, control.c);
            h->gpu->adam_update_ctl(w.g, g.g, am.g, av.g, aa, control.g);
            QVERIFY(h->same(w, 1e-5, "adam_update_ctl " + what));
            Vec gv = random_vec(n);
            gv[std::size_t(n - 2)] = std::nan("");
            Pair gb = h->make({n}, dt, gv);
            h->cpu->all_finite_into(gb.c, control.c);
            h->gpu->all_finite_into(gb.g, control.g);
            QVERIFY(h->same(control, 0.0, "found_inf " + what));
            const Vec before = h->read_gpu(w.g);
            h->gpu->sgd_update_ctl(w.g, g.g, mom.g, sa, control.g);  // skipped: found_inf
            QVERIFY(h->read_gpu(w.g) == before);
            for (int i = 0; i < 3; ++i) {
                h->cpu->step_control_end(control.c, true, 2);
                h->gpu->step_control_end(control.g, true, 2);
            }
            QVERIFY(h->same(control, 0.0, "step_control_end " + what));
        }
        Pair counter = h->zeros({1}, DType::i64);
        h->gpu->increment(counter.g, 5);
        h->gpu->increment(counter.g);
        QCOMPARE(h->read_gpu(counter.g)[0], 6.0);
    }

    void opsFromTwoThreads() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        // two threads share the backend's op scratch: each op's launches and read-back stay together
        Pair a = h->rnd({300000}, DType::f32), b = h->rnd({77777}, DType::f32, -3, 3);
        const double wa = h->cpu->sum_squares(a.c), wb = h->cpu->sum_squares(b.c);
        Pair z = h->rnd({64, 10}, DType::f32), lab = h->make({64}, DType::i64, Vec(64, 3.0));
        Tensor none;
        const double wl = h->cpu->softmax_cross_entropy(z.c, lab.c, 0.0f, none, 1.0f).loss;
        std::atomic<int> bad{0};
        auto worker = [&](const Tensor& x, double want) {
            for (int i = 0; i < 300; ++i) {
                if (std::abs(h->gpu->sum_squares(x) - want) > 1e-9 * want) ++bad;
                Tensor n2;
                if (std::abs(h->gpu->softmax_cross_entropy(z.g, lab.g, 0.0f, n2, 1.0f).loss - wl) > 1e-6 * wl) ++bad;
            }
        };
        std::thread t1(worker, a.g, wa), t2(worker, b.g, wb);
        t1.join();
        t2.join();
        QCOMPARE(bad.load(), 0);
    }

    // --- errors -------------------------------------------------------------------------------------

    void errorsNameTheProblem() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");  // QSKIP must be in the test function
        Pair a = h->rnd({4}, DType::f32), b = h->rnd({4}, DType::f32);
        try {
            h->gpu->add(a.g, b.c, a.g);  // b on the CPU
            QFAIL("expected an error for a CPU tensor");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("is on cpu, expected cuda:0") != std::string::npos, e.what());
        }
        Pair d = h->zeros({4}, DType::f64);
        try {
            h->gpu->scale(d.g, 2.0f);
            QFAIL("expected an error for f64");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("f64 is not supported on the GPU") != std::string::npos, e.what());
        }
        // Ledger: the backend's allocations are in its ledger: cuBLAS's workspace (per compute
        // capability) and the op scratch as workspace, made with the backend.
        const auto devs = cuda_devices();
        const std::size_t fixed = cuda_sizes::backend_fixed_bytes(devs[0].cc_major, devs[0].cc_minor);
        auto ledger = std::make_shared<MemoryLedger>();
        auto fresh = make_cuda_backend(0, ledger);
        QCOMPARE(at(ledger->snapshot().live, MemCategory::workspace), fixed);
        QCOMPARE(ledger->snapshot().live_total, fixed);
    }

    // every comparison of the function that just ran: its largest difference per op and dtype (op_diff.h);
    // the comparison's own checks (comparison*) compare made-up numbers, not ops
    void cleanup() {
        if (QString::fromLatin1(QTest::currentTestFunction()).startsWith(QLatin1String("comparison"))) hrtest::op_diffs().clear();
        else hrtest::print_op_diffs();
    }

    void cleanupTestCase() {
        if (h && h->gpu) h->gpu->synchronize();
        h.reset();
    }
};

QTEST_APPLESS_MAIN(CudaBackendTest)
#include "test_cuda_backend.moc"
