// Own kernels of the CUDA backend: batch norm, losses, reductions, optimizer updates, step control.
// Semantics mirror core/backend/cpu/cpu_train_ops.cpp and core/backend/step_ops.cpp (same formulas;
// sums in double; fixed summation orders, so results are the same every run).
#include <climits>

#include "backend/cuda/cuda_common.cuh"
#include "backend/update_rules.h"

namespace hr::cuda {

namespace {

// --- batch norm: two-stage channel reductions (x viewed as (N, C, S), M = N * S per channel) ------

// Stage 1: partials[2 * b] = sum, partials[2 * b + 1] = sum of squares of slice g of channel c.
template <class T>
__global__ void bn_stats_partial_kernel(const T* x, std::int64_t N, std::int64_t C, std::int64_t S, int G,
                                        double* partials) {
    const std::int64_t c = blockIdx.x / G;
    const int g = static_cast<int>(blockIdx.x % G);
    std::int64_t b, e;
    slice_range(N * S, G, g, b, e);
    double s = 0.0, ss = 0.0;
    for (std::int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        const double v = to_f(x[(n * C + c) * S + j]);
        s += v;
        ss += v * v;
    }
    s = block_sum(s);
    ss = block_sum(ss);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = s;
        partials[2 * blockIdx.x + 1] = ss;
    }
}

// Stage 2 (one thread per channel): statistics, running statistics, y = x * a + b coefficients.
__global__ void bn_stats_finish_kernel(const double* partials, int G, std::int64_t C, std::int64_t M, VecArg gamma,
                                       VecArg beta, VecArg save_mean, VecArg save_invstd, VecArg running_mean,
                                       VecArg running_var, float momentum, float eps, float* coef) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double s = 0.0, ss = 0.0;
    for (int g = 0; g < G; ++g) {
        s += partials[2 * (c * G + g)];
        ss += partials[2 * (c * G + g) + 1];
    }
    const double mu = s / static_cast<double>(M);
    double var = ss / static_cast<double>(M) - mu * mu;  // biased
    if (var < 0.0) var = 0.0;
    const double is = 1.0 / sqrt(var + static_cast<double>(eps));
    store_vec(save_mean, c, mu);
    store_vec(save_invstd, c, is);
    const double mom = momentum;
    if (running_mean.p) store_vec(running_mean, c, (1.0 - mom) * load_vec(running_mean, c, 0.0) + mom * mu);
    if (running_var.p) {
        const double unbias = static_cast<double>(M) / static_cast<double>(M - 1);
        store_vec(running_var, c, (1.0 - mom) * load_vec(running_var, c, 1.0) + mom * var * unbias);
    }
    const double gm = load_vec(gamma, c, 1.0), bt = load_vec(beta, c, 0.0);
    coef[4 * c] = static_cast<float>(gm * is);
    coef[4 * c + 1] = static_cast<float>(bt - mu * is * gm);
}

// Stage 3: y = x * coef[4c] + coef[4c + 1].
template <class T>
__global__ void bn_apply_kernel(const T* x, T* y, std::int64_t C, std::int64_t S, std::int64_t total,
                                const float* coef) {
    HR_GRID_STRIDE(i, total) {
        const std::int64_t c = (i / S) % C;
        y[i] = from_f<T>(to_f(x[i]) * coef[4 * c] + coef[4 * c + 1]);
    }
}

// One block per channel (fallback when C exceeds the scratch's partials).
template <class T>
__global__ void bn_train_kernel(const T* x, T* y, std::int64_t N, std::int64_t C, std::int64_t S, VecArg gamma,
                                VecArg beta, VecArg save_mean, VecArg save_invstd, VecArg running_mean,
                                VecArg running_var, float momentum, float eps) {
    const std::int64_t c = blockIdx.x;
    const std::int64_t M = N * S;
    double s = 0.0;
    for (std::int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        s += to_f(x[(n * C + c) * S + j]);
    }
    const double mu = block_sum(s) / static_cast<double>(M);
    double ss = 0.0;
    for (std::int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        const double d = to_f(x[(n * C + c) * S + j]) - mu;
        ss += d * d;
    }
    const double var = block_sum(ss) / static_cast<double>(M);
    const double is = 1.0 / sqrt(var + static_cast<double>(eps));
    const double g = load_vec(gamma, c, 1.0), bt = load_vec(beta, c, 0.0);
    if (threadIdx.x == 0) {
        store_vec(save_mean, c, mu);
        store_vec(save_invstd, c, is);
        const double mom = momentum;
        if (running_mean.p) store_vec(running_mean, c, (1.0 - mom) * load_vec(running_mean, c, 0.0) + mom * mu);
        if (running_var.p) {
            const double unbias = static_cast<double>(M) / static_cast<double>(M - 1);
            store_vec(running_var, c, (1.0 - mom) * load_vec(running_var, c, 1.0) + mom * var * unbias);
        }
    }
    const float a = static_cast<float>(g * is), b = static_cast<float>(bt - mu * is * g);
    for (std::int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        const std::int64_t k = (n * C + c) * S + j;
        y[k] = from_f<T>(to_f(x[k]) * a + b);
    }
}

