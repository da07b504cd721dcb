// Own kernels of the CUDA backend for the transformer ops: embeddings, LayerNorm, GELU (tanh form),
// flash-style attention forward and backward, row copies and transposes. Semantics mirror
// core/backend/cpu/cpu_transformer*.cpp (same formulas, same masks, same dropout counters, same
// summation order where the CPU's is cheap to follow). Storage f32, bf16 or f16; arithmetic in f32.
// Deterministic: no atomics; every sum runs in an order fixed by the shapes.
#include <cub/device/device_radix_sort.cuh>

#include <climits>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_transformer_kernels.h"
#include "tensor/quantized_format.h"

namespace hr::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;

// Butterfly sums and maxima: every lane gets the same value (IEEE addition is commutative, so the
// partners' sums agree bit for bit).
__device__ __forceinline__ float warp_sum_f(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
    return v;
}
__device__ __forceinline__ float warp_max_f(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
    return v;
}

// Identical to hr::counter_uniform (backend.cpp) and cpu::counter_uniform_inline: SplitMix64.
__device__ __forceinline__ float counter_uniform_tf(std::uint64_t seed, std::uint64_t counter) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ float load_vec_f(const VecArg& v, std::int64_t i, float fallback) {
    if (!v.p) return fallback;
    switch (v.dtype) {
        case DType::bf16: return to_f(static_cast<const bf16*>(v.p)[i]);
        case DType::f16: return to_f(static_cast<const f16*>(v.p)[i]);
        default: return static_cast<const float*>(v.p)[i];
    }
}

// Rows handled one warp each, kRowsPerBlock warps per block, grid-stride over rows.
constexpr int kRowsPerBlock = kThreads / 32;
unsigned row_blocks(std::int64_t rows) {
    std::int64_t g = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(g, 65536)));
}
#define HR_WARP_ROWS(r, rows)                                                                              \
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5); r < (rows); \
         r += static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock)

// --- embeddings ----------------------------------------------------------------------------------

template <class T>
__global__ void embedding_fwd_kernel(const std::int64_t* ids, const T* table, T* y, std::int64_t N, std::int64_t V,
                                     std::int64_t C) {
    HR_GRID_STRIDE(idx, N * C) {
        const std::int64_t i = idx / C, c = idx - i * C;
        const std::int64_t id = ids[i];
        y[idx] = (id >= 0 && id < V) ? table[id * C + c] : from_f<T>(__int_as_float(0x7fc00000));
    }
}

// Sort keys of one chunk of positions: the id (V for an id outside [0, V): sorted last, skipped) and
// the position within the chunk.
__global__ void embedding_keys_kernel(const std::int64_t* ids, std::int64_t base, std::int64_t n, std::int64_t V,
                                      unsigned* keys, int* vals) {
    HR_GRID_STRIDE(k, n) {
        const std::int64_t id = ids[base + k];
        keys[k] = (id >= 0 && id < V) ? static_cast<unsigned>(id) : static_cast<unsigned>(V);
        vals[k] = static_cast<int>(k);
    }
}

// The sorted positions of a chunk in tiles of L; one block per tile, its threads over the channels. A run of
// equal ids may be long (a space in byte-level text): its rows are summed tile by tile, each tile's piece in
// position order, and the pieces combined in tile order, so the sum is the same every run and no block
// walks a whole run. A run inside one tile is added to its table row by that tile; a run that crosses
// tiles leaves its first piece in part_b[tile] and every later piece in part_a[tile] (C floats each), and
// embedding_runs_kernel adds them up. Each table row is written by one block per chunk.
struct EmbedTiles {
    const unsigned* keys;
    const int* vals;
    int n, L;
    std::int64_t base, V, C;
    float* part_a;
    float* part_b;
};

template <class D, class G>
__global__ void embedding_tiles_kernel(EmbedTiles t, const D* dy, G* dtable) {
    const int t0 = blockIdx.x * t.L, t1 = min(t0 + t.L, t.n);
    for (int p0 = t0; p0 < t1;) {
        const unsigned key = t.keys[p0];
        int p1 = p0 + 1;
        while (p1 < t1 && t.keys[p1] == key) ++p1;
        if (static_cast<std::int64_t>(key) < t.V) {
            const bool from_before = p0 == t0 && t0 > 0 && t.keys[t0 - 1] == key;
            const bool goes_on = p1 == t1 && t1 < t.n && t.keys[t1] == key;
            for (std::int64_t c = threadIdx.x; c < t.C; c += blockDim.x) {
                float acc = 0.0f;
                for (int q = p0; q < p1; ++q) acc += to_f(dy[(t.base + t.vals[q]) * t.C + c]);
                if (from_before) {
                    t.part_a[static_cast<std::int64_t>(blockIdx.x) * t.C + c] = acc;
                } else if (goes_on) {
                    t.part_b[static_cast<std::int64_t>(blockIdx.x) * t.C + c] = acc;
                } else {
                    G* o = dtable + static_cast<std::int64_t>(key) * t.C + c;
                    *o = from_f<G>(to_f(*o) + acc);
                }
            }
        }
        p0 = p1;
    }
}

// One block per tile whose last run starts in it and goes on: that run's pieces, in tile order.
template <class G>
__global__ void embedding_runs_kernel(EmbedTiles t, G* dtable) {
    const int tile = blockIdx.x;
    const int t0 = tile * t.L, t1 = min(t0 + t.L, t.n);
    const unsigned key = t.keys[t1 - 1];
    if (static_cast<std::int64_t>(key) >= t.V || t1 >= t.n || t.keys[t1] != key) return;  // the run ends here
    int p0 = t1 - 1;
    while (p0 > t0 && t.keys[p0 - 1] == key) --p0;
    if (p0 == t0 && t0 > 0 && t.keys[t0 - 1] == key) return;  // it started in an earlier tile: a middle piece
    const int tiles = (t.n + t.L - 1) / t.L;
    for (std::int64_t c = threadIdx.x; c < t.C; c += blockDim.x) {
        float acc = t.part_b[static_cast<std::int64_t>(tile) * t.C + c];
        for (int u = tile + 1; u < tiles; ++u) {
            acc += t.part_a[static_cast<std::int64_t>(u) * t.C + c];
            const int u1 = min((u + 1) * t.L, t.n);
            // the run goes on past tile u only when all of u is the run and the next position is too
            if (t.keys[u1 - 1] != key || u1 >= t.n || t.keys[u1] != key) break;
        }
        G* o = dtable + static_cast<std::int64_t>(key) * t.C + c;
        *o = from_f<G>(to_f(*o) + acc);
    }
}

// --- LayerNorm -----------------------------------------------------------------------------------

template <class T>
__global__ void layernorm_fwd_kernel(const T* x, T* y, std::int64_t R, std::int64_t C, VecArg gamma, VecArg beta,
                                     float eps, float* mean, float* rstd) {
    const int lane = threadIdx.x & 31;
    HR_WARP_ROWS(r, R) {
        const T* xr = x + r * C;
        float s = 0.0f;
        for (std::int64_t c = lane; c < C; c += 32) s += to_f(xr[c]);
        const float mu = warp_sum_f(s) / static_cast<float>(C);
        float ss = 0.0f;
        for (std::int64_t c = lane; c < C; c += 32) {
            const float d = to_f(xr[c]) - mu;
            ss = fmaf(d, d, ss);
        }
        const float rs = 1.0f / sqrtf(warp_sum_f(ss) / static_cast<float>(C) + eps);
        T* yr = y + r * C;
        for (std::int64_t c = lane; c < C; c += 32)
            yr[c] = from_f<T>((to_f(xr[c]) - mu) * rs * load_vec_f(gamma, c, 1.0f) + load_vec_f(beta, c, 0.0f));
        if (lane == 0) {
            mean[r] = mu;
            rstd[r] = rs;
        }
    }
}

