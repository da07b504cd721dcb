// CpuBackend: batch norm, losses, reductions and optimizer updates.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/update_rules.h"

namespace hr {

using namespace cpu;

namespace {

// A (C) vector of any float dtype as doubles; an undefined tensor gives `fallback` everywhere.
std::vector<double> read_vec(const char* op, const Tensor& t, std::int64_t C, double fallback) {
    std::vector<double> out(static_cast<std::size_t>(C), fallback);
    if (!t.defined()) return out;
    dispatch_float(t.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* p = t.data<T>();
        for (std::int64_t i = 0; i < C; ++i) out[i] = load(p, i);
    });
    return out;
}

void write_vec(const char* op, Tensor& t, const std::vector<double>& v, bool accumulate) {
    dispatch_float(t.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        T* p = t.data<T>();
        for (std::size_t i = 0; i < v.size(); ++i)
            store(p, i, static_cast<Acc<T>>(accumulate ? load(p, i) + v[i] : v[i]));
    });
}

bool f32_or_undefined(const Tensor& t) { return !t.defined() || t.dtype() == DType::f32; }

// The fast f32 batch norm (AVX2 kernels) handles images: rows of at least 8 values per (n, c).
bool bn_fast(const cpu::FastKernels* k, const Tensor& x, std::int64_t S, std::initializer_list<const Tensor*> vecs) {
    if (!k || x.dtype() != DType::f32 || S < 8) return false;
    for (const Tensor* t : vecs)
        if (!f32_or_undefined(*t)) return false;
    return true;
}

// The fast batch norm works on blocks of channels: each pass goes over the samples once and, per sample,
// over the block's rows, which lie next to each other. One channel at a time (the rows of one channel are
// C * S floats apart) the rows of a 7x7 stage are 196 bytes each, a page apart, and the prefetchers find
// no stream in them. A channel's sums still run over the samples in order, whatever the block: the same
// bits for every block size. Blocks of at least 256 floats a sample (a power of two of channels), at
// least 4 blocks when C allows.
constexpr std::int64_t kMaxBnBlock = 32;
std::int64_t bn_channel_block(std::int64_t C, std::int64_t S) {
    std::int64_t cb = 1;
    while (cb * S < 256 && cb * 2 <= C / 4 && cb * 2 <= kMaxBnBlock) cb *= 2;
    return cb;
}

// y = (x - mean) * a + b per channel with a = gamma * invstd, from the f32 statistics: the training
// forward and a recompute from the saved statistics give bitwise the same y.
void bn_affine(double gamma, double beta, float invstd, float& a, float& b) {
    a = float(gamma * double(invstd));
    b = float(beta);
}

}  // namespace