// Inference, stage 1 (one thread per channel): y = x * a + b from the running statistics, the coefficients
// computed once per channel in double (as the CPU does) into coef[4c], coef[4c + 1].
__device__ inline void bn_infer_coef(std::int64_t c, VecArg gamma, VecArg beta, VecArg running_mean, VecArg running_var,
                                     float eps, float& a, float& b) {
    const double is = 1.0 / sqrt(load_vec(running_var, c, 1.0) + static_cast<double>(eps));
    const double g = load_vec(gamma, c, 1.0);
    a = static_cast<float>(g * is);
    b = static_cast<float>(load_vec(beta, c, 0.0) - load_vec(running_mean, c, 0.0) * is * g);
}

__global__ void bn_infer_coef_kernel(std::int64_t C, VecArg gamma, VecArg beta, VecArg running_mean, VecArg running_var,
                                     float eps, float* coef) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= C) return;
    bn_infer_coef(c, gamma, beta, running_mean, running_var, eps, coef[4 * c], coef[4 * c + 1]);
}

// Fallback when C exceeds the scratch's coefficients: the same per element.
template <class T>
__global__ void bn_infer_kernel(const T* x, T* y, std::int64_t C, std::int64_t S, std::int64_t total, VecArg gamma,
                                VecArg beta, VecArg running_mean, VecArg running_var, float eps) {
    HR_GRID_STRIDE(i, total) {
        const std::int64_t c = (i / S) % C;
        float a, b;
        bn_infer_coef(c, gamma, beta, running_mean, running_var, eps, a, b);
        y[i] = from_f<T>(to_f(x[i]) * a + b);
    }
}

// Backward stage 1: partials[2b] = sum(dy), partials[2b + 1] = sum(dy * xhat) over slice g of channel c.
template <class T>
__global__ void bn_bwd_partial_kernel(const T* x, const T* dy, std::int64_t N, std::int64_t C, std::int64_t S, int G,
                                      VecArg save_mean, VecArg save_invstd, double* partials) {
    const std::int64_t c = blockIdx.x / G;
    const int g = static_cast<int>(blockIdx.x % G);
    std::int64_t b, e;
    slice_range(N * S, G, g, b, e);
    const double mu = load_vec(save_mean, c, 0.0), is = load_vec(save_invstd, c, 1.0);
    double sd = 0.0, sdx = 0.0;
    for (std::int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        const std::int64_t k = (n * C + c) * S + j;
        const double gv = to_f(dy[k]);
        sd += gv;
        sdx += gv * (to_f(x[k]) - mu) * is;
    }
    sd = block_sum(sd);
    sdx = block_sum(sdx);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = sd;
        partials[2 * blockIdx.x + 1] = sdx;
    }
}

// Backward stage 2 (one thread per channel): dgamma, dbeta and dx's coefficients.
// dx = gamma * invstd / M * (M * dy - sum(dy) - xhat * sum(dy * xhat))
__global__ void bn_bwd_finish_kernel(const double* partials, int G, std::int64_t C, std::int64_t M, VecArg gamma,
                                     VecArg save_mean, VecArg save_invstd, VecArg dgamma, VecArg dbeta, float* coef) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double sd = 0.0, sdx = 0.0;
    for (int g = 0; g < G; ++g) {
        sd += partials[2 * (c * G + g)];
        sdx += partials[2 * (c * G + g) + 1];
    }
    const double mu = load_vec(save_mean, c, 0.0), is = load_vec(save_invstd, c, 1.0);
    const double kk = load_vec(gamma, c, 1.0) * is / static_cast<double>(M);
    coef[4 * c] = static_cast<float>(kk * static_cast<double>(M));  // k_dy
    coef[4 * c + 1] = static_cast<float>(-kk * sdx * is);           // k_x, multiplies (x - mean)
    coef[4 * c + 2] = static_cast<float>(-kk * sd);                 // k_0
    coef[4 * c + 3] = static_cast<float>(mu);
    if (dgamma.p) store_vec(dgamma, c, static_cast<float>(load_vec(dgamma, c, 0.0) + sdx));
    if (dbeta.p) store_vec(dbeta, c, static_cast<float>(load_vec(dbeta, c, 0.0) + sd));
}

