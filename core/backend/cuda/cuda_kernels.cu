// Own kernels of the CUDA backend: fill, casts, elementwise, bias, pooling, activations, dropout,
// counters.
// Semantics mirror core/backend/cpu exactly (same formulas, same tie-breaking); see backend.h.
#include "backend/cuda/cuda_common.cuh"

namespace hr::cuda {

namespace {

// --- fill / cast / elementwise -------------------------------------------------------------------

template <class U>
__global__ void fill_kernel(U* p, std::int64_t n, U v) {
    HR_GRID_STRIDE(i, n) p[i] = v;
}

// Through f32: exact for every pair except f64 -> f64, which is a plain copy and never comes here.
template <class S, class D>
__global__ void cast_kernel(const S* src, D* dst, std::int64_t n) {
    HR_GRID_STRIDE(i, n) dst[i] = from_f<D>(to_f(src[i]));
}

// Like dispatch_float, plus f64 (casts only: checkpoints may hold f64).
template <class F>
void dispatch_cast(DType dt, F&& f) {
    if (dt == DType::f64)
        f(double{});
    else
        dispatch_float(dt, "copy", f);
}

template <class T>
__global__ void add_kernel(const T* a, const T* b, T* out, std::int64_t n) {
    HR_GRID_STRIDE(i, n) out[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
}

template <class X, class Y>
__global__ void axpy_kernel(float alpha, const X* x, Y* y, std::int64_t n) {
    HR_GRID_STRIDE(i, n) y[i] = from_f<Y>(to_f(y[i]) + alpha * to_f(x[i]));
}

template <class T>
__global__ void scale_kernel(T* x, std::int64_t n, float alpha) {
    HR_GRID_STRIDE(i, n) x[i] = from_f<T>(to_f(x[i]) * alpha);
}

template <class T, class B>
__global__ void add_bias_kernel(T* y, const B* bias, std::int64_t C, std::int64_t S, std::int64_t n) {
    HR_GRID_STRIDE(i, n) {
        const std::int64_t c = (i / S) % C;
        y[i] = from_f<T>(to_f(y[i]) + to_f(bias[c]));
    }
}

// One block per channel: dbias[c] += sum over (n, s), in double (fallback for very many channels).
template <class T, class B>
__global__ void bias_grad_kernel(const T* dy, B* dbias, std::int64_t N, std::int64_t C, std::int64_t S) {
    const std::int64_t c = blockIdx.x;
    const std::int64_t M = N * S;
    double acc = 0.0;
    for (std::int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        const std::int64_t n = i / S, s = i - n * S;
        acc += to_f(dy[(n * C + c) * S + s]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) dbias[c] = from_f<B>(static_cast<float>(to_f(dbias[c]) + acc));
}

// Stage 1 of the two-stage bias gradient: partials[c * G + g] = sum of slice g of channel c.
template <class T>
__global__ void bias_grad_partial_kernel(const T* dy, std::int64_t N, std::int64_t C, std::int64_t S, int G,
                                         double* partials) {
    const std::int64_t c = blockIdx.x / G;
    const int g = static_cast<int>(blockIdx.x % G);
    std::int64_t b, e;
    slice_range(N * S, G, g, b, e);
    double acc = 0.0;
    for (std::int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
        const std::int64_t n = i / S, s = i - n * S;
        acc += to_f(dy[(n * C + c) * S + s]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Stage 2: dbias[c] += the channel's partials, in slice order (one thread per channel).
template <class B>
__global__ void bias_grad_finish_kernel(const double* partials, int G, std::int64_t C, B* dbias) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double acc = 0.0;
    for (int g = 0; g < G; ++g) acc += partials[c * G + g];
    dbias[c] = from_f<B>(static_cast<float>(to_f(dbias[c]) + acc));
}

// --- pooling -------------------------------------------------------------------------------------

// One thread per output element. Same scan order and tie-break as the CPU: the first maximum wins,
// a NaN wins over numbers (and a later NaN over an earlier one).
template <class T>
__global__ void maxpool_fwd_kernel(const T* x, T* y, std::int32_t* idx, std::int64_t total, int H, int W, int Ho,
                                   int Wo, Pool2dParams p) {
    HR_GRID_STRIDE(o, total) {
        const std::int64_t pl = o / (static_cast<std::int64_t>(Ho) * Wo);
        const int r = static_cast<int>(o - pl * Ho * Wo);
        const int oh = r / Wo, ow = r % Wo;
        const T* xp = x + pl * H * W;
        const int h0 = oh * p.stride_h - p.pad_h;
        const int hs = max(h0, 0), he = min(h0 + p.kernel_h, H);
        const int w0 = ow * p.stride_w - p.pad_w;
        const int ws = max(w0, 0), we = min(w0 + p.kernel_w, W);
        float best = -INFINITY;
        int best_i = hs * W + ws;
        for (int h = hs; h < he; ++h)
            for (int w = ws; w < we; ++w) {
                const float v = to_f(xp[h * W + w]);
                if (v > best || isnan(v)) {
                    best = v;
                    best_i = h * W + w;
                }
            }
        y[o] = from_f<T>(best);
        idx[o] = best_i;
    }
}

// One thread per input element: gathers, in f32 and in output order (as the CPU adds them), the
// gradients of the outputs whose window covers it and whose recorded maximum it is. Deterministic and
// rounded once (bf16/f16), with no atomics.
template <class T>
__global__ void maxpool_bwd_gather_kernel(const T* dy, const std::int32_t* idx, T* dx, std::int64_t total, int H,
                                          int W, int Ho, int Wo, Pool2dParams p) {
    HR_GRID_STRIDE(i, total) {
        const std::int64_t pl = i / (static_cast<std::int64_t>(H) * W);
        const int r = static_cast<int>(i - pl * H * W);
        const int h = r / W, w = r % W;
        const T* yp = dy + pl * Ho * Wo;
        const std::int32_t* ip = idx + pl * Ho * Wo;
        // Output row oh covers h when oh*stride - pad <= h < oh*stride - pad + kernel.
        // So oh in [floor((h + pad - kernel) / stride) + 1, floor((h + pad) / stride)].
        const int ah = h + p.pad_h - p.kernel_h, aw = w + p.pad_w - p.kernel_w;
        const int oh0 = ah >= 0 ? ah / p.stride_h + 1 : 0;
        int oh1 = (h + p.pad_h) / p.stride_h;
        if (oh1 > Ho - 1) oh1 = Ho - 1;
        const int ow0 = aw >= 0 ? aw / p.stride_w + 1 : 0;
        int ow1 = (w + p.pad_w) / p.stride_w;
        if (ow1 > Wo - 1) ow1 = Wo - 1;
        float acc = 0.0f;
        for (int oh = oh0; oh <= oh1; ++oh)
            for (int ow = ow0; ow <= ow1; ++ow) {
                const int o = oh * Wo + ow;
                if (ip[o] == r) acc += to_f(yp[o]);
            }
        dx[i] = from_f<T>(acc);
    }
}

// Without the windows: one thread per plane, outputs in order, in f32 where the plane fits in
// shared memory, else accumulating in dx (zeroed first). Deterministic; slow (a fallback).
template <class T>
__global__ void maxpool_bwd_plane_kernel(const T* dy, const std::int32_t* idx, T* dx, std::int64_t planes,
                                         std::int64_t HW, std::int64_t HoWo) {
    HR_GRID_STRIDE(pl, planes) {
        const T* yp = dy + pl * HoWo;
        const std::int32_t* ip = idx + pl * HoWo;
        T* xp = dx + pl * HW;
        for (std::int64_t o = 0; o < HoWo; ++o) {
            const std::int32_t k = ip[o];
            if (k < 0 || k >= HW) continue;
            xp[k] = from_f<T>(to_f(xp[k]) + to_f(yp[o]));
        }
    }
}

template <class T>
__global__ void avgpool_fwd_kernel(const T* x, T* y, std::int64_t total, int H, int W, int Ho, int Wo, Pool2dParams p) {
    HR_GRID_STRIDE(o, total) {
        const std::int64_t pl = o / (static_cast<std::int64_t>(Ho) * Wo);
        const int r = static_cast<int>(o - pl * Ho * Wo);
        const int oh = r / Wo, ow = r % Wo;
        const T* xp = x + pl * H * W;
        const int hs = oh * p.stride_h - p.pad_h, he = min(hs + p.kernel_h, H + p.pad_h);
        const int ws = ow * p.stride_w - p.pad_w, we = min(ws + p.kernel_w, W + p.pad_w);
        const int count = (he - hs) * (we - ws);  // count_include_pad
        const int h0 = max(hs, 0), h1 = min(he, H), w0 = max(ws, 0), w1 = min(we, W);
        float s = 0.0f;
        for (int h = h0; h < h1; ++h)
            for (int w = w0; w < w1; ++w) s += to_f(xp[h * W + w]);
        y[o] = from_f<T>(s / static_cast<float>(count));
    }
}

// One thread per input element: gathers the outputs whose window covers it (no atomics).
template <class T>
__global__ void avgpool_bwd_kernel(const T* dy, T* dx, std::int64_t total, int H, int W, int Ho, int Wo, Pool2dParams p) {
    HR_GRID_STRIDE(i, total) {
        const std::int64_t pl = i / (static_cast<std::int64_t>(H) * W);
        const int r = static_cast<int>(i - pl * H * W);
        const int h = r / W, w = r % W;
        const T* yp = dy + pl * Ho * Wo;
        float acc = 0.0f;
        // Output row oh covers h when oh*stride - pad <= h < oh*stride - pad + kernel.
        for (int oh = min(Ho - 1, (h + p.pad_h) / p.stride_h); oh >= 0; --oh) {
            const int hs = oh * p.stride_h - p.pad_h;
            if (hs + p.kernel_h <= h) break;
            const int he = min(hs + p.kernel_h, H + p.pad_h);
            for (int ow = min(Wo - 1, (w + p.pad_w) / p.stride_w); ow >= 0; --ow) {
                const int ws = ow * p.stride_w - p.pad_w;
                if (ws + p.kernel_w <= w) break;
                const int we = min(ws + p.kernel_w, W + p.pad_w);
                const int count = (he - hs) * (we - ws);
                acc += to_f(yp[oh * Wo + ow]) / static_cast<float>(count);
            }
        }
        dx[i] = from_f<T>(acc);
    }
}

// --- activations ---------------------------------------------------------------------------------

__device__ __forceinline__ float gelu_cdf(float x) { return 0.5f * (1.0f + erff(x * 0.70710678118654752440f)); }

template <class T>
__global__ void act_fwd_kernel(int kind, float alpha, const T* x, T* y, std::int64_t n) {
    HR_GRID_STRIDE(i, n) {
        const float v = to_f(x[i]);
        float r;
        switch (kind) {
            case 0: r = v < 0.0f ? 0.0f : v; break;              // relu
            case 1: r = v > 0.0f ? v : alpha * v; break;          // leaky_relu
            case 2: r = tanhf(v); break;                          // tanh
            case 3: r = 1.0f / (1.0f + expf(-v)); break;          // sigmoid
            default: r = v * gelu_cdf(v); break;                  // gelu (erf)
        }
        y[i] = from_f<T>(r);
    }
}

template <class T>
__global__ void act_bwd_kernel(int kind, float alpha, const T* x, const T* y, const T* dy, T* dx, std::int64_t n) {
    HR_GRID_STRIDE(i, n) {
        const float g = to_f(dy[i]);
        float r;
        switch (kind) {
            case 0: {  // relu: reads x, else y
                const float v = x ? to_f(x[i]) : to_f(y[i]);
                r = v > 0.0f ? g : 0.0f;
                break;
            }
            case 1: r = to_f(x[i]) > 0.0f ? g : alpha * g; break;
            case 2: {
                const float t = y ? to_f(y[i]) : tanhf(to_f(x[i]));
                r = g * (1.0f - t * t);
                break;
            }
            case 3: {
                const float s = y ? to_f(y[i]) : 1.0f / (1.0f + expf(-to_f(x[i])));
                r = g * s * (1.0f - s);
                break;
            }
            default: {
                const float v = to_f(x[i]);
                const float pdf = expf(-0.5f * v * v) * 0.39894228040143267794f;
                r = g * (gelu_cdf(v) + v * pdf);
                break;
            }
        }
        dx[i] = from_f<T>(r);
    }
}

int kind_code(ActivationKind k) {
    switch (k) {
        case ActivationKind::relu: return 0;
        case ActivationKind::leaky_relu: return 1;
        case ActivationKind::tanh: return 2;
        case ActivationKind::sigmoid: return 3;
        case ActivationKind::gelu: return 4;
    }
    return 0;
}

// --- dropout -------------------------------------------------------------------------------------

// Identical to hr::counter_uniform (backend.cpp): SplitMix64 over (seed, counter).
__device__ __forceinline__ float counter_uniform_dev(std::uint64_t seed, std::uint64_t counter) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

template <class T>
__global__ void dropout_fwd_kernel(const T* x, T* y, std::uint8_t* mask, std::int64_t n, float p, float s,
                                   std::uint64_t seed, std::uint64_t offset) {
    HR_GRID_STRIDE(i, n) {
        const bool keep = counter_uniform_dev(seed, offset + static_cast<std::uint64_t>(i)) >= p;
        mask[i] = keep ? 1 : 0;
        y[i] = from_f<T>(keep ? to_f(x[i]) * s : 0.0f);
    }
}

template <class T>
__global__ void dropout_bwd_kernel(const T* dy, const std::uint8_t* mask, T* dx, std::int64_t n, float s) {
    HR_GRID_STRIDE(i, n) dx[i] = from_f<T>(mask[i] ? to_f(dy[i]) * s : 0.0f);
}

}  // namespace

cudaError_t kernel_image_status() {
    cudaFuncAttributes a{};
    const cudaError_t e = cudaFuncGetAttributes(&a, fill_kernel<float>);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e;
}

// --- launchers -----------------------------------------------------------------------------------

void fill_pattern(void* p, std::int64_t n, int elem_size, std::uint64_t pattern, cudaStream_t s) {
    if (n <= 0) return;
    switch (elem_size) {
        case 1: fill_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<std::uint8_t*>(p), n, std::uint8_t(pattern)); break;
        case 2: fill_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<std::uint16_t*>(p), n, std::uint16_t(pattern)); break;
        case 4: fill_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<std::uint32_t*>(p), n, std::uint32_t(pattern)); break;
        case 8: fill_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<std::uint64_t*>(p), n, pattern); break;
        default: throw Error("fill: internal: element size " + std::to_string(elem_size));
    }
    HR_CUDA_CHECK_LAUNCH("fill_kernel");
}

void cast(const void* src, DType sdt, void* dst, DType ddt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_cast(sdt, [&](auto stag) {
        using S = decltype(stag);
        dispatch_cast(ddt, [&](auto dtag) {
            using D = decltype(dtag);
            cast_kernel<S, D><<<grid_for(n), kThreads, 0, s>>>(static_cast<const S*>(src), static_cast<D*>(dst), n);
        });
    });
    HR_CUDA_CHECK_LAUNCH("cast_kernel");
}

void add(const void* a, const void* b, void* out, DType dt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "add", [&](auto tag) {
        using T = decltype(tag);
        add_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                       static_cast<T*>(out), n);
    });
    HR_CUDA_CHECK_LAUNCH("add_kernel");
}