template <class T>
__global__ void layernorm_bwd_dx_kernel(const T* x, const T* dy, T* dx, std::int64_t R, std::int64_t C,
                                        VecArg gamma, const float* mean, const float* rstd) {
    const int lane = threadIdx.x & 31;
    HR_WARP_ROWS(r, R) {
        const T* xr = x + r * C;
        const T* dr = dy + r * C;
        const float mu = mean[r], rs = rstd[r];
        float m1 = 0.0f, m2 = 0.0f;
        for (std::int64_t c = lane; c < C; c += 32) {
            const float g = to_f(dr[c]) * load_vec_f(gamma, c, 1.0f);
            m1 += g;
            m2 = fmaf(g, (to_f(xr[c]) - mu) * rs, m2);
        }
        m1 = warp_sum_f(m1) / static_cast<float>(C);
        m2 = warp_sum_f(m2) / static_cast<float>(C);
        T* o = dx + r * C;
        for (std::int64_t c = lane; c < C; c += 32) {
            const float xh = (to_f(xr[c]) - mu) * rs;
            const float g = to_f(dr[c]) * load_vec_f(gamma, c, 1.0f);
            o[c] = from_f<T>(rs * (g - m1 - xh * m2));
        }
    }
}

// Column sums of dy * xhat and dy over row slice blockIdx.y of G: partials (G, C) of each, or, with
// direct (G == 1), added to dgamma / dbeta at once.
template <class T>
__global__ void layernorm_bwd_cols_kernel(const T* x, const T* dy, std::int64_t R, std::int64_t C, const float* mean,
                                          const float* rstd, int G, double* pg, double* pb, bool direct,
                                          VecArg dgamma, VecArg dbeta) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= C) return;
    std::int64_t r0, r1;
    slice_range(R, G, static_cast<int>(blockIdx.y), r0, r1);
    float sg = 0.0f, sb = 0.0f;
    for (std::int64_t r = r0; r < r1; ++r) {
        const float d = to_f(dy[r * C + c]);
        sg = fmaf(d, (to_f(x[r * C + c]) - mean[r]) * rstd[r], sg);
        sb += d;
    }
    if (direct) {
        store_vec(dgamma, c, load_vec(dgamma, c, 0.0) + static_cast<double>(sg));
        if (dbeta.p) store_vec(dbeta, c, load_vec(dbeta, c, 0.0) + static_cast<double>(sb));
        return;
    }
    pg[static_cast<std::int64_t>(blockIdx.y) * C + c] = sg;
    pb[static_cast<std::int64_t>(blockIdx.y) * C + c] = sb;
}

__global__ void layernorm_bwd_finish_kernel(const double* pg, const double* pb, int G, std::int64_t C, VecArg dgamma,
                                            VecArg dbeta) {
    HR_GRID_STRIDE(c, C) {
        double sg = 0.0, sb = 0.0;
        for (int g = 0; g < G; ++g) {  // slice order: fixed
            sg += pg[g * C + c];
            sb += pb[g * C + c];
        }
        store_vec(dgamma, c, load_vec(dgamma, c, 0.0) + sg);
        if (dbeta.p) store_vec(dbeta, c, load_vec(dbeta, c, 0.0) + sb);
    }
}

// --- GELU, tanh form (cpu_transformer_math.h: x * sigmoid(2u)) -------------------------------------

__device__ __forceinline__ float gelu_tanh_f(float x) {
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return x / (1.0f + expf(-2.0f * u));
}
__device__ __forceinline__ float gelu_tanh_grad_f(float x) {
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    const float du = 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * x * x);
    const float s = 1.0f / (1.0f + expf(-2.0f * u));
    return s + 2.0f * x * s * (1.0f - s) * du;
}

template <class T>
__global__ void gelu_tanh_fwd_kernel(const T* x, T* y, std::int64_t n) {
    HR_GRID_STRIDE(i, n) y[i] = from_f<T>(gelu_tanh_f(to_f(x[i])));
}
template <class T>
__global__ void gelu_tanh_bwd_kernel(const T* x, const T* dy, T* dx, std::int64_t n) {
    HR_GRID_STRIDE(i, n) dx[i] = from_f<T>(to_f(dy[i]) * gelu_tanh_grad_f(to_f(x[i])));
}

// --- the LLaMA family: RMSNorm, rotary embeddings, SwiGLU (cpu_llama.cpp is the reference) -----------

template <class T>
__global__ void rmsnorm_fwd_kernel(const T* x, T* y, std::int64_t R, std::int64_t C, VecArg gamma, float eps,
                                   float* rstd) {
    const int lane = threadIdx.x & 31;
    HR_WARP_ROWS(r, R) {
        const T* xr = x + r * C;
        float ss = 0.0f;
        for (std::int64_t c = lane; c < C; c += 32) {
            const float v = to_f(xr[c]);
            ss = fmaf(v, v, ss);
        }
        const float rs = 1.0f / sqrtf(warp_sum_f(ss) / static_cast<float>(C) + eps);
        T* yr = y + r * C;
        for (std::int64_t c = lane; c < C; c += 32) yr[c] = from_f<T>(to_f(xr[c]) * rs * load_vec_f(gamma, c, 1.0f));
        if (lane == 0) rstd[r] = rs;
    }
}

template <class T>
__global__ void rmsnorm_bwd_dx_kernel(const T* x, const T* dy, T* dx, std::int64_t R, std::int64_t C, VecArg gamma,
                                      const float* rstd) {
    const int lane = threadIdx.x & 31;
    HR_WARP_ROWS(r, R) {
        const T* xr = x + r * C;
        const T* dr = dy + r * C;
        const float rs = rstd[r];
        float m = 0.0f;
        for (std::int64_t c = lane; c < C; c += 32) m = fmaf(load_vec_f(gamma, c, 1.0f) * to_f(dr[c]), to_f(xr[c]), m);
        m = warp_sum_f(m) / static_cast<float>(C);
        T* o = dx + r * C;
        for (std::int64_t c = lane; c < C; c += 32)
            o[c] = from_f<T>(rs * (load_vec_f(gamma, c, 1.0f) * to_f(dr[c]) - to_f(xr[c]) * rs * rs * m));
    }
}

// Column sums of dy * x * rstd over row slice blockIdx.y of G (as layernorm_bwd_cols_kernel)
template <class T>
__global__ void rmsnorm_bwd_cols_kernel(const T* x, const T* dy, std::int64_t R, std::int64_t C, const float* rstd,
                                        int G, double* pg, bool direct, VecArg dgamma) {
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= C) return;
    std::int64_t r0, r1;
    slice_range(R, G, static_cast<int>(blockIdx.y), r0, r1);
    float sg = 0.0f;
    for (std::int64_t r = r0; r < r1; ++r) sg = fmaf(to_f(dy[r * C + c]), to_f(x[r * C + c]) * rstd[r], sg);
    if (direct) {
        store_vec(dgamma, c, load_vec(dgamma, c, 0.0) + static_cast<double>(sg));
        return;
    }
    pg[static_cast<std::int64_t>(blockIdx.y) * C + c] = sg;
}

