// CpuBackend: construction, data movement, elementwise ops, GEMM, bias, pooling, activations, dropout.
// Convolution lives in cpu_conv.cpp; batch norm, losses, reductions and optimizers in cpu_train_ops.cpp.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_conv_dnnl.h"
#include "backend/cpu/blas.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_kernels.h"

namespace hr {

using namespace cpu;

namespace {

int resolve_threads(int threads) {
    if (threads > 0) return threads;
    int n = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, n);
}

bool is_int(DType t) { return t == DType::i32 || t == DType::i64 || t == DType::u8; }

double load_int(DType t, const void* p, std::int64_t i) {
    switch (t) {
        case DType::i32: return static_cast<const std::int32_t*>(p)[i];
        case DType::i64: return static_cast<double>(static_cast<const std::int64_t*>(p)[i]);
        default: return static_cast<const std::uint8_t*>(p)[i];
    }
}
void store_int(DType t, void* p, std::int64_t i, double v) {
    switch (t) {
        case DType::i32: static_cast<std::int32_t*>(p)[i] = static_cast<std::int32_t>(v); break;
        case DType::i64: static_cast<std::int64_t*>(p)[i] = static_cast<std::int64_t>(v); break;
        default: static_cast<std::uint8_t*>(p)[i] = static_cast<std::uint8_t>(v); break;
    }
}
double load_scalar(DType t, const void* p, std::int64_t i) {
    if (is_int(t)) return load_int(t, p, i);
    double r = 0;
    dispatch_float(t, "copy", [&](auto tag) { r = load(static_cast<const decltype(tag)*>(p), i); });
    return r;
}
void store_scalar(DType t, void* p, std::int64_t i, double v) {
    if (is_int(t)) return store_int(t, p, i, v);
    dispatch_float(t, "copy", [&](auto tag) {
        using T = decltype(tag);
        store(static_cast<T*>(p), i, static_cast<Acc<T>>(v));
    });
}

}  // namespace

CpuBackend::CpuBackend(int threads, std::shared_ptr<MemoryLedger> ledger)
    : allocator_(ledger ? std::move(ledger) : std::make_shared<MemoryLedger>()), threads_(resolve_threads(threads)) {
    // OpenBLAS runs single-threaded (blas.cpp): the backend splits work itself (thread_pool.h, chunkings
    // that depend on shapes only), which keeps results deterministic for a thread count and avoids
    // nesting two pools.
    (void)cpu::blas_description();  // load it now: a missing library is reported at construction
    kernels_ = cpu::fast_kernels();
}

std::string CpuBackend::name() const {
    // oneDNN runs the f32 convolutions alongside the fast kernels (cpu_conv_dnnl.h)
    const std::string dnnl = kernels_ && cpu::dnnl_conv_enabled() ? cpu::dnnl_version() + " convolutions, " : "";
    return "cpu (" + cpu::blas_description() + ", " + kernels_name() + " kernels, " + dnnl + std::to_string(threads_) +
           (threads_ == 1 ? " thread)" : " threads)");
}

void CpuBackend::use_reference_kernels(bool reference) { kernels_ = reference ? nullptr : cpu::fast_kernels(); }

std::string CpuBackend::kernels_name() const { return kernels_ ? kernels_->name : "reference"; }

void CpuBackend::set_threads(int threads) { threads_ = resolve_threads(threads); }

// --- data movement -------------------------------------------------------------------------------

void CpuBackend::do_fill(Tensor& t, double value) {
    const std::int64_t n = t.numel();
    if (is_int(t.dtype())) {
        void* p = t.raw();
        for (std::int64_t i = 0; i < n; ++i) store_int(t.dtype(), p, i, value);
        return;
    }
    dispatch_float(t.dtype(), "fill", [&](auto tag) {
        using T = decltype(tag);
        T* p = t.data<T>();
        T v;
        store(&v, 0, static_cast<Acc<T>>(value));
        parallel_chunks(threads_, n, kParallelGrain, [&](std::int64_t b, std::int64_t e) {
            std::fill(p + b, p + e, v);
        });
    });
}