void axpy(float alpha, const void* x, DType xdt, void* y, DType ydt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(xdt, "axpy", [&](auto xtag) {
        using X = decltype(xtag);
        dispatch_float(ydt, "axpy", [&](auto ytag) {
            using Y = decltype(ytag);
            axpy_kernel<X, Y><<<grid_for(n), kThreads, 0, s>>>(alpha, static_cast<const X*>(x), static_cast<Y*>(y), n);
        });
    });
    HR_CUDA_CHECK_LAUNCH("axpy_kernel");
}

void scale(void* x, DType dt, std::int64_t n, float alpha, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "scale", [&](auto tag) {
        using T = decltype(tag);
        scale_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(x), n, alpha);
    });
    HR_CUDA_CHECK_LAUNCH("scale_kernel");
}

void add_bias(void* y, DType ydt, const void* bias, DType bdt, std::int64_t N, std::int64_t C, std::int64_t S,
              cudaStream_t s) {
    const std::int64_t n = N * C * S;
    if (n <= 0) return;
    dispatch_float(ydt, "add_bias", [&](auto tag) {
        using T = decltype(tag);
        dispatch_float(bdt, "add_bias", [&](auto btag) {
            using B = decltype(btag);
            add_bias_kernel<T, B><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(y), static_cast<const B*>(bias), C,
                                                                   S, n);
        });
    });
    HR_CUDA_CHECK_LAUNCH("add_bias_kernel");
}

