// CudaBackend: the transformer ops of backend.h, their arguments checked above the backends
// (backend/op_dispatch.cpp, transformer_checks.h: the contract and messages of the CPU, the reference these
// are parity-tested against in tests/cuda/test_cuda_transformer.cpp), then a launcher from
// cuda_transformer_kernels.h. The fused cross-entropy reuses the loss kernel of softmax_cross_entropy, writing the gradient over the logits.
//
// Differences from the CPU that a caller can see: token ids live on the device, so embedding_forward
// cannot throw for an id outside [0, V) without waiting for the GPU; it fills that row with NaN (the run
// then stops at its non-finite loss) and embedding_backward skips it. Attention handles head sizes up to
// cuda::kAttnMaxHeadDim (128) and refuses larger ones with a message.
#include <algorithm>
#include <climits>

#include "backend/op_checks.h"
#include "backend/transformer_checks.h"  // the argument contract shared with the CPU backend
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_transformer_kernels.h"

namespace hr {

using ops::fail;

namespace {

cuda::VecArg vec_arg(const Tensor& t) {
    cuda::VecArg v;
    if (t.defined()) {
        v.p = const_cast<void*>(t.raw());
        v.dtype = t.dtype();
    }
    return v;
}

// The shared contract was checked above the backends; what the GPU kernels add: heads of at most kAttnMaxHeadDim, T within int.
ops::AttnDims gpu_attention_dims(const char* op, const ops::AttnDims& d) {
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

void CudaBackend::do_embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y) {
    const ops::EmbeddingDims d = ops::embedding_dims(ids, table);
    const std::int64_t V = d.V, C = d.C, N = d.N;
    auto lock = op_lock();
    cuda::embedding_forward(ids.data<std::int64_t>(), N, table.raw(), y.raw(), y.dtype(), V, C, compute_);
}

void CudaBackend::do_embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable) {
    const ops::EmbeddingDims d = ops::embedding_dims(ids, dtable);
    const std::int64_t V = d.V, C = d.C, N = d.N;
    auto lock = op_lock();
    cuda::embedding_backward(ids.data<std::int64_t>(), N, dy.raw(), dy.dtype(), dtable.raw(), dtable.dtype(), V, C,
                             scratch(), compute_);
}

// --- LayerNorm -------------------------------------------------------------------------------------

void CudaBackend::do_layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                    Tensor& mean, Tensor& rstd) {
    const ops::RowsCols rc = ops::rows_cols_of(x);
    const std::int64_t R = rc.R, C = rc.C;
    auto lock = op_lock();
    cuda::layernorm_forward(x.raw(), y.raw(), x.dtype(), R, C, vec_arg(gamma), vec_arg(beta), eps, mean.data<float>(),
                            rstd.data<float>(), compute_);
}

void CudaBackend::do_layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const ops::RowsCols rc = ops::rows_cols_of(x);
    const std::int64_t R = rc.R, C = rc.C;
    auto lock = op_lock();
    cuda::layernorm_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), R, C, vec_arg(gamma), mean.data<float>(),
                             rstd.data<float>(), vec_arg(dgamma), vec_arg(dbeta), scratch(), compute_);
}

// --- GELU, tanh form -------------------------------------------------------------------------------

void CudaBackend::do_gelu_tanh_forward(const Tensor& x, Tensor& y) {
    auto lock = op_lock();
    cuda::gelu_tanh_forward(x.raw(), y.raw(), x.dtype(), x.numel(), compute_);
}

void CudaBackend::do_gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
    auto lock = op_lock();
    cuda::gelu_tanh_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), x.numel(), compute_);
}

// --- attention -------------------------------------------------------------------------------------

std::size_t CudaBackend::attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                                   DType) const {
    return cuda_sizes::attention_workspace_bytes(B, T, C, heads);
}

void CudaBackend::do_attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                                    Tensor&) {
    const char* op = "attention_forward";
    const ops::AttnDims d = gpu_attention_dims(op, ops::attention_dims(qkv, p));
    auto lock = op_lock();
    cuda::attention_forward(qkv.raw(), out.raw(), lse.data<float>(), qkv.dtype(), d.B, d.T, d.C, static_cast<int>(d.H),
                            p, compute_);
}

