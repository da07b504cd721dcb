// CudaBackend: the transformer ops of backend.h. Validation as the CPU backend
// (backend/cpu/cpu_transformer*.cpp, the reference these are parity-tested against in
// tests/cuda/test_cuda_transformer.cpp), then a launcher from cuda_transformer_kernels.h. The fused
// cross-entropy reuses the loss kernel of softmax_cross_entropy, writing the gradient over the logits.
//
// Differences from the CPU that a caller can see: token ids live on the device, so embedding_forward
// cannot throw for an id outside [0, V) without waiting for the GPU; it fills that row with NaN (the run
// then stops at its non-finite loss) and embedding_backward skips it. Attention handles head sizes up to
// cuda::kAttnMaxHeadDim (128) and refuses larger ones with a message.
#include <algorithm>
#include <climits>

#include "backend/cpu/cpu_common.h"  // validation helpers and messages shared with the CPU backend
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_transformer_kernels.h"

namespace hr {

using cpu::desc;
using cpu::fail;
using cpu::require_dtype;
using cpu::require_float;
using cpu::require_same_dtype;
using cpu::require_same_shape;

namespace {

void require_gpu_float_tf(const char* op, const char* name, const Tensor& t) {
    if (t.dtype() == DType::f64)
        fail(op, std::string(name) + " " + desc(t) + ": f64 is not supported on the GPU; use f32 (or bf16/f16)");
    require_float(op, name, t);
}

cuda::VecArg vec_arg(const Tensor& t) {
    cuda::VecArg v;
    if (t.defined()) {
        v.p = const_cast<void*>(t.raw());
        v.dtype = t.dtype();
    }
    return v;
}

void rows_cols(const char* op, const Tensor& t, std::int64_t& R, std::int64_t& C) {
    if (t.ndim() < 1) fail(op, "expects a tensor with a last dimension, got " + desc(t));
    C = t.dim(-1);
    R = C > 0 ? t.numel() / C : 0;
}

struct AttnDims {
    std::int64_t B, T, C, H, D;
};

AttnDims check_attention(const char* op, const CudaBackend& be, const Tensor& qkv, const Tensor& out,
                         const Tensor& lse, const AttentionParams& p) {
    be.require_here(op, "qkv", qkv);
    be.require_here(op, "out", out);
    be.require_here(op, "lse", lse);
    require_gpu_float_tf(op, "qkv", qkv);
    require_same_dtype(op, "qkv", qkv, "out", out);
    require_dtype(op, "lse", lse, DType::f32);
    if (qkv.ndim() != 3 || qkv.dim(2) % 3 != 0) fail(op, "expects qkv (B, T, 3C), got " + desc(qkv));
    AttnDims d{qkv.dim(0), qkv.dim(1), qkv.dim(2) / 3, p.heads, 0};
    if (p.heads < 1 || d.C % p.heads != 0)
        fail(op, "width " + std::to_string(d.C) + " of qkv " + desc(qkv) + " is not divisible by " +
                     std::to_string(p.heads) + " heads");
    d.D = d.C / d.H;
    if (out.ndim() != 3 || out.dim(0) != d.B || out.dim(1) != d.T || out.dim(2) != d.C)
        fail(op, "out " + desc(out) + " must be " + shape_str({d.B, d.T, d.C}) + " for qkv " + desc(qkv));
    if (lse.ndim() != 3 || lse.dim(0) != d.B || lse.dim(1) != d.H || lse.dim(2) != d.T)
        fail(op, "lse " + desc(lse) + " must be " + shape_str({d.B, d.H, d.T}) + " f32 for qkv " + desc(qkv));
    if (!(p.dropout >= 0.0f && p.dropout < 1.0f)) fail(op, "dropout " + std::to_string(p.dropout) + " must be in [0, 1)");
    if (d.D > cuda::kAttnMaxHeadDim)
        // the translated refusal the GPU gave for every transformer op before the kernels existed
        throw Error(HR_MSG("cuda.transformer_op_missing",
                           "%1 is not implemented on the GPU yet; train transformer models with --device cpu for now"),
                    {"attention with heads of size " + std::to_string(d.D) + " (width " + std::to_string(d.C) + " / " +
                     std::to_string(d.H) + " heads; the GPU kernels handle at most " +
                     std::to_string(cuda::kAttnMaxHeadDim) + ", so more heads would do)"});
    if (d.T > INT_MAX / 2) fail(op, "sequence length " + std::to_string(d.T) + " is too long for the GPU kernels");
    return d;
}

}  // namespace

// --- embeddings ------------------------------------------------------------------------------------

void CudaBackend::embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y) {
    const char* op = "embedding_forward";
    require_here(op, "ids", ids);
    require_here(op, "table", table);
    require_here(op, "y", y);
    require_dtype(op, "ids", ids, DType::i64);
    require_gpu_float_tf(op, "table", table);
    require_same_dtype(op, "table", table, "y", y);
    if (table.ndim() != 2) fail(op, "expects table (V, C), got " + desc(table));
    const std::int64_t V = table.dim(0), C = table.dim(1), N = ids.numel();
    if (y.numel() != N * C || y.dim(-1) != C)
        fail(op, "y " + desc(y) + " must hold ids " + desc(ids) + " x " + std::to_string(C) + " values");
    auto lock = op_lock();
    cuda::embedding_forward(ids.data<std::int64_t>(), N, table.raw(), y.raw(), y.dtype(), V, C, compute_);
}

