#pragma once
// Checks the communicator implementations share (core/dist only).
#include <chrono>

#include "tensor/tensor.h"

namespace hr {

// Same first byte and the same size.
bool same_memory(const Tensor& a, const Tensor& b);
// Defined, on `device`, and f32/bf16/f16 unless any_dtype. Throws hr::Error naming the call.
void check_collective_buffer(const char* call, const Tensor& t, Device device, bool any_dtype);
// whole.numel() == world * chunk.numel(), same dtype; returns true when chunk is whole's chunk `rank`
// (the in-place form), false when they do not overlap; throws for any other overlap.
bool check_chunked(const char* call, const Tensor& whole, const Tensor& chunk, int world, int rank, Device device,
                   bool out_is_chunk);

inline double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

}  // namespace hr
