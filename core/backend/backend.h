#pragma once
// The op interface (docs/design.md decision 4). The CPU backend (backend/cpu) is the reference: every op
// exists there for f32 and f64, and for bf16/f16 stored as such and computed in f32. A CUDA backend
// implements the same interface and is compared against it.
//
// Conventions
// - All tensors are contiguous, row-major, NCHW for images: x (N, C, H, W), conv weight (K, C, kh, kw),
//   Linear weight (out, in) as in PyTorch.
// - Parameter-gradient outputs ACCUMULATE (+=); activation-gradient outputs are WRITTEN (=)
//   (docs/design.md decision 1).
// - Float ops accept f32, f64, bf16 and f16 unless stated; inputs and outputs of one call share a
//   dtype unless stated. Index tensors are i32 (pooling) / i64 (labels); masks are u8.
// - Each op's arguments are checked once, here above the backends (op_dispatch.cpp: op_checks.h and
//   transformer_checks.h, against the backend's tensor_rules()), before the backend's do_ op runs; a bad
//   call throws hr::Error naming the op and the shapes, the same on every backend.
// - Order: ops run in the order they are called. A GPU backend queues them (the host returns early);
//   ops that return a host value (a LossResult, a double, a bool) wait for the device. The ops under
//   "ordering" and "the step without host synchronisation" below let a training step run with none of
//   those waits (and be captured once and replayed); on the CPU they are synchronous and trivial, and
//   their default implementations here (backend/step_ops.cpp) are the reference the GPU agrees with.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/device.h"
#include "memory/allocator.h"
#include "tensor/tensor.h"

namespace hr {

namespace ops {
class TensorRules;  // op_checks.h
}

struct Conv2dParams {
    int stride_h = 1, stride_w = 1;
    int pad_h = 0, pad_w = 0;
    int dilation_h = 1, dilation_w = 1;
};

struct Pool2dParams {
    int kernel_h = 2, kernel_w = 2;
    int stride_h = 2, stride_w = 2;
    int pad_h = 0, pad_w = 0;
};

enum class ActivationKind { relu, leaky_relu, tanh, sigmoid, gelu };

struct SgdArgs {
    float lr = 0.01f;
    float momentum = 0.0f;
    float dampening = 0.0f;
    bool nesterov = false;
    float weight_decay = 0.0f;
    bool first_step = false;  // PyTorch starts the momentum buffer as a copy of the first gradient
    float grad_scale = 1.0f;  // gradients are multiplied by this first (1/loss_scale, 1/accumulation)
};

struct AdamArgs {
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.0f;
    bool decoupled_weight_decay = false;  // AdamW
    std::int64_t step = 1;                // 1-based, for bias correction
    float grad_scale = 1.0f;
};

// Scaled dot-product self-attention over a fused projection (transformer ops below).
struct AttentionParams {
    int heads = 1;               // H; the head size is D = C / H, scores are scaled by 1/sqrt(D)
    int kv_heads = 0;            // KV key/value heads (0: H). Grouped-query attention (Llama, Mistral, Qwen2):
                                 //   KV divides H and KV head g serves query heads g*H/KV .. (g+1)*H/KV - 1
    bool planes = false;         // the qkv layout: false, q | k | v side by side in each token's row (nanoGPT's
                                 //   c_attn); true, three matrices one after another: q (B, T, H D), then
                                 //   k (B, T, KV D), then v (B, T, KV D) (three projections' outputs)
    bool causal = true;          // query i attends to keys j <= i only
    float dropout = 0.0f;        // on the attention probabilities (pass 0 outside training)
    std::uint64_t seed = 0;      // dropout: probability (b, h, i, j) of a (B, H, T, T) problem is dropped iff
    std::uint64_t offset = 0;    //   counter_uniform(seed, offset + ((b * H + h) * T + i) * T + j) < dropout
};

// A target that adds nothing to the loss (cross_entropy_inplace): PyTorch's default ignore_index.
inline constexpr std::int64_t kIgnoreTarget = -100;

// Rotary position embeddings (RoPE, Su et al. 2021) in Hugging Face's rotate_half convention: in each
// head of size D, dimension i < D/2 pairs with i + D/2 and the pair is rotated by the angle t * f_i of
// the token's position t (0-based) with f_i = theta^(-2i/D). Llama 3's frequency scaling (factor > 0,
// transformers' _compute_llama3_parameters): with wavelength w_i = 2 pi / f_i, low = original_max_positions /
// low_freq_factor and high = original_max_positions / high_freq_factor, f_i is kept when w_i < high, divided
// by factor when w_i > low, and otherwise blended: (1 - s) f_i / factor + s f_i with
// s = (original_max_positions / w_i - low_freq_factor) / (high_freq_factor - low_freq_factor).
// f_i is computed in f64 and rounded to f32, the angle t * f_i taken in f32 (as transformers does).
struct RopeParams {
    double theta = 10000.0;
    double factor = 0.0;  // 0: no scaling
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    double original_max_positions = 8192.0;
};
// The frequencies f_i (D/2 values, f32 as the op uses them) of RopeParams for head size D.
std::vector<float> rope_frequencies(const RopeParams& p, std::int64_t D);

struct LossResult {
    double loss = 0.0;          // mean over the batch (cross-entropy) or over all elements (MSE)
    std::int64_t correct = 0;   // rows whose argmax equals the label
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual Device device() const = 0;
    virtual std::string name() const = 0;   // "cpu (OpenBLAS 0.3.21, 2 threads)"
    virtual Allocator& allocator() = 0;
    virtual void set_threads(int threads) = 0;
    virtual int threads() const = 0;
    virtual void synchronize() {}
    // Whether this backend runs an op family in a dtype. Families by name (nn/backend_ops.h,
    // backend_op_names): elementwise (fill, copy, add, axpy, scale), gemm, bias (add_bias, bias_grad),
    // conv2d, maxpool2d, avgpool2d, activation, dropout, batchnorm, softmax_cross_entropy, mse_loss,
    // embedding, layernorm, gelu_tanh, attention, cross_entropy (cross_entropy_inplace), copy_rows,
    // transpose (transpose_last2), sgd_update, adam_update. Asked at setup (TrainingState), so a model
    // a backend cannot run fails there, naming the op, not mid-run.
    // Where this backend wants its tensors and which float types it computes in: what the argument checks
    // above every backend (op_checks.h) ask of it.
    virtual const ops::TensorRules& tensor_rules() const = 0;
    virtual bool supports(const std::string& op, DType dtype) const {
        (void)op;
        return dtype_is_float(dtype);
    }