void bias_grad(const void* dy, DType dydt, void* dbias, DType bdt, std::int64_t N, std::int64_t C, std::int64_t S,
               const Scratch& scratch, cudaStream_t s) {
    if (C <= 0) return;
    const int G = channel_slices(N * S, C);
    dispatch_float(dydt, "bias_grad", [&](auto tag) {
        using T = decltype(tag);
        dispatch_float(bdt, "bias_grad", [&](auto btag) {
            using B = decltype(btag);
            if (G == 0) {
                bias_grad_kernel<T, B><<<static_cast<unsigned>(C), kThreads, 0, s>>>(static_cast<const T*>(dy),
                                                                                     static_cast<B*>(dbias), N, C, S);
                return;
            }
            double* partials = scratch.channel_partials();
            bias_grad_partial_kernel<T><<<static_cast<unsigned>(C * G), kThreads, 0, s>>>(static_cast<const T*>(dy), N,
                                                                                        C, S, G, partials);
            HR_CUDA_CHECK_LAUNCH("bias_grad_partial_kernel");
            bias_grad_finish_kernel<B><<<static_cast<unsigned>((C + kThreads - 1) / kThreads), kThreads, 0, s>>>(
                partials, G, C, static_cast<B*>(dbias));
        });
    });
    HR_CUDA_CHECK_LAUNCH("bias_grad_kernel");
}