void CudaBackend::embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable) {
    const char* op = "embedding_backward";
    require_here(op, "ids", ids);
    require_here(op, "dy", dy);
    require_here(op, "dtable", dtable);
    require_dtype(op, "ids", ids, DType::i64);
    require_gpu_float_tf(op, "dy", dy);
    require_gpu_float_tf(op, "dtable", dtable);
    if (dtable.ndim() != 2) fail(op, "expects dtable (V, C), got " + desc(dtable));
    const std::int64_t V = dtable.dim(0), C = dtable.dim(1), N = ids.numel();
    if (dy.numel() != N * C || dy.dim(-1) != C)
        fail(op, "dy " + desc(dy) + " must hold ids " + desc(ids) + " x " + std::to_string(C) + " values");
    auto lock = op_lock();
    cuda::embedding_backward(ids.data<std::int64_t>(), N, dy.raw(), dy.dtype(), dtable.raw(), dtable.dtype(), V, C,
                             scratch(), compute_);
}

// --- LayerNorm -------------------------------------------------------------------------------------

void CudaBackend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                    Tensor& mean, Tensor& rstd) {
    const char* op = "layernorm_forward";
    require_here(op, "x", x);
    require_here(op, "gamma", gamma);
    require_here(op, "y", y);
    require_here(op, "mean", mean);
    require_here(op, "rstd", rstd);
    if (beta.defined()) require_here(op, "beta", beta);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float_tf(op, "x", x);
    require_gpu_float_tf(op, "gamma", gamma);
    if (beta.defined()) require_gpu_float_tf(op, "beta", beta);
    std::int64_t R, C;
    rows_cols(op, x, R, C);
    if (gamma.numel() != C) fail(op, "gamma " + desc(gamma) + " must have shape (" + std::to_string(C) + ") for x " + desc(x));
    if (beta.defined() && beta.numel() != C) fail(op, "beta " + desc(beta) + " must have shape (" + std::to_string(C) + ")");
    require_dtype(op, "mean", mean, DType::f32);
    require_dtype(op, "rstd", rstd, DType::f32);
    if (mean.numel() != R || rstd.numel() != R)
        fail(op, "mean " + desc(mean) + " and rstd " + desc(rstd) + " must hold one value per row (" +
                     std::to_string(R) + ") of x " + desc(x));
    auto lock = op_lock();
    cuda::layernorm_forward(x.raw(), y.raw(), x.dtype(), R, C, vec_arg(gamma), vec_arg(beta), eps, mean.data<float>(),
                            rstd.data<float>(), compute_);
}

