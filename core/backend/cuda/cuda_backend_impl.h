#pragma once
// CudaBackend: the class behind make_cuda_backend (cuda_backend.h). Internal to the CUDA module.
// cuda_backend.cpp: devices, construction, data movement, GEMM, pooling, activations, dropout,
// batch norm, losses, reductions, optimizers, the step-control ops. cuda_conv.cpp: convolution through
// cuDNN. cuda_async.cpp: fences, asynchronous copies, capture (cuda_graph.h).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/op_checks.h"  // ops::TensorRules
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"

#define HR_CUBLAS_CHECK(call)                                                                               \
    do {                                                                                                    \
        cublasStatus_t hr_st_ = (call);                                                                     \
        if (hr_st_ != CUBLAS_STATUS_SUCCESS)                                                                \
            ::hr::cuda::throw_status("cuBLAS", static_cast<int>(hr_st_), cublasGetStatusName(hr_st_), #call, \
                                     __FILE__, __LINE__);                                                   \
    } while (0)

#define HR_CUDNN_CHECK(call)                                                                                \
    do {                                                                                                    \
        cudnnStatus_t hr_st_ = (call);                                                                      \
        if (hr_st_ != CUDNN_STATUS_SUCCESS)                                                                 \
            ::hr::cuda::throw_status("cuDNN", static_cast<int>(hr_st_), cudnnGetErrorString(hr_st_), #call,  \
                                     __FILE__, __LINE__);                                                   \
    } while (0)

namespace hr {

// Device memory of one GPU through the caching allocator (caching_allocator.h): cudaMalloc /
// cudaFree underneath, zero-filled on the compute stream when handed out. `capturing` (the backend's
// flag) turns an allocation during a capture into an error instead of a memset inside the graph.
class CudaCachingAllocator : public CachingAllocator {
public:
    CudaCachingAllocator(int device, std::shared_ptr<MemoryLedger> ledger, cudaStream_t stream,
                         const std::atomic<bool>* capturing);
};

namespace cuda {
struct ConvPlan;  // cuda_conv.cpp
struct ConvPlanDeleter {
    void operator()(ConvPlan* p) const;  // cuda_conv.cpp
};
}  // namespace cuda

class CudaBackend : public Backend {
public:
    CudaBackend(int device, std::shared_ptr<MemoryLedger> ledger, const CudaBackendOptions& options);
    ~CudaBackend() override;

    Device device() const override { return Device::cuda(device_); }
    std::string name() const override;
    // every op family in f32, bf16 and f16 (computed in f32); no f64 on the GPU (cuda_backend.h)
    bool supports(const std::string& op, DType dtype) const override {
        (void)op;
        return dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16;
    }
    Allocator& allocator() override { return *allocator_; }
    void set_threads(int) override {}
    int threads() const override { return 1; }
    // tensors on this backend's device; f32, bf16 and f16 (cuda_detail::GpuRules)
    const ops::TensorRules& tensor_rules() const override;
    void synchronize() override;

    // transformer ops (cuda_transformer.cpp; kernels in cuda_transformer_kernels.cu)
    std::size_t attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                          DType dtype) const override;

    // ordering, asynchronous copies, capture (cuda_async.cpp); step control (cuda_backend.cpp)
    std::shared_ptr<Fence> record_fence() override;
    void wait_fence(const Fence* f) override;
    bool fence_done(const Fence* f) override;
    void fence_sync(const Fence* f) override;
    std::shared_ptr<void> host_buffer(std::size_t bytes) override;
    std::unique_ptr<CapturedWork> capture(const std::function<void()>& work) override;

    cudaStream_t compute_stream() const { return compute_; }
    void set_tf32(bool on);
    CachingAllocator& caching_allocator() { return *allocator_; }
    int cc_major() const { return cc_major_; }
    int cc_minor() const { return cc_minor_; }