__global__ void rmsnorm_bwd_finish_kernel(const double* pg, int G, std::int64_t C, VecArg dgamma) {
    HR_GRID_STRIDE(c, C) {
        double sg = 0.0;
        for (int g = 0; g < G; ++g) sg += pg[g * C + c];  // slice order: fixed
        store_vec(dgamma, c, load_vec(dgamma, c, 0.0) + sg);
    }
}

struct RopeArgs {
    std::int64_t T, H, D;
    float sign;  // -1: the inverse rotation
    float f[kAttnMaxHeadDim / 2];
};

// one thread a pair (row, head, i < D/2); cos and sin of the f32 angle t * f_i taken in f64 and rounded
template <class T>
__global__ void rope_kernel(T* x, std::int64_t pairs, RopeArgs a) {
    const std::int64_t half = a.D / 2;
    HR_GRID_STRIDE(k, pairs) {
        const std::int64_t i = k % half, rh = k / half;  // rh = row * H + h
        const std::int64_t t = (rh / a.H) % a.T;
        const float ang = static_cast<float>(t) * a.f[i];
        double sd, cd;
        sincos(static_cast<double>(ang), &sd, &cd);
        const float c = static_cast<float>(cd), sn = static_cast<float>(sd) * a.sign;
        T* v = x + rh * a.D;
        const float x1 = to_f(v[i]), x2 = to_f(v[i + half]);
        v[i] = from_f<T>(x1 * c - x2 * sn);
        v[i + half] = from_f<T>(x2 * c + x1 * sn);
    }
}

template <class T>
__global__ void swiglu_fwd_kernel(const T* g, const T* u, T* y, std::int64_t n) {
    HR_GRID_STRIDE(i, n) {
        const float gv = to_f(g[i]);
        y[i] = from_f<T>(gv / (1.0f + expf(-gv)) * to_f(u[i]));
    }
}
template <class T>
__global__ void swiglu_bwd_kernel(const T* g, const T* u, const T* dy, T* dg, T* du, std::int64_t n) {
    HR_GRID_STRIDE(i, n) {
        const float gv = to_f(g[i]), uv = to_f(u[i]), d = to_f(dy[i]);
        const float sig = 1.0f / (1.0f + expf(-gv));
        dg[i] = from_f<T>(d * uv * sig * (1.0f + gv * (1.0f - sig)));
        du[i] = from_f<T>(d * gv * sig);
    }
}

// --- attention -----------------------------------------------------------------------------------
// A block has kAttnWarps warps; each warp owns R rows of the block (query rows in the forward and dQ
// kernels, key rows in the dK/dV kernel) and keeps their accumulators in registers, lane l holding
// columns l, l + 32, ... (E = ceil(D / 32) of them). The other side streams through shared memory in
// tiles of kAttnTile rows stored with an odd stride (D | 1) so that lane j reading row j is free of bank
// conflicts; lane j then owns score (row, j) of the tile. Shared memory stays under the 48 KiB default
// for D <= kAttnMaxHeadDim (attn_smem_* below, checked on the host).

constexpr int kAttnWarps = 4;
constexpr int kAttnTile = 32;

__host__ __device__ constexpr int attn_ld(int D) { return D | 1; }
constexpr std::size_t attn_smem_fwd(int D, int R) {
    return sizeof(float) * (2 * kAttnTile * attn_ld(D) + kAttnWarps * R * D);
}
constexpr std::size_t attn_smem_dkdv(int D, int R) {
    return sizeof(float) * (2 * kAttnTile * attn_ld(D) + 2 * kAttnWarps * R * D + 2 * kAttnTile);
}
constexpr std::size_t attn_smem_dq(int D, int R) {
    return sizeof(float) * (2 * kAttnTile * attn_ld(D) + 2 * kAttnWarps * R * D + 2 * kAttnWarps * R);
}
constexpr std::size_t kSmemDefault = 48 * 1024;
static_assert(attn_smem_fwd(128, 4) <= kSmemDefault && attn_smem_dkdv(128, 2) <= kSmemDefault &&
              attn_smem_dq(128, 2) <= kSmemDefault);
static_assert(attn_smem_fwd(64, 8) <= kSmemDefault && attn_smem_dkdv(64, 8) <= kSmemDefault &&
              attn_smem_dq(64, 8) <= kSmemDefault);

struct AttnArgs {
    int H, T, D;
    int KV;  // key/value heads (H without grouped-query attention)
    std::int64_t C;
    // where q, k, v (part 0, 1, 2) of token (b, t), head hh live: po + (b T + t) ps + pc + hh D (backend.h
    // AttentionParams::planes: side by side in each token's row, or three planes)
    std::int64_t po[3], ps[3], pc[3];
    bool causal;
    float dropout, inv_keep, scale;
    std::uint64_t seed, offset;
};

__device__ __forceinline__ std::int64_t attn_at(const AttnArgs& a, int part, std::int64_t b, std::int64_t t, int hh) {
    return a.po[part] + (b * a.T + t) * a.ps[part] + a.pc[part] + static_cast<std::int64_t>(hh) * a.D;
}

// Dropout keep factor of probability (bh, i, j), as cpu_transformer_attention.cpp's keep_factor.
__device__ __forceinline__ float attn_keep(const AttnArgs& a, std::int64_t bh, int i, int j) {
    const std::uint64_t T = static_cast<std::uint64_t>(a.T);
    const std::uint64_t counter = a.offset + static_cast<std::uint64_t>(bh) * T * T +
                                  static_cast<std::uint64_t>(i) * T + static_cast<std::uint64_t>(j);
    return counter_uniform_tf(a.seed, counter) < a.dropout ? 0.0f : a.inv_keep;
}