void CpuBackend::do_batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                         Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                         Tensor& running_var, float momentum, float eps) {
    const char* op = "batchnorm_forward_train";
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    const std::int64_t M = N * S;
    const std::vector<double> g = read_vec(op, gamma, C, 1.0);
    const std::vector<double> bt = read_vec(op, beta, C, 0.0);
    std::vector<double> mean(C), var(C), invstd(C);
    if (bn_fast(kernels_, x, S, {&gamma, &beta, &save_mean, &save_invstd, &running_mean, &running_var})) {
        // A block of channels per chunk (bn_channel_block): shifted sums (shift = the channel's first value)
        // in f32 lanes per row, accumulated in double across rows, in a fixed order.
        const float* px = x.data<float>();
        float* py = y.data<float>();
        float* sm = save_mean.data<float>();
        float* si = save_invstd.data<float>();
        const std::int64_t cb = bn_channel_block(C, S);
        parallel_for(threads_, (C + cb - 1) / cb, [&](std::int64_t blk) {
            const std::int64_t c0 = blk * cb, c1 = std::min(C, c0 + cb);
            double s1[kMaxBnBlock] = {}, s2[kMaxBnBlock] = {};
            float a[kMaxBnBlock], b[kMaxBnBlock];
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t c = c0; c < c1; ++c)
                    kernels_->bn_sums(px + (n * C + c) * S, S, px[c * S], &s1[c - c0], &s2[c - c0]);
            for (std::int64_t c = c0; c < c1; ++c) {
                const double d = s1[c - c0] / double(M);
                const double v = std::max(0.0, s2[c - c0] / double(M) - d * d);
                mean[c] = double(px[c * S]) + d;
                var[c] = v;
                sm[c] = float(mean[c]);
                si[c] = float(1.0 / std::sqrt(v + double(eps)));
                bn_affine(g[c], bt[c], si[c], a[c - c0], b[c - c0]);
            }
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t c = c0; c < c1; ++c)
                    kernels_->scale_shift(px + (n * C + c) * S, S, sm[c], a[c - c0], b[c - c0], py + (n * C + c) * S,
                                          false);
        });
    } else {
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* px = x.data<T>();
        T* py = y.data<T>();
        // One channel per index: sums run in a fixed order whatever the thread count.
        parallel_chunks(threads_, C, x.numel() >= kParallelGrain ? 1 : C + 1, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t c = b; c < e; ++c) {
                double s = 0;
                for (std::int64_t n = 0; n < N; ++n) {
                    const T* row = px + (n * C + c) * S;
                    for (std::int64_t i = 0; i < S; ++i) s += load(row, i);
                }
                const double mu = s / double(M);
                double ss = 0;
                for (std::int64_t n = 0; n < N; ++n) {
                    const T* row = px + (n * C + c) * S;
                    for (std::int64_t i = 0; i < S; ++i) {
                        const double d = load(row, i) - mu;
                        ss += d * d;
                    }
                }
                const double v = ss / double(M);
                const double is = 1.0 / std::sqrt(v + double(eps));
                mean[c] = mu;
                var[c] = v;
                invstd[c] = is;
                using Cmp = Acc<T>;
                const Cmp a = Cmp(g[c] * is), bb = Cmp(bt[c] - mu * is * g[c]);
                for (std::int64_t n = 0; n < N; ++n) {
                    const T* row = px + (n * C + c) * S;
                    T* out = py + (n * C + c) * S;
                    for (std::int64_t i = 0; i < S; ++i) store(out, i, Cmp(load(row, i)) * a + bb);
                }
            }
        });
    });
    write_vec(op, save_mean, mean, false);
    write_vec(op, save_invstd, invstd, false);
    }
    const double mom = momentum;
    if (running_mean.defined()) {
        std::vector<double> rm = read_vec(op, running_mean, C, 0.0);
        for (std::int64_t c = 0; c < C; ++c) rm[c] = (1.0 - mom) * rm[c] + mom * mean[c];
        write_vec(op, running_mean, rm, false);
    }
    if (running_var.defined()) {
        std::vector<double> rv = read_vec(op, running_var, C, 1.0);
        const double unbias = double(M) / double(M - 1);
        for (std::int64_t c = 0; c < C; ++c) rv[c] = (1.0 - mom) * rv[c] + mom * var[c] * unbias;
        write_vec(op, running_var, rv, false);
    }
}

// The fast path of batchnorm_forward_train without its statistics pass: the same per-channel affine from
// the saved f32 mean and 1/std, so y is bit for bit what the forward wrote. Other layouts and dtypes run
// the whole forward again (their statistics are kept in double, the saved ones are rounded).
void CpuBackend::do_batchnorm_forward_recompute(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                             Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                             Tensor& running_var, float eps) {
    const char* op = "batchnorm_forward_recompute";
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    if (!bn_fast(kernels_, x, S, {&gamma, &beta, &save_mean, &save_invstd, &running_mean, &running_var})) {
        batchnorm_forward_train(x, gamma, beta, y, save_mean, save_invstd, running_mean, running_var, 0.0f, eps);
        return;
    }
    const std::vector<double> g = read_vec(op, gamma, C, 1.0);
    const std::vector<double> bt = read_vec(op, beta, C, 0.0);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const float* sm = save_mean.data<float>();
    const float* si = save_invstd.data<float>();
    const std::int64_t cb = bn_channel_block(C, S);
    parallel_for(threads_, (C + cb - 1) / cb, [&](std::int64_t blk) {
        const std::int64_t c0 = blk * cb, c1 = std::min(C, c0 + cb);
        float a[kMaxBnBlock], b[kMaxBnBlock];
        for (std::int64_t c = c0; c < c1; ++c) bn_affine(g[c], bt[c], si[c], a[c - c0], b[c - c0]);
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t c = c0; c < c1; ++c)
                kernels_->scale_shift(px + (n * C + c) * S, S, sm[c], a[c - c0], b[c - c0], py + (n * C + c) * S, false);
    });
}

