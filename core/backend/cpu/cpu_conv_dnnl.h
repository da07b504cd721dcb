#pragma once
// The CPU backend's f32 convolutions on oneDNN (libdnnl), when the build has it (HEADROOM_HAVE_DNNL) and
// HEADROOM_CPU_CONV is not "tap" in the environment; the hand-written tap kernels (cpu_conv_fast.h)
// otherwise, and for shapes oneDNN refuses.
//
// Why: oneDNN is what PyTorch's own CPU convolutions run on, and at resnet-mini's shapes its JIT kernels
// beat the tap kernels: slightly in forward and backward data, 1.3-3.8x in backward filter on the
// deeper layers (64 channels at 7x7: 0.09 ms against 0.34 ms per 4 samples on one core);
// docs/benchmarks.md has the figures.
//
// How, so that results stay bitwise reproducible and independent of the thread count: a call cuts the
// batch into fixed chunks of samples that depend on the shapes only (backward filter: the same 16 chunks
// as the tap code; forward and backward data: 4 samples each); each chunk runs oneDNN single-threaded on
// one of the backend's pool threads (its primitives are created for 1 OpenMP thread and the thread is
// told 1, so no second thread pool spins on the cores) and backward filter sums the chunks' partial dw in
// chunk order. oneDNN works in its blocked layouts; the reorders from and to NCHW/OIHW and its
// scratchpads live in the layer's workspace (dnnl_conv_workspace_bytes), so the ledger and the planner
// count them. Sizing a workspace keeps only bytes: oneDNN's primitive descriptors and primitives (JIT-compiled
// code) are kept for the chunk sizes a call runs, not for every batch the workspace is sized for, so their
// memory, outside the ledger, does not grow with the planned batch.
#include <cstddef>
#include <string>

#include "backend/cpu/cpu_common.h"

namespace hr::cpu {

// backward: backward data and backward weights in one call (dy reordered once for both)
enum class ConvKind { forward, backward_data, backward_weights, backward };

// Compiled in and not turned off by HEADROOM_CPU_CONV=tap (read once).
bool dnnl_conv_enabled();
// "oneDNN 2.6.3" (empty when not compiled in).
std::string dnnl_version();

// Workspace bytes of that call at these shapes with `threads` threads, enough for the same call at any
// batch n <= g.N (the most of those, exactly: a layer's workspace is sized for its planned batch and also
// serves the smaller last batch); 0 when oneDNN is not enabled or cannot do these shapes (then the call
// below must not be made).
std::size_t dnnl_conv_workspace_bytes(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, int threads);

// y = conv(x, w) + bias (bias may be null)
void dnnl_conv_forward(int threads, const ConvGeom& g, const Conv2dParams& p, const float* x, const float* w,
                       const float* bias, float* y, void* workspace);
// dx = conv_transpose(dy, w) (written)
void dnnl_conv_backward_data(int threads, const ConvGeom& g, const Conv2dParams& p, const float* dy, const float* w,
                             float* dx, void* workspace);
// dw += corr(x, dy); db += sum(dy) when db is not null
void dnnl_conv_backward_filter(int threads, const ConvGeom& g, const Conv2dParams& p, const float* x, const float* dy,
                               float* dw, float* db, void* workspace);

// dx = conv_transpose(dy, w) (written), dw += corr(x, dy), db += sum(dy) when db is not null: the two calls
// above in one, on the chunks of backward filter
void dnnl_conv_backward(int threads, const ConvGeom& g, const Conv2dParams& p, const float* x, const float* dy,
                        const float* w, float* dx, float* dw, float* db, void* workspace);

// The fixed chunks of samples that backward-filter sums run in (shared with the tap code): chunk gi of G
// covers samples [N * gi / G, N * (gi + 1) / G).
constexpr int kWgradChunks = 16;
inline std::int64_t wgrad_chunks(std::int64_t N) { return N < kWgradChunks ? N : kWgradChunks; }
// dw[i] += sum over chunks (in chunk order) of partial[gi * per_chunk + i] for i < KT, and db likewise from
// the K values after them when db is not null.
void add_chunk_partials(int threads, const float* partial, std::int64_t chunks, std::int64_t KT, std::int64_t K,
                        float* dw, float* db);

}  // namespace hr::cpu
