// CpuBackend convolution: per-sample im2col + single-threaded BLAS GEMM, parallel over the batch.
//
// Layout: x (N, C, H, W), w (K, C, kh, kw), y (N, K, Ho, Wo). Per sample n, with P = Ho*Wo and
// R = C*kh*kw:  col (R, P) = im2col(x[n]);  y[n] (K, P) = w (K, R) @ col.
// backward_data: dcol (R, P) = w^T @ dy[n]; dx[n] = col2im(dcol).
// backward_filter: dw (K, R) += dy[n] (K, P) @ col^T, summed per thread into a private partial in
// the workspace and reduced in thread order (deterministic for a given thread count).
//
// Measurements (seed-cnn at batch 64, one full fwd+bwd+SGD step through this backend, 1 thread, on a
// 2-core VM that was shared with other builds, load average 3.5-6.5, so +-30% noise):
// - OpenBLAS 0.3.21 (DYNAMIC_ARCH) does not recognise this VM's CPU and picks its generic PRESCOTT
//   (SSE3) kernels: ~15-22 ms/step. With OPENBLAS_CORETYPE=Haswell set in the environment before the
//   process starts: ~10-14 ms/step (conv2 backward 6.4 -> 3.6 ms, conv2 forward 2.7 -> 1.5 ms).
//   The variable is read when libopenblas loads: blas.cpp sets it from the CPU's features before it
//   dlopen()s the library (SkylakeX kernels on AVX-512 machines: ~14,000-15,000 img/s at 2 threads).
// - Hand-written AVX2 loops in place of BLAS for the conv GEMMs (4-row register blocking; dw via a
//   transposed col) were no faster than PRESCOTT sgemm and slower than Haswell sgemm, so BLAS stays.
// - With 2 threads the numbers were dominated by contention from other processes on the two cores
//   and could not be compared fairly; per-sample parallelism over the batch with single-threaded
//   sgemm is kept (no shared writes, static partitions). Batched im2col + one big GEMM was not measured.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/blas.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_conv_dnnl.h"
#include "backend/cpu/cpu_conv_fast.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/thread_pool.h"