void CpuBackend::do_batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         const Tensor& running_mean, const Tensor& running_var, float eps,
                                         Tensor& y) {
    const char* op = "batchnorm_forward_infer";
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    const std::vector<double> g = read_vec(op, gamma, C, 1.0);
    const std::vector<double> bt = read_vec(op, beta, C, 0.0);
    const std::vector<double> rm = read_vec(op, running_mean, C, 0.0);
    const std::vector<double> rv = read_vec(op, running_var, C, 1.0);
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using Cmp = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        parallel_chunks(threads_, N * C, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(S, 1)),
                        [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t nc = b; nc < e; ++nc) {
                const std::int64_t c = nc % C;
                const double is = 1.0 / std::sqrt(rv[c] + double(eps));
                const Cmp a = Cmp(g[c] * is), bb = Cmp(bt[c] - rm[c] * is * g[c]);
                const T* row = px + nc * S;
                T* out = py + nc * S;
                for (std::int64_t i = 0; i < S; ++i) store(out, i, Cmp(load(row, i)) * a + bb);
            }
        });
    });
}

void CpuBackend::do_batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& save_mean,
                                    const Tensor& save_invstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const char* op = "batchnorm_backward";
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    const std::int64_t M = N * S;
    const std::vector<double> g = read_vec(op, gamma, C, 1.0);
    const std::vector<double> mean = read_vec(op, save_mean, C, 0.0);
    const std::vector<double> invstd = read_vec(op, save_invstd, C, 1.0);
    std::vector<double> sum_dy(C), sum_dy_xhat(C);
    if (bn_fast(kernels_, x, S, {&gamma, &save_mean, &save_invstd, &dgamma, &dbeta})) {
        const float* px = x.data<float>();
        const float* pdy = dy.data<float>();
        float* pdx = dx.data<float>();
        const std::int64_t cb = bn_channel_block(C, S);
        parallel_for(threads_, (C + cb - 1) / cb, [&](std::int64_t blk) {
            const std::int64_t c0 = blk * cb, c1 = std::min(C, c0 + cb);
            double sd[kMaxBnBlock] = {}, sdx[kMaxBnBlock] = {};  // sum(dy), sum(dy * (x - mean))
            float k_dy[kMaxBnBlock], k_x[kMaxBnBlock], k_0[kMaxBnBlock];
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t c = c0; c < c1; ++c)
                    kernels_->bn_bwd_sums(px + (n * C + c) * S, pdy + (n * C + c) * S, S, float(mean[c]), &sd[c - c0],
                                          &sdx[c - c0]);
            for (std::int64_t c = c0; c < c1; ++c) {
                const double is = invstd[c];
                sum_dy[c] = sd[c - c0];
                sum_dy_xhat[c] = sdx[c - c0] * is;
                // dx = gamma * invstd / M * (M * dy - sum(dy) - xhat * sum(dy * xhat))
                const double k = g[c] * is / double(M);
                k_dy[c - c0] = float(k * double(M));
                k_x[c - c0] = float(-k * sdx[c - c0] * is * is);
                k_0[c - c0] = float(-k * sd[c - c0]);
            }
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t c = c0; c < c1; ++c)
                    kernels_->bn_bwd_apply(px + (n * C + c) * S, pdy + (n * C + c) * S, S, k_dy[c - c0], k_x[c - c0],
                                           float(mean[c]), k_0[c - c0], pdx + (n * C + c) * S);
        });
    } else {
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using Cmp = Acc<T>;
        const T* px = x.data<T>();
        const T* pdy = dy.data<T>();
        T* pdx = dx.data<T>();
        parallel_chunks(threads_, C, x.numel() >= kParallelGrain ? 1 : C + 1, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t c = b; c < e; ++c) {
                const double mu = mean[c], is = invstd[c];
                double sd = 0, sdx = 0;
                for (std::int64_t n = 0; n < N; ++n) {
                    const T* xr = px + (n * C + c) * S;
                    const T* gr = pdy + (n * C + c) * S;
                    for (std::int64_t i = 0; i < S; ++i) {
                        const double gv = load(gr, i);
                        sd += gv;
                        sdx += gv * (load(xr, i) - mu) * is;
                    }
                }
                sum_dy[c] = sd;
                sum_dy_xhat[c] = sdx;
                // dx = gamma * invstd / M * (M * dy - sum(dy) - xhat * sum(dy * xhat))
                const double k = g[c] * is / double(M);
                const Cmp k_dy = Cmp(k * double(M));
                const Cmp k_x = Cmp(-k * sdx * is);  // multiplies (x - mean)
                const Cmp k_0 = Cmp(-k * sd);
                const Cmp mu_c = Cmp(mu);
                for (std::int64_t n = 0; n < N; ++n) {
                    const T* xr = px + (n * C + c) * S;
                    const T* gr = pdy + (n * C + c) * S;
                    T* out = pdx + (n * C + c) * S;
                    for (std::int64_t i = 0; i < S; ++i)
                        store(out, i, k_dy * Cmp(load(gr, i)) + k_x * (Cmp(load(xr, i)) - mu_c) + k_0);
                }
            }
        });
    });
    }
    if (dgamma.defined()) write_vec(op, dgamma, sum_dy_xhat, true);
    if (dbeta.defined()) write_vec(op, dbeta, sum_dy, true);
}