void CpuBackend::do_copy(const Tensor& src, Tensor& dst) {
    const std::int64_t n = src.numel();
    if (src.dtype() == dst.dtype()) {
        if (src.raw() != dst.raw()) std::memmove(dst.raw(), src.raw(), src.nbytes());
        return;
    }
    if (is_int(src.dtype()) || is_int(dst.dtype())) {
        for (std::int64_t i = 0; i < n; ++i)
            store_scalar(dst.dtype(), dst.raw(), i, load_scalar(src.dtype(), src.raw(), i));
        return;
    }
    dispatch_float(src.dtype(), "copy", [&](auto stag) {
        using S = decltype(stag);
        dispatch_float(dst.dtype(), "copy", [&](auto dtag) {
            using D = decltype(dtag);
            const S* s = src.data<S>();
            D* d = dst.data<D>();
            parallel_chunks(threads_, n, kParallelGrain, [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t i = b; i < e; ++i) store(d, i, static_cast<Acc<D>>(load(s, i)));
            });
        });
    });
}

void CpuBackend::do_copy_from_host(const void* src, Tensor& dst) {
    if (dst.nbytes()) std::memcpy(dst.raw(), src, dst.nbytes());
}

void CpuBackend::do_copy_to_host(const Tensor& src, void* dst) {
    if (src.nbytes()) std::memcpy(dst, src.raw(), src.nbytes());
}

// --- elementwise ---------------------------------------------------------------------------------

void CpuBackend::do_add(const Tensor& a, const Tensor& b, Tensor& out) {
    const char* op = "add";
    dispatch_float(a.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* pa = a.data<T>();
        const T* pb = b.data<T>();
        T* po = out.data<T>();
        parallel_chunks(threads_, a.numel(), kParallelGrain, [&](std::int64_t s, std::int64_t e) {
            for (std::int64_t i = s; i < e; ++i) store(po, i, load(pa, i) + load(pb, i));
        });
    });
}

void CpuBackend::do_axpy(float alpha, const Tensor& x, Tensor& y) {
    const char* op = "axpy";
    // x and y may differ in float dtype (e.g. bf16 gradients into f32 master gradients).
    dispatch_float(x.dtype(), op, [&](auto xtag) {
        using X = decltype(xtag);
        dispatch_float(y.dtype(), op, [&](auto ytag) {
            using Y = decltype(ytag);
            using C = Acc<Y>;
            const X* px = x.data<X>();
            Y* py = y.data<Y>();
            const C a = static_cast<C>(alpha);
            parallel_chunks(threads_, x.numel(), kParallelGrain, [&](std::int64_t s, std::int64_t e) {
                for (std::int64_t i = s; i < e; ++i) store(py, i, load(py, i) + a * static_cast<C>(load(px, i)));
            });
        });
    });
}

void CpuBackend::do_scale(Tensor& x, float alpha) {
    dispatch_float(x.dtype(), "scale", [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        T* p = x.data<T>();
        const C a = static_cast<C>(alpha);
        parallel_chunks(threads_, x.numel(), kParallelGrain, [&](std::int64_t s, std::int64_t e) {
            for (std::int64_t i = s; i < e; ++i) store(p, i, load(p, i) * a);
        });
    });
}

// --- linear algebra ------------------------------------------------------------------------------

