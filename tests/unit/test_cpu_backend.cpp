// CpuBackend against naive double-precision references written here, on random inputs.
#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "base/dtype.h"
#include "base/error.h"

using namespace hr;
using Vec = std::vector<double>;

namespace {

std::mt19937_64& rng() {
    static std::mt19937_64 g(12345);
    return g;
}

Vec random_vec(std::int64_t n, double lo = -1.0, double hi = 1.0) {
    std::uniform_real_distribution<double> d(lo, hi);
    Vec v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(rng());
    return v;
}

// A tensor of `dt` holding `v` (rounded to the dtype).
Tensor make(Backend& be, const Shape& s, DType dt, const Vec& v) {
    Tensor t = Tensor::empty(be.allocator(), s, dt, MemCategory::other);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        switch (dt) {
            case DType::f32: t.data<float>()[i] = float(v[i]); break;
            case DType::f64: t.data<double>()[i] = v[i]; break;
            case DType::bf16: t.data<std::uint16_t>()[i] = f32_to_bf16(float(v[i])); break;
            case DType::f16: t.data<std::uint16_t>()[i] = f32_to_f16(float(v[i])); break;
            case DType::i32: t.data<std::int32_t>()[i] = std::int32_t(v[i]); break;
            case DType::i64: t.data<std::int64_t>()[i] = std::int64_t(v[i]); break;
            case DType::u8: t.data<std::uint8_t>()[i] = std::uint8_t(v[i]); break;
        }
    }
    return t;
}

Tensor zeros(Backend& be, const Shape& s, DType dt) { return Tensor::empty(be.allocator(), s, dt, MemCategory::other); }

Vec read(const Tensor& t) {
    Vec v(static_cast<std::size_t>(t.numel()));
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        switch (t.dtype()) {
            case DType::f32: v[i] = t.data<float>()[i]; break;
            case DType::f64: v[i] = t.data<double>()[i]; break;
            case DType::bf16: v[i] = bf16_to_f32(t.data<std::uint16_t>()[i]); break;
            case DType::f16: v[i] = f16_to_f32(t.data<std::uint16_t>()[i]); break;
            case DType::i32: v[i] = t.data<std::int32_t>()[i]; break;
            case DType::i64: v[i] = double(t.data<std::int64_t>()[i]); break;
            case DType::u8: v[i] = t.data<std::uint8_t>()[i]; break;
        }
    }
    return v;
}

// Values as the dtype stores them (so references see the same inputs as the backend).
Vec rounded(const Vec& v, DType dt) {
    Vec r = v;
    for (auto& x : r) {
        if (dt == DType::f32) x = float(x);
        if (dt == DType::bf16) x = bf16_to_f32(f32_to_bf16(float(x)));
        if (dt == DType::f16) x = f16_to_f32(f32_to_f16(float(x)));
    }
    return r;
}

double tolerance(DType dt) { return dt == DType::f64 ? 1e-10 : dt == DType::f32 ? 2e-5 : 1e-2; }

// |got - want| <= tol * max(1, max|want|) elementwise; reports the first mismatch.
bool close(const Vec& got, const Vec& want, double tol, const char* what) {
    if (got.size() != want.size()) {
        qWarning("%s: size %zu vs %zu", what, got.size(), want.size());
        return false;
    }
    double scale = 1.0;
    for (double w : want) scale = std::max(scale, std::abs(w));
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!(std::abs(got[i] - want[i]) <= tol * scale)) {
            qWarning("%s: element %zu got %.10g want %.10g (tol %.3g, scale %.3g)", what, i, got[i], want[i], tol, scale);
            return false;
        }
    }
    return true;
}

struct ConvCase {
    std::int64_t N, C, H, W, K, kh, kw;
    Conv2dParams p;
    std::int64_t Ho() const { return (H + 2 * p.pad_h - p.dilation_h * (kh - 1) - 1) / p.stride_h + 1; }
    std::int64_t Wo() const { return (W + 2 * p.pad_w - p.dilation_w * (kw - 1) - 1) / p.stride_w + 1; }
};

// Naive conv references in double.
Vec ref_conv_fwd(const ConvCase& c, const Vec& x, const Vec& w, const Vec* b) {
    const auto Ho = c.Ho(), Wo = c.Wo();
    Vec y(c.N * c.K * Ho * Wo, 0.0);
    for (std::int64_t n = 0; n < c.N; ++n)
        for (std::int64_t k = 0; k < c.K; ++k)
            for (std::int64_t oh = 0; oh < Ho; ++oh)
                for (std::int64_t ow = 0; ow < Wo; ++ow) {
                    double s = b ? (*b)[k] : 0.0;
                    for (std::int64_t ch = 0; ch < c.C; ++ch)
                        for (std::int64_t i = 0; i < c.kh; ++i)
                            for (std::int64_t j = 0; j < c.kw; ++j) {
                                const auto ih = oh * c.p.stride_h - c.p.pad_h + i * c.p.dilation_h;
                                const auto iw = ow * c.p.stride_w - c.p.pad_w + j * c.p.dilation_w;
                                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                                s += x[((n * c.C + ch) * c.H + ih) * c.W + iw] * w[((k * c.C + ch) * c.kh + i) * c.kw + j];
                            }
                    y[((n * c.K + k) * Ho + oh) * Wo + ow] = s;
                }
    return y;
}

// dx and dw from dy, by the transposed loops.
void ref_conv_bwd(const ConvCase& c, const Vec& x, const Vec& w, const Vec& dy, Vec& dx, Vec& dw, Vec& db) {
    const auto Ho = c.Ho(), Wo = c.Wo();
    dx.assign(x.size(), 0.0);
    dw.assign(w.size(), 0.0);
    db.assign(c.K, 0.0);
    for (std::int64_t n = 0; n < c.N; ++n)
        for (std::int64_t k = 0; k < c.K; ++k)
            for (std::int64_t oh = 0; oh < Ho; ++oh)
                for (std::int64_t ow = 0; ow < Wo; ++ow) {
                    const double g = dy[((n * c.K + k) * Ho + oh) * Wo + ow];
                    db[k] += g;
                    for (std::int64_t ch = 0; ch < c.C; ++ch)
                        for (std::int64_t i = 0; i < c.kh; ++i)
                            for (std::int64_t j = 0; j < c.kw; ++j) {
                                const auto ih = oh * c.p.stride_h - c.p.pad_h + i * c.p.dilation_h;
                                const auto iw = ow * c.p.stride_w - c.p.pad_w + j * c.p.dilation_w;
                                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                                const auto xi = ((n * c.C + ch) * c.H + ih) * c.W + iw;
                                const auto wi = ((k * c.C + ch) * c.kh + i) * c.kw + j;
                                dx[xi] += g * w[wi];
                                dw[wi] += g * x[xi];
                            }
                }
}