// --- losses --------------------------------------------------------------------------------------

LossResult CpuBackend::do_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                             Tensor& dlogits, float grad_scale) {
    const char* op = "softmax_cross_entropy";
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    const bool want_grad = dlogits.defined();
    const std::int64_t* pl = labels.data<std::int64_t>();
    for (std::int64_t i = 0; i < N; ++i)
        if (pl[i] < 0 || pl[i] >= K)
            fail(op, "label " + std::to_string(pl[i]) + " in row " + std::to_string(i) + " is outside [0, " +
                         std::to_string(K) + ") for logits " + desc(logits));
    std::vector<double> row_loss(N);
    std::vector<unsigned char> row_ok(N);
    const double eps = label_smoothing;
    dispatch_float(logits.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* pz = logits.data<T>();
        T* pd = want_grad ? dlogits.data<T>() : nullptr;
        const double g = double(grad_scale) / double(std::max<std::int64_t>(N, 1));
        parallel_chunks(threads_, N, std::max<std::int64_t>(1, kParallelGrain / K), [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t r = b; r < e; ++r) {
                const T* z = pz + r * K;
                double mx = load(z, 0);
                std::int64_t arg = 0, first_nan = -1;
                double zsum = 0;
                for (std::int64_t k = 0; k < K; ++k) {
                    const double v = load(z, k);
                    zsum += v;
                    if (v != v && first_nan < 0) first_nan = k;
                    if (v > mx) {
                        mx = v;
                        arg = k;
                    }
                }
                // argmax as torch.argmax: the first NaN when the row has one (its loss is NaN anyway)
                if (first_nan >= 0) {
                    arg = first_nan;
                    mx = std::nan("");
                }
                double se = 0;
                for (std::int64_t k = 0; k < K; ++k) se += std::exp(double(load(z, k)) - mx);
                const double lse = mx + std::log(se);
                const std::int64_t y = pl[r];
                const double nll = lse - double(load(z, y));
                const double smooth = lse - zsum / double(K);  // mean_k(-log p_k)
                row_loss[r] = (1.0 - eps) * nll + eps * smooth;
                row_ok[r] = arg == y;
                if (pd) {
                    T* d = pd + r * K;
                    for (std::int64_t k = 0; k < K; ++k) {
                        const double p = std::exp(double(load(z, k)) - lse);
                        const double t = (k == y ? 1.0 - eps : 0.0) + eps / double(K);
                        store(d, k, static_cast<Acc<T>>(g * (p - t)));
                    }
                }
            }
        });
    });
    LossResult res;
    double total = 0;
    for (std::int64_t r = 0; r < N; ++r) {
        total += row_loss[r];
        res.correct += row_ok[r];
    }
    res.loss = N ? total / double(N) : 0.0;
    return res;
}

