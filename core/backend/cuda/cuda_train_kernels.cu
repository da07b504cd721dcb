// Own kernels of the CUDA backend: batch norm, losses, reductions, optimizer updates.
// Semantics mirror core/backend/cpu/cpu_train_ops.cpp (same formulas; sums in double).
#include <climits>

#include "backend/cuda/cuda_common.cuh"

namespace hr::cuda {

namespace {

// --- batch norm (one block per channel; x viewed as (N, C, S)) -----------------------------------

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

template <class T>
__global__ void bn_infer_kernel(const T* x, T* y, std::int64_t C, std::int64_t S, std::int64_t total, VecArg gamma,
                                VecArg beta, VecArg running_mean, VecArg running_var, float eps) {
    HR_GRID_STRIDE(i, total) {
        const std::int64_t c = (i / S) % C;
        const double is = 1.0 / sqrt(load_vec(running_var, c, 1.0) + static_cast<double>(eps));
        const double g = load_vec(gamma, c, 1.0);
        const float a = static_cast<float>(g * is);
        const float b = static_cast<float>(load_vec(beta, c, 0.0) - load_vec(running_mean, c, 0.0) * is * g);
        y[i] = from_f<T>(to_f(x[i]) * a + b);
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
    // dx = gamma * invstd / M * (M * dy - sum(dy) - xhat * sum(dy * xhat))
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

// --- losses (one warp per row) -------------------------------------------------------------------

constexpr int kRowWarps = 4;  // rows per block of 128 threads

// (value, index) of the first maximum: larger value wins, equal values go to the lower index, and
// a NaN never displaces a number (matches the CPU's `v > best` scan for rows without NaN).
struct ArgMax {
    float v;
    long long i;  // LLONG_MAX: no element
};
__device__ __forceinline__ ArgMax better(ArgMax a, ArgMax b) {
    if (b.i == LLONG_MAX) return a;
    if (a.i == LLONG_MAX) return b;
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

template <class T>
__global__ void xent_kernel(const T* z, const std::int64_t* labels, T* dz, std::int64_t N, std::int64_t K,
                            float label_smoothing, float grad_scale, double* row_loss, int* row_ok,
                            ReduceResult* result) {
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= N) return;  // whole warp leaves together
    const T* zr = z + r * K;
    ArgMax am{-INFINITY, LLONG_MAX};
    double zsum = 0.0;
    for (std::int64_t k = lane; k < K; k += 32) {
        const float v = to_f(zr[k]);
        zsum += v;
        am = better(am, ArgMax{v, k});
    }
    am = warp_argmax(am);
    zsum = warp_sum_all(zsum);
    const double mx = am.v;
    double se = 0.0;
    for (std::int64_t k = lane; k < K; k += 32) se += exp(static_cast<double>(to_f(zr[k])) - mx);
    se = warp_sum_all(se);
    const double lse = mx + log(se);
    const std::int64_t y = labels[r];
    if (y < 0 || y >= K) {
        if (lane == 0) {
            atomicMin(&result->first_bad, static_cast<unsigned long long>(r));
            row_loss[r] = 0.0;
            row_ok[r] = 0;
        }
        return;
    }
    const double eps = label_smoothing;
    if (lane == 0) {
        const double nll = lse - static_cast<double>(to_f(zr[y]));
        const double smooth = lse - zsum / static_cast<double>(K);
        row_loss[r] = (1.0 - eps) * nll + eps * smooth;
        row_ok[r] = am.i == y ? 1 : 0;
    }
    if (dz) {
        const double g = static_cast<double>(grad_scale) / static_cast<double>(N > 1 ? N : 1);
        T* d = dz + r * K;
        for (std::int64_t k = lane; k < K; k += 32) {
            const double p = exp(static_cast<double>(to_f(zr[k])) - lse);
            const double t = (k == y ? 1.0 - eps : 0.0) + eps / static_cast<double>(K);
            d[k] = from_f<T>(static_cast<float>(g * (p - t)));
        }
    }
}

template <class T>
__global__ void mse_kernel(const T* pred, const T* target, T* dpred, std::int64_t rows, std::int64_t cols, double g,
                           double* row_loss, int* row_ok) {
    const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= rows) return;
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
    if (lane == 0) {
        row_loss[r] = part;
        row_ok[r] = (cols > 0 && ap.i == at.i) ? 1 : 0;
    }
}

// One block: result->sum = sum of row_loss, result->count = sum of row_ok (fixed order).
__global__ void reduce_rows_kernel(const double* row_loss, const int* row_ok, std::int64_t n, ReduceResult* result) {
    double s = 0.0, c = 0.0;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        s += row_loss[i];
        c += row_ok[i];
    }
    s = block_sum(s);
    c = block_sum(c);
    if (threadIdx.x == 0) {
        result->sum = s;
        result->count = static_cast<long long>(c);
    }
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
__global__ void all_finite_kernel(const T* x, std::int64_t n, ReduceResult* result) {
    bool bad = false;
    HR_GRID_STRIDE(i, n) bad |= !isfinite(to_f(x[i]));
    if (bad) result->flag = 1;  // every writer writes 1: the race is benign
}

// --- optimizers (PyTorch semantics, as cpu_train_ops.cpp; f32 arithmetic) ------------------------

template <class G>
__global__ void sgd_kernel(float* p, const G* g, float* buf, std::int64_t n, float lr, float wd, float mom,
                           float damp1, float gs, bool first_step, bool nesterov) {
    HR_GRID_STRIDE(i, n) {
        float d = to_f(g[i]) * gs;
        if (wd != 0.0f) d = d + wd * p[i];
        if (buf) {
            const float m = first_step ? d : mom * buf[i] + damp1 * d;
            buf[i] = m;
            d = nesterov ? d + mom * m : m;
        }
        p[i] = p[i] - lr * d;
    }
}

template <class G>
__global__ void adam_kernel(float* p, const G* g, float* m, float* v, std::int64_t n, float gs, float wd, float b1w,
                            float b2, float b2w, float eps, float ss, float bcs, float decay, bool decoupled) {
    HR_GRID_STRIDE(i, n) {
        float gi = to_f(g[i]) * gs;
        float pi = p[i];
        if (wd != 0.0f) {
            if (decoupled)
                pi = pi * decay;
            else
                gi = gi + wd * pi;
        }
        float mi = m[i];
        mi = mi + b1w * (gi - mi);
        const float vi = v[i] * b2 + b2w * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float denom = sqrtf(vi) / bcs + eps;
        p[i] = pi - ss * mi / denom;
    }
}

unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>((rows + kRowWarps - 1) / kRowWarps); }

}  // namespace

// --- launchers -----------------------------------------------------------------------------------

void batchnorm_forward_train(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg save_mean, VecArg save_invstd, VecArg running_mean,
                             VecArg running_var, float momentum, float eps, cudaStream_t s) {
    if (C <= 0) return;
    dispatch_float(dt, "batchnorm_forward_train", [&](auto tag) {
        using T = decltype(tag);
        bn_train_kernel<T><<<static_cast<unsigned>(C), kThreads, 0, s>>>(
            static_cast<const T*>(x), static_cast<T*>(y), N, C, S, gamma, beta, save_mean, save_invstd, running_mean,
            running_var, momentum, eps);
    });
    HR_CUDA_CHECK_LAUNCH("bn_train_kernel");
}

void batchnorm_forward_infer(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg running_mean, VecArg running_var, float eps,
                             cudaStream_t s) {
    const std::int64_t total = N * C * S;
    if (total <= 0) return;
    dispatch_float(dt, "batchnorm_forward_infer", [&](auto tag) {
        using T = decltype(tag);
        bn_infer_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), C, S,
                                                                total, gamma, beta, running_mean, running_var, eps);
    });
    HR_CUDA_CHECK_LAUNCH("bn_infer_kernel");
}

void batchnorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t N, std::int64_t C,
                        std::int64_t S, VecArg gamma, VecArg save_mean, VecArg save_invstd, VecArg dgamma,
                        VecArg dbeta, cudaStream_t s) {
    if (C <= 0) return;
    dispatch_float(dt, "batchnorm_backward", [&](auto tag) {
        using T = decltype(tag);
        bn_bwd_kernel<T><<<static_cast<unsigned>(C), kThreads, 0, s>>>(static_cast<const T*>(x),
                                                                       static_cast<const T*>(dy), static_cast<T*>(dx),
                                                                       N, C, S, gamma, save_mean, save_invstd, dgamma,
                                                                       dbeta);
    });
    HR_CUDA_CHECK_LAUNCH("bn_bwd_kernel");
}

void softmax_cross_entropy(const void* logits, DType dt, const std::int64_t* labels, std::int64_t N,
                           std::int64_t K, float label_smoothing, void* dlogits, float grad_scale, double* row_loss,
                           int* row_ok, ReduceResult* result, cudaStream_t s) {
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    HR_CUDA_CHECK(cudaMemsetAsync(&result->first_bad, 0xFF, sizeof(result->first_bad), s));
    if (N <= 0) return;
    dispatch_float(dt, "softmax_cross_entropy", [&](auto tag) {
        using T = decltype(tag);
        xent_kernel<T><<<row_blocks(N), 32 * kRowWarps, 0, s>>>(static_cast<const T*>(logits), labels,
                                                                static_cast<T*>(dlogits), N, K, label_smoothing,
                                                                grad_scale, row_loss, row_ok, result);
    });
    HR_CUDA_CHECK_LAUNCH("xent_kernel");
    reduce_rows_kernel<<<1, kThreads, 0, s>>>(row_loss, row_ok, N, result);
    HR_CUDA_CHECK_LAUNCH("reduce_rows_kernel");
}