namespace hr {

using namespace cpu;

namespace {

bool direct_1x1(const ConvGeom& g, const Conv2dParams& p) {
    return g.kh == 1 && g.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0;
}

// Workspace layout, in elements of the compute type E (double for f64, float otherwise):
//   shared:     w_f (K*R) when the dtype is bf16/f16 (w converted once)
//   per thread: col (R*P) | dw partial (K*R) | db partial (K) | x_f (C*H*W) and y_f (K*P) for bf16/f16
struct WsLayout {
    std::int64_t shared = 0, col = 0, dw = 0, db = 0, xf = 0, yf = 0;
    std::int64_t per_thread() const { return col + dw + db + xf + yf; }
    std::int64_t total(int nt) const { return shared + per_thread() * nt; }
};

WsLayout ws_layout(const ConvGeom& g, const Conv2dParams& p, bool low_precision) {
    WsLayout l;
    l.col = direct_1x1(g, p) && !low_precision ? 0 : g.R() * g.P();
    if (direct_1x1(g, p) && low_precision) l.col = 0;  // x_f serves as col
    l.dw = g.K * g.R();
    l.db = g.K;
    if (low_precision) {
        l.shared = g.K * g.R();
        l.xf = g.C * g.H * g.W;
        l.yf = g.K * g.P();
    }
    return l;
}

std::size_t elem_size(DType dt) { return dt == DType::f64 ? 8 : 4; }

constexpr std::size_t kWsAlign = 64;

template <class E>
E* ws_base(const char* op, Tensor& workspace, std::size_t need_bytes) {
    if (need_bytes == 0) return nullptr;
    if (!workspace.defined() || workspace.nbytes() < need_bytes)
        fail(op, "workspace " + desc(workspace) + " holds " +
                     std::to_string(workspace.defined() ? workspace.nbytes() : 0) + " bytes; needs " +
                     std::to_string(need_bytes) + " (ask conv2d_workspace_bytes with the same shapes and threads)");
    auto addr = reinterpret_cast<std::uintptr_t>(workspace.raw());
    addr = (addr + kWsAlign - 1) / kWsAlign * kWsAlign;
    return reinterpret_cast<E*>(addr);
}

// Where tap (ki, kj) of a convolution lands in its input: the output rows [oh_lo, oh_hi) and columns
// [ow_lo, ow_hi) whose input row ih = oh * sh + off_h and column iw = ow * sw + off_w lie inside it. The
// same for every channel and sample: a convolution call works them out once and hands them to im2col and
// col2im (their integer divisions were a fifth of seed-cnn's col2im time when they ran per sample, channel
// and tap).
struct TapRange {
    std::int64_t off_h, off_w, oh_lo, oh_hi, ow_lo, ow_hi;
};

// The kh * kw tap ranges of one call, in tap order (t = ki * kw + kj); on the stack up to 8x8 kernels.
class TapRanges {
public:
    TapRanges(const ConvGeom& g, const Conv2dParams& p) {
        const std::int64_t taps = g.kh * g.kw;
        if (taps > kOnStack) {
            heap_.resize(static_cast<std::size_t>(taps));
            data_ = heap_.data();
        }
        const std::int64_t H = g.H, W = g.W, Ho = g.Ho, Wo = g.Wo;
        const int sh = p.stride_h, sw = p.stride_w;
        for (std::int64_t ki = 0; ki < g.kh; ++ki)
            for (std::int64_t kj = 0; kj < g.kw; ++kj) {
                TapRange& t = data_[ki * g.kw + kj];
                t.off_h = ki * p.dilation_h - p.pad_h;
                t.off_w = kj * p.dilation_w - p.pad_w;
                // valid ow: 0 <= ow * sw + off_w < W; valid oh likewise
                const std::int64_t ow_lo = t.off_w >= 0 ? 0 : (-t.off_w + sw - 1) / sw;
                const std::int64_t ow_hi = W - t.off_w <= 0 ? 0 : (W - t.off_w - 1) / sw + 1;
                t.ow_lo = std::min(ow_lo, Wo);
                t.ow_hi = std::clamp(ow_hi, t.ow_lo, Wo);
                t.oh_lo = std::min(Ho, t.off_h >= 0 ? std::int64_t(0) : (-t.off_h + sh - 1) / sh);
                t.oh_hi = std::clamp(H - t.off_h <= 0 ? std::int64_t(0) : (H - t.off_h - 1) / sh + 1, t.oh_lo, Ho);
            }
    }
    TapRanges(const TapRanges&) = delete;
    TapRanges& operator=(const TapRanges&) = delete;
    const TapRange& operator[](std::int64_t t) const { return data_[t]; }

private:
    static constexpr std::int64_t kOnStack = 64;
    TapRange stack_[kOnStack];
    std::vector<TapRange> heap_;
    TapRange* data_ = stack_;
};

// col (R, P) from one sample x (C, H, W).
template <class E>
void im2col(const E* x, E* col, const ConvGeom& g, const Conv2dParams& p, const TapRanges& ranges) {
    const std::int64_t H = g.H, W = g.W, Ho = g.Ho, Wo = g.Wo, P = g.P();
    const int sh = p.stride_h, sw = p.stride_w;
    const std::int64_t taps = g.kh * g.kw;
    for (std::int64_t c = 0; c < g.C; ++c)
        for (std::int64_t t = 0; t < taps; ++t) {
            const TapRange& r = ranges[t];
            E* dst = col + (c * taps + t) * P;
            const std::int64_t ow_lo = r.ow_lo, ow_hi = r.ow_hi;
            for (std::int64_t oh = 0; oh < Ho; ++oh) {
                E* d = dst + oh * Wo;
                const std::int64_t ih = oh * sh + r.off_h;
                if (ih < 0 || ih >= H) {
                    std::fill(d, d + Wo, E(0));
                    continue;
                }
                const E* src = x + (c * H + ih) * W + r.off_w;
                std::fill(d, d + ow_lo, E(0));
                if (sw == 1) {
                    std::memcpy(d + ow_lo, src + ow_lo, sizeof(E) * (ow_hi - ow_lo));
                } else {
                    for (std::int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow] = src[ow * sw];
                }
                std::fill(d + ow_hi, d + Wo, E(0));
            }
        }
}

// dx (C, H, W) = col2im(dcol (R, P)); dx is written. Sums in the order c, ki, kj, oh (the bits do not
// depend on how the tap ranges are found).
template <class E>
void col2im(const E* col, E* dx, const ConvGeom& g, const Conv2dParams& p, const TapRanges& ranges) {
    const std::int64_t H = g.H, W = g.W, Wo = g.Wo, P = g.P();
    const int sh = p.stride_h, sw = p.stride_w;
    const std::int64_t taps = g.kh * g.kw;
    std::fill(dx, dx + g.C * H * W, E(0));
    for (std::int64_t c = 0; c < g.C; ++c)
        for (std::int64_t t = 0; t < taps; ++t) {
            const TapRange& r = ranges[t];
            const E* src = col + (c * taps + t) * P;
            const std::int64_t n = r.ow_hi - r.ow_lo;
            E* __restrict d = dx + (c * H + r.oh_lo * sh + r.off_h) * W + r.off_w + r.ow_lo * sw;
            const E* __restrict s = src + r.oh_lo * Wo + r.ow_lo;
            if (sw == 1) {
                for (std::int64_t oh = r.oh_lo; oh < r.oh_hi; ++oh, d += sh * W, s += Wo)
                    for (std::int64_t i = 0; i < n; ++i) d[i] += s[i];
            } else {
                for (std::int64_t oh = r.oh_lo; oh < r.oh_hi; ++oh, d += sh * W, s += Wo)
                    for (std::int64_t i = 0; i < n; ++i) d[i * sw] += s[i];
            }
        }
}

template <class E>
void gemm1(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, E alpha, const E* A, std::int64_t lda,
           const E* B, std::int64_t ldb, E beta, E* C, std::int64_t ldc) {
    if constexpr (std::is_same_v<E, float>)
        cpu::sgemm(ta, tb, int(M), int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
    else
        cpu::dgemm(ta, tb, int(M), int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

int conv_threads(int threads, std::int64_t N) { return int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, N))); }

}  // namespace

std::size_t CpuBackend::do_conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                               DType dtype) const {
    const ConvGeom g = conv_geom("conv2d_workspace_bytes", x, w, y, p);
    const bool f32_fast = dtype == DType::f32 && kernels_;
    const FastConvChoice fast = f32_fast ? fast_conv_choice(g, p) : FastConvChoice{};
    // oneDNN where it can (cpu_conv_dnnl.h), the tap kernels where they are chosen, the reference code else
    std::size_t dnnl_bytes[4] = {0, 0, 0, 0};
    if (f32_fast)
        for (ConvKind k : {ConvKind::forward, ConvKind::backward_data, ConvKind::backward_weights, ConvKind::backward})
            dnnl_bytes[static_cast<int>(k)] = dnnl_conv_workspace_bytes(k, g, p, threads_);
    const bool tap_used = (fast.forward && !dnnl_bytes[0]) || (fast.backward_data && !dnnl_bytes[1]) ||
                          (fast.backward_filter && !dnnl_bytes[2]);
    const std::size_t fast_bytes = std::max({tap_used ? fast_conv_workspace_bytes(g, p, threads_) : 0, dnnl_bytes[0],
                                             dnnl_bytes[1], dnnl_bytes[2], dnnl_bytes[3]});
    if ((fast.forward || dnnl_bytes[0]) && (fast.backward_data || dnnl_bytes[1]) &&
        (fast.backward_filter || dnnl_bytes[2]))
        return fast_bytes;
    const bool lowp = dtype == DType::bf16 || dtype == DType::f16;
    const WsLayout l = ws_layout(g, p, lowp);
    // Threads at call time (not capped by N, so the figure depends on shapes and threads only).
    const std::int64_t elems = l.total(std::max(1, threads_));
    return std::max(fast_bytes, static_cast<std::size_t>(elems) * elem_size(dtype) + kWsAlign);
}