void CudaBackend::layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const char* op = "layernorm_backward";
    require_here(op, "x", x);
    require_here(op, "dy", dy);
    require_here(op, "gamma", gamma);
    require_here(op, "mean", mean);
    require_here(op, "rstd", rstd);
    require_here(op, "dx", dx);
    require_here(op, "dgamma", dgamma);
    if (dbeta.defined()) require_here(op, "dbeta", dbeta);
    require_same_shape(op, "x", x, "dy", dy);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dx", dx);
    require_gpu_float_tf(op, "x", x);
    require_gpu_float_tf(op, "gamma", gamma);
    require_gpu_float_tf(op, "dgamma", dgamma);
    if (dbeta.defined()) require_gpu_float_tf(op, "dbeta", dbeta);
    std::int64_t R, C;
    rows_cols(op, x, R, C);
    if (gamma.numel() != C || dgamma.numel() != C || (dbeta.defined() && dbeta.numel() != C))
        fail(op, "gamma " + desc(gamma) + ", dgamma " + desc(dgamma) + " and dbeta " + desc(dbeta) +
                     " must have shape (" + std::to_string(C) + ")");
    require_dtype(op, "mean", mean, DType::f32);
    require_dtype(op, "rstd", rstd, DType::f32);
    if (mean.numel() != R || rstd.numel() != R) fail(op, "mean and rstd must hold one value per row of x " + desc(x));
    auto lock = op_lock();
    cuda::layernorm_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), R, C, vec_arg(gamma), mean.data<float>(),
                             rstd.data<float>(), vec_arg(dgamma), vec_arg(dbeta), scratch(), compute_);
}

// --- GELU, tanh form -------------------------------------------------------------------------------

void CudaBackend::gelu_tanh_forward(const Tensor& x, Tensor& y) {
    const char* op = "gelu_tanh_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float_tf(op, "x", x);
    auto lock = op_lock();
    cuda::gelu_tanh_forward(x.raw(), y.raw(), x.dtype(), x.numel(), compute_);
}

void CudaBackend::gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
    const char* op = "gelu_tanh_backward";
    require_here(op, "x", x);
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    require_same_shape(op, "x", x, "dy", dy);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dx", dx);
    require_gpu_float_tf(op, "x", x);
    auto lock = op_lock();
    cuda::gelu_tanh_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), x.numel(), compute_);
}

// --- attention -------------------------------------------------------------------------------------

std::size_t CudaBackend::attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                                   DType) const {
    return cuda_sizes::attention_workspace_bytes(B, T, C, heads);
}

void CudaBackend::attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                                    Tensor&) {
    const char* op = "attention_forward";
    const AttnDims d = check_attention(op, *this, qkv, out, lse, p);
    auto lock = op_lock();
    cuda::attention_forward(qkv.raw(), out.raw(), lse.data<float>(), qkv.dtype(), d.B, d.T, d.C, static_cast<int>(d.H),
                            p, compute_);
}

void CudaBackend::attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                                     Tensor& dqkv, const AttentionParams& p, Tensor& workspace) {
    const char* op = "attention_backward";
    const AttnDims d = check_attention(op, *this, qkv, out, lse, p);
    require_here(op, "dout", dout);
    require_here(op, "dqkv", dqkv);
    require_same_shape(op, "out", out, "dout", dout);
    require_same_shape(op, "qkv", qkv, "dqkv", dqkv);
    require_same_dtype(op, "qkv", qkv, "dout", dout);
    require_same_dtype(op, "qkv", qkv, "dqkv", dqkv);
    const std::size_t need = cuda_sizes::attention_workspace_bytes(d.B, d.T, d.C, static_cast<int>(d.H));
    if (!workspace.defined() || workspace.nbytes() < need)
        fail(op, "workspace " + desc(workspace) + " is smaller than the " + std::to_string(need) +
                     " bytes attention_workspace_bytes asks for");
    require_here(op, "workspace", workspace);
    auto lock = op_lock();
    cuda::attention_backward(qkv.raw(), out.raw(), lse.data<float>(), dout.raw(), dqkv.raw(), qkv.dtype(), d.B, d.T, d.C,
                             static_cast<int>(d.H), p, static_cast<float*>(workspace.raw()), compute_);
}

