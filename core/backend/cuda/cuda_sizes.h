#pragma once
// Sizes the CUDA backend fixes when it is made, shared by the module (which allocates them) and the
// planner (which adds them to a GPU plan without loading the module). Header only, no CUDA headers.
//
// A CudaBackend allocates, in its ledger under `workspace`, before any op runs:
//   - the cuBLAS workspace: cublas_workspace_bytes_for(cc) unless CudaBackendOptions says otherwise;
//   - one op scratch of kOpScratchBytes: the figures a reduction or loss hands back, the per-block
//     partial sums of the two-stage reductions (fixed grids, so the size does not depend on shapes),
//     the per-channel coefficients of batch norm, and the bounce buffer of overlapping copies.
// No op allocates device memory afterwards (issue 11, defect 13).
#include <cstddef>

namespace hr::cuda_sizes {

constexpr std::size_t KiB = 1024, MiB = KiB * 1024;

// cuBLAS's recommended user workspace (cuBLAS documentation, cublasSetWorkspace): 32 MiB on Hopper
// (sm_90) and later, 4 MiB on earlier GPUs.
constexpr std::size_t cublas_workspace_bytes_for(int cc_major, int /*cc_minor*/) {
    return cc_major >= 9 ? 32 * MiB : 4 * MiB;
}

// --- op scratch layout (byte offsets) ------------------------------------------------------------
constexpr std::size_t kResultBytes = 256;           // cuda::ReduceResult (reductions, losses)
constexpr int kReduceBlocks = 512;                  // fixed grid of sum_squares / loss row kernels
constexpr std::size_t kReducePartialBytes = 16 * KiB;  // 3 arrays of kReduceBlocks doubles (+ room)
constexpr int kChannelPartials = 32768;             // (channel, slice) partial sums of one reduction
constexpr std::size_t kChannelPartialBytes = std::size_t(kChannelPartials) * 2 * sizeof(double);
constexpr std::size_t kChannelCoefBytes = std::size_t(kChannelPartials) * 4 * sizeof(float);
constexpr std::size_t kBounceBytes = 1 * MiB;       // overlapping device copies go through this

constexpr std::size_t kOffResult = 0;
constexpr std::size_t kOffReduce = kOffResult + kResultBytes;
constexpr std::size_t kOffChannelPartials = kOffReduce + kReducePartialBytes;
constexpr std::size_t kOffChannelCoef = kOffChannelPartials + kChannelPartialBytes;
constexpr std::size_t kOffBounce = kOffChannelCoef + kChannelCoefBytes;
constexpr std::size_t kOpScratchBytes = kOffBounce + kBounceBytes;

static_assert(3 * kReduceBlocks * sizeof(double) <= kReducePartialBytes);
static_assert(kOffChannelPartials % 256 == 0 && kOffChannelCoef % 256 == 0 && kOffBounce % 256 == 0);

// Bytes of device memory a backend holds from the moment it is made.
constexpr std::size_t backend_fixed_bytes(int cc_major, int cc_minor, std::size_t cublas_override = 0) {
    return (cublas_override ? cublas_override : cublas_workspace_bytes_for(cc_major, cc_minor)) + kOpScratchBytes;
}

// Scratch of the CUDA attention kernels (cuda_transformer_kernels.cu), which the caller passes as
// attention_forward/backward's workspace: the backward's D_i = rowsum(dO * O), one f32 per (b, h, t),
// rounded up to 256 bytes. Forward needs none but is given the same buffer. Shared with the planner
// (plan/device_description.cpp) so a GPU plan without a GPU counts the same bytes.
constexpr std::size_t attention_workspace_bytes(long long B, long long T, long long C, int heads) {
    if (heads < 1 || B < 1 || T < 1 || C < 1 || C % heads != 0) return 0;
    const std::size_t b = static_cast<std::size_t>(B) * static_cast<std::size_t>(heads) * static_cast<std::size_t>(T) * 4;
    return (b + 255) / 256 * 256;
}

// Pinned host staging of uploads: one ring of this size, handed out in regions, each guarded by an
// event (the host waits only when it laps a region whose copy has not finished; one upload larger than
// half the ring goes in half-ring chunks, so at least two are in flight). Host memory, not in the
// device ledger.
constexpr std::size_t kStagingBytes = 32 * MiB;
constexpr std::size_t kStagingChunk = kStagingBytes / 2;
// copy_from_host of at most this many bytes runs on the compute stream (stream order is the fence).
constexpr std::size_t kSmallUploadBytes = 64 * KiB;

}  // namespace hr::cuda_sizes