void CpuBackend::do_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_forward";
    const ConvGeom g = conv_geom(op, x.shape(), w.shape(), y.shape(), p);
    if (x.dtype() == DType::f32 && kernels_) {
        if (const std::size_t bytes = dnnl_conv_workspace_bytes(ConvKind::forward, g, p, threads_)) {
            void* ws = ws_base<char>(op, workspace, bytes);
            dnnl_conv_forward(threads_, g, p, x.data<float>(), w.data<float>(),
                              bias.defined() ? bias.data<float>() : nullptr, y.data<float>(), ws);
            return;
        }
    }
    if (x.dtype() == DType::f32 && kernels_ && fast_conv_choice(g, p).forward) {
        void* ws = ws_base<char>(op, workspace, fast_conv_workspace_bytes(g, p, threads_));
        fast_conv_forward(*kernels_, threads_, g, p, x.data<float>(), w.data<float>(),
                          bias.defined() ? bias.data<float>() : nullptr, y.data<float>(), ws);
        return;
    }
    const int nt = conv_threads(threads_, g.N);
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using E = Acc<T>;
        constexpr bool lowp = is_low_precision<T>;
        const WsLayout l = ws_layout(g, p, lowp);
        E* ws = ws_base<E>(op, workspace, conv2d_workspace_bytes(x.shape(), w.shape(), y.shape(), p, x.dtype()));
        const std::int64_t P = g.P(), R = g.R(), CHW = g.C * g.H * g.W;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        const E* wf;
        if constexpr (lowp) {
            E* shared = ws;
            const T* pw = w.data<T>();
            for (std::int64_t i = 0; i < g.K * R; ++i) shared[i] = load(pw, i);
            wf = shared;
        } else {
            wf = w.data<T>();
        }
        std::vector<E> bvec;
        if (bias.defined()) {
            bvec.resize(g.K);
            const T* pb = bias.data<T>();
            for (std::int64_t k = 0; k < g.K; ++k) bvec[k] = load(pb, k);
        }
        const bool direct = direct_1x1(g, p);
        const TapRanges ranges(g, p);  // read by every chunk
        parallel_for(nt, nt, [&](std::int64_t chunk) {
            const int t = static_cast<int>(chunk);
            E* mine = ws ? ws + l.shared + l.per_thread() * t : nullptr;
            E* col = mine;
            E* xf = mine ? mine + l.col + l.dw + l.db : nullptr;
            E* yf = xf ? xf + l.xf : nullptr;
            const std::int64_t n0 = g.N * t / nt, n1 = g.N * (t + 1) / nt;
            for (std::int64_t n = n0; n < n1; ++n) {
                const E* xs;
                E* ys;
                if constexpr (lowp) {
                    for (std::int64_t i = 0; i < CHW; ++i) xf[i] = load(px + n * CHW, i);
                    xs = xf;
                    ys = yf;
                } else {
                    xs = px + n * CHW;
                    ys = py + n * g.K * P;
                }
                const E* cols = xs;
                if (!direct) {
                    im2col(xs, col, g, p, ranges);
                    cols = col;
                }
                gemm1<E>(false, false, g.K, P, R, E(1), wf, R, cols, P, E(0), ys, P);
                if (!bvec.empty())
                    for (std::int64_t k = 0; k < g.K; ++k) {
                        E* row = ys + k * P;
                        const E b = bvec[k];
                        for (std::int64_t s = 0; s < P; ++s) row[s] += b;
                    }
                if constexpr (lowp) {
                    T* yo = py + n * g.K * P;
                    for (std::int64_t i = 0; i < g.K * P; ++i) store(yo, i, ys[i]);
                }
            }
        });
    });
}

