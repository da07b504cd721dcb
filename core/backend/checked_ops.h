#pragma once
// The ops of backend.h whose arguments Backend checks above the backends (op_dispatch.cpp) before it
// calls the backend's do_<op>. HR_BACKEND_CHECKED_OPS(X) expands X(op) for each, so a backend (and a
// test) can assert that it hides none of them: a class that declared its own `add` would let a caller
// skip the checks; with the ops non-virtual and none hidden, every device gets the same checks.
#include <type_traits>

#include "backend/backend.h"

#define HR_BACKEND_CHECKED_OPS(X)                                                                                   \
    X(fill) X(copy) X(copy_from_host) X(copy_to_host) X(add) X(axpy) X(scale) X(gemm) X(add_bias) X(bias_grad)      \
    X(conv2d_workspace_bytes) X(conv2d_forward) X(conv2d_backward_data) X(conv2d_backward_filter)                   \
    X(conv2d_backward) X(maxpool2d_forward) X(maxpool2d_backward) X(maxpool2d_backward_windows)                     \
    X(avgpool2d_forward) X(avgpool2d_backward) X(activation_forward) X(activation_backward) X(dropout_forward)      \
    X(dropout_backward) X(batchnorm_forward_train) X(batchnorm_forward_infer) X(batchnorm_forward_recompute)        \
    X(batchnorm_backward) X(softmax_cross_entropy) X(mse_loss) X(embedding_forward) X(embedding_backward)           \
    X(layernorm_forward) X(layernorm_backward) X(gelu_tanh_forward) X(gelu_tanh_backward) X(attention_forward)      \
    X(attention_backward) X(rmsnorm_forward) X(rmsnorm_backward) X(rope_apply) X(swiglu_forward)                    \
    X(swiglu_backward) X(cross_entropy_inplace) X(copy_rows) X(transpose_last2) X(dequantize) X(sum_squares)        \
    X(all_finite) X(sgd_update) X(adam_update) X(upload_async) X(copy_to_host_async) X(increment)                  \
    X(softmax_cross_entropy_into) X(mse_loss_into) X(all_finite_into) X(sgd_update_ctl) X(adam_update_ctl)         \
    X(step_control_end)

// static_asserts, in a backend's source, that class B hides none of the checked ops.
#define HR_ASSERT_CHECKED_ABOVE_ONE(B, op)                                                                           \
    static_assert(std::is_same_v<decltype(&B::op), decltype(&::hr::Backend::op)>,                                    \
                  #B "::" #op " would skip the argument checks above the backends: implement do_" #op " instead");