void maxpool_forward(const void* x, void* y, std::int32_t* indices, DType dt, std::int64_t planes, int H, int W,
                     int Ho, int Wo, const Pool2dParams& p, cudaStream_t s) {
    const std::int64_t total = planes * Ho * Wo;
    if (total <= 0) return;
    dispatch_float(dt, "maxpool2d_forward", [&](auto tag) {
        using T = decltype(tag);
        maxpool_fwd_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                   indices, total, H, W, Ho, Wo, p);
    });
    HR_CUDA_CHECK_LAUNCH("maxpool_fwd_kernel");
}

void maxpool_backward(const void* dy, const std::int32_t* indices, void* dx, DType dt, std::int64_t planes, int H,
                      int W, int Ho, int Wo, const Pool2dParams* p, cudaStream_t s) {
    const std::int64_t HW = static_cast<std::int64_t>(H) * W, HoWo = static_cast<std::int64_t>(Ho) * Wo;
    if (planes * HW <= 0) return;
    dispatch_float(dt, "maxpool2d_backward", [&](auto tag) {
        using T = decltype(tag);
        if (p) {
            const std::int64_t total = planes * HW;
            maxpool_bwd_gather_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(dy), indices,
                                                                              static_cast<T*>(dx), total, H, W, Ho, Wo,
                                                                              *p);
        } else {
            HR_CUDA_CHECK(cudaMemsetAsync(dx, 0, static_cast<std::size_t>(planes * HW) * dtype_size(dt), s));
            maxpool_bwd_plane_kernel<T><<<grid_for(planes), kThreads, 0, s>>>(static_cast<const T*>(dy), indices,
                                                                              static_cast<T*>(dx), planes, HW, HoWo);
        }
    });
    HR_CUDA_CHECK_LAUNCH("maxpool_bwd_kernel");
}