void CpuBackend::do_conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                                      Tensor& workspace) {
    const char* op = "conv2d_backward_data";
    const ConvGeom g = conv_geom(op, dx.shape(), w.shape(), dy.shape(), p);
    if (dy.dtype() == DType::f32 && kernels_) {
        if (const std::size_t bytes = dnnl_conv_workspace_bytes(ConvKind::backward_data, g, p, threads_)) {
            void* ws = ws_base<char>(op, workspace, bytes);
            dnnl_conv_backward_data(threads_, g, p, dy.data<float>(), w.data<float>(), dx.data<float>(), ws);
            return;
        }
    }
    if (dy.dtype() == DType::f32 && kernels_ && fast_conv_choice(g, p).backward_data) {
        void* ws = ws_base<char>(op, workspace, fast_conv_workspace_bytes(g, p, threads_));
        fast_conv_backward_data(*kernels_, threads_, g, p, dy.data<float>(), w.data<float>(), dx.data<float>(), ws);
        return;
    }
    const int nt = conv_threads(threads_, g.N);
    dispatch_float(dy.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using E = Acc<T>;
        constexpr bool lowp = is_low_precision<T>;
        const WsLayout l = ws_layout(g, p, lowp);
        E* ws = ws_base<E>(op, workspace, conv2d_workspace_bytes(dx.shape(), w.shape(), dy.shape(), p, dy.dtype()));
        const std::int64_t P = g.P(), R = g.R(), CHW = g.C * g.H * g.W;
        const T* pdy = dy.data<T>();
        T* pdx = dx.data<T>();
        const E* wf;
        if constexpr (lowp) {
            const T* pw = w.data<T>();
            for (std::int64_t i = 0; i < g.K * R; ++i) ws[i] = load(pw, i);
            wf = ws;
        } else {
            wf = w.data<T>();
        }
        const bool direct = direct_1x1(g, p);
        const TapRanges ranges(g, p);  // read by every chunk
        parallel_for(nt, nt, [&](std::int64_t chunk) {
            const int t = static_cast<int>(chunk);
            E* mine = ws ? ws + l.shared + l.per_thread() * t : nullptr;
            E* col = mine;
            E* xf = mine ? mine + l.col + l.dw + l.db : nullptr;
            E* yf = xf ? xf + l.xf : nullptr;
            const std::int64_t n0 = g.N * t / nt, n1 = g.N * (t + 1) / nt;
            for (std::int64_t n = n0; n < n1; ++n) {
                const E* dys;
                E* dxs;
                if constexpr (lowp) {
                    for (std::int64_t i = 0; i < g.K * P; ++i) yf[i] = load(pdy + n * g.K * P, i);
                    dys = yf;
                    dxs = xf;
                } else {
                    dys = pdy + n * g.K * P;
                    dxs = pdx + n * CHW;
                }
                if (direct) {
                    gemm1<E>(true, false, R, P, g.K, E(1), wf, R, dys, P, E(0), dxs, P);
                } else {
                    gemm1<E>(true, false, R, P, g.K, E(1), wf, R, dys, P, E(0), col, P);
                    col2im(col, dxs, g, p, ranges);
                }
                if constexpr (lowp) {
                    T* xo = pdx + n * CHW;
                    for (std::int64_t i = 0; i < CHW; ++i) store(xo, i, dxs[i]);
                }
            }
        });
    });
}