template <class T>
__global__ void bn_bwd_apply_kernel(const T* x, const T* dy, T* dx, std::int64_t C, std::int64_t S, std::int64_t total,
                                    const float* coef) {
    HR_GRID_STRIDE(i, total) {
        const std::int64_t c = (i / S) % C;
        const float* k = coef + 4 * c;
        dx[i] = from_f<T>(k[0] * to_f(dy[i]) + k[1] * (to_f(x[i]) - k[3]) + k[2]);
    }
}

template <class T>
__global__ void bn_bwd_kernel(const T* x, const T* dy, T* dx, std::int64_t N, std::int64_t C, std::int64_t S,
                              VecArg gamma, VecArg save_mean, VecArg save_invstd, VecArg dgamma, VecArg dbeta) {
    const std::int64_t c = blockIdx.x;
    const std::int64_t M = N * S;
    const double mu = load_vec(save_mean, c, 0.0), is = load_vec(save_invstd, c, 1.0);
    double sd = 0.0, sdx = 0.0;
    for (std::int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        const std::int64_t k = (n * C + c) * S + j;
        const double gv = to_f(dy[k]);
        sd += gv;
        sdx += gv * (to_f(x[k]) - mu) * is;
    }
    sd = block_sum(sd);
    sdx = block_sum(sdx);
    const double kk = load_vec(gamma, c, 1.0) * is / static_cast<double>(M);
    const float k_dy = static_cast<float>(kk * static_cast<double>(M));
    const float k_x = static_cast<float>(-kk * sdx * is);
    const float k_0 = static_cast<float>(-kk * sd);
    const float mu_c = static_cast<float>(mu);
    for (std::int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        const std::int64_t n = i / S, j = i - n * S;
        const std::int64_t k = (n * C + c) * S + j;
        dx[k] = from_f<T>(k_dy * to_f(dy[k]) + k_x * (to_f(x[k]) - mu_c) + k_0);
    }
    if (threadIdx.x == 0) {
        if (dgamma.p) store_vec(dgamma, c, static_cast<float>(load_vec(dgamma, c, 0.0) + sdx));
        if (dbeta.p) store_vec(dbeta, c, static_cast<float>(load_vec(dbeta, c, 0.0) + sd));
    }
}

// --- losses (one warp per row, a fixed grid of kReduceBlocks blocks) -----------------------------

constexpr int kRowWarps = 4;  // warps per block of 128 threads

// (value, index) of the row's argmax: the first NaN if there is one, else the first maximum (the CPU
// backend's rule, and torch.argmax's).
struct ArgMax {
    float v;
    long long i;  // LLONG_MAX: no element
};
__device__ __forceinline__ ArgMax better(ArgMax a, ArgMax b) {
    if (b.i == LLONG_MAX) return a;
    if (a.i == LLONG_MAX) return b;
    const bool an = isnan(a.v), bn = isnan(b.v);
    if (an || bn) {
        if (an && bn) return b.i < a.i ? b : a;
        return an ? a : b;
    }
    if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
    return a;
}
__device__ __forceinline__ ArgMax warp_argmax(ArgMax a) {
    for (int o = 16; o > 0; o >>= 1) {
        ArgMax b{__shfl_down_sync(0xffffffffu, a.v, o), __shfl_down_sync(0xffffffffu, a.i, o)};
        a = better(a, b);
    }
    return ArgMax{__shfl_sync(0xffffffffu, a.v, 0), __shfl_sync(0xffffffffu, a.i, 0)};  // lane 0's, to all
}
__device__ __forceinline__ double warp_sum_all(double v) { return __shfl_sync(0xffffffffu, warp_sum(v), 0); }

// A compensated (Kahan) f32 sum: about the accuracy of a double sum at f32 cost per element.
struct KahanF {
    float s = 0.0f, c = 0.0f;
    __device__ __forceinline__ void add(float v) {
        const float y = v - c;
        const float t = s + y;
        c = (t - s) - y;
        s = t;
    }
    __device__ __forceinline__ double value() const { return static_cast<double>(s) - static_cast<double>(c); }
};

