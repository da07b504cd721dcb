// CpuBackend: memory-efficient self-attention (backend.h attention_forward / attention_backward).
//
// Work is split over (batch, head) pairs on the CPU backend's thread pool (each pair is handled by one
// thread from start to end, in its slot's scratch, so results do not depend on scheduling). For one pair, K and V are
// gathered once into f32 (f64 for f64) scratch; queries are then processed in tiles of kTile rows:
// the tile's scores against the keys it may see (all of them, or those up to its last row when
// causal) are formed with one GEMM, softmaxed row by row, and multiplied into V with a second. So the
// scratch holds kTile x T scores per thread, never T x T per head, and forward keeps only the output
// and one f32 log-sum-exp per row. Backward recomputes each tile's probabilities from the scores and
// the saved log-sum-exp, and accumulates dK and dV in the pair's scratch (no races: one thread per
// pair). All scratch comes from the caller's workspace (attention_workspace_bytes), so it is in the
// ledger. Grouped-query attention splits the work over (batch, key/value head) pairs instead, each
// handling the query heads its KV head serves, so dK and dV sum over them without races.
// No floating-point traps are ever enabled here: this lets GCC vectorise the loops that compare and
// select (exp_fast in cpu_transformer_math.h), which -ftrapping-math, the default, forbids. The flag is
// set for this file in core/CMakeLists.txt, which keeps it out of the unity batches.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/cpu/blas.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_transformer_math.h"
#include "backend/transformer_checks.h"

namespace hr {

using namespace cpu;

namespace {

constexpr std::int64_t kTile = 64;  // query rows per tile

inline void gemm_rm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc) {
    if (m == 0 || n == 0) return;
    cpu::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm_rm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
                    int ldb, double beta, double* c, int ldc) {
    if (m == 0 || n == 0) return;
    cpu::dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Scratch elements (compute type) one thread needs for a (T, D) head; forward uses a prefix of it.
std::int64_t scratch_per_thread(std::int64_t T, std::int64_t D) {
    const std::int64_t tile = std::min(kTile, std::max<std::int64_t>(T, 1));
    return 4 * T * D + 3 * tile * D + 3 * tile * T + tile;
}

int attention_threads(int threads, std::int64_t pairs) {
    return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, pairs)));
}

// The dropout keep factor of probability (b, h, i, j): 0 or 1/(1 - p).
template <class A>
inline A keep_factor(const AttentionParams& p, std::uint64_t base, std::int64_t i, std::int64_t T, std::int64_t j,
                     A inv_keep) {
    const std::uint64_t counter = base + static_cast<std::uint64_t>(i * T + j);
    return counter_uniform_inline(p.seed, counter) < p.dropout ? A(0) : inv_keep;
}

// Where q, k and v of token (b, t), head hh live in qkv (backend.h AttentionParams::planes): part k (0 q,
// 1 k, 2 v) starts at off[k], its tokens are stride[k] elements apart, its head 0 at column col[k].
struct QkvLayout {
    std::int64_t off[3], stride[3], col[3];
    std::int64_t at(int k, std::int64_t b, std::int64_t t, std::int64_t T, std::int64_t hh, std::int64_t D) const {
        return off[k] + (b * T + t) * stride[k] + col[k] + hh * D;
    }
};
QkvLayout qkv_layout(const AttnDims& d, bool planes) {
    const std::int64_t kvd = d.KV * d.D;
    if (!planes) {
        const std::int64_t w = d.C + 2 * kvd;
        return {{0, 0, 0}, {w, w, w}, {0, d.C, d.C + kvd}};
    }
    const std::int64_t bt = d.B * d.T;
    return {{0, bt * d.C, bt * (d.C + kvd)}, {d.C, kvd, kvd}, {0, 0, 0}};
}

