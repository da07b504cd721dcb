// CpuBackend: the transformer ops of backend.h other than attention (cpu_transformer_attention.cpp):
// embeddings, LayerNorm, GELU (tanh form), the fused in-place cross-entropy over a vocabulary, and the
// row copies and transposes the vision transformer needs. Every loop runs in the compute type (f32, or
// f64 for f64 tensors) over static partitions, so results do not depend on scheduling.
// No floating-point traps are ever enabled here: this lets GCC vectorise the loops that compare and
// select (exp_fast in cpu_transformer_math.h), which -ftrapping-math, the default, forbids. The flag is
// set for this file in core/CMakeLists.txt, which keeps it out of the unity batches.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_transformer_math.h"
#include "backend/transformer_checks.h"

namespace hr {

namespace cpu {
const ops::TensorRules& host_tensor_rules() {
    struct Rules final : ops::TensorRules {
        void here(const char* op, const char* name, const Tensor& t) const override { require_defined(op, name, t); }
        void floating(const char* op, const char* name, const Tensor& t) const override { require_float(op, name, t); }
    };
    static const Rules rules;
    return rules;
}
}  // namespace cpu

using namespace cpu;

const ops::TensorRules& CpuBackend::tensor_rules() const { return host_tensor_rules(); }

// --- embeddings ------------------------------------------------------------------------------------

void CpuBackend::do_embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y) {
    const char* op = "embedding_forward";
    const EmbeddingDims dims = embedding_dims(ids, table);
    const std::int64_t V = dims.V, C = dims.C, N = dims.N;
    const std::int64_t* pi = ids.data<std::int64_t>();
    for (std::int64_t i = 0; i < N; ++i)
        if (pi[i] < 0 || pi[i] >= V)
            fail(op, "token id " + std::to_string(pi[i]) + " at position " + std::to_string(i) + " is outside [0, " +
                         std::to_string(V) + ") for table " + desc(table));
    const std::size_t row = static_cast<std::size_t>(C) * dtype_size(table.dtype());
    const char* src = static_cast<const char*>(table.raw());
    char* dst = static_cast<char*>(y.raw());
    parallel_chunks(threads_, N, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(C, 1)),
                    [&](std::int64_t b, std::int64_t e) {
                        for (std::int64_t i = b; i < e; ++i)
                            std::memcpy(dst + static_cast<std::size_t>(i) * row,
                                        src + static_cast<std::size_t>(pi[i]) * row, row);
                    });
}

void CpuBackend::do_embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable) {
    const char* op = "embedding_backward";
    const EmbeddingDims dims = embedding_dims(ids, dtable);
    const std::int64_t V = dims.V, C = dims.C, N = dims.N;
    const std::int64_t* pi = ids.data<std::int64_t>();
    for (std::int64_t i = 0; i < N; ++i)
        if (pi[i] < 0 || pi[i] >= V)
            fail(op, "token id " + std::to_string(pi[i]) + " at position " + std::to_string(i) + " is outside [0, " +
                         std::to_string(V) + ")");
    // Positions grouped by token (stable: in position order), each token's rows summed in the compute
    // type, then added once: deterministic, and a bf16 table gets one rounding per row, not one per use.
    std::vector<std::int64_t> order(static_cast<std::size_t>(N));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return pi[a] < pi[b]; });
    std::vector<std::int64_t> starts;
    for (std::int64_t k = 0; k < N; ++k)
        if (k == 0 || pi[order[k]] != pi[order[k - 1]]) starts.push_back(k);
    starts.push_back(N);
    const std::int64_t groups = static_cast<std::int64_t>(starts.size()) - 1;
    dispatch_float(dy.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        dispatch_float(dtable.dtype(), op, [&](auto gtag) {
            using G = decltype(gtag);
            using A = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<G, double>, double, float>;
            const T* pd = dy.data<T>();
            G* pg = dtable.data<G>();
            const int nt = threads_for(threads_, N * C);
            chunks_indexed(nt, groups, [&](int, std::int64_t gb, std::int64_t ge) {
                std::vector<A> acc(static_cast<std::size_t>(C));
                for (std::int64_t g = gb; g < ge; ++g) {
                    std::fill(acc.begin(), acc.end(), A(0));
                    for (std::int64_t k = starts[g]; k < starts[g + 1]; ++k) {
                        const T* r = pd + order[k] * C;
                        for (std::int64_t c = 0; c < C; ++c) acc[c] += A(load(r, c));
                    }
                    G* out = pg + pi[order[starts[g]]] * C;
                    for (std::int64_t c = 0; c < C; ++c) store(out, c, Acc<G>(A(load(out, c)) + acc[c]));
                }
            });
        });
    });
}