void avgpool_forward(const void* x, void* y, DType dt, std::int64_t planes, int H, int W, int Ho, int Wo,
                     const Pool2dParams& p, cudaStream_t s) {
    const std::int64_t total = planes * Ho * Wo;
    if (total <= 0) return;
    dispatch_float(dt, "avgpool2d_forward", [&](auto tag) {
        using T = decltype(tag);
        avgpool_fwd_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), total,
                                                                   H, W, Ho, Wo, p);
    });
    HR_CUDA_CHECK_LAUNCH("avgpool_fwd_kernel");
}

void avgpool_backward(const void* dy, void* dx, DType dt, std::int64_t planes, int H, int W, int Ho, int Wo,
                      const Pool2dParams& p, cudaStream_t s) {
    const std::int64_t total = planes * H * W;
    if (total <= 0) return;
    dispatch_float(dt, "avgpool2d_backward", [&](auto tag) {
        using T = decltype(tag);
        avgpool_bwd_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(dy), static_cast<T*>(dx),
                                                                   total, H, W, Ho, Wo, p);
    });
    HR_CUDA_CHECK_LAUNCH("avgpool_bwd_kernel");
}

void activation_forward(ActivationKind kind, float alpha, const void* x, void* y, DType dt, std::int64_t n,
                        cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "activation_forward", [&](auto tag) {
        using T = decltype(tag);
        act_fwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(kind_code(kind), alpha, static_cast<const T*>(x),
                                                           static_cast<T*>(y), n);
    });
    HR_CUDA_CHECK_LAUNCH("act_fwd_kernel");
}