template <class T, int E, int R>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attn_fwd_kernel(const T* __restrict__ qkv, T* __restrict__ out, float* __restrict__ lse, AttnArgs a) {
    extern __shared__ float sm[];
    constexpr int BR = kAttnWarps * R;
    const int D = a.D, Tn = a.T, ld = attn_ld(D);
    float* Ks = sm;
    float* Vs = Ks + kAttnTile * ld;
    float* Qs = Vs + kAttnTile * ld;  // BR rows of D, scaled by 1/sqrt(D)
    const int nqt = (Tn + BR - 1) / BR;
    const std::int64_t bh = blockIdx.x / nqt;
    const int i0 = static_cast<int>(blockIdx.x % nqt) * BR;
    const std::int64_t b = bh / a.H;
    const int h = static_cast<int>(bh % a.H);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int g = h / (a.H / a.KV);  // the key/value head serving query head h
    for (int idx = threadIdx.x; idx < BR * D; idx += blockDim.x) {
        const int r = idx / D, e = idx - r * D, i = i0 + r;
        Qs[idx] = i < Tn ? to_f(qkv[attn_at(a, 0, b, i, h) + e]) * a.scale : 0.0f;
    }
    float m[R], l[R], acc[R][E];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
#pragma unroll
        for (int k = 0; k < E; ++k) acc[r][k] = 0.0f;
    }
    const int kend = a.causal ? min(Tn, i0 + BR) : Tn;
    for (int j0 = 0; j0 < kend; j0 += kAttnTile) {
        __syncthreads();  // the previous tile's readers are done (and Qs is written, first time)
        for (int idx = threadIdx.x; idx < kAttnTile * D; idx += blockDim.x) {
            const int jj = idx / D, e = idx - jj * D, j = j0 + jj;
            float kv = 0.0f, vv = 0.0f;
            if (j < Tn) {
                kv = to_f(qkv[attn_at(a, 1, b, j, g) + e]);
                vv = to_f(qkv[attn_at(a, 2, b, j, g) + e]);
            }
            Ks[jj * ld + e] = kv;
            Vs[jj * ld + e] = vv;
        }
        __syncthreads();
        const int jn = min(kAttnTile, kend - j0);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = i0 + w * R + r;
            if (i >= Tn) continue;  // the same for the whole warp
            const int j = j0 + lane;
            const bool vis = j < kend && (!a.causal || j <= i);
            float sc = -INFINITY;
            if (vis) {
                const float* q = Qs + (w * R + r) * D;
                const float* k = Ks + lane * ld;
                float s = 0.0f;
                for (int e = 0; e < D; ++e) s = fmaf(q[e], k[e], s);
                sc = s;
            }
            const float tmax = warp_max_f(sc);
            if (tmax == -INFINITY) continue;  // no visible key for this row in the tile (warp-uniform)
            const float mnew = fmaxf(m[r], tmax);
            const float corr = expf(m[r] - mnew);  // 0 on the first visible tile (m = -inf)
            float pr = vis ? expf(sc - mnew) : 0.0f;
            l[r] = l[r] * corr + warp_sum_f(pr);
            if (a.dropout > 0.0f && vis) pr *= attn_keep(a, bh, i, j);
#pragma unroll
            for (int k = 0; k < E; ++k) acc[r][k] *= corr;
            for (int jj = 0; jj < jn; ++jj) {
                const float pj = __shfl_sync(kFull, pr, jj);
                const float* v = Vs + jj * ld;
#pragma unroll
                for (int k = 0; k < E; ++k) {
                    const int e = lane + 32 * k;
                    if (e < D) acc[r][k] = fmaf(pj, v[e], acc[r][k]);
                }
            }
            m[r] = mnew;
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = i0 + w * R + r;
        if (i >= Tn) continue;
        const float inv = 1.0f / l[r];
        if (lane == 0) lse[bh * Tn + i] = m[r] + logf(l[r]);
        T* o = out + (b * Tn + i) * a.C + h * D;
#pragma unroll
        for (int k = 0; k < E; ++k) {
            const int e = lane + 32 * k;
            if (e < D) o[e] = from_f<T>(acc[r][k] * inv);
        }
    }
}

// di[bh * T + i] = sum_e dout[b, i, h*D + e] * out[b, i, h*D + e] (one warp per row)
template <class T>
__global__ void attn_di_kernel(const T* out, const T* dout, float* di, std::int64_t rows, AttnArgs a) {
    const int lane = threadIdx.x & 31;
    HR_WARP_ROWS(q, rows) {
        const std::int64_t bh = q / a.T;
        const std::int64_t i = q - bh * a.T, b = bh / a.H, h = bh % a.H;
        const std::int64_t o = (b * a.T + i) * a.C + h * a.D;
        float s = 0.0f;
        for (int e = lane; e < a.D; e += 32) s = fmaf(to_f(dout[o + e]), to_f(out[o + e]), s);
        s = warp_sum_f(s);
        if (lane == 0) di[q] = s;
    }
}

// dK, dV of the block's BR keys, over the query tiles that can see them.
template <class T, int E, int R>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attn_dkdv_kernel(const T* __restrict__ qkv, const T* __restrict__ dout, const float* __restrict__ lse,
                     const float* __restrict__ di, T* __restrict__ dqkv, AttnArgs a) {
    extern __shared__ float sm[];
    constexpr int BR = kAttnWarps * R;
    const int D = a.D, Tn = a.T, ld = attn_ld(D);
    float* Qs = sm;                    // kAttnTile rows, scaled
    float* dOs = Qs + kAttnTile * ld;  // kAttnTile rows
    float* Kb = dOs + kAttnTile * ld;  // BR rows of D
    float* Vb = Kb + BR * D;
    float* Ls = Vb + BR * D;  // kAttnTile
    float* Ds = Ls + kAttnTile;
    const int nkt = (Tn + BR - 1) / BR;
    const std::int64_t bg = blockIdx.x / nkt;  // (batch, key/value head)
    const int j0 = static_cast<int>(blockIdx.x % nkt) * BR;
    const std::int64_t b = bg / a.KV;
    const int g = static_cast<int>(bg % a.KV), group = a.H / a.KV;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const T* gbase = dout + b * Tn * a.C;
    for (int idx = threadIdx.x; idx < BR * D; idx += blockDim.x) {
        const int r = idx / D, e = idx - r * D, j = j0 + r;
        float kv = 0.0f, vv = 0.0f;
        if (j < Tn) {
            kv = to_f(qkv[attn_at(a, 1, b, j, g) + e]);
            vv = to_f(qkv[attn_at(a, 2, b, j, g) + e]);
        }
        Kb[idx] = kv;
        Vb[idx] = vv;
    }
    float dk[R][E], dv[R][E];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int k = 0; k < E; ++k) dk[r][k] = dv[r][k] = 0.0f;
    const int qstart = a.causal ? (j0 / kAttnTile) * kAttnTile : 0;
    // the query heads this key/value head serves, in order (one without grouped-query attention)
    for (int h = g * group; h < (g + 1) * group; ++h) {
    const std::int64_t bh = b * a.H + h;
    for (int i0 = qstart; i0 < Tn; i0 += kAttnTile) {
        __syncthreads();
        for (int idx = threadIdx.x; idx < kAttnTile * D; idx += blockDim.x) {
            const int ii = idx / D, e = idx - ii * D, i = i0 + ii;
            float q = 0.0f, gr = 0.0f;
            if (i < Tn) {
                q = to_f(qkv[attn_at(a, 0, b, i, h) + e]) * a.scale;
                gr = to_f(gbase[i * a.C + h * D + e]);
            }
            Qs[ii * ld + e] = q;
            dOs[ii * ld + e] = gr;
        }
        for (int ii = threadIdx.x; ii < kAttnTile; ii += blockDim.x) {
            const int i = i0 + ii;
            Ls[ii] = i < Tn ? lse[bh * Tn + i] : 0.0f;
            Ds[ii] = i < Tn ? di[bh * Tn + i] : 0.0f;
        }
        __syncthreads();
        const int in = min(kAttnTile, Tn - i0);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int j = j0 + w * R + r;
            if (j >= Tn) continue;                             // warp-uniform
            if (a.causal && i0 + in - 1 < j) continue;         // no query of the tile sees key j
            const int i = i0 + lane;
            const bool vis = i < Tn && (!a.causal || j <= i);
            float pd = 0.0f, ds = 0.0f;
            if (vis) {
                const float* q = Qs + lane * ld;
                const float* go = dOs + lane * ld;
                const float* k = Kb + (w * R + r) * D;
                const float* v = Vb + (w * R + r) * D;
                float s = 0.0f, dp = 0.0f;
                for (int e = 0; e < D; ++e) {
                    s = fmaf(q[e], k[e], s);
                    dp = fmaf(go[e], v[e], dp);
                }
                const float p = expf(s - Ls[lane]);
                const float f = a.dropout > 0.0f ? attn_keep(a, bh, i, j) : 1.0f;
                pd = p * f;
                ds = p * (dp * f - Ds[lane]);
            }
            for (int ii = 0; ii < in; ++ii) {
                const float pi = __shfl_sync(kFull, pd, ii), si = __shfl_sync(kFull, ds, ii);
                const float* go = dOs + ii * ld;
                const float* q = Qs + ii * ld;
#pragma unroll
                for (int k = 0; k < E; ++k) {
                    const int e = lane + 32 * k;
                    if (e < D) {
                        dv[r][k] = fmaf(pi, go[e], dv[r][k]);
                        dk[r][k] = fmaf(si, q[e], dk[r][k]);
                    }
                }
            }
        }
    }
    }  // query heads
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int j = j0 + w * R + r;
        if (j >= Tn) continue;
        T* ok = dqkv + attn_at(a, 1, b, j, g);
        T* ov = dqkv + attn_at(a, 2, b, j, g);