// --- LayerNorm -------------------------------------------------------------------------------------

void CpuBackend::do_layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                   Tensor& mean, Tensor& rstd) {
    const char* op = "layernorm_forward";
    const RowsCols rc = rows_cols_of(x);
    const std::int64_t R = rc.R, C = rc.C;
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        dispatch_float(gamma.dtype(), op, [&](auto ptag) {
            using P = decltype(ptag);
            const T* px = x.data<T>();
            T* py = y.data<T>();
            const P* pg = gamma.data<P>();
            const P* pb = beta.defined() ? beta.data<P>() : nullptr;
            float* pm = mean.data<float>();
            float* pr = rstd.data<float>();
            std::vector<A> g(static_cast<std::size_t>(C)), b(static_cast<std::size_t>(C), A(0));
            for (std::int64_t c = 0; c < C; ++c) {
                g[c] = A(load(pg, c));
                if (pb) b[c] = A(load(pb, c));
            }
            parallel_chunks(threads_, R, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(C, 1)),
                            [&](std::int64_t rb, std::int64_t re) {
                                std::vector<A> row(static_cast<std::size_t>(C));
                                for (std::int64_t r = rb; r < re; ++r) {
                                    const T* xr = px + r * C;
                                    A s = 0;
                                    for (std::int64_t c = 0; c < C; ++c) {
                                        row[c] = A(load(xr, c));
                                        s += row[c];
                                    }
                                    const A mu = s / A(C);
                                    A ss = 0;
                                    for (std::int64_t c = 0; c < C; ++c) {
                                        const A d = row[c] - mu;
                                        ss += d * d;
                                    }
                                    const A rs = A(1) / std::sqrt(ss / A(C) + A(eps));
                                    T* yr = py + r * C;
                                    for (std::int64_t c = 0; c < C; ++c) store(yr, c, (row[c] - mu) * rs * g[c] + b[c]);
                                    pm[r] = static_cast<float>(mu);
                                    pr[r] = static_cast<float>(rs);
                                }
                            });
        });
    });
}

