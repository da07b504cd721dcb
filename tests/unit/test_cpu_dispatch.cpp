// The CPU backend's run-time kernel choice (backend/cpu/cpu_kernels.h, cmake/CpuFlags.cmake):
// - the AVX2 kernels are used exactly when cpuid reports AVX2 and FMA;
// - the fast f32 convolutions and batch norm agree with the reference code (im2col + OpenBLAS, double
//   precision batch norm; the implementation before the fast paths) on the shapes of the presets and on
//   odd ones, and the reference agrees with a naive double-precision convolution;
// - the AVX-512 table is used exactly when cpuid also reports AVX-512 F and VL; its tap convolution gives
//   the AVX2 kernel's bits, its backward filter the same sums within float rounding;
// - the core library is built for the x86-64 baseline: no object except the *_avx2 / *_avx512 ones contains an
//   AVX instruction, and the AVX2 object defines no code the linker could share with baseline code.
#include <cstring>
#include <QtTest/QtTest>
#include "test_support.h"

#include <QProcess>
#include <QRegularExpression>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_conv_dnnl.h"
#include "backend/cpu/cpu_kernels.h"

using namespace hr;

namespace {

Tensor filled(Backend& be, const Shape& s, std::uint64_t seed, float mean = 0.0f, float scale = 1.0f) {
    Tensor t = Tensor::empty(be.allocator(), s, DType::f32, MemCategory::other);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = mean + scale * d(g);
    return t;
}

Tensor zeros(Backend& be, const Shape& s) {
    Tensor t = Tensor::empty(be.allocator(), s, DType::f32, MemCategory::other);
    be.fill(t, 0.0);
    return t;
}

// max |a - b| / max(1, max |b|)
double rel_diff(const Tensor& a, const Tensor& b) {
    double m = 0, scale = 1;
    for (std::int64_t i = 0; i < a.numel(); ++i) {
        const double d = std::fabs(double(a.data<float>()[i]) - double(b.data<float>()[i]));
        if (!std::isfinite(d)) return HUGE_VAL;  // a NaN must not slip through std::max
        m = std::max(m, d);
        scale = std::max(scale, double(std::fabs(b.data<float>()[i])));
    }
    return m / scale;
}

struct Case {
    const char* name;
    std::int64_t N, C, H, W, K, kh, kw;
    int sh, sw, ph, pw;
};

std::vector<Case> cases() {
    return {
        {"resnet stem 1->16 3x3 p1", 4, 1, 28, 28, 16, 3, 3, 1, 1, 1, 1},
        {"resnet 16->16 3x3 p1", 4, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1},
        {"resnet 16->32 3x3 s2 p1", 4, 16, 28, 28, 32, 3, 3, 2, 2, 1, 1},
        {"resnet 32->32 3x3 p1 @14", 4, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1},
        {"resnet 16->32 1x1 s2", 4, 16, 28, 28, 32, 1, 1, 2, 2, 0, 0},
        {"resnet 32->64 3x3 s2 p1 @14", 3, 32, 14, 14, 64, 3, 3, 2, 2, 1, 1},
        {"resnet 64->64 3x3 p1 @7", 3, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1},
        {"resnet 32->64 1x1 s2 @14", 3, 32, 14, 14, 64, 1, 1, 2, 2, 0, 0},
        {"seed-cnn conv1 1->10 5x5", 5, 1, 28, 28, 10, 5, 5, 1, 1, 0, 0},
        {"seed-cnn conv2 10->20 5x5 @12", 5, 10, 12, 12, 20, 5, 5, 1, 1, 0, 0},
        {"lenet 1->6 5x5 p2", 3, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2},
        {"odd 3->5 3x2 s(2,1) p(1,0) 9x7", 3, 3, 9, 7, 5, 3, 2, 2, 1, 1, 0},
        {"odd 7->9 3x3 s3 p2 11x10", 2, 7, 11, 10, 9, 3, 3, 3, 3, 2, 2},
        {"odd 2->3 1x1 p1 5x6", 3, 2, 5, 6, 3, 1, 1, 1, 1, 1, 1},
        {"odd 4->6 4x4 s2 p1 9x9 (even kernel)", 2, 4, 9, 9, 6, 4, 4, 2, 2, 1, 1},
        {"batch 19, 6->13 3x3 p1 6x5", 19, 6, 6, 5, 13, 3, 3, 1, 1, 1, 1},
        // stride-2 columns: odd widths long enough for the vector (de)interleave and its tail, odd padding
        {"odd 5->7 3x3 s2 p1 19x37", 2, 5, 19, 37, 7, 3, 3, 2, 2, 1, 1},
        {"odd 3->4 3x3 s(1,2) p(0,2) 8x35", 2, 3, 8, 35, 4, 3, 3, 1, 2, 0, 2},
        {"odd 6->5 1x1 s2 p1 9x33", 2, 6, 9, 33, 5, 1, 1, 2, 2, 1, 1},
        {"odd 4->4 5x5 s2 p3 18x34", 2, 4, 18, 34, 4, 5, 5, 2, 2, 3, 3},
        // stride 1 with shared side padding (rows of W + pad_w): wide kernels, odd pads, pad_w 0, pad_w = kw - 1,
        // and widths whose wide rows end in 1, 2 or 0 vectors of 8 after the 3-vector blocks
        {"shared pad 3->5 5x5 p1 9x11", 3, 3, 9, 11, 5, 5, 5, 1, 1, 1, 1},
        {"shared pad 2->3 3x3 p(1,0) 6x13", 2, 2, 6, 13, 3, 3, 3, 1, 1, 1, 0},
        {"shared pad 4->6 2x4 p(0,3) 5x9", 2, 4, 5, 9, 6, 2, 4, 1, 1, 0, 3},
        {"shared pad 3->4 3x3 p2 5x5", 2, 3, 5, 5, 4, 3, 3, 1, 1, 2, 2},
        {"shared pad 5->7 3x3 p1 3x3", 3, 5, 3, 3, 7, 3, 3, 1, 1, 1, 1},
        {"shared pad 8->9 3x3 p1 10x15", 2, 8, 10, 15, 9, 3, 3, 1, 1, 1, 1},
        // resnet-mini's convolutions at a rank's share of a small batch (6 samples)
        {"resnet 16->16 3x3 p1 28x28 N6", 6, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1},
        {"resnet 16->32 3x3 s2 p1 28x28 N6", 6, 16, 28, 28, 32, 3, 3, 2, 2, 1, 1},
        {"resnet 32->32 3x3 p1 14x14 N6", 6, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1},
        {"resnet 64->64 3x3 p1 7x7 N6", 6, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1},
        // oneDNN's shapes (channels in 16s): chunks of unequal sizes (N 5 and 19), a bottom/right edge that
        // floor division crops (negative right padding for oneDNN), a wide kernel
        {"onednn 16->32 3x3 s2 p1 9x7 N5", 5, 16, 9, 7, 32, 3, 3, 2, 2, 1, 1},
        {"onednn 16->16 2x2 s2 9x9 (cropped edge)", 3, 16, 9, 9, 16, 2, 2, 2, 2, 0, 0},
        {"onednn 32->16 5x5 p2 6x6 N19", 19, 32, 6, 6, 16, 5, 5, 1, 1, 2, 2},
    };
}

}  // namespace