    // --- data movement -------------------------------------------------------------------------
    void fill(Tensor& t, double value);
    // dst = src, converting dtype when they differ (same numel). Both on this backend's device.
    void copy(const Tensor& src, Tensor& dst);
    void copy_from_host(const void* src, Tensor& dst);  // src holds dst.nbytes() of dst.dtype()
    void copy_to_host(const Tensor& src, void* dst);

    // --- elementwise -----------------------------------------------------------------------------
    void add(const Tensor& a, const Tensor& b, Tensor& out);   // out = a + b
    void axpy(float alpha, const Tensor& x, Tensor& y);        // y += alpha * x
    void scale(Tensor& x, float alpha);                        // x *= alpha

    // --- linear algebra --------------------------------------------------------------------------
    // C = alpha * op(A) @ op(B) + beta * C with A, B, C 2-D. op(A) is (M, K), op(B) is (K, N), C (M, N).
    void gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
              Tensor& c);
    // y viewed as (N, C, S): y[n, c, s] += bias[c]
    void add_bias(Tensor& y, const Tensor& bias);
    // dy viewed as (N, C, S): dbias[c] += sum_{n, s} dy[n, c, s]
    void bias_grad(const Tensor& dy, Tensor& dbias);

    // --- convolution (groups = 1) ----------------------------------------------------------------
    // Scratch bytes the three conv calls need for these shapes (category workspace, owned by the caller).
    std::size_t conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y,
                                       const Conv2dParams& p, DType dtype) const;
    // y = conv(x, w) (+ bias when defined). x (N, C, H, W), w (K, C, kh, kw), y (N, K, Ho, Wo)
    void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                        const Conv2dParams& p, Tensor& workspace);
    // dx = conv_transpose(dy, w)   (written)
    void conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                              Tensor& workspace);
    // dw += corr(x, dy); dbias += sum(dy) when dbias is defined   (accumulated)
    void conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                const Conv2dParams& p, Tensor& workspace);
    // Both of a layer's backward calls: dx (when defined) as conv2d_backward_data, then dw and dbias as
    // conv2d_backward_filter. A backend may share work between them (the CPU backend reorders dy once for
    // oneDNN); the workspace is the one conv2d_workspace_bytes asks for.
    void conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor& dx, Tensor& dw,
                         Tensor& dbias, const Conv2dParams& p, Tensor& workspace);

    // --- pooling ---------------------------------------------------------------------------------
    // indices (i32, same shape as y) receive the flat h*W+w position of each maximum within its plane.
    void maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p);
    void maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx);  // dx written
    // The same, told the forward's pooling windows: a GPU then gathers per input element in f32 in the
    // CPU's order (deterministic, one rounding) instead of scattering. Default: the form above.
    void maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx,
                                    const Pool2dParams& p);
    // count_include_pad = true (PyTorch's default)
    void avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p);
    void avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p);

    // --- activations -----------------------------------------------------------------------------
    // alpha: negative slope of leaky_relu. GELU is the exact (erf) form, as torch.nn.GELU().
    void activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y);
    // dx = dy * f'(x); x and y are the forward input and output (either may be used).
    void activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx);

    // --- dropout (counter-based RNG: element i's keep/drop depends only on seed, offset + i) ------
    void dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                         std::uint64_t offset);
    void dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx);

    // --- batch norm over (N, H, W) per channel; statistics tensors are f32 of shape (C) ----------
    // Training: normalise with batch statistics (biased variance), save mean and 1/sqrt(var + eps),
    // update running_mean/var (unbiased variance) with momentum, as torch.nn.BatchNorm2d.
    void batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                 Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                 Tensor& running_var, float momentum, float eps);
    void batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& running_mean, const Tensor& running_var, float eps,
                                 Tensor& y);
    // Activation checkpointing's recompute of a training forward: y from x again, with the statistics
    // save_mean / save_invstd that batchnorm_forward_train saved for this same x, and no running update.
    // A backend may skip the statistics pass (the CPU backend does, bit for bit); the default runs
    // batchnorm_forward_train again with momentum 0 (same values written again).
    void batchnorm_forward_recompute(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                     Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                     Tensor& running_var, float eps);
    // dx written; dgamma, dbeta accumulated.
    void batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                            const Tensor& save_mean, const Tensor& save_invstd, Tensor& dx,
                            Tensor& dgamma, Tensor& dbeta);

    // --- losses ----------------------------------------------------------------------------------
    // logits (N, K) float, labels (N) i64. When dlogits is defined it receives
    // grad_scale * d(mean loss)/d(logits) (written).
    LossResult softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                     Tensor& dlogits, float grad_scale);
    // pred, target same shape; mean over all elements. correct counts rows where argmax(pred) == argmax(target).
    LossResult mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale);

    // --- transformer ops (CPU: backend/cpu/cpu_transformer*.cpp) ---------------------------------
    // Sequences are (B, T, C) row-major: token t of sample b is row b * T + t. Statistics (mean, rstd,
    // lse) are f32 whatever the activation dtype. Unless stated, outputs must not alias inputs.
    //
    // Embedding: ids (any shape, i64, each in [0, V)), table (V, C), y (ids..., C): y[i, :] = table[ids[i], :].
    void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y);
    // dtable[ids[i], :] += dy[i, :] (accumulated; the sum for a row is taken in a fixed order).
    void embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable);
    // LayerNorm over the last dimension C (as torch.nn.LayerNorm, biased variance): x (R..., C), gamma and
    // beta (C) (beta may be undefined: no bias), y like x; mean and rstd (R) f32 receive each row's mean
    // and 1/sqrt(var + eps).
    void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                           Tensor& mean, Tensor& rstd);
    // dx written; dgamma and dbeta (undefined when there is no bias) accumulated.
    void layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                            const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta);
    // GELU, tanh form (torch.nn.GELU(approximate='tanh'), GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    // Elementwise: y may be x, dx may be dy.
    void gelu_tanh_forward(const Tensor& x, Tensor& y);
    void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx);
    // Self-attention core, memory-efficient: qkv (B, T, 3C) holds q | k | v along the last dimension, head h
    // at columns h*D .. h*D + D - 1 of each (nanoGPT's c_attn split); out (B, T, C) = softmax(q k^T / sqrt(D)
    // [+ causal mask]) v with head h written to columns h*D ..; lse (B, H, T) f32 receives the natural
    // log-sum-exp of each row of scaled, masked scores (before dropout). Nothing of size T x T is kept:
    // backward recomputes the probabilities tile by tile from qkv and lse.
    virtual std::size_t attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                                  DType dtype) const = 0;
    void attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                           Tensor& workspace);
    // dqkv (B, T, 3C) written, from the forward's qkv, out and lse and the output gradient dout (B, T, C).
    void attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                            Tensor& dqkv, const AttentionParams& p, Tensor& workspace);
    // With p.kv_heads / p.planes (grouped-query attention): qkv (B, T, (H + 2 KV) D) in the layout p.planes
    // names, out (B, T, H D), lse (B, H, T); attention_workspace_bytes(B, T, H D, H, dtype) serves it too.
    //
    // --- the LLaMA family's ops (CPU: backend/cpu/cpu_llama.cpp). Defaults throw Error naming the op. ---
    // RMSNorm over the last dimension C (transformers' LlamaRMSNorm): y = gamma * x / sqrt(mean(x^2) + eps),
    // x (R..., C), gamma (C), y like x; rstd (R) f32 receives each row's 1/sqrt(mean(x^2) + eps).
    void rmsnorm_forward(const Tensor& x, const Tensor& gamma, float eps, Tensor& y, Tensor& rstd);
    // dx written; dgamma accumulated.
    void rmsnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                          Tensor& dgamma);
    // Rotary embeddings in place: x (B, T, heads * D), D even, token t of each sample at position t.
    // inverse: rotates back (by -angle), which is the backward of the rotation (dx from dy, in place).
    void rope_apply(Tensor& x, int heads, const RopeParams& p, bool inverse);
    // SwiGLU's gate: y = silu(gate) * up = gate / (1 + exp(-gate)) * up; gate, up, y alike.
    void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y);
    // dgate = dy * up * silu'(gate), dup = dy * silu(gate), written (elementwise: dgate may be gate's memory
    // and dup up's).
    void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup);

    // --- decoding with a key/value cache (generation, nn/model.h forward_cached; CPU:
    // cpu_transformer_attention.cpp, cpu_llama.cpp). Defaults throw Error naming the op. ---
    // rope_apply for tokens at positions first .. first + T - 1: token t is rotated as position first + t
    // (the same f32 angle (first + t) * f_i as rope_apply gives that position in a whole sequence).
    void rope_apply_at(Tensor& x, int heads, const RopeParams& p, std::int64_t first);
    // Scratch bytes attention_cached needs for up to n new tokens over a cache of L positions, `heads` query
    // and kv_heads key/value heads of size D (category workspace, owned by the caller).
    virtual std::size_t attention_cached_workspace_bytes(std::int64_t n, std::int64_t L, int heads, int kv_heads,
                                                         std::int64_t D, DType dtype) const {
        (void)n, (void)L, (void)heads, (void)kv_heads, (void)D, (void)dtype;
        return 0;
    }
    // Causal attention of n new tokens at positions pos .. pos + n - 1 of one sequence against a key/value
    // cache: qkv (1, n, ...) in p's layout (as attention_forward; p.causal, no dropout); the new tokens'
    // keys and values are written to rows pos .. pos + n - 1 of k_cache and v_cache, (KV, L, D) each in
    // qkv's dtype, and out (1, n, H D) gets softmax(q k^T / sqrt(D)) v of each new token i over cache rows
    // 0 .. pos + i: the rows attention_forward gives for those tokens of the whole sequence. No lse.
    void attention_cached(const Tensor& qkv, Tensor& k_cache, Tensor& v_cache, std::int64_t pos,
                          const AttentionParams& p, Tensor& out, Tensor& workspace);

    // Fused softmax cross-entropy over a vocabulary, in place: logits (N, V) float, targets (N) i64 in
    // [0, V) or kIgnoreTarget (-100, PyTorch's ignore_index: the row adds 0 to the loss sum, is never
    // correct and its gradient row is 0). Returns the loss summed over the rows divided by N (all rows,
    // counted or not: a caller wanting PyTorch's mean over the counted rows multiplies the loss and
    // grad_scale by N / counted, as the token workload does) and the rows whose argmax is the
    // target. With want_grad the logits are OVERWRITTEN by grad_scale * d(mean loss)/d(logits), so no second
    // (N, V) buffer exists; without it they are left unchanged.
    LossResult cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad,
                                     float grad_scale);
    // Row blocks of sequences: src (Ns, S, C), dst (N, D, C); for every n: dst[n, dst_row + r, :] =
    // src[n or 0, src_row + r, :] for r < rows (src with Ns = 1 is broadcast over n). Same float dtype.
    void copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row,
                   std::int64_t rows);
    // x (N, A, B) -> y (N, B, A): y[n, b, a] = x[n, a, b].
    void transpose_last2(const Tensor& x, Tensor& y);
    // A quantised weight (QLoRA's frozen base, tensor/quantized_format.h): w (rows, cols), a float dtype,
    // gets the values q x s of `packed` (u8, at least quantized_bytes(rows, cols, bits, group)), bits 8 or 4.
    void dequantize(const Tensor& packed, int bits, std::int64_t group, Tensor& w);

    // --- reductions ------------------------------------------------------------------------------
    double sum_squares(const Tensor& x);
    bool all_finite(const Tensor& x);

    // --- optimizer updates over flat buffers (one pass each) -------------------------------------
    // param f32 (or f64); grad any float dtype; momentum_buf undefined when momentum == 0.
    void sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a);
    void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a);

    // --- ordering, asynchronous copies and captured work ------------------------------------------
    // (Defaults: a backend whose ops have finished when they return; fences are null and always done.)
    class Fence {  // a point in this backend's queue of device work
    public:
        virtual ~Fence() = default;
    };
    // A fence after the work queued so far.
    virtual std::shared_ptr<Fence> record_fence() { return nullptr; }
    // Work queued from now on waits for `f` (null: nothing to wait for).
    virtual void wait_fence(const Fence* f) {}
    virtual bool fence_done(const Fence* f) { return true; }  // never waits
    virtual void fence_sync(const Fence* f) {}                // the host waits for f
    // dst = src (host) like copy_from_host, but the copy waits only for `reads_done` (the work that last
    // reads dst; null: all work queued so far), and work queued later does NOT wait for it: call
    // wait_fence(returned fence) before reading dst. The host may reuse src when this returns. This is
    // how the next batch uploads while the current step runs.
    std::shared_ptr<Fence> upload_async(const void* src, Tensor& dst, const Fence* reads_done);
    // Host memory the device can copy into without the host waiting (page-locked on a GPU), zeroed.
    virtual std::shared_ptr<void> host_buffer(std::size_t bytes);
    // dst (host_buffer memory) = src, queued: read dst once the returned fence is done.
    std::shared_ptr<Fence> copy_to_host_async(const Tensor& src, void* dst);
    // Work captured once and queued again as a whole (a CUDA graph).
    class CapturedWork {
    public:
        virtual ~CapturedWork() = default;
        virtual void replay() = 0;  // queues exactly the device work that was captured
    };
    // Runs `work` once while recording the device work it queues (it is not executed then) and returns
    // what queues that work again. The recorded work reads and writes the same memory each replay and
    // the scalars passed by value at capture time; everything that changes per step must come from
    // device memory (the StepControl below, tensors uploaded before replay). During capture no op may
    // wait for the device (no LossResult, copy_to_host, synchronize) or upload. nullptr when this
    // backend does not capture (the CPU): then call work() each time.
    virtual std::unique_ptr<CapturedWork> capture(const std::function<void()>& work) { return nullptr; }

    // --- device counters ---------------------------------------------------------------------------
    // counter (i64, one element) += by, on the device (BatchNorm's num_batches_tracked).
    void increment(Tensor& counter, std::int64_t by = 1);

    // --- the step without host synchronisation ----------------------------------------------------
    // A step's changing scalars live in a StepControl tensor on the device (f64, kStepControlFields) and
    // its figures in a StepStats tensor (f64, kStepStatsFields); see the enums below. So the host never
    // reads a value back inside a step and a captured step replays correctly.
    //
    // Like softmax_cross_entropy / mse_loss, but nothing comes back to the host: dlogits (when defined)
    // receives grad_scale * control[loss_scale] * d(mean loss)/d(logits) (control undefined: scale 1);
    // stats[loss] += weight * mean loss; stats[correct] += rows whose argmax is the label (argmax: the
    // first NaN if a row has one, else the first maximum). A label outside [0, K) writes nothing to
    // dlogits and stats; it adds the number of bad rows to stats[bad_labels] and, when that was 0, sets
    // stats[bad_label] and stats[bad_row] to the first one (the host reports it when it reads the stats).
    void softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                    Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                    double weight);
    void mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                       const Tensor& control, Tensor& stats, double weight);
    // control[found_inf] = 1 when x holds an inf or NaN (never cleared here).
    void all_finite_into(const Tensor& x, Tensor& control);
    // sgd_update / adam_update with the step's scalars from control: lr = control[lr]; gradients are
    // multiplied by a.grad_scale / control[loss_scale]; SGD's first step is control[opt_step] == 0 and
    // Adam's bias correction uses t = control[opt_step] + 1; nothing changes when control[found_inf]
    // is set. a.lr, a.first_step and a.step are ignored. control itself is not changed.
    void sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                        const Tensor& control);
    void adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                         const Tensor& control);
    // After the updates of a step: when control[found_inf] is set, skipped += 1 and (dynamic) the loss
    // scale halves (not below 1) and good_steps = 0; otherwise opt_step += 1 and (dynamic) good_steps += 1,
    // doubling the loss scale and restarting the count when it reaches growth_interval (as
    // torch.cuda.amp.GradScaler; the rule is update_loss_scale in backend/update_rules.h, the host step's too).
    // found_inf is left for the step's figures; clear it before the next step.
    void step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval);