void CpuBackend::do_layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                                    const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const char* op = "layernorm_backward";
    const RowsCols rc = rows_cols_of(x);
    const std::int64_t R = rc.R, C = rc.C;
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        dispatch_float(gamma.dtype(), op, [&](auto ptag) {
            using P = decltype(ptag);
            const T* px = x.data<T>();
            const T* pd = dy.data<T>();
            T* pdx = dx.data<T>();
            const P* pg = gamma.data<P>();
            const float* pm = mean.data<float>();
            const float* pr = rstd.data<float>();
            std::vector<A> g(static_cast<std::size_t>(C));
            for (std::int64_t c = 0; c < C; ++c) g[c] = A(load(pg, c));
            const int nt = threads_for(threads_, R * C);
            // per-chunk partial sums of dgamma and dbeta, combined in chunk order (deterministic)
            std::vector<std::vector<double>> pdg(nt, std::vector<double>(C, 0.0)), pdb(nt, std::vector<double>(C, 0.0));
            chunks_indexed(nt, R, [&](int t, std::int64_t rb, std::int64_t re) {
                std::vector<A> xh(static_cast<std::size_t>(C)), dxh(static_cast<std::size_t>(C));
                std::vector<A> sg(static_cast<std::size_t>(C), A(0)), sb(static_cast<std::size_t>(C), A(0));
                for (std::int64_t r = rb; r < re; ++r) {
                    const T* xr = px + r * C;
                    const T* dr = pd + r * C;
                    const A mu = A(pm[r]), rs = A(pr[r]);
                    A m1 = 0, m2 = 0;
                    for (std::int64_t c = 0; c < C; ++c) {
                        const A d = A(load(dr, c));
                        xh[c] = (A(load(xr, c)) - mu) * rs;
                        dxh[c] = d * g[c];
                        m1 += dxh[c];
                        m2 += dxh[c] * xh[c];
                        sg[c] += d * xh[c];
                        sb[c] += d;
                    }
                    m1 /= A(C);
                    m2 /= A(C);
                    T* o = pdx + r * C;
                    for (std::int64_t c = 0; c < C; ++c) store(o, c, rs * (dxh[c] - m1 - xh[c] * m2));
                }
                for (std::int64_t c = 0; c < C; ++c) {
                    pdg[t][c] += double(sg[c]);
                    pdb[t][c] += double(sb[c]);
                }
            });
            std::vector<double> tg(C, 0.0), tb(C, 0.0);
            for (int t = 0; t < nt; ++t)
                for (std::int64_t c = 0; c < C; ++c) {
                    tg[c] += pdg[t][c];
                    tb[c] += pdb[t][c];
                }
            auto add_to = [&](Tensor& out, const std::vector<double>& v) {
                dispatch_float(out.dtype(), op, [&](auto otag) {
                    using O = decltype(otag);
                    O* po = out.data<O>();
                    for (std::int64_t c = 0; c < C; ++c) store(po, c, Acc<O>(double(load(po, c)) + v[c]));
                });
            };
            add_to(dgamma, tg);
            if (dbeta.defined()) add_to(dbeta, tb);
        });
    });
}

// --- GELU, tanh form -------------------------------------------------------------------------------


void CpuBackend::do_gelu_tanh_forward(const Tensor& x, Tensor& y) {
    const char* op = "gelu_tanh_forward";
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        parallel_chunks(threads_, x.numel(), kParallelGrain / 8, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) store(py, i, gelu_tanh_value(A(load(px, i))));
        });
    });
}

void CpuBackend::do_gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
    const char* op = "gelu_tanh_backward";
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        const T* px = x.data<T>();
        const T* pd = dy.data<T>();
        T* po = dx.data<T>();
        parallel_chunks(threads_, x.numel(), kParallelGrain / 8, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) store(po, i, A(load(pd, i)) * gelu_tanh_derivative(A(load(px, i))));
        });
    });
}

// --- fused cross-entropy over a vocabulary, in place -----------------------------------------------

LossResult CpuBackend::do_cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad, float grad_scale) {
    const char* op = "cross_entropy_inplace";
    const VocabDims dims{logits.dim(0), logits.dim(1)};
    const std::int64_t N = dims.N, V = dims.V;
    const std::int64_t* pt = targets.data<std::int64_t>();
    for (std::int64_t i = 0; i < N; ++i)
        if ((pt[i] < 0 || pt[i] >= V) && pt[i] != kIgnoreTarget)
            fail(op, "target " + std::to_string(pt[i]) + " in row " + std::to_string(i) + " is outside [0, " +
                         std::to_string(V) + ") and is not " + std::to_string(kIgnoreTarget));
    std::vector<double> row_loss(static_cast<std::size_t>(N));
    std::vector<unsigned char> row_ok(static_cast<std::size_t>(N));
    dispatch_float(logits.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        T* pz = logits.data<T>();
        const A g = A(double(grad_scale) / double(std::max<std::int64_t>(N, 1)));
        parallel_chunks(threads_, N, std::max<std::int64_t>(1, kParallelGrain / (4 * V)), [&](std::int64_t b,
                                                                                             std::int64_t e) {
            std::vector<A> row(static_cast<std::size_t>(V));
            for (std::int64_t r = b; r < e; ++r) {
                T* z = pz + r * V;
                if (pt[r] == kIgnoreTarget) {  // no loss, a zero gradient row
                    row_loss[r] = 0.0;
                    row_ok[r] = 0;
                    if (want_grad)
                        for (std::int64_t k = 0; k < V; ++k) store(z, k, A(0));
                    continue;
                }
                A mx = A(load(z, 0));
                std::int64_t arg = 0;
                for (std::int64_t k = 0; k < V; ++k) {
                    row[k] = A(load(z, k));
                    if (row[k] > mx) {
                        mx = row[k];
                        arg = k;
                    }
                }
                A se = 0;
                for (std::int64_t k = 0; k < V; ++k) row[k] = exp_fast(row[k] - mx);
                for (std::int64_t k = 0; k < V; ++k) se += row[k];
                const std::int64_t y = pt[r];
                // the logits are still unchanged here: loss = log(sum exp(z - max)) + max - z_y
                row_loss[r] = std::log(double(se)) + double(mx) - double(load(z, y));
                row_ok[r] = arg == y;
                if (want_grad) {
                    const A inv = g / se;
                    for (std::int64_t k = 0; k < V; ++k) store(z, k, row[k] * inv);
                    store(z, y, A(load(z, y)) - g);
                }
            }
        });
    });
    LossResult r;
    double s = 0;
    for (std::int64_t i = 0; i < N; ++i) {
        s += row_loss[i];
        r.correct += row_ok[i];
    }
    r.loss = N > 0 ? s / double(N) : 0.0;
    return r;
}