void activation_backward(ActivationKind kind, float alpha, const void* x, const void* y, const void* dy, void* dx,
                         DType dt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "activation_backward", [&](auto tag) {
        using T = decltype(tag);
        act_bwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(kind_code(kind), alpha, static_cast<const T*>(x),
                                                           static_cast<const T*>(y), static_cast<const T*>(dy),
                                                           static_cast<T*>(dx), n);
    });
    HR_CUDA_CHECK_LAUNCH("act_bwd_kernel");
}

void dropout_forward(const void* x, void* y, std::uint8_t* mask, DType dt, std::int64_t n, float p, float scale,
                     std::uint64_t seed, std::uint64_t offset, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "dropout_forward", [&](auto tag) {
        using T = decltype(tag);
        dropout_fwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), mask, n, p,
                                                               scale, seed, offset);
    });
    HR_CUDA_CHECK_LAUNCH("dropout_fwd_kernel");
}

void dropout_backward(const void* dy, const std::uint8_t* mask, void* dx, DType dt, std::int64_t n, float scale,
                      cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "dropout_backward", [&](auto tag) {
        using T = decltype(tag);
        dropout_bwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(dy), mask, static_cast<T*>(dx), n,
                                                               scale);
    });
    HR_CUDA_CHECK_LAUNCH("dropout_bwd_kernel");
}

namespace {
__global__ void increment_kernel(std::int64_t* c, std::int64_t by) { *c += by; }
}  // namespace

void increment_i64(std::int64_t* counter, std::int64_t by, cudaStream_t s) {
    increment_kernel<<<1, 1, 0, s>>>(counter, by);
    HR_CUDA_CHECK_LAUNCH("increment_kernel");
}

}  // namespace hr::cuda
