#pragma once
// Launchers of the CUDA transformer kernels (cuda_transformer_kernels.cu). Conventions as
// cuda_kernels.h: each takes its stream, launches nothing for empty inputs, checks the launch, and
// dispatches on dtype (f32, bf16, f16 storage; f32 arithmetic); the caller (cuda_transformer.cpp) has
// validated shapes and dtypes. Nothing here allocates device memory and no gradient uses float atomics:
// every sum runs in an order fixed by the shapes, so two runs agree bit for bit.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/backend.h"
#include "backend/cuda/cuda_kernels.h"
#include "base/dtype.h"

namespace hr::cuda {

// Head sizes (D = C / heads) the attention kernels handle: D <= kAttnMaxHeadDim.
constexpr int kAttnMaxHeadDim = 128;

// y[i, :] = table[ids[i], :] for N ids; a row whose id is outside [0, V) is filled with NaN (the ids live
// on the device, so the op cannot throw without waiting for it; the NaN surfaces as a non-finite loss).
void embedding_forward(const std::int64_t* ids, std::int64_t N, const void* table, void* y, DType dt, std::int64_t V,
                       std::int64_t C, cudaStream_t s);
// dtable[ids[i], :] += dy[i, :]: positions sorted by id (CUB's stable radix sort, in the op scratch's
// bounce buffer, chunks of positions when N is large), then one block per run of equal ids sums its rows in
// position order in f32 and adds once (the CPU's order: bit-identical at f32). Ids outside [0, V) are
// skipped. dy and dtable may differ in dtype.
void embedding_backward(const std::int64_t* ids, std::int64_t N, const void* dy, DType dydt, void* dtable,
                        DType gdt, std::int64_t V, std::int64_t C, const Scratch& scratch, cudaStream_t s);
// x, y (R, C) of dt; gamma, beta (C) of any float dtype (beta.p null: no bias); mean, rstd (R) f32.
void layernorm_forward(const void* x, void* y, DType dt, std::int64_t R, std::int64_t C, VecArg gamma, VecArg beta,
                       float eps, float* mean, float* rstd, cudaStream_t s);
// dx written; dgamma, dbeta (dbeta.p null: none) accumulated through two-stage column sums (row slices,
// then a fixed-order sum per column) in the op scratch.
void layernorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t R, std::int64_t C,
                        VecArg gamma, const float* mean, const float* rstd, VecArg dgamma, VecArg dbeta,
                        const Scratch& scratch, cudaStream_t s);
void gelu_tanh_forward(const void* x, void* y, DType dt, std::int64_t n, cudaStream_t s);
void gelu_tanh_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t n, cudaStream_t s);
// The LLaMA family (backend.h): RMSNorm (dgamma through column sums, as layernorm_backward), rotary
// embeddings in place on x (B, T, heads * D) with the frequencies f (D / 2 values, host memory: they travel
// in the launch's arguments), SwiGLU's gate (elementwise; outputs may share memory with inputs).
void rmsnorm_forward(const void* x, void* y, DType dt, std::int64_t R, std::int64_t C, VecArg gamma, float eps,
                     float* rstd, cudaStream_t s);
void rmsnorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t R, std::int64_t C, VecArg gamma,
                      const float* rstd, VecArg dgamma, const Scratch& scratch, cudaStream_t s);
void rope_apply(void* x, DType dt, std::int64_t B, std::int64_t T, int heads, std::int64_t D, const float* freqs,
                bool inverse, cudaStream_t s);
void swiglu_forward(const void* gate, const void* up, void* y, DType dt, std::int64_t n, cudaStream_t s);
void swiglu_backward(const void* gate, const void* up, const void* dy, void* dgate, void* dup, DType dt, std::int64_t n,
                     cudaStream_t s);
// Flash-style attention over qkv (B, T, 3C) (backend.h; grouped-query heads and the planes layout through
// AttentionParams: the dK/dV kernel then runs per key/value head, summing over the query heads it serves). Forward: one block per (b, h, tile of query rows),
// keys and values streamed through shared memory in tiles of 32 with an online softmax; out (B, T, C),
// lse (B, H, T). Backward: di (B, H, T) f32 scratch = rowsum(dout * out); one kernel accumulates dK and
// dV per block of keys over the query tiles, another dQ per block of queries over the key tiles (the
// probabilities recomputed from lse in both), so each gradient element has one writer.
void attention_forward(const void* qkv, void* out, float* lse, DType dt, std::int64_t B, std::int64_t T,
                       std::int64_t C, int heads, const AttentionParams& p, cudaStream_t s);
void attention_backward(const void* qkv, const void* out, const float* lse, const void* dout, void* dqkv, DType dt,
                        std::int64_t B, std::int64_t T, std::int64_t C, int heads, const AttentionParams& p,
                        float* di, cudaStream_t s);
// backend.h copy_rows / transpose_last2 on elements of elem_size bytes (2, 4 or 8).
void copy_rows(const void* src, void* dst, int elem_size, std::int64_t N, bool broadcast, std::int64_t S,
               std::int64_t src_row, std::int64_t D, std::int64_t dst_row, std::int64_t rows, std::int64_t C,
               cudaStream_t s);
void transpose_last2(const void* x, void* y, int elem_size, std::int64_t N, std::int64_t A, std::int64_t B,
                     cudaStream_t s);
// backend.h dequantize: w (rows, cols) of dt from the packed bytes of tensor/quantized_format.h.
void dequantize(const std::uint8_t* packed, void* w, DType dt, std::int64_t rows, std::int64_t cols, int bits,
                std::int64_t group, cudaStream_t s);

}  // namespace hr::cuda