unsigned loss_blocks(std::int64_t rows) {
    std::int64_t b = (rows + kRowWarps - 1) / kRowWarps;
    if (b > kReduceBlocks) b = kReduceBlocks;
    if (b < 1) b = 1;
    return static_cast<unsigned>(b);
}

// Adds one warp's (loss, correct) into its block's slot, warps in order: deterministic.
__device__ __forceinline__ void block_rows_out(double loss, double ok, double* loss_partials, double* ok_partials) {
    __shared__ double sl[kRowWarps], so[kRowWarps];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) {
        sl[wid] = loss;
        so[wid] = ok;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0.0, b = 0.0;
        for (int w = 0; w < kRowWarps; ++w) {
            a += sl[w];
            b += so[w];
        }
        loss_partials[blockIdx.x] = a;
        ok_partials[blockIdx.x] = b;
    }
}

// Labels first: counts rows outside [0, K) and the first of them (order-independent results).
// With skip_ignored, kIgnoreTarget (-100) is allowed: its row is skipped by the loss kernel.
__global__ void check_labels_kernel(const std::int64_t* labels, std::int64_t N, std::int64_t K, ReduceResult* r,
                                    bool skip_ignored) {
    HR_GRID_STRIDE(i, N) {
        const std::int64_t y = labels[i];
        if ((y < 0 || y >= K) && !(skip_ignored && y == -100)) {
            atomicAdd(&r->bad_count, 1ull);
            atomicMin(&r->first_bad, static_cast<unsigned long long>(i));
        }
    }
}

template <class T>
__global__ void xent_kernel(const T* z, const std::int64_t* labels, T* dz, std::int64_t N, std::int64_t K,
                            float label_smoothing, float grad_scale, const double* control, double* loss_partials,
                            double* ok_partials, const ReduceResult* result) {
    if (result->bad_count != 0) return;  // a bad label: nothing is written (the block leaves together)
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const double eps = label_smoothing;
    const double scale = static_cast<double>(grad_scale) * (control ? control[kCtlLossScale] : 1.0);
    const double g = static_cast<double>(static_cast<float>(scale)) / static_cast<double>(N > 1 ? N : 1);
    // per element only f32 (a vocabulary row of 50,304 logits would otherwise cost as many double
    // exponentials): compensated f32 sums per lane, then the lanes' sums and the row's figures in double
    const float gf = static_cast<float>(g);
    const float on = static_cast<float>(1.0 - eps + eps / static_cast<double>(K)),
                off = static_cast<float>(eps / static_cast<double>(K));
    double my_loss = 0.0, my_ok = 0.0;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowWarps + wid; r < N;
         r += static_cast<std::int64_t>(gridDim.x) * kRowWarps) {
        const T* zr = z + r * K;
        if (labels[r] == -100) {  // an ignored target (allowed by the check): no loss, a zero gradient row
            if (dz)
                for (std::int64_t k = lane; k < K; k += 32) dz[r * K + k] = from_f<T>(0.0f);
            continue;
        }
        ArgMax am{-INFINITY, LLONG_MAX};
        KahanF zs;
        for (std::int64_t k = lane; k < K; k += 32) {
            const float v = to_f(zr[k]);
            zs.add(v);
            am = better(am, ArgMax{v, k});
        }
        am = warp_argmax(am);
        const double zsum = warp_sum_all(zs.value());
        const float mx = am.v;  // the maximum (NaN for a row with a NaN: its loss is NaN, as on the CPU)
        KahanF es;
        for (std::int64_t k = lane; k < K; k += 32) es.add(expf(to_f(zr[k]) - mx));
        const double se = warp_sum_all(es.value());
        const double lse = static_cast<double>(mx) + log(se);
        const std::int64_t y = labels[r];
        const double nll = lse - static_cast<double>(to_f(zr[y]));
        const double smooth = lse - zsum / static_cast<double>(K);
        my_loss += (1.0 - eps) * nll + eps * smooth;  // lane 0's value is the one kept
        my_ok += am.i == y ? 1.0 : 0.0;
        // dz may be z (cross_entropy_inplace): every lane has read z[y] before any lane overwrites it
        __syncwarp();
        if (dz) {
            T* d = dz + r * K;
            // exp(z - lse) as exp(z - mx) / se: the subtraction in f32 is exact for z near mx
            const float inv_se = static_cast<float>(1.0 / se);
            for (std::int64_t k = lane; k < K; k += 32) {
                const float p = expf(to_f(zr[k]) - mx) * inv_se;
                d[k] = from_f<T>(gf * (p - (k == y ? on : off)));
            }
        }
    }
    block_rows_out(my_loss, my_ok, loss_partials, ok_partials);
}