namespace {

// Row-major C (M, N) = alpha * op(A) @ op(B) + beta * C, split over the larger of M and N into
// `threads` static parts, each a single-threaded BLAS call.
template <class T>
void blas_gemm(int threads, bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
               T beta, T* C, int ldc, bool gemv = false) {
    if constexpr (std::is_same_v<T, float>) {
        // one row of C (decoding one token, CpuBackend::use_gemv_for_one_row): a matrix-vector product,
        // op(B)^T times A's row, over `threads` blocks of C's columns
        if (gemv && M == 1 && K > 0 && N > 0) {
            const int incx = ta ? lda : 1;
            const int nt = (threads <= 1 || static_cast<double>(N) * K < (1 << 18)) ? 1 : std::min(threads, std::max(1, N / 64));
            parallel_for(threads, nt, [&](std::int64_t t) {
                const int b = static_cast<int>(static_cast<std::int64_t>(N) * t / nt);
                const int e = static_cast<int>(static_cast<std::int64_t>(N) * (t + 1) / nt);
                if (e <= b) return;
                // tb: B (N, K), rows b .. e; else B (K, N), columns b .. e
                const T* bb = tb ? B + static_cast<std::int64_t>(b) * ldb : B + b;
                cpu::sgemv(!tb, e - b, K, alpha, bb, ldb, A, incx, beta, C + b);
            });
            return;
        }
    }
    auto call = [&](int m0, int m1, int n0, int n1) {
        const T* a = ta ? A + m0 : A + static_cast<std::int64_t>(m0) * lda;
        const T* b = tb ? B + static_cast<std::int64_t>(n0) * ldb : B + n0;
        T* c = C + static_cast<std::int64_t>(m0) * ldc + n0;
        if constexpr (std::is_same_v<T, float>)
            cpu::sgemm(ta, tb, m1 - m0, n1 - n0, K, alpha, a, lda, b, ldb, beta, c, ldc);
        else
            cpu::dgemm(ta, tb, m1 - m0, n1 - n0, K, alpha, a, lda, b, ldb, beta, c, ldc);
    };
    if (M == 0 || N == 0) return;
    if (K == 0) {  // BLAS leaves C scaled by beta; make that explicit
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(M); ++i)
            for (int j = 0; j < N; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
        return;
    }
    const double work = static_cast<double>(M) * N * K;
    const bool split_m = M >= N;
    const int dim = split_m ? M : N;
    int nt = (threads <= 1 || work < (1 << 18)) ? 1 : std::min(threads, std::max(1, dim / 16));
    if (nt == 1) {
        call(0, M, 0, N);
        return;
    }
    parallel_for(threads, nt, [&](std::int64_t t) {
        int b = static_cast<int>(static_cast<std::int64_t>(dim) * t / nt);
        int e = static_cast<int>(static_cast<std::int64_t>(dim) * (t + 1) / nt);
        if (e <= b) return;
        if (split_m)
            call(b, e, 0, N);
        else
            call(0, M, b, e);
    });
}

}  // namespace

void CpuBackend::do_gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
                      Tensor& c) {
    const char* op = "gemm";
    const std::int64_t M = trans_a ? a.dim(1) : a.dim(0);
    const std::int64_t K = trans_a ? a.dim(0) : a.dim(1);
    const std::int64_t N = trans_b ? b.dim(0) : b.dim(1);
    const int lda = static_cast<int>(std::max<std::int64_t>(1, a.dim(1)));
    const int ldb = static_cast<int>(std::max<std::int64_t>(1, b.dim(1)));
    const int ldc = static_cast<int>(std::max<std::int64_t>(1, c.dim(1)));
    dispatch_float(a.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            blas_gemm<T>(threads_, trans_a, trans_b, int(M), int(N), int(K), T(alpha), a.data<T>(), lda, b.data<T>(),
                         ldb, T(beta), c.data<T>(), ldc, gemv_one_row_);
        } else {
            // Low precision: convert to f32 scratch, sgemm, convert back.
            const std::int64_t na = a.numel(), nb = b.numel(), nc = c.numel();
            if (scratch_.size() < static_cast<std::size_t>(na + nb + nc)) scratch_.resize(na + nb + nc);
            float* fa = scratch_.data();
            float* fb = fa + na;
            float* fc = fb + nb;
            const T* pa = a.data<T>();
            const T* pb = b.data<T>();
            T* pc = c.data<T>();
            for (std::int64_t i = 0; i < na; ++i) fa[i] = load(pa, i);
            for (std::int64_t i = 0; i < nb; ++i) fb[i] = load(pb, i);
            if (beta != 0.0f)
                for (std::int64_t i = 0; i < nc; ++i) fc[i] = load(pc, i);
            else
                std::fill(fc, fc + nc, 0.0f);
            blas_gemm<float>(threads_, trans_a, trans_b, int(M), int(N), int(K), alpha, fa, lda, fb, ldb, beta, fc,
                             ldc);
            for (std::int64_t i = 0; i < nc; ++i) store(pc, i, fc[i]);
        }
    });
}