class TestCpuDispatch : public QObject {
    Q_OBJECT

private slots:
    void kernelsFollowCpuid() {
        CpuBackend be(1, nullptr);
        __builtin_cpu_init();
        const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
        const QString env = qEnvironmentVariable("HEADROOM_CPU_KERNELS");
        const QString expect = !avx2 || env == "reference" ? "reference" : avx512 && env != "avx2" ? "avx512" : "avx2";
        QCOMPARE(QString::fromStdString(be.kernels_name()), expect);
        QVERIFY(QString::fromStdString(be.name()).contains(QString::fromStdString(be.kernels_name()) + " kernels"));
        be.use_reference_kernels(true);
        QCOMPARE(QString::fromStdString(be.kernels_name()), QString("reference"));
    }

    void onednnRunsTheResnetConvolutions() {
        // With oneDNN in the build (scripts/setup installs libdnnl-dev) the three f32 convolutions at the
        // ResNets' shapes with channels in 16s run on it, not silently on the tap kernels, and the backend's
        // name says so; the results themselves are checked against the reference in fastConvMatchesReference.
        if (cpu::dnnl_version().empty()) QSKIP("built without oneDNN (libdnnl-dev): the tap kernels do all of it");
        if (!cpu::dnnl_conv_enabled()) QSKIP("HEADROOM_CPU_CONV=tap in the environment");
        CpuBackend be(2, nullptr);
        if (be.kernels_name() == "reference") QSKIP("this CPU has no AVX2 + FMA");
        QVERIFY2(QString::fromStdString(be.name()).contains("oneDNN"), be.name().c_str());
        int checked = 0;
        for (const Case& c : cases()) {
            if (!QString(c.name).startsWith("resnet") && !QString(c.name).startsWith("onednn")) continue;
            Conv2dParams p;
            p.stride_h = c.sh;
            p.stride_w = c.sw;
            p.pad_h = c.ph;
            p.pad_w = c.pw;
            const std::int64_t Ho = (c.H + 2 * c.ph - c.kh) / c.sh + 1, Wo = (c.W + 2 * c.pw - c.kw) / c.sw + 1;
            const cpu::ConvGeom g{c.N, c.C, c.H, c.W, c.K, c.kh, c.kw, Ho, Wo};
            // channels in 16s run on oneDNN, others (the stem's 1 -> 16) on the tap kernels
            const bool blocked = c.C % 16 == 0 && c.K % 16 == 0;
            for (auto kind : {cpu::ConvKind::forward, cpu::ConvKind::backward_data, cpu::ConvKind::backward_weights}) {
                QVERIFY2((cpu::dnnl_conv_workspace_bytes(kind, g, p, 2) > 0) == blocked, c.name);
                checked += blocked;
            }
            if (!blocked) continue;
            // the layer's workspace covers oneDNN's reorders and scratchpads
            QVERIFY(be.conv2d_workspace_bytes({c.N, c.C, c.H, c.W}, {c.K, c.C, c.kh, c.kw}, {c.N, c.K, Ho, Wo}, p,
                                              DType::f32) >=
                    cpu::dnnl_conv_workspace_bytes(cpu::ConvKind::backward_weights, g, p, 2));
        }
        QCOMPARE(checked, 3 * 14);  // the resnet cases with channels in 16s (11) and the three oneDNN ones
    }

