#pragma once
// What the cuda_backend*.cpp files share: the float dtypes the GPU computes in, and a tensor as a kernel's
// optional vector argument.
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/op_checks.h"  // the argument checks every backend shares

namespace hr::cuda_detail {

inline bool gpu_float(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

inline void require_gpu_float(const char* op, const char* name, const Tensor& t) {
    if (t.dtype() == DType::f64)
        ops::fail(op, std::string(name) + " " + ops::desc(t) + ": f64 is not supported on the GPU; use f32 (or bf16/f16)");
    if (!gpu_float(t.dtype())) ops::fail(op, std::string(name) + " " + ops::desc(t) + " must be a float tensor (f32, bf16, f16)");
}

// The GPU's tensor rules (Backend::tensor_rules, asked by the checks above the backends): tensors on
// this backend's device; f32, bf16 and f16 (not f64).
class GpuRules final : public ops::TensorRules {
public:
    explicit GpuRules(const CudaBackend& be) : be_(be) {}
    void here(const char* op, const char* name, const Tensor& t) const override { be_.require_here(op, name, t); }
    void floating(const char* op, const char* name, const Tensor& t) const override { require_gpu_float(op, name, t); }

private:
    const CudaBackend& be_;
};

inline cuda::VecArg vec(const Tensor& t) {
    cuda::VecArg v;
    if (t.defined()) {
        v.p = t.raw();
        v.dtype = t.dtype();
    }
    return v;
}

}  // namespace hr::cuda_detail