void CpuBackend::do_add_bias(Tensor& y, const Tensor& bias) {
    const char* op = "add_bias";
    std::int64_t N, C, S;
    ncs(op, y, bias, "bias", N, C, S);
    dispatch_float(y.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        dispatch_float(bias.dtype(), op, [&](auto btag) {
            using B = decltype(btag);
            T* py = y.data<T>();
            const B* pb = bias.data<B>();
            parallel_chunks(threads_, N * C, S >= kParallelGrain ? 1 : kParallelGrain / std::max<std::int64_t>(S, 1),
                            [&](std::int64_t b, std::int64_t e) {
                                for (std::int64_t nc = b; nc < e; ++nc) {
                                    const Acc<T> v = static_cast<Acc<T>>(load(pb, nc % C));
                                    T* row = py + nc * S;
                                    for (std::int64_t s = 0; s < S; ++s) store(row, s, load(row, s) + v);
                                }
                            });
        });
    });
}

void CpuBackend::do_bias_grad(const Tensor& dy, Tensor& dbias) {
    const char* op = "bias_grad";
    std::int64_t N, C, S;
    ncs(op, dy, dbias, "dbias", N, C, S);
    dispatch_float(dy.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        dispatch_float(dbias.dtype(), op, [&](auto btag) {
            using B = decltype(btag);
            const T* p = dy.data<T>();
            B* pb = dbias.data<B>();
            // One channel per index: each sum runs in a fixed order whatever the thread count.
            parallel_chunks(threads_, C, N * S * C >= kParallelGrain ? 1 : C + 1, [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t c = b; c < e; ++c) {
                    double acc = 0.0;
                    for (std::int64_t n = 0; n < N; ++n) {
                        const T* row = p + (n * C + c) * S;
                        Acc<T> part = 0;
                        for (std::int64_t s = 0; s < S; ++s) part += load(row, s);
                        acc += part;
                    }
                    store(pb, c, static_cast<Acc<B>>(load(pb, c) + acc));
                }
            });
        });
    });
}

// --- pooling -------------------------------------------------------------------------------------


void CpuBackend::do_maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) {
    const char* op = "maxpool2d_forward";
    const std::int64_t planes = x.dim(0) * x.dim(1);
    const int H = int(x.dim(2)), W = int(x.dim(3)), Ho = int(y.dim(2)), Wo = int(y.dim(3));
    const bool fast_2x2 = p.kernel_h == 2 && p.kernel_w == 2 && p.stride_h == 2 && p.stride_w == 2 && p.pad_h == 0 &&
                          p.pad_w == 0;
    if (fast_2x2 && x.dtype() == DType::f32 && kernels_) {
        const float* px = x.data<float>();
        float* py = y.data<float>();
        std::int32_t* pi = indices.data<std::int32_t>();
        parallel_chunks(threads_, planes, std::max<std::int64_t>(1, kParallelGrain / (H * W + 1)),
                        [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t pl = b; pl < e; ++pl)
                kernels_->maxpool2x2(px + pl * H * W, W, Ho, Wo, py + pl * Ho * Wo, pi + pl * Ho * Wo);
        });
        return;
    }
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        std::int32_t* pi = indices.data<std::int32_t>();
        parallel_chunks(threads_, planes, std::max<std::int64_t>(1, kParallelGrain / (H * W + 1)),
                        [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t pl = b; pl < e; ++pl) {
                const T* xp = px + pl * H * W;
                T* yp = py + pl * Ho * Wo;
                std::int32_t* ip = pi + pl * Ho * Wo;
                if (fast_2x2) {  // the common MaxPool2d(2): no bounds checks, first maximum wins
                    for (int oh = 0; oh < Ho; ++oh)
                        for (int ow = 0; ow < Wo; ++ow) {
                            const int i0 = 2 * oh * W + 2 * ow;
                            const int cand[4] = {i0, i0 + 1, i0 + W, i0 + W + 1};
                            C best = load(xp, i0);
                            int best_i = i0;
                            for (int q = 1; q < 4; ++q) {
                                const C v = load(xp, cand[q]);
                                if (v > best || v != v) {
                                    best = v;
                                    best_i = cand[q];
                                }
                            }
                            store(yp, oh * Wo + ow, best);
                            ip[oh * Wo + ow] = best_i;
                        }
                    continue;
                }
                for (int oh = 0; oh < Ho; ++oh) {
                    const int h0 = oh * p.stride_h - p.pad_h;
                    const int hs = std::max(h0, 0), he = std::min(h0 + p.kernel_h, H);
                    for (int ow = 0; ow < Wo; ++ow) {
                        const int w0 = ow * p.stride_w - p.pad_w;
                        const int ws = std::max(w0, 0), we = std::min(w0 + p.kernel_w, W);
                        C best = -std::numeric_limits<C>::infinity();
                        int best_i = hs * W + ws;
                        for (int h = hs; h < he; ++h)
                            for (int w = ws; w < we; ++w) {
                                const C v = load(xp, h * W + w);
                                if (v > best || std::isnan(v)) {
                                    best = v;
                                    best_i = h * W + w;
                                }
                            }
                        store(yp, oh * Wo + ow, best);
                        ip[oh * Wo + ow] = best_i;
                    }
                }
            }
        });
    });
}