    void fastConvMatchesReference_data() {
        QTest::addColumn<int>("index");
        const auto cs = cases();
        for (int i = 0; i < int(cs.size()); ++i) QTest::newRow(cs[i].name) << i;
    }
    void fastConvMatchesReference() {
        QFETCH(int, index);
        const Case c = cases()[index];
        CpuBackend fast(2, nullptr), ref(2, nullptr);
        ref.use_reference_kernels(true);
        if (fast.kernels_name() == "reference") QSKIP("this CPU has no AVX2 + FMA: the reference code is all there is");
        Conv2dParams p;
        p.stride_h = c.sh;
        p.stride_w = c.sw;
        p.pad_h = c.ph;
        p.pad_w = c.pw;
        const std::int64_t Ho = (c.H + 2 * c.ph - c.kh) / c.sh + 1, Wo = (c.W + 2 * c.pw - c.kw) / c.sw + 1;
        const Shape xs{c.N, c.C, c.H, c.W}, ws{c.K, c.C, c.kh, c.kw}, ys{c.N, c.K, Ho, Wo};
        Tensor x = filled(fast, xs, 1), w = filled(fast, ws, 2), b = filled(fast, {c.K}, 3), dy = filled(fast, ys, 4);
        const std::size_t wf = fast.conv2d_workspace_bytes(xs, ws, ys, p, DType::f32);
        const std::size_t wr = ref.conv2d_workspace_bytes(xs, ws, ys, p, DType::f32);
        Tensor work_f = Tensor::empty(fast.allocator(), {std::int64_t(wf)}, DType::u8, MemCategory::workspace);
        Tensor work_r = Tensor::empty(ref.allocator(), {std::int64_t(wr)}, DType::u8, MemCategory::workspace);
        // a workspace holds whatever the previous op left: the kernels must not read what they did not write
        std::memset(work_f.data<std::uint8_t>(), 0xff, wf);
        std::memset(work_r.data<std::uint8_t>(), 0xff, wr);
        Tensor yf = zeros(fast, ys), yr = zeros(ref, ys);
        fast.conv2d_forward(x, w, b, yf, p, work_f);
        ref.conv2d_forward(x, w, b, yr, p, work_r);
        QVERIFY2(rel_diff(yf, yr) < 1e-5, qPrintable(QString("forward differs by %1").arg(rel_diff(yf, yr))));
        // the reference itself against a naive double-precision sum, at a few outputs
        for (std::int64_t o = 0; o < yr.numel(); o += 97) {
            const std::int64_t n = o / (c.K * Ho * Wo), k = o / (Ho * Wo) % c.K, oh = o / Wo % Ho, ow = o % Wo;
            double s = b.data<float>()[k];
            for (std::int64_t ci = 0; ci < c.C; ++ci)
                for (std::int64_t i = 0; i < c.kh; ++i)
                    for (std::int64_t j = 0; j < c.kw; ++j) {
                        const std::int64_t ih = oh * c.sh - c.ph + i, iw = ow * c.sw - c.pw + j;
                        if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                        s += double(x.data<float>()[((n * c.C + ci) * c.H + ih) * c.W + iw]) *
                             double(w.data<float>()[((k * c.C + ci) * c.kh + i) * c.kw + j]);
                    }
            QVERIFY(std::abs(s - yr.data<float>()[o]) < 1e-4 * std::max(1.0, std::abs(s)));
        }
        Tensor dxf = filled(fast, xs, 9), dxr = filled(ref, xs, 10);  // written, not accumulated
        fast.conv2d_backward_data(dy, w, dxf, p, work_f);
        ref.conv2d_backward_data(dy, w, dxr, p, work_r);
        QVERIFY2(rel_diff(dxf, dxr) < 1e-5, qPrintable(QString("backward data differs by %1").arg(rel_diff(dxf, dxr))));
        Tensor dwf = filled(fast, ws, 11), dwr = filled(ref, ws, 11);  // accumulated onto the same values
        Tensor dbf = filled(fast, {c.K}, 12), dbr = filled(ref, {c.K}, 12);
        fast.conv2d_backward_filter(x, dy, dwf, dbf, p, work_f);
        ref.conv2d_backward_filter(x, dy, dwr, dbr, p, work_r);
        QVERIFY2(rel_diff(dwf, dwr) < 1e-5, qPrintable(QString("backward filter differs by %1").arg(rel_diff(dwf, dwr))));
        QVERIFY(rel_diff(dbf, dbr) < 1e-5);
        // both backward calls in one (oneDNN reorders dy once for them): the same as the two calls
        Tensor dxc = filled(fast, xs, 13), dwc = filled(fast, ws, 11), dbc = filled(fast, {c.K}, 12);
        std::memset(work_f.data<std::uint8_t>(), 0xff, wf);
        fast.conv2d_backward(x, dy, w, dxc, dwc, dbc, p, work_f);
        QVERIFY2(rel_diff(dxc, dxr) < 1e-5, qPrintable(QString("conv2d_backward dx differs by %1").arg(rel_diff(dxc, dxr))));
        QVERIFY2(rel_diff(dwc, dwr) < 1e-5, qPrintable(QString("conv2d_backward dw differs by %1").arg(rel_diff(dwc, dwr))));
        QVERIFY(rel_diff(dbc, dbr) < 1e-5);
    }