// One (batch, key/value head) pair: K and V gathered once, then each query head the KV head serves
// (one with multi-head attention) in turn.
template <class T, class A>
void forward_pair(const T* qkv, T* out, float* lse, const AttnDims& d, const QkvLayout& lay, std::int64_t b,
                  std::int64_t g, const AttentionParams& p, A* scratch) {
    const std::int64_t Tn = d.T, D = d.D, C = d.C;
    const std::int64_t tile = std::min(kTile, Tn);
    A* K = scratch;
    A* V = K + Tn * D;
    A* Q = V + Tn * D;
    A* S = Q + tile * D;  // tile x T
    A* O = S + tile * Tn;
    for (std::int64_t j = 0; j < Tn; ++j) {
        const T* rk = qkv + lay.at(1, b, j, Tn, g, D);
        const T* rv = qkv + lay.at(2, b, j, Tn, g, D);
        for (std::int64_t e = 0; e < D; ++e) {
            K[j * D + e] = A(load(rk, e));
            V[j * D + e] = A(load(rv, e));
        }
    }
    const A scale = A(1) / std::sqrt(A(D));
    const bool drop = p.dropout > 0.0f;
    const A inv_keep = A(1) / (A(1) - A(p.dropout));
    const std::int64_t group = d.H / d.KV;
    for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
        const std::uint64_t dbase =
            p.offset + static_cast<std::uint64_t>((b * d.H + h) * Tn) * static_cast<std::uint64_t>(Tn);
        for (std::int64_t i0 = 0; i0 < Tn; i0 += tile) {
            const std::int64_t r = std::min(tile, Tn - i0);
            const std::int64_t kend = p.causal ? i0 + r : Tn;
            for (std::int64_t i = 0; i < r; ++i) {
                const T* q = qkv + lay.at(0, b, i0 + i, Tn, h, D);
                for (std::int64_t e = 0; e < D; ++e) Q[i * D + e] = A(load(q, e)) * scale;
            }
            gemm_rm(false, true, int(r), int(kend), int(D), A(1), Q, int(D), K, int(D), A(0), S, int(kend));
            for (std::int64_t i = 0; i < r; ++i) {
                A* s = S + i * kend;
                const std::int64_t jn = p.causal ? i0 + i + 1 : kend;
                A mx = s[0];
                for (std::int64_t j = 1; j < jn; ++j) mx = std::max(mx, s[j]);
                A sum = 0;
                for (std::int64_t j = 0; j < jn; ++j) s[j] = exp_fast(s[j] - mx);
                for (std::int64_t j = 0; j < jn; ++j) sum += s[j];
                const A inv = A(1) / sum;
                for (std::int64_t j = 0; j < jn; ++j) s[j] *= inv;
                for (std::int64_t j = jn; j < kend; ++j) s[j] = A(0);
                if (drop)
                    for (std::int64_t j = 0; j < jn; ++j) s[j] *= keep_factor(p, dbase, i0 + i, Tn, j, inv_keep);
                lse[(b * d.H + h) * Tn + i0 + i] = static_cast<float>(mx + std::log(sum));
            }
            gemm_rm(false, false, int(r), int(D), int(kend), A(1), S, int(kend), V, int(D), A(0), O, int(D));
            for (std::int64_t i = 0; i < r; ++i) {
                T* o = out + (b * Tn + i0 + i) * C + h * D;
                for (std::int64_t e = 0; e < D; ++e) store(o, e, O[i * D + e]);
            }
        }
    }
}