void CpuBackend::do_maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) {
    const char* op = "maxpool2d_backward";
    const std::int64_t planes = dx.dim(0) * dx.dim(1);
    const std::int64_t HW = dx.dim(2) * dx.dim(3), HoWo = dy.dim(2) * dy.dim(3);
    // Each chunk checks the indices of its planes before it scatters them (no exceptions inside parallel
    // regions): the lowest bad element is reported after the call (dx is then undefined).
    const std::int32_t* pi = indices.data<std::int32_t>();
    std::atomic<std::int64_t> first_bad{std::numeric_limits<std::int64_t>::max()};
    auto note_bad = [&](std::int64_t i) {
        std::int64_t cur = first_bad.load(std::memory_order_relaxed);
        while (i < cur && !first_bad.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
        }
    };
    dispatch_float(dx.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* pdy = dy.data<T>();
        T* pdx = dx.data<T>();
        parallel_chunks(threads_, planes, std::max<std::int64_t>(1, kParallelGrain / (HW + 1)),
                        [&](std::int64_t b, std::int64_t e) {
            const std::int32_t* ib = pi + b * HoWo;
            const std::int64_t count = (e - b) * HoWo;
            bool ok = true;
            for (std::int64_t i = 0; i < count; ++i) ok &= ib[i] >= 0 && ib[i] < HW;
            if (!ok) {
                for (std::int64_t i = 0; i < count; ++i)
                    if (ib[i] < 0 || ib[i] >= HW) {
                        note_bad(b * HoWo + i);
                        break;
                    }
                return;
            }
            for (std::int64_t pl = b; pl < e; ++pl) {
                T* xp = pdx + pl * HW;
                const T* yp = pdy + pl * HoWo;
                const std::int32_t* ip = pi + pl * HoWo;
                if constexpr (is_low_precision<T>) {
                    thread_local std::vector<float> acc;
                    acc.assign(HW, 0.0f);
                    for (std::int64_t o = 0; o < HoWo; ++o) acc[ip[o]] += load(yp, o);
                    for (std::int64_t i = 0; i < HW; ++i) store(xp, i, acc[i]);
                } else {
                    std::fill(xp, xp + HW, C(0));
                    for (std::int64_t o = 0; o < HoWo; ++o) xp[ip[o]] += yp[o];
                }
            }
        });
    });
    const std::int64_t bad = first_bad.load();
    if (bad != std::numeric_limits<std::int64_t>::max())
        fail(op, "index " + std::to_string(pi[bad]) + " at element " + std::to_string(bad) +
                     " is outside the plane of dx " + desc(dx));
}

