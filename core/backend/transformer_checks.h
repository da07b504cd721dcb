#pragma once
// The argument contract of the transformer ops of backend.h, checked once above the backends
// (backend/op_dispatch.cpp), with the same messages on the CPU (the reference) and the GPU. Each check
// takes the backend's own rules for where a tensor must be and which float types it computes in
// (op_checks.h's TensorRules: the CPU takes any defined host tensor and f32/f64/bf16/f16; the GPU wants
// its own device and refuses f64), then checks dtypes and shapes and returns the sizes the op needs.
#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "backend/op_checks.h"
#include "tensor/quantized_format.h"

namespace hr::ops {

// Rows and width of a tensor viewed as (R, C) over its last dimension.
struct RowsCols {
    std::int64_t R = 0, C = 0;
};
RowsCols rows_cols(const char* op, const Tensor& t);

// The sizes of an op's arguments that passed its check (what a backend's do_ op reads; no checks).
inline RowsCols rows_cols_of(const Tensor& t) {
    RowsCols rc;
    rc.C = t.dim(-1);
    rc.R = rc.C > 0 ? t.numel() / rc.C : 0;
    return rc;
}

struct EmbeddingDims {
    std::int64_t V = 0, C = 0, N = 0;  // table rows, width, token ids
};
inline EmbeddingDims embedding_dims(const Tensor& ids, const Tensor& table) {
    return {table.dim(0), table.dim(1), ids.numel()};
}
// ids i64 (any shape, N ids), table (V, C) float, y N x C of the table's dtype.
EmbeddingDims check_embedding_forward(const TensorRules& rules, const Tensor& ids, const Tensor& table, const Tensor& y);
// ids i64, dy N x C float, dtable (V, C) float.
EmbeddingDims check_embedding_backward(const TensorRules& rules, const Tensor& ids, const Tensor& dy,
                                       const Tensor& dtable);

// x and y alike, gamma (and beta, when defined) (C), mean and rstd f32 with one value per row.
RowsCols check_layernorm_forward(const TensorRules& rules, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& y, const Tensor& mean, const Tensor& rstd);
RowsCols check_layernorm_backward(const TensorRules& rules, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                  const Tensor& mean, const Tensor& rstd, const Tensor& dx, const Tensor& dgamma,
                                  const Tensor& dbeta);

// Elementwise: every tensor the shape and dtype of x.
void check_gelu_forward(const TensorRules& rules, const Tensor& x, const Tensor& y);
void check_gelu_backward(const TensorRules& rules, const Tensor& x, const Tensor& dy, const Tensor& dx);

struct VocabDims {
    std::int64_t N = 0, V = 0;
};
// logits (N, V) float with V > 0, targets N values i64 (their range is the backend's to check: the GPU
// checks them on the device).
VocabDims check_cross_entropy(const TensorRules& rules, const Tensor& logits, const Tensor& targets);

// src (N or 1, S, C), dst (N, D, C), the same dtype, rows in range of both.
void check_copy_rows(const TensorRules& rules, const Tensor& src, std::int64_t src_row, const Tensor& dst,
                     std::int64_t dst_row, std::int64_t rows);
// x (N, A, B), y (N, B, A), the same dtype.
void check_transpose_last2(const TensorRules& rules, const Tensor& x, const Tensor& y);
void check_dequantize(const TensorRules& rules, const Tensor& packed, int bits, std::int64_t group, const Tensor& w);

struct AttnDims {
    std::int64_t B, T, C, H, D;  // batch, sequence, output width (H D), query heads, head size
    std::int64_t KV = 0;         // key/value heads (H without grouped-query attention)
};
AttnDims attention_dims(const Tensor& qkv, const AttentionParams& p);  // (of arguments that passed the check)
// qkv (B, T, (H + 2 KV) D) float (3C: q, k and v side by side, or three planes: backend.h), out (B, T, H D)
// of its dtype, lse (B, H, T) f32, KV dividing H, dropout in [0, 1).
AttnDims check_attention(const char* op, const TensorRules& rules, const Tensor& qkv, const Tensor& out,
                         const Tensor& lse, const AttentionParams& p);
// The backward's gradients too: dout like out, dqkv like qkv.
AttnDims check_attention_backward(const TensorRules& rules, const Tensor& qkv, const Tensor& out, const Tensor& lse,
                                  const Tensor& dout, const Tensor& dqkv, const AttentionParams& p);
// RMSNorm: x, y (and dy, dx) alike, gamma and dgamma (C), rstd f32 with one value per row.
RowsCols check_rmsnorm_forward(const TensorRules& rules, const Tensor& x, const Tensor& gamma, const Tensor& y,
                               const Tensor& rstd);
RowsCols check_rmsnorm_backward(const TensorRules& rules, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                const Tensor& rstd, const Tensor& dx, const Tensor& dgamma);
struct RopeDims {
    std::int64_t B, T, H, D;
};
inline RopeDims rope_dims(const Tensor& x, int heads) { return {x.dim(0), x.dim(1), heads, x.dim(2) / heads}; }
// x (B, T, heads * D) float with D even; theta > 1; a llama3 scaling's factors in order.
// attention_cached (backend.h): qkv (1, n, ...) in p's layout, caches (KV, L, D) of qkv's dtype with
// pos + n <= L, out (1, n, H D); causal, no dropout.
AttnDims check_attention_cached(const TensorRules& rules, const Tensor& qkv, const Tensor& k_cache,
                                const Tensor& v_cache, std::int64_t pos, const AttentionParams& p, const Tensor& out);
RopeDims check_rope(const TensorRules& rules, const Tensor& x, int heads, const RopeParams& p);
// SwiGLU: gate, up and the outputs a, b (b may be undefined) of one shape and float dtype.
void check_swiglu(const char* op, const TensorRules& rules, const Tensor& gate, const Tensor& up, const Tensor& a,
                  const Tensor& b);
// The workspace holds at least `need` bytes and is on the device.
void check_workspace(const char* op, const TensorRules& rules, const Tensor& workspace, std::size_t need);

}  // namespace hr::ops

namespace hr::cpu {
// The CPU backend's rules: any defined host tensor; f32, f64, bf16 and f16 (cpu_transformer.cpp).
const ops::TensorRules& host_tensor_rules();
}  // namespace hr::cpu