// One (batch, key/value head) pair: dK and dV sum over the query heads the KV head serves.
template <class T, class A>
void backward_pair(const T* qkv, const T* out, const float* lse, const T* dout, T* dqkv, const AttnDims& d,
                   const QkvLayout& lay, std::int64_t b, std::int64_t g, const AttentionParams& p, A* scratch) {
    const std::int64_t Tn = d.T, D = d.D, C = d.C;
    const std::int64_t tile = std::min(kTile, Tn);
    A* K = scratch;
    A* V = K + Tn * D;
    A* dK = V + Tn * D;
    A* dV = dK + Tn * D;
    A* Q = dV + Tn * D;
    A* dO = Q + tile * D;
    A* dQ = dO + tile * D;
    A* P = dQ + tile * D;    // tile x T
    A* dP = P + tile * Tn;   // tile x T
    A* Di = dP + tile * Tn;  // tile
    for (std::int64_t j = 0; j < Tn; ++j) {
        const T* rk = qkv + lay.at(1, b, j, Tn, g, D);
        const T* rv = qkv + lay.at(2, b, j, Tn, g, D);
        for (std::int64_t e = 0; e < D; ++e) {
            K[j * D + e] = A(load(rk, e));
            V[j * D + e] = A(load(rv, e));
        }
    }
    std::fill(dK, dK + 2 * Tn * D, A(0));
    const A scale = A(1) / std::sqrt(A(D));
    const bool drop = p.dropout > 0.0f;
    const A inv_keep = A(1) / (A(1) - A(p.dropout));
    const std::int64_t group = d.H / d.KV;
    for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
        const std::uint64_t dbase =
            p.offset + static_cast<std::uint64_t>((b * d.H + h) * Tn) * static_cast<std::uint64_t>(Tn);
        for (std::int64_t i0 = 0; i0 < Tn; i0 += tile) {
            const std::int64_t r = std::min(tile, Tn - i0);
            const std::int64_t kend = p.causal ? i0 + r : Tn;
            for (std::int64_t i = 0; i < r; ++i) {
                const T* q = qkv + lay.at(0, b, i0 + i, Tn, h, D);
                const T* go = dout + (b * Tn + i0 + i) * C + h * D;
                const T* o = out + (b * Tn + i0 + i) * C + h * D;
                A di = 0;
                for (std::int64_t e = 0; e < D; ++e) {
                    Q[i * D + e] = A(load(q, e)) * scale;
                    dO[i * D + e] = A(load(go, e));
                    di += dO[i * D + e] * A(load(o, e));
                }
                Di[i] = di;
            }
            // P = exp(S - lse) on the visible keys, 0 elsewhere
            gemm_rm(false, true, int(r), int(kend), int(D), A(1), Q, int(D), K, int(D), A(0), P, int(kend));
            for (std::int64_t i = 0; i < r; ++i) {
                A* s = P + i * kend;
                const std::int64_t jn = p.causal ? i0 + i + 1 : kend;
                const A l = A(lse[(b * d.H + h) * Tn + i0 + i]);
                for (std::int64_t j = 0; j < jn; ++j) s[j] = exp_fast(s[j] - l);
                for (std::int64_t j = jn; j < kend; ++j) s[j] = A(0);
            }
            // dP = dO V^T
            gemm_rm(false, true, int(r), int(kend), int(D), A(1), dO, int(D), V, int(D), A(0), dP, int(kend));
            if (drop) {
                // dropped probabilities Pd = P * keep / (1 - p): dV += Pd^T dO, and dP picks up the same factors
                A* Pd = Di + tile;  // tile x T
                for (std::int64_t i = 0; i < r; ++i) {
                    const std::int64_t jn = p.causal ? i0 + i + 1 : kend;
                    const A* s = P + i * kend;
                    A* gp = dP + i * kend;
                    A* pd = Pd + i * kend;
                    for (std::int64_t j = 0; j < kend; ++j) {
                        const A f = j < jn ? keep_factor(p, dbase, i0 + i, Tn, j, inv_keep) : A(0);
                        pd[j] = s[j] * f;
                        gp[j] *= f;
                    }
                }
                gemm_rm(true, false, int(kend), int(D), int(r), A(1), Pd, int(kend), dO, int(D), A(1), dV, int(D));
            } else {
                gemm_rm(true, false, int(kend), int(D), int(r), A(1), P, int(kend), dO, int(D), A(1), dV, int(D));
            }
            // dS = P * (dP - D_i), written over dP
            for (std::int64_t i = 0; i < r; ++i) {
                const A* s = P + i * kend;
                A* gp = dP + i * kend;
                for (std::int64_t j = 0; j < kend; ++j) gp[j] = s[j] * (gp[j] - Di[i]);
            }
            // dQ = dS K * scale; dK += dS^T (Q * scale)
            gemm_rm(false, false, int(r), int(D), int(kend), scale, dP, int(kend), K, int(D), A(0), dQ, int(D));
            gemm_rm(true, false, int(kend), int(D), int(r), A(1), dP, int(kend), Q, int(D), A(1), dK, int(D));
            for (std::int64_t i = 0; i < r; ++i) {
                T* o = dqkv + lay.at(0, b, i0 + i, Tn, h, D);
                for (std::int64_t e = 0; e < D; ++e) store(o, e, dQ[i * D + e]);
            }
        }
    }
    for (std::int64_t j = 0; j < Tn; ++j) {
        T* ok = dqkv + lay.at(1, b, j, Tn, g, D);
        T* ov = dqkv + lay.at(2, b, j, Tn, g, D);
        for (std::int64_t e = 0; e < D; ++e) {
            store(ok, e, dK[j * D + e]);
            store(ov, e, dV[j * D + e]);
        }
    }
}