void CpuBackend::do_avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) {
    const char* op = "avgpool2d_forward";
    const std::int64_t planes = x.dim(0) * x.dim(1);
    const int H = int(x.dim(2)), W = int(x.dim(3)), Ho = int(y.dim(2)), Wo = int(y.dim(3));
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        parallel_chunks(threads_, planes, std::max<std::int64_t>(1, kParallelGrain / (H * W + 1)),
                        [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t pl = b; pl < e; ++pl) {
                const T* xp = px + pl * H * W;
                T* yp = py + pl * Ho * Wo;
                for (int oh = 0; oh < Ho; ++oh) {
                    int hs = oh * p.stride_h - p.pad_h;
                    int he = std::min(hs + p.kernel_h, H + p.pad_h);
                    for (int ow = 0; ow < Wo; ++ow) {
                        int ws = ow * p.stride_w - p.pad_w;
                        int we = std::min(ws + p.kernel_w, W + p.pad_w);
                        const int count = (he - hs) * (we - ws);  // count_include_pad
                        const int h0 = std::max(hs, 0), h1 = std::min(he, H);
                        const int w0 = std::max(ws, 0), w1 = std::min(we, W);
                        C s = 0;
                        for (int h = h0; h < h1; ++h)
                            for (int w = w0; w < w1; ++w) s += load(xp, h * W + w);
                        store(yp, oh * Wo + ow, s / C(count));
                    }
                }
            }
        });
    });
}

void CpuBackend::do_avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) {
    const char* op = "avgpool2d_backward";
    const std::int64_t planes = dx.dim(0) * dx.dim(1);
    const int H = int(dx.dim(2)), W = int(dx.dim(3)), Ho = int(dy.dim(2)), Wo = int(dy.dim(3));
    dispatch_float(dx.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* pdy = dy.data<T>();
        T* pdx = dx.data<T>();
        parallel_chunks(threads_, planes, std::max<std::int64_t>(1, kParallelGrain / (H * W + 1)),
                        [&](std::int64_t b, std::int64_t e) {
            thread_local std::vector<double> acc;
            for (std::int64_t pl = b; pl < e; ++pl) {
                acc.assign(static_cast<std::size_t>(H) * W, 0.0);
                const T* yp = pdy + pl * Ho * Wo;
                for (int oh = 0; oh < Ho; ++oh) {
                    int hs = oh * p.stride_h - p.pad_h;
                    int he = std::min(hs + p.kernel_h, H + p.pad_h);
                    for (int ow = 0; ow < Wo; ++ow) {
                        int ws = ow * p.stride_w - p.pad_w;
                        int we = std::min(ws + p.kernel_w, W + p.pad_w);
                        const int count = (he - hs) * (we - ws);
                        const double g = static_cast<double>(load(yp, oh * Wo + ow)) / count;
                        for (int h = std::max(hs, 0); h < std::min(he, H); ++h)
                            for (int w = std::max(ws, 0); w < std::min(we, W); ++w) acc[h * W + w] += g;
                    }
                }
                T* xp = pdx + pl * H * W;
                for (std::int64_t i = 0; i < std::int64_t(H) * W; ++i) store(xp, i, static_cast<Acc<T>>(acc[i]));
            }
        });
    });
}

// --- activations ---------------------------------------------------------------------------------

namespace {

template <class C>
C gelu_cdf(C x) {
    return C(0.5) * (C(1) + std::erf(x * C(0.70710678118654752440)));
}

}  // namespace

void CpuBackend::do_activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
    const char* op = "activation_forward";
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        const C a = static_cast<C>(alpha);
        parallel_chunks(threads_, x.numel(), kParallelGrain, [&](std::int64_t b, std::int64_t e) {
            switch (kind) {
                case ActivationKind::relu:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C v = load(px, i);
                        store(py, i, v < C(0) ? C(0) : v);
                    }
                    break;
                case ActivationKind::leaky_relu:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C v = load(px, i);
                        store(py, i, v > C(0) ? v : a * v);
                    }
                    break;
                case ActivationKind::tanh:
                    for (std::int64_t i = b; i < e; ++i) store(py, i, std::tanh(load(px, i)));
                    break;
                case ActivationKind::sigmoid:
                    for (std::int64_t i = b; i < e; ++i) store(py, i, C(1) / (C(1) + std::exp(-load(px, i))));
                    break;
                case ActivationKind::gelu:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C v = load(px, i);
                        store(py, i, v * gelu_cdf(v));
                    }
                    break;
            }
        });
    });
}