template <class T>
__global__ void mse_kernel(const T* pred, const T* target, T* dpred, std::int64_t rows, std::int64_t cols,
                           float grad_scale, const double* control, double* loss_partials, double* ok_partials) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const float scale =
        control ? static_cast<float>(static_cast<double>(grad_scale) * control[kCtlLossScale]) : grad_scale;
    const double g = 2.0 * static_cast<double>(scale) / static_cast<double>(rows * cols);
    double my_loss = 0.0, my_ok = 0.0;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowWarps + wid; r < rows;
         r += static_cast<std::int64_t>(gridDim.x) * kRowWarps) {
        ArgMax ap{-INFINITY, LLONG_MAX}, at{-INFINITY, LLONG_MAX};
        double part = 0.0;
        for (std::int64_t c = lane; c < cols; c += 32) {
            const std::int64_t i = r * cols + c;
            const float p = to_f(pred[i]), t = to_f(target[i]);
            const double d = static_cast<double>(p) - static_cast<double>(t);
            part += d * d;
            ap = better(ap, ArgMax{p, c});
            at = better(at, ArgMax{t, c});
            if (dpred) dpred[i] = from_f<T>(static_cast<float>(g * d));
        }
        part = warp_sum_all(part);
        ap = warp_argmax(ap);
        at = warp_argmax(at);
        my_loss += part;
        my_ok += (cols > 0 && ap.i == at.i) ? 1.0 : 0.0;
    }
    block_rows_out(my_loss, my_ok, loss_partials, ok_partials);
}

// One thread: sums the partials in order into result (and, with stats, into StepStats).
// divisor: rows (cross-entropy) or elements (MSE) for the mean.
__global__ void finish_loss_kernel(const double* loss_partials, const double* ok_partials, int n, double divisor,
                                   const std::int64_t* labels, ReduceResult* result, double* stats, double weight) {
    double s = 0.0, c = 0.0;
    for (int i = 0; i < n; ++i) {  // one thread, serial: at most kReduceBlocks values, fixed order
        s += loss_partials[i];
        c += ok_partials[i];
    }
    const bool bad = result->bad_count != 0;
    if (bad && labels) result->bad_label = labels[result->first_bad];
    if (!bad) {
        result->sum = s;
        result->count = static_cast<long long>(c);
    }
    if (!stats) return;
    if (bad) {
        if (stats[kStatBadLabels] == 0.0) {
            stats[kStatBadLabel] = static_cast<double>(result->bad_label);
            stats[kStatBadRow] = static_cast<double>(result->first_bad);
        }
        stats[kStatBadLabels] += static_cast<double>(result->bad_count);
        return;
    }
    stats[kStatLoss] += weight * (divisor > 0 ? s / divisor : 0.0);
    stats[kStatCorrect] += c;
}

// --- reductions ----------------------------------------------------------------------------------