protected:
    // What a backend implements: each op above, called by it (op_dispatch.cpp) once the op's arguments
    // passed its checks (op_checks.h, transformer_checks.h, against tensor_rules()). A backend assumes
    // valid arguments and checks only what is its own (the GPU's 32-bit sizes, a workspace it sized, data
    // such as labels and token ids in range). The defaults are the reference forms described above.
    virtual void do_fill(Tensor& t, double value) = 0;
    virtual void do_copy(const Tensor& src, Tensor& dst) = 0;
    virtual void do_copy_from_host(const void* src, Tensor& dst) = 0;
    virtual void do_copy_to_host(const Tensor& src, void* dst) = 0;
    virtual void do_add(const Tensor& a, const Tensor& b, Tensor& out) = 0;
    virtual void do_axpy(float alpha, const Tensor& x, Tensor& y) = 0;
    virtual void do_scale(Tensor& x, float alpha) = 0;
    virtual void do_gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
                         Tensor& c) = 0;
    virtual void do_add_bias(Tensor& y, const Tensor& bias) = 0;
    virtual void do_bias_grad(const Tensor& dy, Tensor& dbias) = 0;
    virtual std::size_t do_conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                                  DType dtype) const = 0;
    virtual void do_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                   const Conv2dParams& p, Tensor& workspace) = 0;
    virtual void do_conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                                         Tensor& workspace) = 0;
    virtual void do_conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                           const Conv2dParams& p, Tensor& workspace) = 0;
    virtual void do_conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor& dx, Tensor& dw,
                                    Tensor& dbias, const Conv2dParams& p, Tensor& workspace) {
        if (dx.defined()) conv2d_backward_data(dy, w, dx, p, workspace);
        conv2d_backward_filter(x, dy, dw, dbias, p, workspace);
    }
    virtual void do_maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) = 0;
    virtual void do_maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) = 0;
    virtual void do_maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx,
                                               const Pool2dParams& p) {
        maxpool2d_backward(dy, indices, dx);
    }
    virtual void do_avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) = 0;
    virtual void do_avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) = 0;
    virtual void do_activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) = 0;
    virtual void do_activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                                        const Tensor& dy, Tensor& dx) = 0;
    virtual void do_dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                                    std::uint64_t offset) = 0;
    virtual void do_dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) = 0;
    virtual void do_batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                            Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                            Tensor& running_var, float momentum, float eps) = 0;
    virtual void do_batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                            const Tensor& running_mean, const Tensor& running_var, float eps,
                                            Tensor& y) = 0;
    virtual void do_batchnorm_forward_recompute(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                                Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                                Tensor& running_var, float eps) {
        batchnorm_forward_train(x, gamma, beta, y, save_mean, save_invstd, running_mean, running_var, 0.0f, eps);
    }
    virtual void do_batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& save_mean,
                                       const Tensor& save_invstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
    virtual LossResult do_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                                Tensor& dlogits, float grad_scale) = 0;
    virtual LossResult do_mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) = 0;
    virtual void do_embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y) = 0;
    virtual void do_embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable) = 0;
    virtual void do_layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                      Tensor& mean, Tensor& rstd) = 0;
    virtual void do_layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                                       const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
    virtual void do_gelu_tanh_forward(const Tensor& x, Tensor& y) = 0;
    virtual void do_gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) = 0;
    virtual void do_attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                                      Tensor& workspace) = 0;
    virtual void do_attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                                       Tensor& dqkv, const AttentionParams& p, Tensor& workspace) = 0;
    virtual void do_rmsnorm_forward(const Tensor& x, const Tensor& gamma, float eps, Tensor& y, Tensor& rstd);
    virtual void do_rmsnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& rstd,
                                     Tensor& dx, Tensor& dgamma);
    virtual void do_rope_apply(Tensor& x, int heads, const RopeParams& p, bool inverse);
    virtual void do_swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y);
    virtual void do_swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup);
    virtual void do_rope_apply_at(Tensor& x, int heads, const RopeParams& p, std::int64_t first);
    virtual void do_attention_cached(const Tensor& qkv, Tensor& k_cache, Tensor& v_cache, std::int64_t pos,
                                     const AttentionParams& p, Tensor& out, Tensor& workspace);
    virtual LossResult do_cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad,
                                                float grad_scale) = 0;
    virtual void do_copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row,
                              std::int64_t rows) = 0;
    virtual void do_transpose_last2(const Tensor& x, Tensor& y) = 0;
    virtual void do_dequantize(const Tensor& packed, int bits, std::int64_t group, Tensor& w) = 0;
    virtual double do_sum_squares(const Tensor& x) = 0;
    virtual bool do_all_finite(const Tensor& x) = 0;
    virtual void do_sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) = 0;
    virtual void do_adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) = 0;
    virtual std::shared_ptr<Fence> do_upload_async(const void* src, Tensor& dst, const Fence* reads_done) {
        copy_from_host(src, dst);
        return nullptr;
    }
    virtual std::shared_ptr<Fence> do_copy_to_host_async(const Tensor& src, void* dst) {
        copy_to_host(src, dst);
        return nullptr;
    }
    virtual void do_increment(Tensor& counter, std::int64_t by);
    virtual void do_softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                               Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                               double weight);
    virtual void do_mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                                  const Tensor& control, Tensor& stats, double weight);
    virtual void do_all_finite_into(const Tensor& x, Tensor& control);
    virtual void do_sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                                   const Tensor& control);
    virtual void do_adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                                    const Tensor& control);
    virtual void do_step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval);
};

enum StepControlField : int {
    kCtlLr = 0,        // learning rate of this step (the host writes it before the step)
    kCtlLossScale,     // the loss scale (1 without fp16 dynamic scaling)
    kCtlFoundInf,      // 1 when this step's gradients hold an inf or NaN
    kCtlGoodSteps,     // steps since the loss scale last changed
    kCtlSkipped,       // steps skipped so far (inf/NaN gradients)
    kCtlOptStep,       // optimizer steps applied so far
    kStepControlFields = 8
};

enum StepStatsField : int {
    kStatLoss = 0,     // sum over micro-batches of weight * mean loss
    kStatCorrect,      // rows whose argmax is the label
    kStatBadLabels,    // rows with a label outside [0, K)
    kStatBadLabel,     // the first such label
    kStatBadRow,       // and its row within its micro-batch
    kStepStatsFields = 8
};

// The counter-based generator dropout uses, exposed so tests and other backends agree:
// a uniform float in [0, 1) for (seed, counter).
float counter_uniform(std::uint64_t seed, std::uint64_t counter);

}  // namespace hr