LossResult CpuBackend::do_mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) {
    const char* op = "mse_loss";
    const std::int64_t n = pred.numel();
    const std::int64_t rows = pred.ndim() >= 1 ? pred.dim(0) : 1;
    const std::int64_t cols = rows ? n / rows : 0;
    LossResult res;
    dispatch_float(pred.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        const T* pp = pred.data<T>();
        const T* pt = target.data<T>();
        T* pd = dpred.defined() ? dpred.data<T>() : nullptr;
        const double g = n ? 2.0 * double(grad_scale) / double(n) : 0.0;
        double total = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
            std::int64_t ap = 0, at = 0, pn = -1, tn = -1;  // argmax; first NaN (it wins, as torch.argmax)
            double part = 0;
            for (std::int64_t c = 0; c < cols; ++c) {
                const std::int64_t i = r * cols + c;
                const double p = load(pp, i), t = load(pt, i);
                const double d = p - t;
                part += d * d;
                if (p != p && pn < 0) pn = c;
                if (t != t && tn < 0) tn = c;
                if (p > double(load(pp, r * cols + ap))) ap = c;
                if (t > double(load(pt, r * cols + at))) at = c;
                if (pd) store(pd, i, static_cast<Acc<T>>(g * d));
            }
            if (pn >= 0) ap = pn;
            if (tn >= 0) at = tn;
            total += part;
            res.correct += (cols > 0 && ap == at) ? 1 : 0;
        }
        res.loss = n ? total / double(n) : 0.0;
    });
    return res;
}

// --- reductions ----------------------------------------------------------------------------------

double CpuBackend::do_sum_squares(const Tensor& x) {
    const std::int64_t n = x.numel();
    // Fixed-size blocks summed in order: the result does not depend on the thread count.
    constexpr std::int64_t block = 1 << 14;
    const std::int64_t nblocks = (n + block - 1) / block;
    std::vector<double> parts(static_cast<std::size_t>(nblocks), 0.0);
    dispatch_float(x.dtype(), "sum_squares", [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.data<T>();
        parallel_chunks(threads_, nblocks, 4, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t k = b; k < e; ++k) {
                double s = 0;
                const std::int64_t end = std::min(n, (k + 1) * block);
                for (std::int64_t i = k * block; i < end; ++i) {
                    const double v = load(p, i);
                    s += v * v;
                }
                parts[k] = s;
            }
        });
    });
    double total = 0;
    for (double v : parts) total += v;
    return total;
}

bool CpuBackend::do_all_finite(const Tensor& x) {
    bool ok = true;
    if (!dtype_is_float(x.dtype())) return true;
    dispatch_float(x.dtype(), "all_finite", [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.data<T>();
        const std::int64_t n = x.numel();
        std::atomic<int> bad{0};
        parallel_chunks(threads_, n, kParallelGrain, [&](std::int64_t b, std::int64_t e) {
            int local = 0;
            for (std::int64_t i = b; i < e; ++i) {
                const auto v = load(p, i);
                local |= !std::isfinite(v);
            }
            if (local) bad.store(1, std::memory_order_relaxed);
        });
        ok = bad.load() == 0;
    });
    return ok;
}

