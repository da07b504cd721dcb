// CudaBackend: the transformer ops of backend.h. Not implemented on the GPU yet: each throws hr::Error,
// so a transformer run on a GPU fails at its first step with a message that says what to do. The CPU
// backend (backend/cpu/cpu_transformer*.cpp) is the reference the CUDA kernels will be compared with;
// the semantics each op must follow are in backend.h.
#include "backend/cuda/cuda_backend_impl.h"

namespace hr {

namespace {
[[noreturn]] void not_yet(const char* op) {
    throw Error(HR_MSG("cuda.transformer_op_missing",
                       "%1 is not implemented on the GPU yet; train transformer models with --device cpu for now"),
                {op});
}
}  // namespace

void CudaBackend::embedding_forward(const Tensor&, const Tensor&, Tensor&) { not_yet("embedding_forward"); }
void CudaBackend::embedding_backward(const Tensor&, const Tensor&, Tensor&) { not_yet("embedding_backward"); }
void CudaBackend::layernorm_forward(const Tensor&, const Tensor&, const Tensor&, float, Tensor&, Tensor&, Tensor&) {
    not_yet("layernorm_forward");
}
void CudaBackend::layernorm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Tensor&,
                                     Tensor&, Tensor&) {
    not_yet("layernorm_backward");
}
void CudaBackend::gelu_tanh_forward(const Tensor&, Tensor&) { not_yet("gelu_tanh_forward"); }
void CudaBackend::gelu_tanh_backward(const Tensor&, const Tensor&, Tensor&) { not_yet("gelu_tanh_backward"); }
// Sizing must work for plans without a GPU kernel: until the kernels exist the GPU needs no scratch
// (the cuda developer replaces this with the flash-attention kernels' real need, e.g. dQ accumulation).
std::size_t CudaBackend::attention_workspace_bytes(std::int64_t, std::int64_t, std::int64_t, int, DType) const {
    return 0;
}
void CudaBackend::attention_forward(const Tensor&, Tensor&, Tensor&, const AttentionParams&, Tensor&) {
    not_yet("attention_forward");
}
void CudaBackend::attention_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, Tensor&,
                                     const AttentionParams&, Tensor&) {
    not_yet("attention_backward");
}
LossResult CudaBackend::cross_entropy_inplace(Tensor&, const Tensor&, bool, float) {
    not_yet("cross_entropy_inplace");
}
void CudaBackend::copy_rows(const Tensor&, std::int64_t, Tensor&, std::int64_t, std::int64_t) { not_yet("copy_rows"); }
void CudaBackend::transpose_last2(const Tensor&, Tensor&) { not_yet("transpose_last2"); }

}  // namespace hr