#pragma unroll
        for (int k = 0; k < E; ++k) {
            const int e = lane + 32 * k;
            if (e < D) {
                ok[e] = from_f<T>(dk[r][k]);
                ov[e] = from_f<T>(dv[r][k]);
            }
        }
    }
}

// dQ of the block's BR queries, over the key tiles they can see.
template <class T, int E, int R>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attn_dq_kernel(const T* __restrict__ qkv, const T* __restrict__ dout, const float* __restrict__ lse,
                   const float* __restrict__ di, T* __restrict__ dqkv, AttnArgs a) {
    extern __shared__ float sm[];
    constexpr int BR = kAttnWarps * R;
    const int D = a.D, Tn = a.T, ld = attn_ld(D);
    float* Ks = sm;
    float* Vs = Ks + kAttnTile * ld;
    float* Qb = Vs + kAttnTile * ld;  // BR rows, scaled
    float* dOb = Qb + BR * D;
    float* Lb = dOb + BR * D;  // BR
    float* Db = Lb + BR;
    const int nqt = (Tn + BR - 1) / BR;
    const std::int64_t bh = blockIdx.x / nqt;
    const int i0 = static_cast<int>(blockIdx.x % nqt) * BR;
    const std::int64_t b = bh / a.H;
    const int h = static_cast<int>(bh % a.H);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int g = h / (a.H / a.KV);  // the key/value head serving query head h
    const T* gbase = dout + b * Tn * a.C;
    for (int idx = threadIdx.x; idx < BR * D; idx += blockDim.x) {
        const int r = idx / D, e = idx - r * D, i = i0 + r;
        float q = 0.0f, gr = 0.0f;
        if (i < Tn) {
            q = to_f(qkv[attn_at(a, 0, b, i, h) + e]) * a.scale;
            gr = to_f(gbase[i * a.C + h * D + e]);
        }
        Qb[idx] = q;
        dOb[idx] = gr;
    }
    for (int r = threadIdx.x; r < BR; r += blockDim.x) {
        const int i = i0 + r;
        Lb[r] = i < Tn ? lse[bh * Tn + i] : 0.0f;
        Db[r] = i < Tn ? di[bh * Tn + i] : 0.0f;
    }
    float dq[R][E];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int k = 0; k < E; ++k) dq[r][k] = 0.0f;
    const int kend = a.causal ? min(Tn, i0 + BR) : Tn;
    for (int j0 = 0; j0 < kend; j0 += kAttnTile) {
        __syncthreads();
        for (int idx = threadIdx.x; idx < kAttnTile * D; idx += blockDim.x) {
            const int jj = idx / D, e = idx - jj * D, j = j0 + jj;
            float kv = 0.0f, vv = 0.0f;
            if (j < Tn) {
                kv = to_f(qkv[attn_at(a, 1, b, j, g) + e]);
                vv = to_f(qkv[attn_at(a, 2, b, j, g) + e]);
            }
            Ks[jj * ld + e] = kv;
            Vs[jj * ld + e] = vv;
        }
        __syncthreads();
        const int jn = min(kAttnTile, kend - j0);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = i0 + w * R + r;
            if (i >= Tn) continue;  // warp-uniform
            const int j = j0 + lane;
            const bool vis = j < kend && (!a.causal || j <= i);
            float ds = 0.0f;
            if (vis) {
                const float* q = Qb + (w * R + r) * D;
                const float* go = dOb + (w * R + r) * D;
                const float* k = Ks + lane * ld;
                const float* v = Vs + lane * ld;
                float s = 0.0f, dp = 0.0f;
                for (int e = 0; e < D; ++e) {
                    s = fmaf(q[e], k[e], s);
                    dp = fmaf(go[e], v[e], dp);
                }
                const float p = expf(s - Lb[w * R + r]);
                const float f = a.dropout > 0.0f ? attn_keep(a, bh, i, j) : 1.0f;
                ds = p * (dp * f - Db[w * R + r]);
            }
            for (int jj = 0; jj < jn; ++jj) {
                const float sj = __shfl_sync(kFull, ds, jj);
                const float* k = Ks + jj * ld;
#pragma unroll
                for (int kk = 0; kk < E; ++kk) {
                    const int e = lane + 32 * kk;
                    if (e < D) dq[r][kk] = fmaf(sj, k[e], dq[r][kk]);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = i0 + w * R + r;
        if (i >= Tn) continue;
        T* o = dqkv + attn_at(a, 0, b, i, h);
#pragma unroll
        for (int k = 0; k < E; ++k) {
            const int e = lane + 32 * k;
            if (e < D) o[e] = from_f<T>(dq[r][k] * a.scale);
        }
    }
}

AttnArgs attn_args(std::int64_t B, std::int64_t T, std::int64_t C, int heads, const AttentionParams& p) {
    AttnArgs a{};
    a.H = heads;
    a.KV = p.kv_heads > 0 ? p.kv_heads : heads;
    a.T = static_cast<int>(T);
    a.D = static_cast<int>(C / heads);
    a.C = C;
    const std::int64_t kvd = static_cast<std::int64_t>(a.KV) * a.D;
    if (p.planes) {
        const std::int64_t bt = B * T;
        const std::int64_t po[3] = {0, bt * C, bt * (C + kvd)}, ps[3] = {C, kvd, kvd};
        for (int k = 0; k < 3; ++k) {
            a.po[k] = po[k];
            a.ps[k] = ps[k];
            a.pc[k] = 0;
        }
    } else {
        const std::int64_t pc[3] = {0, C, C + kvd};
        for (int k = 0; k < 3; ++k) {
            a.po[k] = 0;
            a.ps[k] = C + 2 * kvd;
            a.pc[k] = pc[k];
        }
    }
    a.causal = p.causal;
    a.dropout = p.dropout;
    a.inv_keep = 1.0f / (1.0f - p.dropout);
    a.scale = 1.0f / sqrtf(static_cast<float>(a.D));
    a.seed = p.seed;
    a.offset = p.offset;
    return a;
}

// Blocks of a grid of (B * H) x ceil(T / rows_per_block); throws past the launch limit.
unsigned attn_blocks(const char* op, std::int64_t B, int H, std::int64_t T, int rows_per_block) {
    const std::int64_t n = B * H * ((T + rows_per_block - 1) / rows_per_block);
    if (n > INT_MAX)
        throw Error(std::string(op) + ": " + std::to_string(n) + " thread blocks exceed the GPU's grid limit; use a smaller batch");
    return static_cast<unsigned>(n);
}

// Calls f(std::integral_constant<int, E>{}) with E = columns per lane for head size D.
template <class F>
void dispatch_head(int D, const char* op, F&& f) {
    if (D <= 32)
        f(std::integral_constant<int, 1>{});
    else if (D <= 64)
        f(std::integral_constant<int, 2>{});
    else if (D <= kAttnMaxHeadDim)
        f(std::integral_constant<int, 4>{});
    else
        throw Error(std::string(op) + ": head size " + std::to_string(D) + " is above the GPU kernels' limit of " +
                    std::to_string(kAttnMaxHeadDim));
}

// --- row copies and transposes ---------------------------------------------------------------------

template <class U>
__global__ void copy_rows_kernel(const U* src, U* dst, std::int64_t N, bool bcast, std::int64_t S, std::int64_t src_row,
                                 std::int64_t D, std::int64_t dst_row, std::int64_t rows, std::int64_t C) {
    const std::int64_t per = rows * C;
    HR_GRID_STRIDE(idx, N * per) {
        const std::int64_t n = idx / per, rem = idx - n * per;
        dst[(n * D + dst_row) * C + rem] = src[((bcast ? 0 : n) * S + src_row) * C + rem];
    }
}

template <class U>
__global__ void transpose_last2_kernel(const U* x, U* y, std::int64_t N, std::int64_t A, std::int64_t B) {
    const std::int64_t per = A * B;
    HR_GRID_STRIDE(idx, N * per) {  // idx walks y (N, B, A): writes coalesced
        const std::int64_t n = idx / per, rem = idx - n * per;
        const std::int64_t b = rem / A, a = rem - b * A;
        y[idx] = x[(n * A + a) * B + b];
    }
}

// one thread a value: its scale (row r, group c / g) and its code (a byte, or a nibble of one)
// NF4 (tensor/quantized_format.h): the 16 levels, passed by value from the host's nf4_level (one table)
struct Nf4Levels {
    float v[16];
};

// NF4: one thread a value: its group's scale fma(e, t, c) (the double-quantised scale), its nibble's level
template <class T>
__global__ void dequantize_nf4_kernel(const std::uint8_t* packed, T* w, std::int64_t rows, std::int64_t cols,
                                      std::int64_t g, std::int64_t per_row, std::int64_t nscales, std::int64_t nsteps,
                                      Nf4Levels levels) {
    float c;
    memcpy(&c, packed, 4);
    const std::uint8_t* steps = packed + 4;
    const auto* e = reinterpret_cast<const signed char*>(packed + 4 + 4 * nsteps);
    const std::uint8_t* codes = packed + 4 + 4 * nsteps + nscales;
    HR_GRID_STRIDE(k, rows * cols) {
        const std::int64_t r = k / cols, col = k - r * cols;
        const std::int64_t gi = r * per_row + col / g;
        float t;
        memcpy(&t, steps + 4 * (gi / kNf4ScaleBlock), 4);  // (4-byte aligned: the steps start at byte 4)
        const float s = fmaf(static_cast<float>(e[gi]), t, c);
        const unsigned b = codes[k >> 1];
        w[k] = from_f<T>(levels.v[(k & 1) ? (b >> 4) : (b & 0x0Fu)] * s);
    }
}

template <class T>
__global__ void dequantize_kernel(const std::uint8_t* packed, T* w, std::int64_t rows, std::int64_t cols, int bits,
                                  std::int64_t g, std::int64_t per_row, std::int64_t nscales) {
    const float* scales = reinterpret_cast<const float*>(packed);
    const std::uint8_t* codes = packed + nscales * 4;
    HR_GRID_STRIDE(k, rows * cols) {
        const std::int64_t r = k / cols, c = k - r * cols;
        int q;
        if (bits == 8) {
            q = static_cast<int>(static_cast<signed char>(codes[k]));
        } else {
            const unsigned b = codes[k >> 1];
            q = static_cast<int>((k & 1) ? (b >> 4) : (b & 0x0Fu)) - 8;
        }
        w[k] = from_f<T>(static_cast<float>(q) * scales[r * per_row + c / g]);
    }
}

template <class F>
void dispatch_elem(int elem_size, const char* op, F&& f) {
    switch (elem_size) {
        case 1: f(std::uint8_t{}); return;
        case 2: f(std::uint16_t{}); return;
        case 4: f(std::uint32_t{}); return;
        case 8: f(std::uint64_t{}); return;
        default: throw Error(std::string(op) + ": unsupported element size " + std::to_string(elem_size));
    }
}

}  // namespace