template <class T>
__global__ void sum_squares_kernel(const T* x, std::int64_t n, double* partials) {
    double s = 0.0;
    HR_GRID_STRIDE(i, n) {
        const double v = to_f(x[i]);
        s += v * v;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__global__ void sum_partials_kernel(const double* partials, int n, ReduceResult* result) {
    double s = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += partials[i];
    s = block_sum(s);
    if (threadIdx.x == 0) result->sum = s;
}

template <class T>
__global__ void all_finite_kernel(const T* x, std::int64_t n, ReduceResult* result, double* control) {
    bool bad = false;
    HR_GRID_STRIDE(i, n) bad |= !isfinite(to_f(x[i]));
    if (bad) {  // every writer writes the same value: the race is benign
        if (control)
            control[kCtlFoundInf] = 1.0;
        else
            result->flag = 1;
    }
}

// --- optimizers (PyTorch semantics, as cpu_train_ops.cpp; f32 arithmetic) ------------------------

struct SgdScalars {
    float lr, gs;
    bool first_step;
};

template <class G>
__global__ void sgd_kernel(float* p, const G* g, float* buf, std::int64_t n, SgdScalars sc, float wd, float mom,
                           float damp1, bool nesterov, const double* control) {
    if (control) {  // the step's scalars from the device (backend.h sgd_update_ctl)
        if (control[kCtlFoundInf] != 0.0) return;
        sc.lr = static_cast<float>(control[kCtlLr]);
        sc.first_step = control[kCtlOptStep] == 0.0;
        sc.gs = sc.gs * static_cast<float>(1.0 / control[kCtlLossScale]);
    }
    HR_GRID_STRIDE(i, n) {
        float d = to_f(g[i]) * sc.gs;
        if (wd != 0.0f) d = d + wd * p[i];
        if (buf) {
            const float m = sc.first_step ? d : mom * buf[i] + damp1 * d;
            buf[i] = m;
            d = nesterov ? d + mom * m : m;
        }
        p[i] = p[i] - sc.lr * d;
    }
}

struct AdamScalars {
    float gs, ss, bcs, decay;
};

template <class G>
__global__ void adam_kernel(float* p, const G* g, float* m, float* v, std::int64_t n, AdamScalars sc, float wd,
                            float b1w, float beta1, float b2, float b2w, float eps, bool decoupled,
                            const double* control) {
    if (control) {  // bias corrections from the device's step count, once per block
        if (control[kCtlFoundInf] != 0.0) return;
        __shared__ AdamScalars shared;
        if (threadIdx.x == 0) {
            const float lr = static_cast<float>(control[kCtlLr]);
            const AdamBiasCorrection bc = adam_bias_correction(lr, beta1, b2, control[kCtlOptStep] + 1.0);
            shared.gs = sc.gs * static_cast<float>(1.0 / control[kCtlLossScale]);
            shared.ss = static_cast<float>(bc.step_size);
            shared.bcs = static_cast<float>(bc.bc2_sqrt);
            shared.decay = 1.0f - lr * wd;
        }
        __syncthreads();
        sc = shared;
    }
    HR_GRID_STRIDE(i, n) {
        float gi = to_f(g[i]) * sc.gs;
        float pi = p[i];
        if (wd != 0.0f) {
            if (decoupled)
                pi = pi * sc.decay;
            else
                gi = gi + wd * pi;
        }
        float mi = m[i];
        mi = mi + b1w * (gi - mi);
        const float vi = v[i] * b2 + b2w * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float denom = sqrtf(vi) / sc.bcs + eps;
        p[i] = pi - sc.ss * mi / denom;
    }
}

__global__ void step_control_end_kernel(double* c, bool dynamic, long long growth_interval) {
    const bool overflowed = c[kCtlFoundInf] != 0.0;
    c[overflowed ? kCtlSkipped : kCtlOptStep] += 1.0;
    if (dynamic) update_loss_scale(overflowed, c[kCtlLossScale], c[kCtlGoodSteps], growth_interval);
}

unsigned channel_threads_blocks(std::int64_t C) { return static_cast<unsigned>((C + kThreads - 1) / kThreads); }

}  // namespace

// --- launchers -----------------------------------------------------------------------------------

void batchnorm_forward_train(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg save_mean, VecArg save_invstd, VecArg running_mean,
                             VecArg running_var, float momentum, float eps, const Scratch& scratch, cudaStream_t s) {
    if (C <= 0) return;
    const std::int64_t M = N * S;
    const int G = channel_slices(M, C);
    dispatch_float(dt, "batchnorm_forward_train", [&](auto tag) {
        using T = decltype(tag);
        if (G == 0) {
            bn_train_kernel<T><<<static_cast<unsigned>(C), kThreads, 0, s>>>(
                static_cast<const T*>(x), static_cast<T*>(y), N, C, S, gamma, beta, save_mean, save_invstd,
                running_mean, running_var, momentum, eps);
            return;
        }
        double* partials = scratch.channel_partials();
        float* coef = scratch.channel_coef();
        bn_stats_partial_kernel<T><<<static_cast<unsigned>(C * G), kThreads, 0, s>>>(static_cast<const T*>(x), N, C,
                                                                                   S, G, partials);
        HR_CUDA_CHECK_LAUNCH("bn_stats_partial_kernel");
        bn_stats_finish_kernel<<<channel_threads_blocks(C), kThreads, 0, s>>>(
            partials, G, C, M, gamma, beta, save_mean, save_invstd, running_mean, running_var, momentum, eps, coef);
        HR_CUDA_CHECK_LAUNCH("bn_stats_finish_kernel");
        const std::int64_t total = N * C * S;
        bn_apply_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), C, S,
                                                                total, coef);
    });
    HR_CUDA_CHECK_LAUNCH("bn_train_kernel");
}