void CpuBackend::do_activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, Tensor& dx) {
    const char* op = "activation_backward";
    // relu/leaky_relu/gelu read x (relu falls back to y); tanh/sigmoid read y (or recompute from x).
    const bool have_x = x.defined(), have_y = y.defined();
    dispatch_float(dy.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* px = have_x ? x.data<T>() : nullptr;
        const T* py = have_y ? y.data<T>() : nullptr;
        const T* pdy = dy.data<T>();
        T* pdx = dx.data<T>();
        const C a = static_cast<C>(alpha);
        parallel_chunks(threads_, dy.numel(), kParallelGrain, [&](std::int64_t b, std::int64_t e) {
            switch (kind) {
                case ActivationKind::relu: {
                    // x > 0 and y > 0 agree (y = max(x, 0)); y is what an in-place ReLU still has.
                    const T* src = px ? px : py;
                    for (std::int64_t i = b; i < e; ++i) {
                        const C g = load(pdy, i);  // loaded unconditionally, so the loop vectorises
                        store(pdx, i, load(src, i) > C(0) ? g : C(0));
                    }
                    break;
                }
                case ActivationKind::leaky_relu:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C g = load(pdy, i);
                        store(pdx, i, load(px, i) > C(0) ? g : a * g);
                    }
                    break;
                case ActivationKind::tanh:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C t = py ? C(load(py, i)) : std::tanh(C(load(px, i)));
                        store(pdx, i, load(pdy, i) * (C(1) - t * t));
                    }
                    break;
                case ActivationKind::sigmoid:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C s = py ? C(load(py, i)) : C(1) / (C(1) + std::exp(-C(load(px, i))));
                        store(pdx, i, load(pdy, i) * s * (C(1) - s));
                    }
                    break;
                case ActivationKind::gelu:
                    for (std::int64_t i = b; i < e; ++i) {
                        const C v = load(px, i);
                        const C pdf = std::exp(C(-0.5) * v * v) * C(0.39894228040143267794);
                        store(pdx, i, load(pdy, i) * (gelu_cdf(v) + v * pdf));
                    }
                    break;
            }
        });
    });
}

// --- dropout -------------------------------------------------------------------------------------

void CpuBackend::do_dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                                 std::uint64_t offset) {
    const char* op = "dropout_forward";
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        std::uint8_t* pm = mask.data<std::uint8_t>();
        const C s = p < 1.0f ? C(1) / (C(1) - C(p)) : C(0);
        parallel_chunks(threads_, x.numel(), kParallelGrain / 4, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) {
                const bool keep = counter_uniform(seed, offset + static_cast<std::uint64_t>(i)) >= p;
                pm[i] = keep ? 1 : 0;
                store(py, i, keep ? load(px, i) * s : C(0));
            }
        });
    });
}

void CpuBackend::do_dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) {
    const char* op = "dropout_backward";
    dispatch_float(dy.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using C = Acc<T>;
        const T* pdy = dy.data<T>();
        T* pdx = dx.data<T>();
        const std::uint8_t* pm = mask.data<std::uint8_t>();
        const C s = p < 1.0f ? C(1) / (C(1) - C(p)) : C(0);
        parallel_chunks(threads_, dy.numel(), kParallelGrain, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) store(pdx, i, pm[i] ? load(pdy, i) * s : C(0));
        });
    });
}

std::unique_ptr<Backend> make_cpu_backend(int threads, std::shared_ptr<MemoryLedger> ledger) {
    return std::make_unique<CpuBackend>(threads, std::move(ledger));
}

}  // namespace hr