// --- launchers -----------------------------------------------------------------------------------

void embedding_forward(const std::int64_t* ids, std::int64_t N, const void* table, void* y, DType dt, std::int64_t V,
                       std::int64_t C, cudaStream_t s) {
    if (N <= 0 || C <= 0) return;
    dispatch_float(dt, "embedding_forward", [&](auto tag) {
        using T = decltype(tag);
        embedding_fwd_kernel<T><<<grid_for(N * C), kThreads, 0, s>>>(ids, static_cast<const T*>(table),
                                                                      static_cast<T*>(y), N, V, C);
    });
    HR_CUDA_CHECK_LAUNCH("embedding_fwd_kernel");
}

void embedding_backward(const std::int64_t* ids, std::int64_t N, const void* dy, DType dydt, void* dtable,
                        DType gdt, std::int64_t V, std::int64_t C, const Scratch& scratch, cudaStream_t s) {
    const char* op = "embedding_backward";
    if (N <= 0 || C <= 0 || V <= 0) return;
    if (V >= static_cast<std::int64_t>(UINT_MAX))
        throw Error(std::string(op) + ": a vocabulary of " + std::to_string(V) + " rows is above the GPU kernel's limit");
    int end_bit = 1;
    while (end_bit < 32 && (std::int64_t{1} << end_bit) <= V) ++end_bit;  // keys in [0, V]
    // a chunk of positions whose four sort arrays, CUB's temporary storage and two pieces per tile (C floats
    // each) fit the bounce buffer; tiles of at least 64 positions
    char* bounce = static_cast<char*>(scratch.bounce());
    auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
    std::int64_t nc = std::min<std::int64_t>(N, 32768);
    std::size_t temp_bytes = 0;
    int L = 64;
    for (;;) {
        temp_bytes = 0;
        HR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, static_cast<const unsigned*>(nullptr),
                                                      static_cast<unsigned*>(nullptr), static_cast<const int*>(nullptr),
                                                      static_cast<int*>(nullptr), static_cast<int>(nc), 0, end_bit, s));
        const std::size_t used = 4 * align(static_cast<std::size_t>(nc) * 4) + align(temp_bytes);
        if (used < cuda_sizes::kBounceBytes) {
            const std::size_t per_tile = 2 * static_cast<std::size_t>(C) * sizeof(float);
            const std::size_t max_tiles = (cuda_sizes::kBounceBytes - used) / per_tile;
            if (max_tiles >= 1) {
                L = 64;
                while ((nc + L - 1) / L > static_cast<std::int64_t>(max_tiles) && L < nc) L *= 2;
                if ((nc + L - 1) / L <= static_cast<std::int64_t>(max_tiles)) break;
            }
        }
        if (nc <= 256) throw Error(std::string(op) + ": internal: the sort does not fit the op scratch");
        nc /= 2;
    }
    const std::size_t arr = align(static_cast<std::size_t>(nc) * 4);
    unsigned* keys_in = reinterpret_cast<unsigned*>(bounce);
    int* vals_in = reinterpret_cast<int*>(bounce + arr);
    unsigned* keys_out = reinterpret_cast<unsigned*>(bounce + 2 * arr);
    int* vals_out = reinterpret_cast<int*>(bounce + 3 * arr);
    void* temp = bounce + 4 * arr;
    float* parts = reinterpret_cast<float*>(bounce + 4 * arr + align(temp_bytes));
    const std::int64_t max_tiles = (nc + L - 1) / L;
    for (std::int64_t base = 0; base < N; base += nc) {  // chunks in position order: a fixed sum order
        const std::int64_t n = std::min<std::int64_t>(nc, N - base);
        embedding_keys_kernel<<<grid_for(n), kThreads, 0, s>>>(ids, base, n, V, keys_in, vals_in);
        HR_CUDA_CHECK_LAUNCH("embedding_keys_kernel");
        std::size_t tb = temp_bytes;
        HR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, tb, keys_in, keys_out, vals_in, vals_out, static_cast<int>(n),
                                                      0, end_bit, s));
        const EmbedTiles tiles{keys_out, vals_out, static_cast<int>(n), L, base, V, C, parts, parts + max_tiles * C};
        const unsigned blocks = static_cast<unsigned>((n + L - 1) / L);
        dispatch_float(dydt, op, [&](auto dtag) {
            using Dt = decltype(dtag);
            dispatch_float(gdt, op, [&](auto gtag) {
                using G = decltype(gtag);
                embedding_tiles_kernel<Dt, G><<<blocks, 128, 0, s>>>(tiles, static_cast<const Dt*>(dy),
                                                                      static_cast<G*>(dtable));
                HR_CUDA_CHECK_LAUNCH("embedding_tiles_kernel");
                embedding_runs_kernel<G><<<blocks, 128, 0, s>>>(tiles, static_cast<G*>(dtable));
            });
        });
        HR_CUDA_CHECK_LAUNCH("embedding_runs_kernel");
    }
}