// --- optimizers ----------------------------------------------------------------------------------

namespace {

template <class F>
void dispatch_f32_f64(DType t, F&& f) {
    if (t == DType::f64)
        f(double{});
    else
        f(float{});
}

}  // namespace

void CpuBackend::do_sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) {
    const char* op = "sgd_update";
    const bool use_mom = a.momentum != 0.0f;
    const std::int64_t n = param.numel();
    dispatch_f32_f64(param.dtype(), [&](auto ptag) {
        using P = decltype(ptag);
        dispatch_float(grad.dtype(), op, [&](auto gtag) {
            using G = decltype(gtag);
            dispatch_f32_f64(use_mom ? momentum_buf.dtype() : param.dtype(), [&](auto btag) {
                using B = decltype(btag);
                P* p = param.data<P>();
                const G* g = grad.data<G>();
                B* buf = use_mom ? momentum_buf.data<B>() : nullptr;
                const P lr = P(a.lr), wd = P(a.weight_decay), mom = P(a.momentum), damp1 = P(1) - P(a.dampening),
                        gs = P(a.grad_scale);
                parallel_chunks(threads_, n, kParallelGrain, [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t i = b; i < e; ++i) {
                        P d = P(load(g, i)) * gs;
                        if (wd != P(0)) d = d + wd * p[i];
                        if (buf) {
                            P m = a.first_step ? d : mom * P(buf[i]) + damp1 * d;
                            buf[i] = B(m);
                            d = a.nesterov ? d + mom * m : m;
                        }
                        p[i] = p[i] - lr * d;
                    }
                });
            });
        });
    });
}

void CpuBackend::do_adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) {
    const char* op = "adam_update";
    const std::int64_t n = param.numel();
    // As torch.optim.Adam (single-tensor path): bias corrections in double (backend/update_rules.h), then per
    // element.
    const AdamBiasCorrection bc = adam_bias_correction(a.lr, a.beta1, a.beta2, double(a.step));
    const double step_size = bc.step_size;
    const double bc2_sqrt = bc.bc2_sqrt;
    dispatch_f32_f64(param.dtype(), [&](auto ptag) {
        using P = decltype(ptag);
        dispatch_float(grad.dtype(), op, [&](auto gtag) {
            using G = decltype(gtag);
            dispatch_f32_f64(m.dtype(), [&](auto stag) {
                using S = decltype(stag);
                P* p = param.data<P>();
                const G* g = grad.data<G>();
                S* pm = m.data<S>();
                S* pv = v.data<S>();
                const P gs = P(a.grad_scale), wd = P(a.weight_decay), b1w = P(1) - P(a.beta1), b2 = P(a.beta2),
                        b2w = P(1) - P(a.beta2), eps = P(a.eps), ss = P(step_size), bcs = P(bc2_sqrt);
                const P decay = P(1) - P(a.lr) * wd;
                const bool decoupled = a.decoupled_weight_decay;
                parallel_chunks(threads_, n, kParallelGrain, [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t i = b; i < e; ++i) {
                        P gi = P(load(g, i)) * gs;
                        if (wd != P(0)) {
                            if (decoupled)
                                p[i] = p[i] * decay;
                            else
                                gi = gi + wd * p[i];
                        }
                        P mi = P(pm[i]);
                        mi = mi + b1w * (gi - mi);  // lerp, as exp_avg.lerp_(grad, 1 - beta1)
                        P vi = P(pv[i]) * b2 + b2w * gi * gi;
                        pm[i] = S(mi);
                        pv[i] = S(vi);
                        const P denom = std::sqrt(vi) / bcs + eps;
                        p[i] = p[i] - ss * mi / denom;
                    }
                });
            });
        });
    });
}

}  // namespace hr