void CpuBackend::do_conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                        const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_backward_filter";
    const ConvGeom g = conv_geom(op, x.shape(), dw.shape(), dy.shape(), p);
    const bool want_db = dbias.defined();
    if (x.dtype() == DType::f32 && kernels_) {
        if (const std::size_t bytes = dnnl_conv_workspace_bytes(ConvKind::backward_weights, g, p, threads_)) {
            void* ws = ws_base<char>(op, workspace, bytes);
            dnnl_conv_backward_filter(threads_, g, p, x.data<float>(), dy.data<float>(), dw.data<float>(),
                                      want_db ? dbias.data<float>() : nullptr, ws);
            return;
        }
    }
    if (x.dtype() == DType::f32 && kernels_ && fast_conv_choice(g, p).backward_filter) {
        void* ws = ws_base<char>(op, workspace, fast_conv_workspace_bytes(g, p, threads_));
        fast_conv_backward_filter(*kernels_, threads_, g, p, x.data<float>(), dy.data<float>(), dw.data<float>(),
                                  want_db ? dbias.data<float>() : nullptr, ws);
        return;
    }
    const int nt = conv_threads(threads_, g.N);
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using E = Acc<T>;
        constexpr bool lowp = is_low_precision<T>;
        const WsLayout l = ws_layout(g, p, lowp);
        E* ws = ws_base<E>(op, workspace, conv2d_workspace_bytes(x.shape(), dw.shape(), dy.shape(), p, x.dtype()));
        const std::int64_t P = g.P(), R = g.R(), CHW = g.C * g.H * g.W, KR = g.K * R;
        const T* px = x.data<T>();
        const T* pdy = dy.data<T>();
        const bool direct = direct_1x1(g, p);
        const TapRanges ranges(g, p);  // read by every chunk
        parallel_for(nt, nt, [&](std::int64_t chunk) {
            const int t = static_cast<int>(chunk);
            E* mine = ws + l.shared + l.per_thread() * t;
            E* col = mine;
            E* dwp = mine + l.col;
            E* dbp = dwp + l.dw;
            E* xf = dbp + l.db;
            E* yf = xf + l.xf;
            std::fill(dwp, dwp + KR + g.K, E(0));
            const std::int64_t n0 = g.N * t / nt, n1 = g.N * (t + 1) / nt;
            for (std::int64_t n = n0; n < n1; ++n) {
                const E* xs;
                const E* dys;
                if constexpr (lowp) {
                    for (std::int64_t i = 0; i < CHW; ++i) xf[i] = load(px + n * CHW, i);
                    for (std::int64_t i = 0; i < g.K * P; ++i) yf[i] = load(pdy + n * g.K * P, i);
                    xs = xf;
                    dys = yf;
                } else {
                    xs = px + n * CHW;
                    dys = pdy + n * g.K * P;
                }
                const E* cols = xs;
                if (!direct) {
                    im2col(xs, col, g, p, ranges);
                    cols = col;
                }
                // dw (K, R) += dy[n] (K, P) @ col^T (P, R)
                gemm1<E>(false, true, g.K, R, P, E(1), dys, P, cols, P, E(1), dwp, R);
                if (want_db)
                    for (std::int64_t k = 0; k < g.K; ++k) {
                        const E* row = dys + k * P;
                        E s = 0;
                        for (std::int64_t i = 0; i < P; ++i) s += row[i];
                        dbp[k] += s;
                    }
            }
        });
        // Reduce the per-thread partials in thread order, then accumulate into dw / dbias.
        T* pdw = dw.data<T>();
        const std::int64_t stride = l.per_thread();
        for (std::int64_t i = 0; i < KR; ++i) {
            E s = ws[l.shared + l.col + i];
            for (int t = 1; t < nt; ++t) s += ws[l.shared + stride * t + l.col + i];
            store(pdw, i, load(pdw, i) + s);
        }
        if (want_db) {
            T* pdb = dbias.data<T>();
            for (std::int64_t k = 0; k < g.K; ++k) {
                E s = ws[l.shared + l.col + l.dw + k];
                for (int t = 1; t < nt; ++t) s += ws[l.shared + stride * t + l.col + l.dw + k];
                store(pdb, k, load(pdb, k) + s);
            }
        }
    });
}

// Both backward calls of a layer: on oneDNN in one pass over the chunks when it runs both (dy reordered once),
// else the two calls.
void CpuBackend::do_conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor& dx, Tensor& dw,
                                 Tensor& dbias, const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_backward";
    if (dx.defined() && x.dtype() == DType::f32 && kernels_) {
        const ConvGeom g = conv_geom(op, x.shape(), dw.shape(), dy.shape(), p);
        const bool want_db = dbias.defined();
        if (const std::size_t bytes = dnnl_conv_workspace_bytes(ConvKind::backward, g, p, threads_)) {
            void* ws = ws_base<char>(op, workspace, bytes);
            dnnl_conv_backward(threads_, g, p, x.data<float>(), dy.data<float>(), w.data<float>(), dx.data<float>(),
                               dw.data<float>(), want_db ? dbias.data<float>() : nullptr, ws);
            return;
        }
    }
    Backend::do_conv2d_backward(x, dy, w, dx, dw, dbias, p, workspace);  // the two calls
}

}  // namespace hr
