#pragma once
// The CPU reference backend (docs/design.md decision 4): every op of backend.h for f32 and f64, and for
// bf16/f16 stored as such and computed in f32. GEMM goes to OpenBLAS (single-threaded calls; the
// backend parallelises itself with OpenMP over static partitions, so results are deterministic for
// a given thread count).
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace hr {

namespace cpu {
struct FastKernels;
}

class CpuBackend : public Backend {
public:
    CpuBackend(int threads, std::shared_ptr<MemoryLedger> ledger);

    Device device() const override { return Device::cpu(); }
    std::string name() const override;
    Allocator& allocator() override { return allocator_; }
    void set_threads(int threads) override;
    int threads() const override { return threads_; }
    // any defined host tensor; f32, f64, bf16 and f16 (cpu::host_tensor_rules, cpu_transformer.cpp)
    const ops::TensorRules& tensor_rules() const override;

    std::size_t attention_cached_workspace_bytes(std::int64_t n, std::int64_t L, int heads, int kv_heads,
                                                 std::int64_t D, DType dtype) const override;
    std::size_t attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                          DType dtype) const override;

    // The fast f32 kernels (AVX2, chosen at run time; cpu_kernels.h) are used where the CPU has them;
    // true makes this backend use its portable reference code for every op (tests compare the two).
    void use_reference_kernels(bool reference);
    // "avx512", "avx2" or "reference"
    std::string kernels_name() const;
    // f32 products with one row (M = 1) as matrix-vector products (cblas_sgemv), which read the weights once
    // where sgemm packs them first: the Generator's backend, decoding one token at a time (train/generate.h).
    // Off by default: training keeps sgemm's summation order whatever the rows.
    void use_gemv_for_one_row(bool on) { gemv_one_row_ = on; }

protected:
    // The ops (backend.h), their arguments checked above the backends (backend/op_dispatch.cpp).
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
    void do_conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor& dx, Tensor& dw, Tensor& dbias,
                            const Conv2dParams& p, Tensor& workspace) override;
    void do_maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) override;
    void do_maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) override;
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
    void do_batchnorm_forward_recompute(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                        Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                        Tensor& running_var, float eps) override;
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
    void do_rope_apply_at(Tensor& x, int heads, const RopeParams& p, std::int64_t first) override;
    void do_attention_cached(const Tensor& qkv, Tensor& k_cache, Tensor& v_cache, std::int64_t pos,
                             const AttentionParams& p, Tensor& out, Tensor& workspace) override;
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

private:
    // rope_apply / rope_apply_at: tokens t of each sample at position first + t
    void rope_rotate(Tensor& x, int heads, const RopeParams& p, bool inverse, std::int64_t first);
    CpuAllocator allocator_;
    int threads_ = 1;
    bool gemv_one_row_ = false;
    const cpu::FastKernels* kernels_ = nullptr;  // null: reference code only
    std::vector<float> scratch_;  // f32 staging for bf16/f16 GEMM, reused between calls
};

// threads <= 0 means all cores.
std::unique_ptr<Backend> make_cpu_backend(int threads, std::shared_ptr<MemoryLedger> ledger);

}  // namespace hr