void batchnorm_forward_infer(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg running_mean, VecArg running_var, float eps,
                             const Scratch& scratch, cudaStream_t s) {
    const std::int64_t total = N * C * S;
    if (total <= 0) return;
    dispatch_float(dt, "batchnorm_forward_infer", [&](auto tag) {
        using T = decltype(tag);
        if (C > cuda_sizes::kChannelPartials) {  // more channels than the scratch has coefficients for
            bn_infer_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), C, S,
                                                                    total, gamma, beta, running_mean, running_var, eps);
            return;
        }
        float* coef = scratch.channel_coef();
        bn_infer_coef_kernel<<<channel_threads_blocks(C), kThreads, 0, s>>>(C, gamma, beta, running_mean, running_var,
                                                                             eps, coef);
        HR_CUDA_CHECK_LAUNCH("bn_infer_coef_kernel");
        bn_apply_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), C, S,
                                                                total, coef);
    });
    HR_CUDA_CHECK_LAUNCH("bn_infer_kernel");
}

void batchnorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t N, std::int64_t C,
                        std::int64_t S, VecArg gamma, VecArg save_mean, VecArg save_invstd, VecArg dgamma,
                        VecArg dbeta, const Scratch& scratch, cudaStream_t s) {
    if (C <= 0) return;
    const std::int64_t M = N * S;
    const int G = channel_slices(M, C);
    dispatch_float(dt, "batchnorm_backward", [&](auto tag) {
        using T = decltype(tag);
        if (G == 0) {
            bn_bwd_kernel<T><<<static_cast<unsigned>(C), kThreads, 0, s>>>(
                static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), N, C, S, gamma, save_mean,
                save_invstd, dgamma, dbeta);
            return;
        }
        double* partials = scratch.channel_partials();
        float* coef = scratch.channel_coef();
        bn_bwd_partial_kernel<T><<<static_cast<unsigned>(C * G), kThreads, 0, s>>>(
            static_cast<const T*>(x), static_cast<const T*>(dy), N, C, S, G, save_mean, save_invstd, partials);
        HR_CUDA_CHECK_LAUNCH("bn_bwd_partial_kernel");
        bn_bwd_finish_kernel<<<channel_threads_blocks(C), kThreads, 0, s>>>(partials, G, C, M, gamma, save_mean,
                                                                            save_invstd, dgamma, dbeta, coef);
        HR_CUDA_CHECK_LAUNCH("bn_bwd_finish_kernel");
        const std::int64_t total = N * C * S;
        bn_bwd_apply_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy),
                                                                    static_cast<T*>(dx), C, S, total, coef);
    });
    HR_CUDA_CHECK_LAUNCH("bn_bwd_kernel");
}

void softmax_cross_entropy(const void* logits, DType dt, const std::int64_t* labels, std::int64_t N,
                           std::int64_t K, float label_smoothing, void* dlogits, float grad_scale, LossOut out,
                           const Scratch& scratch, cudaStream_t s, bool skip_ignored) {
    ReduceResult* result = scratch.result();
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    HR_CUDA_CHECK(cudaMemsetAsync(&result->first_bad, 0xFF, sizeof(result->first_bad), s));
    if (N <= 0) return;
    check_labels_kernel<<<grid_for(N), kThreads, 0, s>>>(labels, N, K, result, skip_ignored);
    HR_CUDA_CHECK_LAUNCH("check_labels_kernel");
    const unsigned blocks = loss_blocks(N);
    double* lp = scratch.reduce(0);
    double* op = scratch.reduce(1);
    dispatch_float(dt, "softmax_cross_entropy", [&](auto tag) {
        using T = decltype(tag);
        xent_kernel<T><<<blocks, 32 * kRowWarps, 0, s>>>(static_cast<const T*>(logits), labels,
                                                         static_cast<T*>(dlogits), N, K, label_smoothing, grad_scale,
                                                         out.control, lp, op, result);
    });
    HR_CUDA_CHECK_LAUNCH("xent_kernel");
    finish_loss_kernel<<<1, 1, 0, s>>>(lp, op, static_cast<int>(blocks), static_cast<double>(N), labels, result,
                                        out.stats, out.weight);
    HR_CUDA_CHECK_LAUNCH("finish_loss_kernel");
}