    void fastBatchNormMatchesReference() {
        CpuBackend fast(2, nullptr), ref(2, nullptr);
        ref.use_reference_kernels(true);
        if (fast.kernels_name() == "reference") QSKIP("this CPU has no AVX2 + FMA");
        // preset shapes and rows that are not a multiple of 8
        for (const Shape& s : {Shape{8, 16, 28, 28}, Shape{8, 64, 7, 7}, Shape{5, 3, 11, 13}, Shape{64, 32, 14, 14}}) {
            const std::int64_t C = s[1];
            Tensor x = filled(fast, s, 21, 0.5f, 2.0f), dy = filled(fast, s, 22);
            Tensor g = filled(fast, {C}, 23, 1.0f, 0.5f), beta = filled(fast, {C}, 24);
            std::vector<Tensor> outs;
            for (CpuBackend* be : {&fast, &ref}) {
                Tensor y = zeros(*be, s), dx = zeros(*be, s), m = zeros(*be, {C}), is = zeros(*be, {C});
                Tensor rm = zeros(*be, {C}), rv = zeros(*be, {C}), dg = zeros(*be, {C}), db = zeros(*be, {C});
                be->fill(rv, 1.0);
                be->batchnorm_forward_train(x, g, beta, y, m, is, rm, rv, 0.1f, 1e-5f);
                be->batchnorm_backward(x, dy, g, m, is, dx, dg, db);
                for (Tensor t : {y, m, is, rm, rv, dx, dg, db}) outs.push_back(t);
            }
            const char* names[] = {"y", "save_mean", "save_invstd", "running_mean", "running_var", "dx", "dgamma", "dbeta"};
            for (int i = 0; i < 8; ++i)
                QVERIFY2(rel_diff(outs[i], outs[8 + i]) < 2e-5,
                         qPrintable(QString("%1 of %2 differs by %3").arg(names[i], QString::fromStdString(shape_str(s)))
                                        .arg(rel_diff(outs[i], outs[8 + i]))));
        }
    }