std::vector<ConvCase> conv_cases() {
    std::vector<ConvCase> cs;
    cs.push_back({3, 2, 7, 9, 4, 3, 2, Conv2dParams{2, 1, 1, 2, 1, 2}});  // stride, padding, dilation, non-square
    cs.push_back({2, 3, 5, 6, 5, 1, 1, Conv2dParams{}});                 // 1x1 direct path
    cs.push_back({4, 1, 28, 28, 10, 5, 5, Conv2dParams{}});              // seed-cnn conv1
    cs.push_back({5, 10, 12, 12, 20, 5, 5, Conv2dParams{}});             // seed-cnn conv2
    cs.push_back({2, 3, 8, 7, 2, 3, 3, Conv2dParams{3, 2, 2, 0, 2, 1}});  // stride 3x2, padding 2x0, dilation 2x1
    cs.push_back({3, 2, 6, 6, 3, 1, 1, Conv2dParams{2, 2, 1, 1, 1, 1}});  // strided, padded 1x1
    // 9x9: more taps than col2im keeps on its stack (81 > 64); stride 1x2, padding 4x3
    cs.push_back({2, 2, 12, 11, 3, 9, 9, Conv2dParams{1, 2, 4, 3, 1, 1}});
    return cs;
}

Pool2dParams pool(int kh, int kw, int sh, int sw, int ph, int pw) { return Pool2dParams{kh, kw, sh, sw, ph, pw}; }

}  // namespace

class TestCpuBackend : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> be_ = make_cpu_backend(2, std::make_shared<MemoryLedger>());