void layernorm_forward(const void* x, void* y, DType dt, std::int64_t R, std::int64_t C, VecArg gamma, VecArg beta,
                       float eps, float* mean, float* rstd, cudaStream_t s) {
    if (R <= 0 || C <= 0) return;
    dispatch_float(dt, "layernorm_forward", [&](auto tag) {
        using T = decltype(tag);
        layernorm_fwd_kernel<T><<<row_blocks(R), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), R, C,
                                                                    gamma, beta, eps, mean, rstd);
    });
    HR_CUDA_CHECK_LAUNCH("layernorm_fwd_kernel");
}

void layernorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t R, std::int64_t C,
                        VecArg gamma, const float* mean, const float* rstd, VecArg dgamma, VecArg dbeta,
                        const Scratch& scratch, cudaStream_t s) {
    if (R <= 0 || C <= 0) return;
    // slices of rows for the column sums: depends on the shape only (a fixed order)
    const bool direct = C > cuda_sizes::kChannelPartials;
    int G = 1;
    if (!direct) {
        const std::int64_t want = (R + 255) / 256;  // >= 256 rows per slice
        const std::int64_t cap = std::min<std::int64_t>(cuda_sizes::kChannelPartials / C, 1024);
        G = static_cast<int>(std::max<std::int64_t>(1, std::min(want, cap)));
    }
    double* pg = scratch.channel_partials();
    double* pb = pg + cuda_sizes::kChannelPartials;
    dispatch_float(dt, "layernorm_backward", [&](auto tag) {
        using T = decltype(tag);
        layernorm_bwd_dx_kernel<T><<<row_blocks(R), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy),
                                                                       static_cast<T*>(dx), R, C, gamma, mean, rstd);
        HR_CUDA_CHECK_LAUNCH("layernorm_bwd_dx_kernel");
        const dim3 grid(static_cast<unsigned>((C + kThreads - 1) / kThreads), static_cast<unsigned>(G));
        layernorm_bwd_cols_kernel<T><<<grid, kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy), R, C,
                                                                mean, rstd, G, pg, pb, direct, dgamma, dbeta);
        HR_CUDA_CHECK_LAUNCH("layernorm_bwd_cols_kernel");
    });
    if (!direct) {
        layernorm_bwd_finish_kernel<<<grid_for(C), kThreads, 0, s>>>(pg, pb, G, C, dgamma, dbeta);
        HR_CUDA_CHECK_LAUNCH("layernorm_bwd_finish_kernel");
    }
}

void rmsnorm_forward(const void* x, void* y, DType dt, std::int64_t R, std::int64_t C, VecArg gamma, float eps,
                     float* rstd, cudaStream_t s) {
    if (R <= 0 || C <= 0) return;
    dispatch_float(dt, "rmsnorm_forward", [&](auto tag) {
        using T = decltype(tag);
        rmsnorm_fwd_kernel<T><<<row_blocks(R), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), R, C,
                                                                  gamma, eps, rstd);
    });
    HR_CUDA_CHECK_LAUNCH("rmsnorm_fwd_kernel");
}

void rmsnorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t R, std::int64_t C, VecArg gamma,
                      const float* rstd, VecArg dgamma, const Scratch& scratch, cudaStream_t s) {
    if (R <= 0 || C <= 0) return;
    const bool direct = C > cuda_sizes::kChannelPartials;
    int G = 1;
    if (!direct) {
        const std::int64_t want = (R + 255) / 256;
        const std::int64_t cap = std::min<std::int64_t>(cuda_sizes::kChannelPartials / C, 1024);
        G = static_cast<int>(std::max<std::int64_t>(1, std::min(want, cap)));
    }
    double* pg = scratch.channel_partials();
    dispatch_float(dt, "rmsnorm_backward", [&](auto tag) {
        using T = decltype(tag);
        rmsnorm_bwd_dx_kernel<T><<<row_blocks(R), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy),
                                                                     static_cast<T*>(dx), R, C, gamma, rstd);
        HR_CUDA_CHECK_LAUNCH("rmsnorm_bwd_dx_kernel");
        const dim3 grid(static_cast<unsigned>((C + kThreads - 1) / kThreads), static_cast<unsigned>(G));
        rmsnorm_bwd_cols_kernel<T><<<grid, kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy), R, C,
                                                              rstd, G, pg, direct, dgamma);
        HR_CUDA_CHECK_LAUNCH("rmsnorm_bwd_cols_kernel");
    });
    if (!direct) {
        rmsnorm_bwd_finish_kernel<<<grid_for(C), kThreads, 0, s>>>(pg, G, C, dgamma);
        HR_CUDA_CHECK_LAUNCH("rmsnorm_bwd_finish_kernel");
    }
}

void rope_apply(void* x, DType dt, std::int64_t B, std::int64_t T, int heads, std::int64_t D, const float* freqs,
                bool inverse, cudaStream_t s) {
    const char* op = "rope_apply";
    if (B <= 0 || T <= 0 || D <= 0) return;
    if (D > kAttnMaxHeadDim)
        throw Error(std::string(op) + ": head size " + std::to_string(D) + " is above the GPU kernels' limit of " +
                    std::to_string(kAttnMaxHeadDim));
    RopeArgs a{};
    a.T = T;
    a.H = heads;
    a.D = D;
    a.sign = inverse ? -1.0f : 1.0f;
    for (std::int64_t i = 0; i < D / 2; ++i) a.f[i] = freqs[i];
    const std::int64_t pairs = B * T * heads * (D / 2);
    dispatch_float(dt, op, [&](auto tag) {
        using Tt = decltype(tag);
        rope_kernel<Tt><<<grid_for(pairs), kThreads, 0, s>>>(static_cast<Tt*>(x), pairs, a);
    });
    HR_CUDA_CHECK_LAUNCH("rope_kernel");
}