// --- fused cross-entropy over a vocabulary, in place -----------------------------------------------

LossResult CudaBackend::cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad, float grad_scale) {
    const char* op = "cross_entropy_inplace";
    require_here(op, "logits", logits);
    require_here(op, "targets", targets);
    require_gpu_float_tf(op, "logits", logits);
    require_dtype(op, "targets", targets, DType::i64);
    if (logits.ndim() != 2) fail(op, "expects logits (N, V), got " + desc(logits));
    const std::int64_t N = logits.dim(0), V = logits.dim(1);
    if (targets.numel() != N)
        fail(op, "targets " + desc(targets) + " must have " + std::to_string(N) + " values for logits " + desc(logits));
    if (V <= 0) fail(op, "logits " + desc(logits) + " has an empty vocabulary");
    auto lock = op_lock();
    // The loss kernel checks the targets first (nothing is written when one is outside [0, V)), reads
    // each row completely before it writes that row's gradient, and takes max, sum and loss in f64.
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), targets.data<std::int64_t>(), N, V, 0.0f,
                                want_grad ? logits.raw() : nullptr, grad_scale, {}, scratch(), compute_);
    const cuda::ReduceResult r = fetch_result();
    if (r.bad_count != 0)
        fail(op, "target " + std::to_string(r.bad_label) + " in row " + std::to_string(r.first_bad) + " is outside [0, " +
                     std::to_string(V) + ")");
    LossResult res;
    res.loss = N > 0 ? r.sum / double(N) : 0.0;
    res.correct = r.count;
    return res;
}

// --- sequence plumbing -----------------------------------------------------------------------------

void CudaBackend::copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row,
                            std::int64_t rows) {
    const char* op = "copy_rows";
    require_here(op, "src", src);
    require_here(op, "dst", dst);
    require_same_dtype(op, "src", src, "dst", dst);
    if (src.ndim() != 3 || dst.ndim() != 3 || src.dim(2) != dst.dim(2) || (src.dim(0) != dst.dim(0) && src.dim(0) != 1))
        fail(op, "expects src (N or 1, S, C) and dst (N, D, C), got src " + desc(src) + ", dst " + desc(dst));
    if (rows < 0 || src_row < 0 || dst_row < 0 || src_row + rows > src.dim(1) || dst_row + rows > dst.dim(1))
        fail(op, "rows [" + std::to_string(src_row) + ", " + std::to_string(src_row + rows) + ") of src " + desc(src) +
                     " to rows [" + std::to_string(dst_row) + ", " + std::to_string(dst_row + rows) + ") of dst " +
                     desc(dst) + " are out of range");
    const std::int64_t N = dst.dim(0);
    auto lock = op_lock();
    cuda::copy_rows(src.raw(), dst.raw(), static_cast<int>(dtype_size(dst.dtype())), N, src.dim(0) == 1 && N != 1,
                    src.dim(1), src_row, dst.dim(1), dst_row, rows, dst.dim(2), compute_);
}

void CudaBackend::transpose_last2(const Tensor& x, Tensor& y) {
    const char* op = "transpose_last2";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    if (x.ndim() != 3 || y.ndim() != 3 || y.dim(0) != x.dim(0) || y.dim(1) != x.dim(2) || y.dim(2) != x.dim(1))
        fail(op, "expects x (N, A, B) and y (N, B, A), got x " + desc(x) + ", y " + desc(y));
    auto lock = op_lock();
    cuda::transpose_last2(x.raw(), y.raw(), static_cast<int>(dtype_size(x.dtype())), x.dim(0), x.dim(1), x.dim(2),
                          compute_);
}

}  // namespace hr