void CudaBackend::do_attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                                     Tensor& dqkv, const AttentionParams& p, Tensor& workspace) {
    const char* op = "attention_backward";
    const ops::AttnDims d = gpu_attention_dims(op, ops::attention_dims(qkv, p));
    ops::check_workspace(op, tensor_rules(), workspace,  // the GPU's own size of it
                         cuda_sizes::attention_workspace_bytes(d.B, d.T, d.C, static_cast<int>(d.H)));
    auto lock = op_lock();
    cuda::attention_backward(qkv.raw(), out.raw(), lse.data<float>(), dout.raw(), dqkv.raw(), qkv.dtype(), d.B, d.T, d.C,
                             static_cast<int>(d.H), p, static_cast<float*>(workspace.raw()), compute_);
}

// --- fused cross-entropy over a vocabulary, in place -----------------------------------------------

LossResult CudaBackend::do_cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad, float grad_scale) {
    const char* op = "cross_entropy_inplace";
    const std::int64_t N = logits.dim(0), V = logits.dim(1);
    auto lock = op_lock();
    // The loss kernel checks the targets first (nothing is written when one is outside [0, V)), reads
    // each row completely before it writes that row's gradient, and takes max, sum and loss in f64.
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), targets.data<std::int64_t>(), N, V, 0.0f,
                                want_grad ? logits.raw() : nullptr, grad_scale, {}, scratch(), compute_, true);
    const cuda::ReduceResult r = fetch_result();
    if (r.bad_count != 0)
        fail(op, "target " + std::to_string(r.bad_label) + " in row " + std::to_string(r.first_bad) + " is outside [0, " +
                     std::to_string(V) + ") and is not " + std::to_string(kIgnoreTarget));
    LossResult res;
    res.loss = N > 0 ? r.sum / double(N) : 0.0;
    res.correct = r.count;
    return res;
}

// --- sequence plumbing -----------------------------------------------------------------------------

void CudaBackend::do_copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row,
                            std::int64_t rows) {
    const std::int64_t N = dst.dim(0);
    auto lock = op_lock();
    cuda::copy_rows(src.raw(), dst.raw(), static_cast<int>(dtype_size(dst.dtype())), N, src.dim(0) == 1 && N != 1,
                    src.dim(1), src_row, dst.dim(1), dst_row, rows, dst.dim(2), compute_);
}

void CudaBackend::do_transpose_last2(const Tensor& x, Tensor& y) {
    auto lock = op_lock();
    cuda::transpose_last2(x.raw(), y.raw(), static_cast<int>(dtype_size(x.dtype())), x.dim(0), x.dim(1), x.dim(2),
                          compute_);
}

void CudaBackend::do_dequantize(const Tensor& packed, int bits, std::int64_t group, Tensor& w) {
    auto lock = op_lock();
    cuda::dequantize(static_cast<const std::uint8_t*>(packed.raw()), w.raw(), w.dtype(), w.dim(0), w.dim(1), bits, group,
                     compute_);
}

// --- the LLaMA family ------------------------------------------------------------------------------

void CudaBackend::do_rmsnorm_forward(const Tensor& x, const Tensor& gamma, float eps, Tensor& y, Tensor& rstd) {
    const ops::RowsCols rc = ops::rows_cols_of(x);
    auto lock = op_lock();
    cuda::rmsnorm_forward(x.raw(), y.raw(), x.dtype(), rc.R, rc.C, vec_arg(gamma), eps, rstd.data<float>(), compute_);
}

void CudaBackend::do_rmsnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& rstd,
                                   Tensor& dx, Tensor& dgamma) {
    const ops::RowsCols rc = ops::rows_cols_of(x);
    auto lock = op_lock();
    cuda::rmsnorm_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), rc.R, rc.C, vec_arg(gamma), rstd.data<float>(),
                           vec_arg(dgamma), scratch(), compute_);
}

void CudaBackend::do_rope_apply(Tensor& x, int heads, const RopeParams& p, bool inverse) {
    const ops::RopeDims d = ops::rope_dims(x, heads);
    const std::vector<float> f = rope_frequencies(p, d.D);
    auto lock = op_lock();
    cuda::rope_apply(x.raw(), x.dtype(), d.B, d.T, heads, d.D, f.data(), inverse, compute_);
}

void CudaBackend::do_swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
    auto lock = op_lock();
    cuda::swiglu_forward(gate.raw(), up.raw(), y.raw(), gate.dtype(), gate.numel(), compute_);
}

void CudaBackend::do_swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
    auto lock = op_lock();
    cuda::swiglu_backward(gate.raw(), up.raw(), dy.raw(), dgate.raw(), dup.raw(), gate.dtype(), gate.numel(), compute_);
}

}  // namespace hr