void swiglu_forward(const void* gate, const void* up, void* y, DType dt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "swiglu_forward", [&](auto tag) {
        using T = decltype(tag);
        swiglu_fwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(gate), static_cast<const T*>(up),
                                                               static_cast<T*>(y), n);
    });
    HR_CUDA_CHECK_LAUNCH("swiglu_fwd_kernel");
}

void swiglu_backward(const void* gate, const void* up, const void* dy, void* dgate, void* dup, DType dt, std::int64_t n,
                     cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "swiglu_backward", [&](auto tag) {
        using T = decltype(tag);
        swiglu_bwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(gate), static_cast<const T*>(up),
                                                               static_cast<const T*>(dy), static_cast<T*>(dgate),
                                                               static_cast<T*>(dup), n);
    });
    HR_CUDA_CHECK_LAUNCH("swiglu_bwd_kernel");
}

void gelu_tanh_forward(const void* x, void* y, DType dt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "gelu_tanh_forward", [&](auto tag) {
        using T = decltype(tag);
        gelu_tanh_fwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
    });
    HR_CUDA_CHECK_LAUNCH("gelu_tanh_fwd_kernel");
}

void gelu_tanh_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    dispatch_float(dt, "gelu_tanh_backward", [&](auto tag) {
        using T = decltype(tag);
        gelu_tanh_bwd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy),
                                                                  static_cast<T*>(dx), n);
    });
    HR_CUDA_CHECK_LAUNCH("gelu_tanh_bwd_kernel");
}

void attention_forward(const void* qkv, void* out, float* lse, DType dt, std::int64_t B, std::int64_t T,
                       std::int64_t C, int heads, const AttentionParams& p, cudaStream_t s) {
    const char* op = "attention_forward";
    if (B <= 0 || T <= 0 || C <= 0) return;
    if (T > INT_MAX / 2) throw Error(std::string(op) + ": sequence length " + std::to_string(T) + " is too long for the GPU kernels");
    const AttnArgs a = attn_args(B, T, C, heads, p);
    dispatch_float(dt, op, [&](auto tag) {
        using Tt = decltype(tag);
        dispatch_head(a.D, op, [&](auto e) {
            constexpr int E = decltype(e)::value;
            constexpr int R = E <= 2 ? 8 : 4;
            const std::size_t smem = attn_smem_fwd(a.D, R);
            attn_fwd_kernel<Tt, E, R><<<attn_blocks(op, B, heads, T, kAttnWarps * R), kAttnWarps * 32, smem, s>>>(
                static_cast<const Tt*>(qkv), static_cast<Tt*>(out), lse, a);
        });
    });
    HR_CUDA_CHECK_LAUNCH("attn_fwd_kernel");
}

void attention_backward(const void* qkv, const void* out, const float* lse, const void* dout, void* dqkv, DType dt,
                        std::int64_t B, std::int64_t T, std::int64_t C, int heads, const AttentionParams& p,
                        float* di, cudaStream_t s) {
    const char* op = "attention_backward";
    if (B <= 0 || T <= 0 || C <= 0) return;
    if (T > INT_MAX / 2) throw Error(std::string(op) + ": sequence length " + std::to_string(T) + " is too long for the GPU kernels");
    const AttnArgs a = attn_args(B, T, C, heads, p);
    dispatch_float(dt, op, [&](auto tag) {
        using Tt = decltype(tag);
        const std::int64_t rows = B * heads * T;
        attn_di_kernel<Tt><<<row_blocks(rows), kThreads, 0, s>>>(static_cast<const Tt*>(out), static_cast<const Tt*>(dout),
                                                                  di, rows, a);
        HR_CUDA_CHECK_LAUNCH("attn_di_kernel");
        dispatch_head(a.D, op, [&](auto e) {
            constexpr int E = decltype(e)::value;
            constexpr int R = E <= 2 ? 8 : 2;
            attn_dkdv_kernel<Tt, E, R><<<attn_blocks(op, B, a.KV, T, kAttnWarps * R), kAttnWarps * 32,
                                         attn_smem_dkdv(a.D, R), s>>>(static_cast<const Tt*>(qkv),
                                                                      static_cast<const Tt*>(dout), lse, di,
                                                                      static_cast<Tt*>(dqkv), a);
            HR_CUDA_CHECK_LAUNCH("attn_dkdv_kernel");
            attn_dq_kernel<Tt, E, R><<<attn_blocks(op, B, heads, T, kAttnWarps * R), kAttnWarps * 32,
                                       attn_smem_dq(a.D, R), s>>>(static_cast<const Tt*>(qkv),
                                                                  static_cast<const Tt*>(dout), lse, di,
                                                                  static_cast<Tt*>(dqkv), a);
            HR_CUDA_CHECK_LAUNCH("attn_dq_kernel");
        });
    });
}

void copy_rows(const void* src, void* dst, int elem_size, std::int64_t N, bool broadcast, std::int64_t S,
               std::int64_t src_row, std::int64_t D, std::int64_t dst_row, std::int64_t rows, std::int64_t C,
               cudaStream_t s) {
    if (N <= 0 || rows <= 0 || C <= 0) return;
    dispatch_elem(elem_size, "copy_rows", [&](auto tag) {
        using U = decltype(tag);
        copy_rows_kernel<U><<<grid_for(N * rows * C), kThreads, 0, s>>>(static_cast<const U*>(src), static_cast<U*>(dst),
                                                                         N, broadcast, S, src_row, D, dst_row, rows, C);
    });
    HR_CUDA_CHECK_LAUNCH("copy_rows_kernel");
}

void dequantize(const std::uint8_t* packed, void* w, DType dt, std::int64_t rows, std::int64_t cols, int bits,
                std::int64_t group, cudaStream_t s) {
    if (rows <= 0 || cols <= 0) return;
    const std::int64_t g = quantized_group(cols, bits, group);
    const std::int64_t nscales = quantized_scale_count(rows, cols, bits, group);
    Nf4Levels levels{};
    for (int k = 0; k < 16; ++k) levels.v[k] = nf4_level(k);
    dispatch_float(dt, "dequantize", [&](auto tag) {
        using T = decltype(tag);
        if (bits == kQuantNf4)
            dequantize_nf4_kernel<T><<<grid_for(rows * cols), kThreads, 0, s>>>(
                packed, static_cast<T*>(w), rows, cols, g, (cols + g - 1) / g, nscales, nf4_step_count(nscales), levels);
        else
            dequantize_kernel<T><<<grid_for(rows * cols), kThreads, 0, s>>>(packed, static_cast<T*>(w), rows, cols, bits, g,
                                                                            (cols + g - 1) / g, nscales);
    });
    HR_CUDA_CHECK_LAUNCH("dequantize_kernel");
}

void transpose_last2(const void* x, void* y, int elem_size, std::int64_t N, std::int64_t A, std::int64_t B,
                     cudaStream_t s) {
    if (N <= 0 || A <= 0 || B <= 0) return;
    dispatch_elem(elem_size, "transpose_last2", [&](auto tag) {
        using U = decltype(tag);
        transpose_last2_kernel<U><<<grid_for(N * A * B), kThreads, 0, s>>>(static_cast<const U*>(x), static_cast<U*>(y),
                                                                            N, A, B);
    });
    HR_CUDA_CHECK_LAUNCH("transpose_last2_kernel");
}

}  // namespace hr::cuda