void mse_loss(const void* pred, const void* target, DType dt, std::int64_t rows, std::int64_t cols, void* dpred,
              float grad_scale, double* row_loss, int* row_ok, ReduceResult* result, cudaStream_t s) {
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    const std::int64_t n = rows * cols;
    if (n <= 0) return;
    const double g = 2.0 * static_cast<double>(grad_scale) / static_cast<double>(n);
    dispatch_float(dt, "mse_loss", [&](auto tag) {
        using T = decltype(tag);
        mse_kernel<T><<<row_blocks(rows), 32 * kRowWarps, 0, s>>>(static_cast<const T*>(pred),
                                                                  static_cast<const T*>(target), static_cast<T*>(dpred),
                                                                  rows, cols, g, row_loss, row_ok);
    });
    HR_CUDA_CHECK_LAUNCH("mse_kernel");
    reduce_rows_kernel<<<1, kThreads, 0, s>>>(row_loss, row_ok, rows, result);
    HR_CUDA_CHECK_LAUNCH("reduce_rows_kernel");
}

void sum_squares(const void* x, DType dt, std::int64_t n, double* partials, ReduceResult* result, cudaStream_t s) {
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    if (n <= 0) return;
    std::int64_t blocks = (n + kThreads - 1) / kThreads;
    if (blocks > kReduceBlocks) blocks = kReduceBlocks;
    dispatch_float(dt, "sum_squares", [&](auto tag) {
        using T = decltype(tag);
        sum_squares_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(static_cast<const T*>(x), n, partials);
    });
    HR_CUDA_CHECK_LAUNCH("sum_squares_kernel");
    sum_partials_kernel<<<1, kThreads, 0, s>>>(partials, static_cast<int>(blocks), result);
    HR_CUDA_CHECK_LAUNCH("sum_partials_kernel");
}

void all_finite(const void* x, DType dt, std::int64_t n, ReduceResult* result, cudaStream_t s) {
    HR_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(ReduceResult), s));
    if (n <= 0) return;
    dispatch_float(dt, "all_finite", [&](auto tag) {
        using T = decltype(tag);
        all_finite_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), n, result);
    });
    HR_CUDA_CHECK_LAUNCH("all_finite_kernel");
}

void sgd_update(float* param, const void* grad, DType gdt, float* momentum, std::int64_t n, const SgdArgs& a,
                cudaStream_t s) {
    if (n <= 0) return;
    // As the CPU: scalars converted to f32 on the host, the same way.
    const float lr = a.lr, wd = a.weight_decay, mom = a.momentum, damp1 = 1.0f - a.dampening, gs = a.grad_scale;
    dispatch_float(gdt, "sgd_update", [&](auto tag) {
        using G = decltype(tag);
        sgd_kernel<G><<<grid_for(n), kThreads, 0, s>>>(param, static_cast<const G*>(grad), momentum, n, lr, wd, mom,
                                                       damp1, gs, a.first_step, a.nesterov);
    });
    HR_CUDA_CHECK_LAUNCH("sgd_kernel");
}

void adam_update(float* param, const void* grad, DType gdt, float* m, float* v, std::int64_t n, const AdamArgs& a,
                 double step_size, double bc2_sqrt, cudaStream_t s) {
    if (n <= 0) return;
    const float gs = a.grad_scale, wd = a.weight_decay, b1w = 1.0f - a.beta1, b2 = a.beta2, b2w = 1.0f - a.beta2,
                eps = a.eps, ss = static_cast<float>(step_size), bcs = static_cast<float>(bc2_sqrt);
    const float decay = 1.0f - a.lr * wd;
    dispatch_float(gdt, "adam_update", [&](auto tag) {
        using G = decltype(tag);
        adam_kernel<G><<<grid_for(n), kThreads, 0, s>>>(param, static_cast<const G*>(grad), m, v, n, gs, wd, b1w, b2,
                                                        b2w, eps, ss, bcs, decay, a.decoupled_weight_decay);
    });
    HR_CUDA_CHECK_LAUNCH("adam_kernel");
}

}  // namespace hr::cuda