// Decoding against a cache (attention_cached): one key/value head g, the query heads it serves, for the n
// new tokens at positions pos ..; K and V are the cache's rows 0 .. pos + n - 1 (f32 and f64 read in place,
// other types gathered into the scratch first). The tiles, scores and softmax are forward_pair's, so a new
// token gets the row the whole sequence's forward gives it (up to the GEMMs' own rounding).
template <class T, class A>
void cached_group(const T* qkv, const T* kc, const T* vc, T* out, const AttnDims& d, const QkvLayout& lay,
                  std::int64_t L, std::int64_t pos, std::int64_t g, A* scratch) {
    const std::int64_t n = d.T, D = d.D, C = d.C, total = pos + n;
    const std::int64_t tile = std::min(kTile, n);
    const T* kg = kc + g * L * D;
    const T* vg = vc + g * L * D;
    const A* K;
    const A* V;
    A* w = scratch;
    if constexpr (std::is_same_v<T, A>) {
        K = kg;
        V = vg;
    } else {
        A* k = w;
        A* v = w + L * D;
        for (std::int64_t j = 0; j < total * D; ++j) {
            k[j] = A(load(kg, j));
            v[j] = A(load(vg, j));
        }
        K = k;
        V = v;
        w += 2 * L * D;
    }
    A* Q = w;
    A* S = Q + tile * D;  // tile x total
    A* O = S + tile * L;
    const A scale = A(1) / std::sqrt(A(D));
    const std::int64_t group = d.H / d.KV;
    for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
        for (std::int64_t i0 = 0; i0 < n; i0 += tile) {
            const std::int64_t r = std::min(tile, n - i0);
            const std::int64_t kend = pos + i0 + r;
            for (std::int64_t i = 0; i < r; ++i) {
                const T* q = qkv + lay.at(0, 0, i0 + i, n, h, D);
                for (std::int64_t e = 0; e < D; ++e) Q[i * D + e] = A(load(q, e)) * scale;
            }
            gemm_rm(false, true, int(r), int(kend), int(D), A(1), Q, int(D), K, int(D), A(0), S, int(kend));
            for (std::int64_t i = 0; i < r; ++i) {
                A* s = S + i * kend;
                const std::int64_t jn = pos + i0 + i + 1;
                A mx = s[0];
                for (std::int64_t j = 1; j < jn; ++j) mx = std::max(mx, s[j]);
                A sum = 0;
                for (std::int64_t j = 0; j < jn; ++j) s[j] = exp_fast(s[j] - mx);
                for (std::int64_t j = 0; j < jn; ++j) sum += s[j];
                const A inv = A(1) / sum;
                for (std::int64_t j = 0; j < jn; ++j) s[j] *= inv;
                for (std::int64_t j = jn; j < kend; ++j) s[j] = A(0);
            }
            gemm_rm(false, false, int(r), int(D), int(kend), A(1), S, int(kend), V, int(D), A(0), O, int(D));
            for (std::int64_t i = 0; i < r; ++i) {
                T* o = out + (i0 + i) * C + h * D;
                for (std::int64_t e = 0; e < D; ++e) store(o, e, O[i * D + e]);
            }
        }
    }
}

// Scratch elements (compute type) one thread of attention_cached needs: Q and O tiles, the scores, and K
// and V gathered unless the cache is read in place.
std::int64_t cached_scratch_per_thread(std::int64_t n, std::int64_t L, std::int64_t D, bool gather) {
    const std::int64_t tile = std::min(kTile, std::max<std::int64_t>(n, 1));
    return 2 * tile * D + tile * L + (gather ? 2 * L * D : 0);
}

template <class A>
A* thread_scratch(const char* op, Tensor& workspace, std::int64_t per_thread, int thread, int nt) {
    const std::size_t need = static_cast<std::size_t>(per_thread) * sizeof(A) * static_cast<std::size_t>(nt);
    check_workspace(op, host_tensor_rules(), workspace, need);
    return reinterpret_cast<A*>(static_cast<char*>(workspace.raw())) + static_cast<std::size_t>(per_thread) * thread;
}

}  // namespace

std::size_t CpuBackend::attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                                  DType dtype) const {
    if (heads < 1 || C % heads != 0 || B < 1 || T < 1) return 0;
    const std::int64_t D = C / heads;
    const std::size_t es = dtype == DType::f64 ? 8 : 4;
    const int nt = attention_threads(threads_, B * heads);
    return static_cast<std::size_t>(scratch_per_thread(T, D)) * es * static_cast<std::size_t>(nt);
}

