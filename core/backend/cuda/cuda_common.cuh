#pragma once
// Device helpers shared by the .cu files: f32/bf16/f16 load/store (round to nearest even, as
// base/dtype.cpp), dtype dispatch, grid sizes, warp and block sums.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"
#include "base/dtype.h"
#include "base/error.h"

namespace hr::cuda {

using bf16 = __nv_bfloat16;
using f16 = __half;

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(f16 v) { return __half2float(v); }
__device__ __forceinline__ float to_f(double v) { return static_cast<float>(v); }  // casts only

template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ bf16 from_f<bf16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ f16 from_f<f16>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ double from_f<double>(float v) { return v; }  // casts only

// Calls f(T{}) with T = float, bf16 or f16; throws for other dtypes (f64 is not supported on the GPU).
template <class F>
void dispatch_float(DType dt, const char* op, F&& f) {
    switch (dt) {
        case DType::f32: f(float{}); return;
        case DType::bf16: f(bf16{}); return;
        case DType::f16: f(f16{}); return;
        case DType::f64:
            throw Error(std::string(op) + ": f64 tensors are not supported on the GPU; use f32 (or bf16/f16)");
        default:
            throw Error(std::string(op) + ": expects a float tensor (f32, bf16, f16), got " + dtype_name(dt));
    }
}

constexpr int kThreads = 256;

// Elementwise kernels loop grid-stride; the grid is capped (the loop covers the rest).
inline unsigned grid_for(std::int64_t n, int threads = kThreads) {
    std::int64_t g = (n + threads - 1) / threads;
    if (g > 65536) g = 65536;
    if (g < 1) g = 1;
    return static_cast<unsigned>(g);
}

#define HR_GRID_STRIDE(i, n)                                                                     \
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
         i += static_cast<std::int64_t>(blockDim.x) * gridDim.x)

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;  // valid in lane 0
}

// Sum over the block (blockDim.x a multiple of 32); the same value is returned to every thread.
// Fixed reduction order for a given blockDim: deterministic.
__device__ __forceinline__ double block_sum(double v) {
    __shared__ double sh[32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();  // a previous call's readers are done with sh
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        const int nw = blockDim.x >> 5;
        double t = lane < nw ? sh[lane] : 0.0;
        t = warp_sum(t);
        if (lane == 0) sh[0] = t;
    }
    __syncthreads();
    return sh[0];
}

// Two-stage channel reductions over x viewed as (N, C, S): C * G blocks, block b reducing slice
// g = b % G of channel c = b / G (M = N * S values, sliced in order). G depends only on the shape, so
// the sum order (and the result) is the same every run. 0 when C is too large for the scratch's
// partials (the caller falls back to one block per channel).
inline int channel_slices(std::int64_t M, std::int64_t C) {
    if (C <= 0 || C > cuda_sizes::kChannelPartials) return 0;
    std::int64_t g = (M + 4095) / 4096;  // >= 4096 values per block
    const std::int64_t cap = std::min<std::int64_t>(cuda_sizes::kChannelPartials / C, 1024);
    if (g > cap) g = cap;
    if (g < 1) g = 1;
    return static_cast<int>(g);
}

// The [begin, end) range of slice g of G over M values.
__device__ __forceinline__ void slice_range(std::int64_t M, int G, int g, std::int64_t& begin, std::int64_t& end) {
    const std::int64_t chunk = (M + G - 1) / G;
    begin = chunk * g;
    end = begin + chunk < M ? begin + chunk : M;
}

// Per-channel vectors of any float dtype (VecArg).
__device__ __forceinline__ double load_vec(const VecArg& v, std::int64_t i, double fallback) {
    if (!v.p) return fallback;
    switch (v.dtype) {
        case DType::bf16: return to_f(static_cast<const bf16*>(v.p)[i]);
        case DType::f16: return to_f(static_cast<const f16*>(v.p)[i]);
        default: return static_cast<const float*>(v.p)[i];
    }
}
__device__ __forceinline__ void store_vec(const VecArg& v, std::int64_t i, double value) {
    if (!v.p) return;
    switch (v.dtype) {
        case DType::bf16: static_cast<bf16*>(v.p)[i] = from_f<bf16>(static_cast<float>(value)); break;
        case DType::f16: static_cast<f16*>(v.p)[i] = from_f<f16>(static_cast<float>(value)); break;
        default: static_cast<float*>(v.p)[i] = static_cast<float>(value); break;
    }
}

}  // namespace hr::cuda