// --- sequence plumbing -----------------------------------------------------------------------------

void CpuBackend::do_copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row,
                           std::int64_t rows) {
    const std::int64_t N = dst.dim(0), S = src.dim(1), D = dst.dim(1), C = dst.dim(2);
    const std::size_t es = dtype_size(dst.dtype());
    const char* ps = static_cast<const char*>(src.raw());
    char* pd = static_cast<char*>(dst.raw());
    const bool bcast = src.dim(0) == 1 && N != 1;
    for (std::int64_t n = 0; n < N; ++n)
        std::memcpy(pd + static_cast<std::size_t>((n * D + dst_row) * C) * es,
                    ps + static_cast<std::size_t>(((bcast ? 0 : n) * S + src_row) * C) * es,
                    static_cast<std::size_t>(rows * C) * es);
}

void CpuBackend::do_transpose_last2(const Tensor& x, Tensor& y) {
    const std::int64_t N = x.dim(0), A = x.dim(1), B = x.dim(2);
    const std::size_t es = dtype_size(x.dtype());
    const char* px = static_cast<const char*>(x.raw());
    char* py = static_cast<char*>(y.raw());
    parallel_chunks(threads_, N, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(A * B, 1)),
                    [&](std::int64_t nb, std::int64_t ne) {
                        for (std::int64_t n = nb; n < ne; ++n)
                            for (std::int64_t a = 0; a < A; ++a)
                                for (std::int64_t b = 0; b < B; ++b)
                                    std::memcpy(py + static_cast<std::size_t>((n * B + b) * A + a) * es,
                                                px + static_cast<std::size_t>((n * A + a) * B + b) * es, es);
                    });
}

void CpuBackend::do_dequantize(const Tensor& packed, int bits, std::int64_t group, Tensor& w) {
    const std::int64_t rows = w.dim(0), cols = w.dim(1);
    const auto* p = static_cast<const std::uint8_t*>(packed.raw());
    const DType dt = w.dtype();
    parallel_chunks(threads_, rows, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(cols, 1)),
                    [&](std::int64_t rb, std::int64_t re) {
                        if (dt == DType::f32)
                            dequantize_rows(p, rows, cols, bits, group, rb, re, static_cast<float*>(w.raw()),
                                            [](float v) { return v; });
                        else if (dt == DType::f64)
                            dequantize_rows(p, rows, cols, bits, group, rb, re, static_cast<double*>(w.raw()),
                                            [](float v) { return static_cast<double>(v); });
                        else if (dt == DType::bf16)
                            dequantize_rows(p, rows, cols, bits, group, rb, re, static_cast<std::uint16_t*>(w.raw()),
                                            [](float v) { return f32_to_bf16(v); });
                        else
                            dequantize_rows(p, rows, cols, bits, group, rb, re, static_cast<std::uint16_t*>(w.raw()),
                                            [](float v) { return f32_to_f16(v); });
                    });
}

}  // namespace hr