    // Every op starts with `auto lock = op_lock();`: the backend's lock (ops may come from any thread)
    // and this backend's device made current on the calling thread.
    std::unique_lock<std::recursive_mutex> op_lock() const;
    // Throws unless t is defined and on this backend's device.
    void require_here(const char* op, const char* name, const Tensor& t) const;
    // Throws when a capture is in progress: `what` waits for the device or uploads.
    void require_not_capturing(const char* what) const;
    bool capturing() const { return capturing_.load(); }
    void set_capturing(bool on) { capturing_.store(on); }

protected:
    // The ops (backend.h), their arguments checked above the backends (backend/op_dispatch.cpp); what
    // only the GPU requires (32-bit sizes, a workspace cuDNN sized) is checked here.
    void do_fill(Tensor& t, double value) override;
    void do_copy(const Tensor& src, Tensor& dst) override;
    void do_copy_from_host(const void* src, Tensor& dst) override;
    void do_copy_to_host(const Tensor& src, void* dst) override;
    void do_add(const Tensor& a, const Tensor& b, Tensor& out) override;
    void do_axpy(float alpha, const Tensor& x, Tensor& y) override;
    void do_scale(Tensor& x, float alpha) override;
    void do_gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
                 Tensor& c) override;
    void do_add_bias(Tensor& y, const Tensor& bias) override;
    void do_bias_grad(const Tensor& dy, Tensor& dbias) override;
    std::size_t do_conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                          DType dtype) const override;
    void do_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const Conv2dParams& p,
                           Tensor& workspace) override;
    void do_conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                                 Tensor& workspace) override;
    void do_conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias, const Conv2dParams& p,
                                   Tensor& workspace) override;
    void do_maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) override;
    void do_maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) override;
    void do_maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx,
                                       const Pool2dParams& p) override;
    void do_avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) override;
    void do_avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) override;
    void do_activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) override;
    void do_activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y, const Tensor& dy,
                                Tensor& dx) override;
    void do_dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                            std::uint64_t offset) override;
    void do_dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) override;
    void do_batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                    Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean, Tensor& running_var,
                                    float momentum, float eps) override;
    void do_batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    const Tensor& running_mean, const Tensor& running_var, float eps,
                                    Tensor& y) override;
    void do_batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& save_mean,
                               const Tensor& save_invstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
    LossResult do_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                        Tensor& dlogits, float grad_scale) override;
    LossResult do_mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) override;
    void do_embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y) override;
    void do_embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable) override;
    void do_layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                              Tensor& mean, Tensor& rstd) override;
    void do_layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                               const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
    void do_gelu_tanh_forward(const Tensor& x, Tensor& y) override;
    void do_gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) override;
    void do_rmsnorm_forward(const Tensor& x, const Tensor& gamma, float eps, Tensor& y, Tensor& rstd) override;
    void do_rmsnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                             Tensor& dgamma) override;
    void do_rope_apply(Tensor& x, int heads, const RopeParams& p, bool inverse) override;
    void do_swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) override;
    void do_swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate,
                            Tensor& dup) override;
    void do_attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                              Tensor& workspace) override;
    void do_attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                               Tensor& dqkv, const AttentionParams& p, Tensor& workspace) override;
    LossResult do_cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad,
                                        float grad_scale) override;
    void do_copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row,
                      std::int64_t rows) override;
    void do_transpose_last2(const Tensor& x, Tensor& y) override;
    void do_dequantize(const Tensor& packed, int bits, std::int64_t group, Tensor& w) override;
    double do_sum_squares(const Tensor& x) override;
    bool do_all_finite(const Tensor& x) override;
    void do_sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) override;
    void do_adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) override;
    std::shared_ptr<Fence> do_upload_async(const void* src, Tensor& dst, const Fence* reads_done) override;
    std::shared_ptr<Fence> do_copy_to_host_async(const Tensor& src, void* dst) override;
    void do_increment(Tensor& counter, std::int64_t by) override;
    void do_softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                       Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                       double weight) override;
    void do_mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                          const Tensor& control, Tensor& stats, double weight) override;
    void do_all_finite_into(const Tensor& x, Tensor& control) override;
    void do_sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                           const Tensor& control) override;
    void do_adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                            const Tensor& control) override;
    void do_step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) override;

private:
    friend class CudaGraph;
    void release() noexcept;  // frees everything the constructor created; idempotent
    // Copies the scratch's ReduceResult to pinned memory and waits for the stream.
    cuda::ReduceResult fetch_result();
    // H2D through the pinned staging ring on `stream` (copy_ after it waited for what it must, or
    // compute_ for small uploads); on copy_ it records copy_done_ at the end.
    void staged_upload(const void* src, Tensor& dst, cudaStream_t stream);
    // The plan for these shapes (cuda_conv.cpp); cached. Must hold op_lock().
    cuda::ConvPlan& conv_plan(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                              DType dt) const;
    cuda::Scratch scratch() const { return cuda::Scratch{static_cast<char*>(scratch_.raw())}; }

    int device_;
    std::unique_ptr<ops::TensorRules> rules_;  // tensor_rules(): cuda_detail::GpuRules over this backend
    CudaBackendOptions options_;
    int cc_major_ = 0, cc_minor_ = 0;
    std::string device_name_;
    mutable std::recursive_mutex mutex_;
    std::atomic<bool> capturing_{false};
    cudaStream_t compute_ = nullptr;
    cudaStream_t copy_ = nullptr;
    cudaEvent_t compute_done_ = nullptr;  // recorded on compute_ before an upload on copy_
    cudaEvent_t copy_done_ = nullptr;     // recorded on copy_ after it; compute_ waits for it
    // pinned host staging for uploads: a ring (cuda_sizes::kStagingBytes) of regions in flight, oldest first
    struct StagingRegion {
        std::size_t begin, end;
        cudaEvent_t done;  // recorded after the copy out of the region
    };
    char* staging_ = nullptr;
    std::size_t staging_head_ = 0;
    std::deque<StagingRegion> staging_inflight_;
    std::vector<cudaEvent_t> staging_events_;  // free for reuse
    // A region of n bytes of the ring whose previous copies have finished (waits for them if needed).
    std::size_t staging_region(std::size_t n);
    cublasHandle_t cublas_ = nullptr;
    cudnnHandle_t cudnn_ = nullptr;
    cuda::ReduceResult* host_result_ = nullptr;  // pinned
    std::unique_ptr<CudaCachingAllocator> allocator_;
    Tensor cublas_workspace_;
    Tensor scratch_;  // cuda_sizes::kOpScratchBytes, category workspace
    mutable std::map<std::array<std::int64_t, 18>, std::unique_ptr<cuda::ConvPlan, cuda::ConvPlanDeleter>> conv_plans_;
};

}  // namespace hr
