// CpuBackend: the LLaMA family's ops of backend.h (RMSNorm, rotary embeddings, SwiGLU's gate), the
// reference the CUDA kernels agree with. Rows are split in static chunks; a row's result never depends on
// the split, and dgamma's partial sums are combined in chunk order, so results are deterministic.
// Compiled with -fno-trapping-math, outside the unity batches (core/CMakeLists.txt).

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_transformer_math.h"
#include "backend/transformer_checks.h"

namespace hr {

using namespace cpu;

namespace {

// The chunk count for n rows of work_per_item each (cpu_transformer_math.h threads_for), and the runner.
int llama_chunk_count(int threads, std::int64_t n, std::int64_t work_per_item) {
    const int nt = threads_for(threads, n * std::max<std::int64_t>(work_per_item, 1));
    return n < 2 ? 1 : static_cast<int>(std::min<std::int64_t>(nt, n));
}

template <class F>
void llama_chunks(int threads, std::int64_t n, std::int64_t work_per_item, F&& f) {
    chunks_indexed(llama_chunk_count(threads, n, work_per_item), n, f);
}

template <class A>
inline A silu_of(A g) {
    return g / (A(1) + exp_fast(-g));  // f32: the vectorisable exp; f64 (gradchecks): std::exp
}

}  // namespace

// --- RMSNorm ---------------------------------------------------------------------------------------

void CpuBackend::do_rmsnorm_forward(const Tensor& x, const Tensor& gamma, float eps, Tensor& y, Tensor& rstd) {
    const char* op = "rmsnorm_forward";
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
            float* pr = rstd.data<float>();
            std::vector<A> g(static_cast<std::size_t>(C));
            for (std::int64_t c = 0; c < C; ++c) g[c] = A(load(pg, c));
            llama_chunks(threads_, R, C, [&](int, std::int64_t rb, std::int64_t re) {
                for (std::int64_t r = rb; r < re; ++r) {
                    const T* xr = px + r * C;
                    A ss = 0;
                    for (std::int64_t c = 0; c < C; ++c) {
                        const A v = A(load(xr, c));
                        ss += v * v;
                    }
                    const A rs = A(1) / std::sqrt(ss / A(C) + A(eps));
                    T* yr = py + r * C;
                    for (std::int64_t c = 0; c < C; ++c) store(yr, c, A(load(xr, c)) * rs * g[c]);
                    pr[r] = static_cast<float>(rs);
                }
            });
        });
    });
}

// y = g * x * r with r = (mean(x^2) + eps)^-1/2: dx = r * (g dy - x * r^2 * mean(g dy x)), dg += sum dy x r.
void CpuBackend::do_rmsnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                                  Tensor& dgamma) {
    const char* op = "rmsnorm_backward";
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
            const float* pr = rstd.data<float>();
            std::vector<A> g(static_cast<std::size_t>(C));
            for (std::int64_t c = 0; c < C; ++c) g[c] = A(load(pg, c));
            const int nt = llama_chunk_count(threads_, R, C);
            std::vector<std::vector<double>> part(static_cast<std::size_t>(nt), std::vector<double>(C, 0.0));
            llama_chunks(threads_, R, C, [&](int t, std::int64_t rb, std::int64_t re) {
                std::vector<A> sg(static_cast<std::size_t>(C), A(0));
                for (std::int64_t r = rb; r < re; ++r) {
                    const T* xr = px + r * C;
                    const T* dr = pd + r * C;
                    const A rs = A(pr[r]);
                    A m = 0;
                    for (std::int64_t c = 0; c < C; ++c) {
                        const A xv = A(load(xr, c)), dv = A(load(dr, c));
                        m += g[c] * dv * xv;
                        sg[c] += dv * xv * rs;
                    }
                    m /= A(C);
                    T* o = pdx + r * C;
                    for (std::int64_t c = 0; c < C; ++c)
                        store(o, c, rs * (g[c] * A(load(dr, c)) - A(load(xr, c)) * rs * rs * m));
                }
                for (std::int64_t c = 0; c < C; ++c) part[t][c] += double(sg[c]);
            });
            std::vector<double> tot(C, 0.0);
            for (int t = 0; t < nt; ++t)
                for (std::int64_t c = 0; c < C; ++c) tot[c] += part[t][c];
            dispatch_float(dgamma.dtype(), op, [&](auto otag) {
                using O = decltype(otag);
                O* po = dgamma.data<O>();
                for (std::int64_t c = 0; c < C; ++c) store(po, c, Acc<O>(double(load(po, c)) + tot[c]));
            });
        });
    });
}