private slots:
    void name_and_threads() {
        QVERIFY(QString::fromStdString(be_->name()).startsWith("cpu (OpenBLAS"));
        QVERIFY(QString::fromStdString(be_->name()).contains("2 threads"));
        QCOMPARE(be_->threads(), 2);
        auto all = make_cpu_backend(0, nullptr);
        QVERIFY(all->threads() >= 1);
        QVERIFY(all->device().is_cpu());
    }

    void fill_and_copy() {
        Tensor a = zeros(*be_, {3, 5}, DType::f32);
        be_->fill(a, 2.5);
        for (double v : read(a)) QCOMPARE(v, 2.5);
        Tensor i = zeros(*be_, {4}, DType::i32);
        be_->fill(i, 7);
        for (double v : read(i)) QCOMPARE(v, 7.0);
        // float conversions among all float dtypes
        Vec src = random_vec(37, -10, 10);
        for (DType from : {DType::f32, DType::f64, DType::bf16, DType::f16})
            for (DType to : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
                Tensor s = make(*be_, {37}, from, src);
                Tensor d = zeros(*be_, {37}, to);
                be_->copy(s, d);
                QVERIFY(close(read(d), rounded(rounded(src, from), to), to == DType::f64 || to == from ? 0.0 : tolerance(to), "copy"));
            }
        // ints: plain copy, and reshaped destination with the same numel
        Tensor li = make(*be_, {2, 3}, DType::i64, {1, -2, 3, 4, 5, 600000000000.0});
        Tensor lo = zeros(*be_, {6}, DType::i64);
        be_->copy(li, lo);
        QCOMPARE(read(lo), read(li));
        // host round trip
        std::vector<float> host = {1, 2, 3, 4};
        Tensor h = zeros(*be_, {2, 2}, DType::f32);
        be_->copy_from_host(host.data(), h);
        std::vector<float> back(4);
        be_->copy_to_host(h, back.data());
        QCOMPARE(back, host);
        Tensor bad = zeros(*be_, {5}, DType::f32);
        QVERIFY_THROWS_EXCEPTION(Error, be_->copy(h, bad));
    }

    void elementwise() {
        for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
            const std::int64_t n = 70001;  // above the parallel grain
            Vec a = rounded(random_vec(n), dt), b = rounded(random_vec(n), dt);
            Tensor ta = make(*be_, {n}, dt, a), tb = make(*be_, {n}, dt, b), out = zeros(*be_, {n}, dt);
            be_->add(ta, tb, out);
            Vec want(n);
            for (std::int64_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
            QVERIFY(close(read(out), want, tolerance(dt), "add"));
            be_->axpy(-0.5f, ta, tb);
            for (std::int64_t i = 0; i < n; ++i) want[i] = b[i] - 0.5 * a[i];
            QVERIFY(close(read(tb), want, tolerance(dt), "axpy"));
            be_->scale(ta, 3.0f);
            for (std::int64_t i = 0; i < n; ++i) want[i] = 3.0 * a[i];
            QVERIFY(close(read(ta), want, tolerance(dt), "scale"));
        }
        Tensor a = zeros(*be_, {3}, DType::f32), b = zeros(*be_, {4}, DType::f32), c = zeros(*be_, {3}, DType::f32);
        QVERIFY_THROWS_EXCEPTION(Error, be_->add(a, b, c));
    }

    void gemm_matches_reference() {
        struct G { std::int64_t M, N, K; };
        for (G g : {G{7, 5, 3}, G{1, 9, 4}, G{200, 130, 90}, G{10, 576, 25}})
            for (DType dt : {DType::f32, DType::f64, DType::bf16})
                for (int ta = 0; ta < 2; ++ta)
                    for (int tb = 0; tb < 2; ++tb) {
                        Vec A = rounded(random_vec(g.M * g.K), dt), B = rounded(random_vec(g.K * g.N), dt);
                        Vec C0 = rounded(random_vec(g.M * g.N), dt);
                        Tensor a = make(*be_, ta ? Shape{g.K, g.M} : Shape{g.M, g.K}, dt, A);
                        Tensor b = make(*be_, tb ? Shape{g.N, g.K} : Shape{g.K, g.N}, dt, B);
                        Tensor c = make(*be_, {g.M, g.N}, dt, C0);
                        be_->gemm(ta, tb, 0.75f, a, b, 0.5f, c);
                        Vec want(g.M * g.N);
                        for (std::int64_t i = 0; i < g.M; ++i)
                            for (std::int64_t j = 0; j < g.N; ++j) {
                                double s = 0;
                                for (std::int64_t k = 0; k < g.K; ++k)
                                    s += (ta ? A[k * g.M + i] : A[i * g.K + k]) * (tb ? B[j * g.K + k] : B[k * g.N + j]);
                                want[i * g.N + j] = 0.75 * s + 0.5 * C0[i * g.N + j];
                            }
                        QVERIFY(close(read(c), want, tolerance(dt) * (dt == DType::f32 ? 10 : 1), "gemm"));
                    }
        Tensor a = zeros(*be_, {3, 4}, DType::f32), b = zeros(*be_, {5, 2}, DType::f32), c = zeros(*be_, {3, 2}, DType::f32);
        QVERIFY_THROWS_EXCEPTION(Error, be_->gemm(false, false, 1, a, b, 0, c));
    }

    void bias_add_and_grad() {
        for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
            const std::int64_t N = 3, C = 4, S = 10;
            Vec y = rounded(random_vec(N * C * S), dt), b = rounded(random_vec(C), dt);
            Tensor ty = make(*be_, {N, C, 2, 5}, dt, y), tb = make(*be_, {C}, dt, b);
            be_->add_bias(ty, tb);
            Vec want = y;
            for (std::int64_t i = 0; i < N * C * S; ++i) want[i] += b[(i / S) % C];
            QVERIFY(close(read(ty), want, tolerance(dt), "add_bias"));
            Tensor db = make(*be_, {C}, dt, Vec(C, 1.0));  // accumulates onto 1
            be_->bias_grad(make(*be_, {N, C, 2, 5}, dt, y), db);
            Vec wdb(C, 1.0);
            for (std::int64_t i = 0; i < N * C * S; ++i) wdb[(i / S) % C] += y[i];
            QVERIFY(close(read(db), wdb, tolerance(dt) * 5, "bias_grad"));
        }
        // 2-D (N, C)
        Tensor y2 = make(*be_, {2, 3}, DType::f32, {1, 2, 3, 4, 5, 6});
        be_->add_bias(y2, make(*be_, {3}, DType::f32, {10, 20, 30}));
        QCOMPARE(read(y2), (Vec{11, 22, 33, 14, 25, 36}));
    }

    void conv_matches_reference() {
        for (const ConvCase& c : conv_cases())
            for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
                const Shape xs{c.N, c.C, c.H, c.W}, ws{c.K, c.C, c.kh, c.kw}, ys{c.N, c.K, c.Ho(), c.Wo()};
                Vec x = rounded(random_vec(shape_numel(xs)), dt), w = rounded(random_vec(shape_numel(ws)), dt);
                Vec b = rounded(random_vec(c.K), dt), dy = rounded(random_vec(shape_numel(ys)), dt);
                Tensor tx = make(*be_, xs, dt, x), tw = make(*be_, ws, dt, w), tb = make(*be_, {c.K}, dt, b);
                Tensor ty = zeros(*be_, ys, dt);
                Tensor work = zeros(*be_, {std::int64_t(be_->conv2d_workspace_bytes(xs, ws, ys, c.p, dt))}, DType::u8);
                const double tol = dt == DType::f32 ? 1e-5 : tolerance(dt);
                be_->conv2d_forward(tx, tw, tb, ty, c.p, work);
                QVERIFY(close(read(ty), ref_conv_fwd(c, x, w, &b), tol, "conv2d_forward"));
                be_->conv2d_forward(tx, tw, Tensor(), ty, c.p, work);
                QVERIFY(close(read(ty), ref_conv_fwd(c, x, w, nullptr), tol, "conv2d_forward (no bias)"));

                Vec rdx, rdw, rdb;
                ref_conv_bwd(c, x, w, dy, rdx, rdw, rdb);
                Tensor tdy = make(*be_, ys, dt, dy);
                Tensor tdx = make(*be_, xs, dt, Vec(x.size(), 5.0));  // written, not accumulated
                be_->conv2d_backward_data(tdy, tw, tdx, c.p, work);
                QVERIFY(close(read(tdx), rdx, tol, "conv2d_backward_data"));
                Tensor tdw = make(*be_, ws, dt, Vec(w.size(), 1.0));  // accumulated onto 1
                Tensor tdb = make(*be_, {c.K}, dt, Vec(c.K, -1.0));
                be_->conv2d_backward_filter(tx, tdy, tdw, tdb, c.p, work);
                for (auto& v : rdw) v += 1.0;
                for (auto& v : rdb) v -= 1.0;
                QVERIFY(close(read(tdw), rdw, tol, "conv2d_backward_filter dw"));
                QVERIFY(close(read(tdb), rdb, tol, "conv2d_backward_filter dbias"));
            }
    }

    void conv_finite_difference() {
        // f64: L = sum(y * r); dL/dx and dL/dw from the backward calls against central differences.
        ConvCase c{2, 2, 6, 5, 3, 3, 2, Conv2dParams{2, 1, 1, 1, 2, 1}};
        const Shape xs{c.N, c.C, c.H, c.W}, ws{c.K, c.C, c.kh, c.kw}, ys{c.N, c.K, c.Ho(), c.Wo()};
        Vec x = random_vec(shape_numel(xs)), w = random_vec(shape_numel(ws)), r = random_vec(shape_numel(ys));
        Tensor work = zeros(*be_, {std::int64_t(be_->conv2d_workspace_bytes(xs, ws, ys, c.p, DType::f64))}, DType::u8);
        auto loss = [&](const Vec& xv, const Vec& wv) {
            Tensor tx = make(*be_, xs, DType::f64, xv), tw = make(*be_, ws, DType::f64, wv), ty = zeros(*be_, ys, DType::f64);
            be_->conv2d_forward(tx, tw, Tensor(), ty, c.p, work);
            Vec y = read(ty);
            double s = 0;
            for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
            return s;
        };
        Tensor tx = make(*be_, xs, DType::f64, x), tw = make(*be_, ws, DType::f64, w), tr = make(*be_, ys, DType::f64, r);
        Tensor dx = zeros(*be_, xs, DType::f64), dw = zeros(*be_, ws, DType::f64), none;
        be_->conv2d_backward_data(tr, tw, dx, c.p, work);
        be_->conv2d_backward_filter(tx, tr, dw, none, c.p, work);
        Vec gdx = read(dx), gdw = read(dw);
        const double h = 1e-6;
        for (std::size_t i = 0; i < x.size(); i += 7) {
            Vec xp = x, xm = x;
            xp[i] += h;
            xm[i] -= h;
            QVERIFY(std::abs((loss(xp, w) - loss(xm, w)) / (2 * h) - gdx[i]) < 1e-6);
        }
        for (std::size_t i = 0; i < w.size(); i += 3) {
            Vec wp = w, wm = w;
            wp[i] += h;
            wm[i] -= h;
            QVERIFY(std::abs((loss(x, wp) - loss(x, wm)) / (2 * h) - gdw[i]) < 1e-6);
        }
        // A workspace that is too small is refused with a message.
        Tensor small = zeros(*be_, {8}, DType::u8);
        Tensor ty = zeros(*be_, ys, DType::f64);
        QVERIFY_THROWS_EXCEPTION(Error, be_->conv2d_forward(tx, tw, Tensor(), ty, c.p, small));
        Tensor ybad = zeros(*be_, {c.N, c.K, 1, 1}, DType::f64);
        QVERIFY_THROWS_EXCEPTION(Error, be_->conv2d_forward(tx, tw, Tensor(), ybad, c.p, work));
    }

    void conv_deterministic() {
        ConvCase c{64, 10, 12, 12, 20, 5, 5, Conv2dParams{}};
        const Shape xs{c.N, c.C, c.H, c.W}, ws{c.K, c.C, c.kh, c.kw}, ys{c.N, c.K, c.Ho(), c.Wo()};
        Tensor tx = make(*be_, xs, DType::f32, random_vec(shape_numel(xs)));
        Tensor tdy = make(*be_, ys, DType::f32, random_vec(shape_numel(ys)));
        Tensor work = zeros(*be_, {std::int64_t(be_->conv2d_workspace_bytes(xs, ws, ys, c.p, DType::f32))}, DType::u8);
        Tensor dw1 = zeros(*be_, ws, DType::f32), dw2 = zeros(*be_, ws, DType::f32);
        Tensor db1 = zeros(*be_, {c.K}, DType::f32), db2 = zeros(*be_, {c.K}, DType::f32);
        be_->conv2d_backward_filter(tx, tdy, dw1, db1, c.p, work);
        be_->conv2d_backward_filter(tx, tdy, dw2, db2, c.p, work);
        QCOMPARE(std::memcmp(dw1.raw(), dw2.raw(), dw1.nbytes()), 0);
        QCOMPARE(std::memcmp(db1.raw(), db2.raw(), db1.nbytes()), 0);
        QCOMPARE(be_->conv2d_workspace_bytes(xs, ws, ys, c.p, DType::f32),
                 be_->conv2d_workspace_bytes(xs, ws, ys, c.p, DType::f32));
    }

    void maxpool_matches_reference() {
        for (Pool2dParams p : {pool(2, 2, 2, 2, 0, 0), pool(3, 2, 2, 1, 1, 1), pool(3, 3, 3, 3, 1, 0)})
            for (DType dt : {DType::f32, DType::f64, DType::bf16})
                for (std::int64_t W : {8, 20, 37}) {  // the 2x2 kernel's vector blocks of 8 outputs and its tail
                const std::int64_t N = 2, C = 3, H = 7;
                const std::int64_t Ho = (H + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
                const std::int64_t Wo = (W + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
                Vec x(N * C * H * W);
                std::uniform_int_distribution<int> d(-3, 3);  // many ties
                for (auto& v : x) v = d(rng());
                Tensor tx = make(*be_, {N, C, H, W}, dt, x), ty = zeros(*be_, {N, C, Ho, Wo}, dt);
                Tensor idx = zeros(*be_, {N, C, Ho, Wo}, DType::i32);
                be_->maxpool2d_forward(tx, ty, idx, p);
                Vec wy(N * C * Ho * Wo), widx(wy.size());
                for (std::int64_t pl = 0; pl < N * C; ++pl)
                    for (std::int64_t oh = 0; oh < Ho; ++oh)
                        for (std::int64_t ow = 0; ow < Wo; ++ow) {
                            double best = -INFINITY;
                            std::int64_t bi = -1;
                            for (std::int64_t i = oh * p.stride_h - p.pad_h; i < oh * p.stride_h - p.pad_h + p.kernel_h; ++i)
                                for (std::int64_t j = ow * p.stride_w - p.pad_w; j < ow * p.stride_w - p.pad_w + p.kernel_w; ++j) {
                                    if (i < 0 || i >= H || j < 0 || j >= W) continue;
                                    if (x[pl * H * W + i * W + j] > best) {
                                        best = x[pl * H * W + i * W + j];
                                        bi = i * W + j;
                                    }
                                }
                            wy[(pl * Ho + oh) * Wo + ow] = best;
                            widx[(pl * Ho + oh) * Wo + ow] = double(bi);
                        }
                QVERIFY(close(read(ty), wy, 0.0, "maxpool y"));
                QVERIFY(close(read(idx), widx, 0.0, "maxpool indices (first of ties)"));
                Vec dy = rounded(random_vec(wy.size()), dt);
                Tensor tdx = make(*be_, {N, C, H, W}, dt, Vec(x.size(), 9.0));
                be_->maxpool2d_backward(make(*be_, {N, C, Ho, Wo}, dt, dy), idx, tdx);
                Vec wdx(x.size(), 0.0);
                for (std::size_t o = 0; o < dy.size(); ++o) wdx[(o / (Ho * Wo)) * H * W + std::int64_t(widx[o])] += dy[o];
                QVERIFY(close(read(tdx), wdx, tolerance(dt), "maxpool backward"));
            }
    }

    void maxpool_propagates_nan_as_pytorch() {
        // PyTorch's rule: candidates in window order, a later one replaces the best when greater or NaN (so
        // a NaN propagates and the last NaN of a window is the index). 2x2 windows over 20 columns: the
        // vector blocks and the tail of the kernel; a bad index in backward names itself.
        const std::int64_t H = 4, W = 20, Ho = 2, Wo = 10;
        Vec x(H * W);
        std::uniform_int_distribution<int> d(-2, 2);
        for (auto& v : x) v = d(rng());
        for (std::int64_t i : {0, 3, 21, 22, 45, 46, 65, 79}) x[std::size_t(i)] = NAN;
        for (DType dt : {DType::f32, DType::f64}) {
            Tensor tx = make(*be_, {1, 1, H, W}, dt, x), ty = zeros(*be_, {1, 1, Ho, Wo}, dt);
            Tensor idx = zeros(*be_, {1, 1, Ho, Wo}, DType::i32);
            be_->maxpool2d_forward(tx, ty, idx, pool(2, 2, 2, 2, 0, 0));
            const Vec y = read(ty), got = read(idx);
            for (std::int64_t oh = 0; oh < Ho; ++oh)
                for (std::int64_t ow = 0; ow < Wo; ++ow) {
                    double best = -INFINITY;
                    std::int64_t bi = -1;
                    for (std::int64_t i = 2 * oh; i < 2 * oh + 2; ++i)
                        for (std::int64_t j = 2 * ow; j < 2 * ow + 2; ++j) {
                            const double v = x[std::size_t(i * W + j)];
                            if (v > best || std::isnan(v)) {
                                best = v;
                                bi = i * W + j;
                            }
                        }
                    const std::size_t o = std::size_t(oh * Wo + ow);
                    QCOMPARE(std::int64_t(got[o]), bi);
                    QCOMPARE(std::isnan(y[o]), std::isnan(best));
                    if (!std::isnan(best)) QCOMPARE(y[o], best);
                }
            Vec bad_at(std::size_t(Ho * Wo), 1.0);
            bad_at[13] = double(H * W);
            Tensor bad = make(*be_, {1, 1, Ho, Wo}, DType::i32, bad_at);
            Tensor dx = zeros(*be_, {1, 1, H, W}, dt);
            try {
                be_->maxpool2d_backward(make(*be_, {1, 1, Ho, Wo}, dt, Vec(std::size_t(Ho * Wo), 1.0)), bad, dx);
                QFAIL("an index outside the plane was accepted");
            } catch (const std::exception& e) {
                QVERIFY2(std::string(e.what()).find("index 80 at element 13") != std::string::npos, e.what());
            }
        }
    }

    void avgpool_matches_reference() {
        for (Pool2dParams p : {pool(2, 2, 2, 2, 0, 0), pool(3, 2, 2, 1, 1, 1), pool(3, 3, 2, 3, 1, 0)})
            for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
                const std::int64_t N = 2, C = 2, H = 7, W = 6;
                const std::int64_t Ho = (H + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
                const std::int64_t Wo = (W + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
                Vec x = rounded(random_vec(N * C * H * W), dt), dy = rounded(random_vec(N * C * Ho * Wo), dt);
                Tensor tx = make(*be_, {N, C, H, W}, dt, x), ty = zeros(*be_, {N, C, Ho, Wo}, dt);
                be_->avgpool2d_forward(tx, ty, p);
                Vec wy(N * C * Ho * Wo, 0.0), wdx(x.size(), 0.0);
                const double count = p.kernel_h * p.kernel_w;  // windows here never pass the padding
                for (std::int64_t pl = 0; pl < N * C; ++pl)
                    for (std::int64_t oh = 0; oh < Ho; ++oh)
                        for (std::int64_t ow = 0; ow < Wo; ++ow) {
                            const auto o = (pl * Ho + oh) * Wo + ow;
                            for (std::int64_t i = oh * p.stride_h - p.pad_h; i < oh * p.stride_h - p.pad_h + p.kernel_h; ++i)
                                for (std::int64_t j = ow * p.stride_w - p.pad_w; j < ow * p.stride_w - p.pad_w + p.kernel_w; ++j) {
                                    if (i < 0 || i >= H || j < 0 || j >= W) continue;
                                    wy[o] += x[pl * H * W + i * W + j] / count;
                                    wdx[pl * H * W + i * W + j] += dy[o] / count;
                                }
                        }
                QVERIFY(close(read(ty), wy, tolerance(dt), "avgpool forward"));
                Tensor tdx = make(*be_, {N, C, H, W}, dt, Vec(x.size(), 3.0));
                be_->avgpool2d_backward(make(*be_, {N, C, Ho, Wo}, dt, dy), tdx, p);
                QVERIFY(close(read(tdx), wdx, tolerance(dt), "avgpool backward"));
            }
    }

    void activations_match_reference() {
        const float alpha = 0.1f;
        struct A {
            ActivationKind kind;
            std::function<double(double)> f, df;
        };
        const double inv_sqrt2 = 1.0 / std::sqrt(2.0), inv_sqrt2pi = 1.0 / std::sqrt(2.0 * M_PI);
        std::vector<A> acts = {
            {ActivationKind::relu, [](double x) { return x > 0 ? x : 0; }, [](double x) { return x > 0 ? 1.0 : 0.0; }},
            {ActivationKind::leaky_relu, [&](double x) { return x > 0 ? x : double(alpha) * x; },
             [&](double x) { return x > 0 ? 1.0 : double(alpha); }},
            {ActivationKind::tanh, [](double x) { return std::tanh(x); },
             [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
            {ActivationKind::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
             [](double x) { double s = 1 / (1 + std::exp(-x)); return s * (1 - s); }},
            {ActivationKind::gelu, [&](double x) { return 0.5 * x * (1 + std::erf(x * inv_sqrt2)); },
             [&](double x) { return 0.5 * (1 + std::erf(x * inv_sqrt2)) + x * std::exp(-0.5 * x * x) * inv_sqrt2pi; }},
        };
        for (const A& a : acts)
            for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
                const std::int64_t n = 40000;
                Vec x = rounded(random_vec(n, -4, 4), dt), dy = rounded(random_vec(n), dt);
                Tensor tx = make(*be_, {n}, dt, x), ty = zeros(*be_, {n}, dt), tdx = zeros(*be_, {n}, dt);
                be_->activation_forward(a.kind, alpha, tx, ty);
                Vec wy(n), wdx(n);
                for (std::int64_t i = 0; i < n; ++i) {
                    wy[i] = a.f(x[i]);
                    wdx[i] = dy[i] * a.df(x[i]);
                }
                QVERIFY(close(read(ty), wy, tolerance(dt), "activation forward"));
                be_->activation_backward(a.kind, alpha, tx, ty, make(*be_, {n}, dt, dy), tdx);
                // tanh/sigmoid backward read the stored output y: bf16 rounding of y adds error
                QVERIFY(close(read(tdx), wdx, dt == DType::bf16 ? 3e-2 : tolerance(dt) * 10, "activation backward"));
            }
    }

    void dropout_follows_counter_rng() {
        const std::int64_t n = 50000;
        const float p = 0.3f;
        Vec x = random_vec(n);
        Tensor tx = make(*be_, {n}, DType::f32, x), ty = zeros(*be_, {n}, DType::f32), mask = zeros(*be_, {n}, DType::u8);
        be_->dropout_forward(tx, ty, mask, p, 42, 1000);
        Vec y = read(ty), m = read(mask);
        std::int64_t kept = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const bool keep = counter_uniform(42, 1000 + i) >= p;
            QCOMPARE(m[i], keep ? 1.0 : 0.0);
            QVERIFY(std::abs(y[i] - (keep ? double(float(x[i]) / (1.0f - p)) : 0.0)) < 1e-6);
            kept += keep;
        }
        QVERIFY(std::abs(double(kept) / n - 0.7) < 0.02);
        Vec dy = random_vec(n);
        Tensor tdx = zeros(*be_, {n}, DType::f32);
        be_->dropout_backward(make(*be_, {n}, DType::f32, dy), mask, p, tdx);
        Vec dx = read(tdx);
        for (std::int64_t i = 0; i < n; i += 97) QVERIFY(std::abs(dx[i] - (m[i] ? dy[i] / 0.7 : 0.0)) < 1e-5);
    }

    void batchnorm_matches_reference() {
        for (bool four_d : {true, false})
            for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
                const std::int64_t N = 4, C = 3, S = four_d ? 10 : 1, M = N * S;
                const Shape xs = four_d ? Shape{N, C, 2, 5} : Shape{N, C};
                Vec x = rounded(random_vec(N * C * S, -2, 3), dt), dy = rounded(random_vec(N * C * S), dt);
                Vec g = random_vec(C, 0.5, 1.5), b = random_vec(C);
                Tensor tx = make(*be_, xs, dt, x), ty = zeros(*be_, xs, dt);
                Tensor tg = make(*be_, {C}, DType::f32, g), tb = make(*be_, {C}, DType::f32, b);
                // f64 runs keep their statistics in f64 too (the backend reads any float dtype there), so
                // finite-difference checks see double precision end to end.
                const DType st = dt == DType::f64 ? DType::f64 : DType::f32;
                Tensor sm = zeros(*be_, {C}, st), si = zeros(*be_, {C}, st);
                Tensor rm = make(*be_, {C}, DType::f32, Vec(C, 0.0)), rv = make(*be_, {C}, DType::f32, Vec(C, 1.0));
                const float eps = 1e-5f, mom = 0.1f;
                be_->batchnorm_forward_train(tx, tg, tb, ty, sm, si, rm, rv, mom, eps);
                g = rounded(g, DType::f32);
                b = rounded(b, DType::f32);
                Vec mean(C, 0), var(C, 0), wy(x.size()), wdx(x.size()), wdg(C, 0.5), wdb(C, 0.25);
                auto at = [&](std::int64_t n, std::int64_t c, std::int64_t s) { return (n * C + c) * S + s; };
                for (std::int64_t c = 0; c < C; ++c) {
                    for (std::int64_t n = 0; n < N; ++n)
                        for (std::int64_t s = 0; s < S; ++s) mean[c] += x[at(n, c, s)] / M;
                    for (std::int64_t n = 0; n < N; ++n)
                        for (std::int64_t s = 0; s < S; ++s) var[c] += std::pow(x[at(n, c, s)] - mean[c], 2) / M;
                    const double is = 1 / std::sqrt(var[c] + eps);
                    double sdy = 0, sdyx = 0;
                    for (std::int64_t n = 0; n < N; ++n)
                        for (std::int64_t s = 0; s < S; ++s) {
                            const auto i = at(n, c, s);
                            wy[i] = (x[i] - mean[c]) * is * g[c] + b[c];
                            sdy += dy[i];
                            sdyx += dy[i] * (x[i] - mean[c]) * is;
                        }
                    wdg[c] += sdyx;
                    wdb[c] += sdy;
                    for (std::int64_t n = 0; n < N; ++n)
                        for (std::int64_t s = 0; s < S; ++s) {
                            const auto i = at(n, c, s);
                            wdx[i] = g[c] * is / M * (M * dy[i] - sdy - (x[i] - mean[c]) * is * sdyx);
                        }
                }
                QVERIFY(close(read(ty), wy, tolerance(dt) * 10, "batchnorm y"));
                Vec wrm(C), wrv(C), wsi(C);
                for (std::int64_t c = 0; c < C; ++c) {
                    wrm[c] = 0.1 * mean[c];
                    wrv[c] = 0.9 + 0.1 * var[c] * M / (M - 1);
                    wsi[c] = 1 / std::sqrt(var[c] + eps);
                }
                QVERIFY(close(read(sm), mean, 1e-6, "batchnorm save_mean"));
                QVERIFY(close(read(si), wsi, 1e-6, "batchnorm save_invstd"));
                QVERIFY(close(read(rm), wrm, 1e-6, "batchnorm running_mean"));
                QVERIFY(close(read(rv), wrv, 1e-6, "batchnorm running_var (unbiased)"));
                {
                    // activation checkpointing's recompute from the saved statistics: the forward's y bit for
                    // bit (so also the reference's), the running statistics untouched
                    Tensor ty2 = zeros(*be_, xs, dt);
                    const Vec rm0 = read(rm), rv0 = read(rv);
                    be_->batchnorm_forward_recompute(tx, tg, tb, ty2, sm, si, rm, rv, eps);
                    QVERIFY(read(ty2) == read(ty));
                    QVERIFY(read(rm) == rm0);
                    QVERIFY(read(rv) == rv0);
                }
                Tensor tdx = zeros(*be_, xs, dt), dg = make(*be_, {C}, DType::f32, Vec(C, 0.5)),
                       db = make(*be_, {C}, DType::f32, Vec(C, 0.25));
                be_->batchnorm_backward(tx, make(*be_, xs, dt, dy), tg, sm, si, tdx, dg, db);
                QVERIFY(close(read(tdx), wdx, tolerance(dt) * 10, "batchnorm dx"));
                QVERIFY(close(read(dg), wdg, dt == DType::bf16 ? 1e-2 : 1e-5, "batchnorm dgamma"));
                QVERIFY(close(read(db), wdb, dt == DType::bf16 ? 1e-2 : 1e-5, "batchnorm dbeta"));
                // inference with the running statistics
                Tensor tyi = zeros(*be_, xs, dt);
                be_->batchnorm_forward_infer(tx, tg, tb, rm, rv, eps, tyi);
                Vec wyi(x.size());
                Vec rmv = read(rm), rvv = read(rv);
                for (std::int64_t i = 0; i < std::int64_t(x.size()); ++i) {
                    const auto c = (i / S) % C;
                    wyi[i] = (x[i] - rmv[c]) / std::sqrt(rvv[c] + eps) * g[c] + b[c];
                }
                QVERIFY(close(read(tyi), wyi, tolerance(dt) * 10, "batchnorm infer"));
            }
    }

    void cross_entropy_matches_reference() {
        for (float lsf : {0.0f, 0.1f})
            for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
                const double ls = lsf;
                const std::int64_t N = 6, K = 5;
                Vec z = rounded(random_vec(N * K, -3, 3), dt);
                z[0] = 1000;  // stability: a huge logit must not overflow
                Vec lab = {0, 4, 2, 2, 1, 3};
                Tensor tz = make(*be_, {N, K}, dt, z), tl = make(*be_, {N}, DType::i64, lab), dz = zeros(*be_, {N, K}, dt);
                LossResult r = be_->softmax_cross_entropy(tz, tl, lsf, dz, 2.0f);
                double loss = 0;
                std::int64_t correct = 0;
                Vec wdz(N * K);
                for (std::int64_t n = 0; n < N; ++n) {
                    double mx = -INFINITY;
                    std::int64_t arg = 0;
                    for (std::int64_t k = 0; k < K; ++k)
                        if (z[n * K + k] > mx) mx = z[n * K + k], arg = k;
                    double se = 0;
                    for (std::int64_t k = 0; k < K; ++k) se += std::exp(z[n * K + k] - mx);
                    const double lse = mx + std::log(se);
                    const auto y = std::int64_t(lab[n]);
                    double smooth = 0;
                    for (std::int64_t k = 0; k < K; ++k) smooth += (lse - z[n * K + k]) / K;
                    loss += ((1 - ls) * (lse - z[n * K + y]) + ls * smooth) / N;
                    correct += arg == y;
                    for (std::int64_t k = 0; k < K; ++k)
                        wdz[n * K + k] = 2.0 * (std::exp(z[n * K + k] - lse) - ((k == y ? 1 - ls : 0) + ls / K)) / N;
                }
                QVERIFY(std::isfinite(r.loss));
                QVERIFY(std::abs(r.loss - loss) < 1e-4 * std::max(1.0, std::abs(loss)));
                QCOMPARE(r.correct, correct);
                QVERIFY(close(read(dz), wdz, tolerance(dt), "cross-entropy dlogits"));
            }
        Tensor tz = zeros(*be_, {2, 3}, DType::f32), bad = make(*be_, {2}, DType::i64, {0, 3}), none;
        QVERIFY_THROWS_EXCEPTION(Error, be_->softmax_cross_entropy(tz, bad, 0.0f, none, 1.0f));
    }

    void mse_matches_reference() {
        const std::int64_t N = 5, K = 4;
        Vec p = random_vec(N * K), t = random_vec(N * K);
        Tensor tp = make(*be_, {N, K}, DType::f64, p), tt = make(*be_, {N, K}, DType::f64, t), dp = zeros(*be_, {N, K}, DType::f64);
        LossResult r = be_->mse_loss(tp, tt, dp, 0.5f);
        double loss = 0;
        std::int64_t correct = 0;
        Vec wdp(N * K);
        for (std::int64_t n = 0; n < N; ++n) {
            std::int64_t ap = 0, at = 0;
            for (std::int64_t k = 0; k < K; ++k) {
                const auto i = n * K + k;
                loss += (p[i] - t[i]) * (p[i] - t[i]) / (N * K);
                wdp[i] = 0.5 * 2 * (p[i] - t[i]) / (N * K);
                if (p[i] > p[n * K + ap]) ap = k;
                if (t[i] > t[n * K + at]) at = k;
            }
            correct += ap == at;
        }
        QVERIFY(std::abs(r.loss - loss) < 1e-12);
        QCOMPARE(r.correct, correct);
        QVERIFY(close(read(dp), wdp, 1e-12, "mse dpred"));
    }

    void reductions() {
        const std::int64_t n = 100003;
        Vec x = random_vec(n);
        double want = 0;
        for (double v : x) want += v * v;
        Tensor t64 = make(*be_, {n}, DType::f64, x);
        QVERIFY(std::abs(be_->sum_squares(t64) - want) < 1e-9 * want);
        Tensor t32 = make(*be_, {n}, DType::f32, x);
        const double s1 = be_->sum_squares(t32);
        QVERIFY(std::abs(s1 - want) < 1e-5 * want);
        QCOMPARE(be_->sum_squares(t32), s1);  // deterministic
        QVERIFY(be_->all_finite(t32));
        for (double bad : {double(NAN), double(INFINITY), -double(INFINITY)})
            for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
                Vec y = x;
                y[n - 5] = bad;
                QVERIFY(!be_->all_finite(make(*be_, {n}, dt, y)));
            }
        QVERIFY(be_->all_finite(make(*be_, {3}, DType::bf16, {1, 2, 3})));
    }

    void sgd_matches_pytorch() {
        // Hand-computed: p=1, grads 0.5, 0.25, -1; lr 0.1, momentum 0.9, wd 0.01, dampening 0.
        // step 1: g = 0.5 + 0.01*1 = 0.51; buf = 0.51; p = 1 - 0.051 = 0.949
        // step 2: g = 0.25 + 0.00949 = 0.25949; buf = 0.9*0.51 + 0.25949 = 0.71849; p = 0.949 - 0.071849 = 0.877151
        // step 3: g = -1 + 0.00877151 = -0.99122849; buf = 0.9*0.71849 - 0.99122849 = -0.34458749;
        //         p = 0.877151 + 0.034458749 = 0.911609749
        Tensor p = make(*be_, {1}, DType::f64, {1.0}), buf = zeros(*be_, {1}, DType::f64);
        const double grads[3] = {0.5, 0.25, -1.0};
        const double want[3] = {0.949, 0.877151, 0.911609749};
        for (int s = 0; s < 3; ++s) {
            SgdArgs a;
            a.lr = 0.1f;
            a.momentum = 0.9f;
            a.weight_decay = 0.01f;
            a.first_step = s == 0;
            Tensor g = make(*be_, {1}, DType::f64, {grads[s]});
            be_->sgd_update(p, g, buf, a);
            QVERIFY(std::abs(read(p)[0] - want[s]) < 1e-7);
        }
        // Nesterov, f32 param, bf16 grad, grad_scale and dampening=0 vs a reference loop; plain SGD.
        for (bool nesterov : {false, true}) {
            const std::int64_t n = 40000;
            Vec p0 = random_vec(n), pref = rounded(p0, DType::f32), bref(n, 0.0);
            Tensor tp = make(*be_, {n}, DType::f32, p0), tbuf = zeros(*be_, {n}, DType::f32);
            for (int s = 0; s < 3; ++s) {
                Vec g = rounded(random_vec(n), DType::bf16);
                SgdArgs a;
                a.lr = 0.05f;
                a.momentum = 0.8f;
                a.nesterov = nesterov;
                a.dampening = nesterov ? 0.0f : 0.3f;
                a.weight_decay = 0.1f;
                a.first_step = s == 0;
                a.grad_scale = 0.5f;
                be_->sgd_update(tp, make(*be_, {n}, DType::bf16, g), tbuf, a);
                for (std::int64_t i = 0; i < n; ++i) {
                    double d = g[i] * 0.5 + double(0.1f) * pref[i];
                    bref[i] = s == 0 ? d : double(0.8f) * bref[i] + (1 - double(a.dampening)) * d;
                    d = nesterov ? d + double(0.8f) * bref[i] : bref[i];
                    pref[i] -= double(0.05f) * d;
                }
            }
            QVERIFY(close(read(tp), pref, 1e-5, "sgd momentum"));
        }
        Tensor tp = make(*be_, {2}, DType::f32, {1, 2}), none;
        SgdArgs a;
        a.lr = 0.5f;
        be_->sgd_update(tp, make(*be_, {2}, DType::f32, {1, -1}), none, a);
        QCOMPARE(read(tp), (Vec{0.5, 2.5}));
        Tensor bf = make(*be_, {2}, DType::bf16, {1, 2});
        QVERIFY_THROWS_EXCEPTION(Error, be_->sgd_update(bf, tp, none, a));
    }

    void adam_matches_pytorch() {
        // Hand-computed Adam, p=1, g=0.5 then 0.25, lr 0.1, defaults otherwise:
        // step 1: m = 0.05, v = 0.00025; mhat = 0.5, vhat = 0.25; p = 1 - 0.1*0.5/(0.5+1e-8) = 0.9 (+2e-9)
        // step 2: m = 0.045 + 0.025 = 0.07; v = 0.00024975 + 0.0000625 = 0.00031225
        //         mhat = 0.07/0.19 = 0.368421053; vhat = 0.00031225/0.001999 = 0.156203102, sqrt = 0.395225
        //         p = 0.9 - 0.1 * 0.368421053 / 0.395225 = 0.806782...
        Tensor p = make(*be_, {1}, DType::f64, {1.0}), m = zeros(*be_, {1}, DType::f64), v = zeros(*be_, {1}, DType::f64);
        AdamArgs a;
        a.lr = 0.1f;
        a.step = 1;
        be_->adam_update(p, make(*be_, {1}, DType::f64, {0.5}), m, v, a);
        QVERIFY(std::abs(read(p)[0] - 0.9) < 1e-6);
        a.step = 2;
        be_->adam_update(p, make(*be_, {1}, DType::f64, {0.25}), m, v, a);
        const double b1 = double(0.9f), b2 = double(0.999f);
        const double mm = (1 - b1) * 0.5 * b1 + (1 - b1) * 0.25, vv = (1 - b2) * 0.25 * b2 + (1 - b2) * 0.0625;
        const double want2 = 0.9 - 0.1 * (mm / (1 - b1 * b1)) / (std::sqrt(vv / (1 - b2 * b2)) + 1e-8);
        QVERIFY(std::abs(read(p)[0] - want2) < 1e-6);
        QVERIFY(std::abs(read(p)[0] - 0.806782) < 1e-5);
        // Adam with L2 and AdamW with decoupled decay vs a reference loop, 3 steps, f32.
        for (bool decoupled : {false, true}) {
            const std::int64_t n = 40000;
            Vec p0 = random_vec(n), pref = rounded(p0, DType::f32), mref(n, 0.0), vref(n, 0.0);
            Tensor tp = make(*be_, {n}, DType::f32, p0), tm = zeros(*be_, {n}, DType::f32), tv = zeros(*be_, {n}, DType::f32);
            AdamArgs aa;
            aa.lr = 0.01f;
            aa.weight_decay = 0.05f;
            aa.decoupled_weight_decay = decoupled;
            aa.grad_scale = 0.25f;
            const double lr = double(aa.lr), wd = double(aa.weight_decay), B1 = double(aa.beta1), B2 = double(aa.beta2),
                         eps = double(aa.eps);
            for (int s = 1; s <= 3; ++s) {
                Vec g = rounded(random_vec(n), DType::f32);
                aa.step = s;
                be_->adam_update(tp, make(*be_, {n}, DType::f32, g), tm, tv, aa);
                for (std::int64_t i = 0; i < n; ++i) {
                    double gi = g[i] * 0.25;
                    if (decoupled)
                        pref[i] *= 1 - lr * wd;
                    else
                        gi += wd * pref[i];
                    mref[i] = B1 * mref[i] + (1 - B1) * gi;
                    vref[i] = B2 * vref[i] + (1 - B2) * gi * gi;
                    pref[i] -= lr * (mref[i] / (1 - std::pow(B1, s))) / (std::sqrt(vref[i] / (1 - std::pow(B2, s))) + eps);
                }
            }
            QVERIFY(close(read(tp), pref, 1e-5, decoupled ? "adamw" : "adam"));
            QVERIFY(close(read(tm), mref, 1e-5, "adam m"));
        }
    }
};

QTEST_APPLESS_MAIN(TestCpuBackend)
#include "test_cpu_backend.moc"
