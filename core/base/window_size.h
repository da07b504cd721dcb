#pragma once
// The output size of a sliding window (a convolution's or a pooling's, along one dimension), written once
// (issue 55): (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1 in C++'s integer division, which
// is PyTorch's floor wherever the numerator is not negative (the callers refuse a result below 1). The
// model's shape analysis (nn/model_spec_analysis.cpp), the layers (nn/layers.cpp) and the ops' argument
// checks (backend/op_checks.h) all ask this one function.
#include <cstdint>

namespace hr {

constexpr std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                                          std::int64_t dilation = 1) {
    return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

}  // namespace hr