void mse_loss(const void* pred, const void* target, DType dt, std::int64_t rows, std::int64_t cols, void* dpred,
              float grad_scale, LossOut out, const Scratch& scratch, cudaStream_t s) {
    ReduceResult* result = scratch.result();
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    const std::int64_t n = rows * cols;
    if (n <= 0) return;
    const unsigned blocks = loss_blocks(rows);
    double* lp = scratch.reduce(0);
    double* op = scratch.reduce(1);
    dispatch_float(dt, "mse_loss", [&](auto tag) {
        using T = decltype(tag);
        mse_kernel<T><<<blocks, 32 * kRowWarps, 0, s>>>(static_cast<const T*>(pred), static_cast<const T*>(target),
                                                        static_cast<T*>(dpred), rows, cols, grad_scale, out.control, lp, op);
    });
    HR_CUDA_CHECK_LAUNCH("mse_kernel");
    finish_loss_kernel<<<1, 1, 0, s>>>(lp, op, static_cast<int>(blocks), static_cast<double>(n), nullptr, result,
                                        out.stats, out.weight);
    HR_CUDA_CHECK_LAUNCH("finish_loss_kernel");
}

void sum_squares(const void* x, DType dt, std::int64_t n, const Scratch& scratch, cudaStream_t s) {
    ReduceResult* result = scratch.result();
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    if (n <= 0) return;
    std::int64_t blocks = (n + kThreads - 1) / kThreads;
    if (blocks > kReduceBlocks) blocks = kReduceBlocks;
    double* partials = scratch.reduce(0);
    dispatch_float(dt, "sum_squares", [&](auto tag) {
        using T = decltype(tag);
        sum_squares_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(static_cast<const T*>(x), n, partials);
    });
    HR_CUDA_CHECK_LAUNCH("sum_squares_kernel");
    sum_partials_kernel<<<1, kThreads, 0, s>>>(partials, static_cast<int>(blocks), result);
    HR_CUDA_CHECK_LAUNCH("sum_partials_kernel");
}

void all_finite(const void* x, DType dt, std::int64_t n, ReduceResult* result, double* control, cudaStream_t s) {
    if (!control) HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    if (n <= 0) return;
    dispatch_float(dt, "all_finite", [&](auto tag) {
        using T = decltype(tag);
        all_finite_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), n, result, control);
    });
    HR_CUDA_CHECK_LAUNCH("all_finite_kernel");
}

void sgd_update(float* param, const void* grad, DType gdt, float* momentum, std::int64_t n, const SgdArgs& a,
                const double* control, cudaStream_t s) {
    if (n <= 0) return;
    // As the CPU: scalars converted to f32 on the host, the same way.
    const SgdScalars sc{a.lr, a.grad_scale, a.first_step};
    const float wd = a.weight_decay, mom = a.momentum, damp1 = 1.0f - a.dampening;
    dispatch_float(gdt, "sgd_update", [&](auto tag) {
        using G = decltype(tag);
        sgd_kernel<G><<<grid_for(n), kThreads, 0, s>>>(param, static_cast<const G*>(grad), momentum, n, sc, wd, mom,
                                                       damp1, a.nesterov, control);
    });
    HR_CUDA_CHECK_LAUNCH("sgd_kernel");
}

void adam_update(float* param, const void* grad, DType gdt, float* m, float* v, std::int64_t n, const AdamArgs& a,
                 double step_size, double bc2_sqrt, const double* control, cudaStream_t s) {
    if (n <= 0) return;
    const float wd = a.weight_decay, b1w = 1.0f - a.beta1, b2 = a.beta2, b2w = 1.0f - a.beta2, eps = a.eps;
    const AdamScalars sc{a.grad_scale, static_cast<float>(step_size), static_cast<float>(bc2_sqrt),
                         1.0f - a.lr * wd};
    dispatch_float(gdt, "adam_update", [&](auto tag) {
        using G = decltype(tag);
        adam_kernel<G><<<grid_for(n), kThreads, 0, s>>>(param, static_cast<const G*>(grad), m, v, n, sc, wd, b1w,
                                                        a.beta1, b2, b2w, eps, a.decoupled_weight_decay, control);
    });
    HR_CUDA_CHECK_LAUNCH("adam_kernel");
}

void step_control_end(double* control, bool dynamic_loss_scale, std::int64_t growth_interval, cudaStream_t s) {
    step_control_end_kernel<<<1, 1, 0, s>>>(control, dynamic_loss_scale, static_cast<long long>(growth_interval));
    HR_CUDA_CHECK_LAUNCH("step_control_end_kernel");
}

}  // namespace hr::cuda