    void fastBatchNormLargeMean() {
        // mean 300, spread 0.01: the one-pass sums are shifted, and y = (x - mean) * a + b does not cancel
        // (x * a + b would lose ~0.3 %). Against double-precision statistics of the same f32 inputs; the
        // saved f32 mean is the double mean rounded (as PyTorch's save_mean), and y is exact given it.
        CpuBackend fast(2, nullptr);
        if (fast.kernels_name() == "reference") QSKIP("this CPU has no AVX2 + FMA");
        const Shape s{6, 4, 9, 11};
        const std::int64_t N = 6, C = 4, S = 99, M = N * S;
        Tensor x = filled(fast, s, 31, 300.0f, 0.01f);
        Tensor y = zeros(fast, s), m = zeros(fast, {C}), is = zeros(fast, {C}), none;
        Tensor g = filled(fast, {C}, 32, 1.0f, 0.5f), beta = filled(fast, {C}, 33);
        fast.batchnorm_forward_train(x, g, beta, y, m, is, none, none, 0.1f, 1e-5f);
        for (std::int64_t c = 0; c < C; ++c) {
            double mu = 0, var = 0;
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t i = 0; i < S; ++i) mu += x.data<float>()[(n * C + c) * S + i];
            mu /= double(M);
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t i = 0; i < S; ++i) var += std::pow(x.data<float>()[(n * C + c) * S + i] - mu, 2);
            var /= double(M);
            const double invstd = 1.0 / std::sqrt(var + 1e-5);
            const float mean_f = m.data<float>()[c];
            QCOMPARE(mean_f, float(mu));
            QVERIFY(std::abs(is.data<float>()[c] - invstd) < 1e-4 * invstd);
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t i = 0; i < S; ++i) {
                    const std::int64_t k = (n * C + c) * S + i;
                    const double want =
                        (double(x.data<float>()[k]) - mean_f) * invstd * g.data<float>()[c] + beta.data<float>()[c];
                    QVERIFY2(std::abs(y.data<float>()[k] - want) < 1e-4,
                             qPrintable(QString("y %1 want %2").arg(y.data<float>()[k]).arg(want)));
                }
        }
    }

    void avx512KernelsMatchAvx2() {
        __builtin_cpu_init();
        if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
              __builtin_cpu_supports("fma")))
            QSKIP("this CPU has no AVX-512 F + VL");
        const cpu::FastKernels* a = cpu::avx2_kernels();
        const cpu::FastKernels* b = cpu::avx512_kernels();
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        // every blocking and tail: channels 1..13 (8-, 4- and partial blocks), positions 8..104 (48, 32,
        // 16 and 8 tails), taps 1..13 (the backward filter's 6-tap blocks and their tails)
        for (int K : {1, 3, 4, 5, 8, 12, 13})
            for (int Q : {8, 16, 24, 40, 48, 56, 64, 104})
                for (int T : {1, 2, 5, 6, 7, 9, 13}) {
                    const int span = Q + 3 * T + 16;
                    std::vector<float> src(static_cast<std::size_t>(span) * 2);
                    for (float& v : src) v = d(rng);
                    std::vector<std::int32_t> off(static_cast<std::size_t>(T));
                    for (int t = 0; t < T; ++t) off[std::size_t(t)] = 3 * t;
                    const int KP = (K + 3) / 4 * 4;
                    std::vector<float> wp(static_cast<std::size_t>(KP * T));
                    for (int k = 0; k < KP; ++k)
                        for (int t = 0; t < T; ++t)
                            wp[std::size_t((k / 4) * T * 4 + t * 4 + k % 4)] = k < K ? d(rng) : 0.0f;
                    std::vector<float> ya(static_cast<std::size_t>(K * Q), -7.0f), yb = ya;
                    a->tap_conv(src.data(), off.data(), T, wp.data(), K, Q, ya.data(), Q);
                    b->tap_conv(src.data(), off.data(), T, wp.data(), K, Q, yb.data(), Q);
                    QVERIFY2(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)) == 0,
                             qPrintable(QString("tap_conv K %1 Q %2 T %3: the AVX-512 bits differ").arg(K).arg(Q).arg(T)));
                    // backward filter over 2 samples: g has a multiple of 4 rows (those past K zero)
                    std::vector<float> g(static_cast<std::size_t>(KP * Q * 2), 0.0f);
                    for (int n = 0; n < 2; ++n)
                        for (int k = 0; k < K; ++k)
                            for (int q = 0; q < Q; ++q) g[std::size_t(n * KP * Q + k * Q + q)] = d(rng);
                    std::vector<float> dwa(static_cast<std::size_t>(K * T), 0.5f), dwb = dwa;
                    a->tap_wgrad(src.data(), off.data(), T, g.data(), Q, K, Q, dwa.data(), 2, span, std::int64_t(KP) * Q);
                    b->tap_wgrad(src.data(), off.data(), T, g.data(), Q, K, Q, dwb.data(), 2, span, std::int64_t(KP) * Q);
                    for (std::size_t i = 0; i < dwa.size(); ++i) {
                        // an independent sum in double for the reference scale
                        QVERIFY2(std::abs(dwa[i] - dwb[i]) <= 1e-5f * std::max(1.0f, std::abs(dwa[i])),
                                 qPrintable(QString("tap_wgrad K %1 Q %2 T %3: %4 vs %5").arg(K).arg(Q).arg(T).arg(dwa[i]).arg(dwb[i])));
                    }
                    // and the sum itself, in double, for one entry
                    double s = 0.5;
                    for (int n = 0; n < 2; ++n)
                        for (int q = 0; q < Q; ++q) s += double(g[std::size_t(n * KP * Q + q)]) * double(src[std::size_t(n * span + q)]);
                    QVERIFY(std::abs(s - dwb[0]) < 1e-4 * std::max(1.0, std::abs(s)));
                }
    }

    void rowKernelsMatchPlainLoops() {
        // every table's copy_rows, deinterleave_rows and interleave_rows against plain loops; copy_rows: row lengths around the vector widths (and the
        // rows of 28, 14 and 7 of the convolutions), padding of 0 to 20 columns, with and without a bias,
        // and nothing written past the last row
        __builtin_cpu_init();
        std::vector<const cpu::FastKernels*> tables;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) tables.push_back(cpu::avx2_kernels());
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
            __builtin_cpu_supports("fma"))
            tables.push_back(cpu::avx512_kernels());
        if (tables.empty()) QSKIP("this CPU has no AVX2 + FMA");
        std::mt19937_64 rng(11);
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        for (const cpu::FastKernels* k : tables)
            for (std::int64_t n : {1, 3, 4, 7, 8, 14, 15, 16, 17, 28, 31, 32, 33, 50})
                for (std::int64_t pad : {0, 1, 2, 5, 16, 20})
                    for (bool bias : {false, true}) {
                        const std::int64_t rows = 3, ss = n + 3, ds = n + pad;
                        std::vector<float> src(std::size_t(rows * ss));
                        for (float& v : src) v = d(rng);
                        std::vector<float> got(std::size_t(rows * ds + 16), 9.0f), want = got;
                        for (std::int64_t r = 0; r < rows; ++r)
                            for (std::int64_t i = 0; i < ds; ++i)
                                want[std::size_t(r * ds + i)] = i < n ? src[std::size_t(r * ss + i)] + (bias ? 0.25f : 0.0f) : 0.0f;
                        k->copy_rows(got.data(), ds, src.data(), ss, rows, n, bias, 0.25f);
                        QVERIFY2(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0,
                                 qPrintable(QString("%1 copy_rows n %2 pad %3 bias %4").arg(k->name).arg(n).arg(pad).arg(bias)));
                    }
        // the column phases of stride 2, either phase absent (null), odd and even lengths
        for (const cpu::FastKernels* k : tables)
            for (std::int64_t n : {1, 2, 5, 14, 15, 16, 17, 28, 31, 32, 33, 47, 64, 70})
                for (int which = 0; which < 3; ++which) {  // both, even only, odd only
                    const std::int64_t rows = 3, ss = n + 5, ds = (n + 1) / 2 + 3;
                    std::vector<float> src(std::size_t(rows * ss));
                    for (float& v : src) v = d(rng);
                    std::vector<float> ev(std::size_t(rows * ds + 16), 9.0f), od = ev, want_e = ev, want_o = ev;
                    for (std::int64_t r = 0; r < rows; ++r)
                        for (std::int64_t i = 0; 2 * i < n; ++i) {
                            want_e[std::size_t(r * ds + i)] = src[std::size_t(r * ss + 2 * i)];
                            if (2 * i + 1 < n) want_o[std::size_t(r * ds + i)] = src[std::size_t(r * ss + 2 * i + 1)];
                        }
                    float* e = which != 2 ? ev.data() : nullptr;
                    float* o = which != 1 ? od.data() : nullptr;
                    k->deinterleave_rows(e, o, ds, src.data(), ss, rows, n);
                    if (e) QVERIFY2(ev == want_e, qPrintable(QString("%1 deinterleave_rows even, n %2").arg(k->name).arg(n)));
                    if (o) QVERIFY2(od == want_o, qPrintable(QString("%1 deinterleave_rows odd, n %2").arg(k->name).arg(n)));
                    // and back: dst[2i] = even[i], dst[2i + 1] = odd[i] (a missing phase gives zeros)
                    std::vector<float> back(std::size_t(rows * ss + 16), 7.0f), want_b = back;
                    for (std::int64_t r = 0; r < rows; ++r)
                        for (std::int64_t i = 0; 2 * i < n; ++i) {
                            want_b[std::size_t(r * ss + 2 * i)] = e ? ev[std::size_t(r * ds + i)] : 0.0f;
                            if (2 * i + 1 < n) want_b[std::size_t(r * ss + 2 * i + 1)] = o ? od[std::size_t(r * ds + i)] : 0.0f;
                        }
                    k->interleave_rows(back.data(), ss, e, o, ds, rows, n);
                    QVERIFY2(back == want_b, qPrintable(QString("%1 interleave_rows n %2 phases %3").arg(k->name).arg(n).arg(which)));
                }
    }

    void baselineObjectsHaveNoAvx() {
        const QString lib = hrtest::qbinary_path("core/libheadroom_core.a");
        if (!QFileInfo::exists(lib)) QSKIP("libheadroom_core.a not found (not a static build)");
        QProcess objdump;
        objdump.start("objdump", {"-d", "--no-show-raw-insn", lib});
        if (!objdump.waitForStarted()) QSKIP("objdump (binutils) is not installed");
        QVERIFY(objdump.waitForFinished(300000));
        const QString text = QString::fromLocal8Bit(objdump.readAllStandardOutput());
        QVERIFY(text.size() > 1000);
        // members start with "<name>.o:     file format ..."
        const QRegularExpression member(R"(^([^\s:]+\.o):\s+file format)", QRegularExpression::MultilineOption);
        const QRegularExpression avx(R"(%[yz]mm\d+)");
        QStringList offenders, seen;
        auto it = member.globalMatch(text);
        QList<QPair<QString, qsizetype>> starts;
        while (it.hasNext()) {
            auto m = it.next();
            starts.append({m.captured(1), m.capturedStart()});
        }
        // the archive was read: its members (with HEADROOM_UNITY a few batches plus the files built apart,
        // the AVX2/AVX-512 kernels among them; one member a file without it)
        QVERIFY(starts.size() >= 6);
        bool saw_avx2_object = false;
        for (int i = 0; i < starts.size(); ++i) {
            const QString name = starts[i].first;
            const qsizetype end = i + 1 < starts.size() ? starts[i + 1].second : text.size();
            const QString body = text.mid(starts[i].second, end - starts[i].second);
            const bool uses = body.contains(avx);
            if (name.contains("_avx2") || name.contains("_avx512")) {
                saw_avx2_object = true;
                QVERIFY2(uses, "the AVX2 kernels object has no YMM instruction: is it built with -mavx2?");
            } else if (uses) {
                offenders << name;
            }
        }
        QVERIFY(saw_avx2_object);
        QVERIFY2(offenders.isEmpty(), qPrintable("AVX instructions in baseline objects: " + offenders.join(", ")));
        // weak (shareable) definitions in the AVX2 object would let the linker hand AVX2 code to
        // baseline callers
        QProcess nm;
        nm.start("nm", {"-A", "--defined-only", lib});
        QVERIFY(nm.waitForStarted());
        QVERIFY(nm.waitForFinished(120000));
        QStringList weak;
        for (const QString& line : QString::fromLocal8Bit(nm.readAllStandardOutput()).split('\n')) {
            if (!line.contains("_avx2") && !line.contains("_avx512")) continue;
            const QStringList f = line.split(' ', Qt::SkipEmptyParts);
            // code only: weak objects ("V", e.g. the type_info records UBSan's function check emits) hold
            // no instructions the linker could hand to baseline callers
            if (f.size() >= 3 && (f[1] == "W" || f[1] == "u")) weak << f[2];
        }
        QVERIFY2(weak.isEmpty(), qPrintable("weak symbols in the AVX2 object: " + weak.join(", ")));
    }
};

QTEST_APPLESS_MAIN(TestCpuDispatch)
#include "test_cpu_dispatch.moc"