// --- rotary embeddings -----------------------------------------------------------------------------

void CpuBackend::do_rope_apply(Tensor& x, int heads, const RopeParams& p, bool inverse) {
    rope_rotate(x, heads, p, inverse, 0);
}

void CpuBackend::do_rope_apply_at(Tensor& x, int heads, const RopeParams& p, std::int64_t first) {
    rope_rotate(x, heads, p, false, first);
}

void CpuBackend::rope_rotate(Tensor& x, int heads, const RopeParams& p, bool inverse, std::int64_t first) {
    const char* op = "rope_apply";
    const RopeDims d = rope_dims(x, heads);
    const std::int64_t half = d.D / 2;
    const std::vector<float> f = rope_frequencies(p, d.D);
    // cos and sin of each (position, frequency): angle t * f_i in f32, as transformers forms it
    std::vector<float> cs(static_cast<std::size_t>(d.T * half)), sn(static_cast<std::size_t>(d.T * half));
    for (std::int64_t t = 0; t < d.T; ++t)
        for (std::int64_t i = 0; i < half; ++i) {
            const float a = static_cast<float>(first + t) * f[i];
            cs[t * half + i] = static_cast<float>(std::cos(static_cast<double>(a)));
            sn[t * half + i] = static_cast<float>(std::sin(static_cast<double>(a))) * (inverse ? -1.0f : 1.0f);
        }
    const std::int64_t rows = d.B * d.T;
    dispatch_float(x.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        T* px = x.data<T>();
        llama_chunks(threads_, rows, d.H * d.D, [&](int, std::int64_t rb, std::int64_t re) {
            for (std::int64_t r = rb; r < re; ++r) {
                const std::int64_t t = r % d.T;
                const float* c = cs.data() + t * half;
                const float* s = sn.data() + t * half;
                for (std::int64_t h = 0; h < d.H; ++h) {
                    T* v = px + r * d.H * d.D + h * d.D;
                    for (std::int64_t i = 0; i < half; ++i) {
                        const A x1 = A(load(v, i)), x2 = A(load(v, i + half));
                        store(v, i, x1 * A(c[i]) - x2 * A(s[i]));
                        store(v, i + half, x2 * A(c[i]) + x1 * A(s[i]));
                    }
                }
            }
        });
    });
}

// --- SwiGLU ----------------------------------------------------------------------------------------

void CpuBackend::do_swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
    const char* op = "swiglu_forward";
    dispatch_float(gate.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        const T* pg = gate.data<T>();
        const T* pu = up.data<T>();
        T* py = y.data<T>();
        llama_chunks(threads_, gate.numel(), 1, [&](int, std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) store(py, i, silu_of(A(load(pg, i))) * A(load(pu, i)));
        });
    });
}

void CpuBackend::do_swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
    const char* op = "swiglu_backward";
    dispatch_float(gate.dtype(), op, [&](auto tag) {
        using T = decltype(tag);
        using A = Acc<T>;
        const T* pg = gate.data<T>();
        const T* pu = up.data<T>();
        const T* pd = dy.data<T>();
        T* pdg = dgate.data<T>();
        T* pdu = dup.data<T>();
        llama_chunks(threads_, gate.numel(), 1, [&](int, std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) {
                const A g = A(load(pg, i)), u = A(load(pu, i)), d = A(load(pd, i));
                const A sig = A(1) / (A(1) + exp_fast(-g));
                store(pdg, i, d * u * sig * (A(1) + g * (A(1) - sig)));
                store(pdu, i, d * g * sig);
            }
        });
    });
}

}  // namespace hr