void CpuBackend::do_attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                                   Tensor& workspace) {
    const char* op = "attention_forward";
    const AttnDims d = attention_dims(qkv, p);
    const std::int64_t pairs = d.B * d.KV;  // (batch, key/value head)
    const int nt = attention_threads(threads_, pairs);
    const std::int64_t per = scratch_per_thread(d.T, d.D);
    const QkvLayout lay = qkv_layout(d, p.planes);
    dispatch_float(qkv.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        thread_scratch<A>(op, workspace, per, 0, nt);  // size check before the parallel region
        const T* pq = qkv.data<T>();
        T* po = out.data<T>();
        float* pl = lse.data<float>();
        parallel_for_slots(nt, pairs, [&](std::int64_t bh, int slot) {
            A* s = reinterpret_cast<A*>(workspace.raw()) + per * slot;
            forward_pair<T, A>(pq, po, pl, d, lay, bh / d.KV, bh % d.KV, p, s);
        });
    });
}

std::size_t CpuBackend::attention_cached_workspace_bytes(std::int64_t n, std::int64_t L, int heads, int kv_heads,
                                                        std::int64_t D, DType dtype) const {
    if (heads < 1 || kv_heads < 1 || n < 1 || L < 1 || D < 1) return 0;
    const bool gather = dtype != DType::f32 && dtype != DType::f64;
    const std::size_t es = dtype == DType::f64 ? 8 : 4;
    const int nt = attention_threads(threads_, kv_heads);
    return static_cast<std::size_t>(cached_scratch_per_thread(n, L, D, gather)) * es * static_cast<std::size_t>(nt);
}

void CpuBackend::do_attention_cached(const Tensor& qkv, Tensor& k_cache, Tensor& v_cache, std::int64_t pos,
                                     const AttentionParams& p, Tensor& out, Tensor& workspace) {
    const char* op = "attention_cached";
    const AttnDims d = attention_dims(qkv, p);
    const std::int64_t L = k_cache.dim(1), n = d.T, D = d.D;
    const int nt = attention_threads(threads_, d.KV);
    const QkvLayout lay = qkv_layout(d, p.planes);
    dispatch_float(qkv.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        const std::int64_t per = cached_scratch_per_thread(n, L, D, !std::is_same_v<T, A>);
        thread_scratch<A>(op, workspace, per, 0, nt);  // size check before the parallel region
        const T* pq = qkv.data<T>();
        T* pk = k_cache.data<T>();
        T* pv = v_cache.data<T>();
        T* po = out.data<T>();
        // the new tokens' keys and values into the cache rows pos ..
        for (std::int64_t g = 0; g < d.KV; ++g)
            for (std::int64_t i = 0; i < n; ++i) {
                std::copy_n(pq + lay.at(1, 0, i, n, g, D), D, pk + (g * L + pos + i) * D);
                std::copy_n(pq + lay.at(2, 0, i, n, g, D), D, pv + (g * L + pos + i) * D);
            }
        parallel_for_slots(nt, d.KV, [&](std::int64_t g, int slot) {
            A* s = reinterpret_cast<A*>(workspace.raw()) + per * slot;
            cached_group<T, A>(pq, pk, pv, po, d, lay, L, pos, g, s);
        });
    });
}

void CpuBackend::do_attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                                    Tensor& dqkv, const AttentionParams& p, Tensor& workspace) {
    const char* op = "attention_backward";
    const AttnDims d = attention_dims(qkv, p);
    const std::int64_t pairs = d.B * d.KV;
    const int nt = attention_threads(threads_, pairs);
    const std::int64_t per = scratch_per_thread(d.T, d.D);
    const QkvLayout lay = qkv_layout(d, p.planes);
    dispatch_float(qkv.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        thread_scratch<A>(op, workspace, per, 0, nt);
        const T* pq = qkv.data<T>();
        const T* po = out.data<T>();
        const T* pg = dout.data<T>();
        T* pd = dqkv.data<T>();
        const float* pl = lse.data<float>();
        parallel_for_slots(nt, pairs, [&](std::int64_t bh, int slot) {
            A* s = reinterpret_cast<A*>(workspace.raw()) + per * slot;
            backward_pair<T, A>(pq, po, pl, pg, pd, d, lay, bh / d.KV, bh % d.KV, p, s);
        });
    });
}

}  // namespace hr
