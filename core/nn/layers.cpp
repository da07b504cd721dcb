// The layer implementations: thin declarations over Backend ops.
#include <cmath>
#include <cstdio>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/window_size.h"
#include "nn/layer.h"
#include "nn/layer_registry.h"

namespace hr {

void Layer::forward(LayerIO& io) const {
    if (!io.backend) throw Error("internal: layer " + type() + " forward without a backend");
    if (!io.x.defined() || !io.y.defined())
        throw Error("internal: layer " + type() + " forward needs x and y");
    if (io.x.ndim() < 1 || io.y.ndim() < 1 || io.x.dim(0) != io.y.dim(0))
        throw Error("internal: layer " + type() + ": batch of x " + shape_str(io.x.shape()) + " and y " +
                    shape_str(io.y.shape()) + " differ");
    Shape in(io.x.shape().begin() + 1, io.x.shape().end());
    Shape out = output_shape(in);
    if (with_batch(io.x.dim(0), out) != io.y.shape())
        throw Error("internal: layer " + type() + ": output tensor " + shape_str(io.y.shape()) + " but expected " +
                    shape_str(with_batch(io.x.dim(0), out)));
    forward_impl(io);
}

void Layer::backward(LayerIO& io) const {
    if (!io.dy.defined() || io.dy.shape() != io.y.shape())
        throw Error("internal: layer " + type() + " backward: dy " + shape_str(io.dy.shape()) +
                    " does not match y " + shape_str(io.y.shape()));
    if (io.dx.defined() && io.dx.shape() != io.x.shape())
        throw Error("internal: layer " + type() + " backward: dx " + shape_str(io.dx.shape()) +
                    " does not match x " + shape_str(io.x.shape()));
    backward_impl(io);
}

namespace {

int attr_i(const LayerSpec& l, const char* n) { return static_cast<int>(std::llround(layer_attr(l, n))); }

// ---- Conv2d ---------------------------------------------------------------------------------------
class Conv2d : public Layer {
public:
    explicit Conv2d(const LayerSpec& s) : Layer(s) {
        ci_ = attr_i(s, "in_channels");
        co_ = attr_i(s, "out_channels");
        k_ = attr_i(s, "kernel_size");
        bias_ = layer_attr(s, "bias") != 0;
        p_.stride_h = p_.stride_w = attr_i(s, "stride");
        p_.pad_h = p_.pad_w = attr_i(s, "padding");
        p_.dilation_h = p_.dilation_w = attr_i(s, "dilation");
    }
    Shape output_shape(const Shape& in) const override {
        auto o = [&](std::int64_t v) { return window_output_size(v, k_, p_.stride_h, p_.pad_h, p_.dilation_h); };
        return {co_, o(in[1]), o(in[2])};
    }
    std::vector<ParamDecl> params(const Shape&) const override {
        std::int64_t fan_in = static_cast<std::int64_t>(ci_) * k_ * k_;
        std::vector<ParamDecl> p{{"weight", {co_, ci_, k_, k_}, ParamDecl::Init::uniform_fan_in, fan_in}};
        if (bias_) p.push_back({"bias", {co_}, ParamDecl::Init::uniform_fan_in, fan_in});
        return p;
    }
    std::size_t workspace_bytes(const Backend& b, std::int64_t batch, const Shape& in, DType dtype) const override {
        return b.conv2d_workspace_bytes(with_batch(batch, in), {co_, ci_, k_, k_}, with_batch(batch, output_shape(in)),
                                        p_, dtype);
    }

protected:
    void forward_impl(LayerIO& io) const override {
        Tensor no_bias;
        io.backend->conv2d_forward(io.x, io.params[0], bias_ ? io.params[1] : no_bias, io.y, p_, io.workspace);
    }
    void backward_impl(LayerIO& io) const override {
        if (!io.grads[0].defined()) {  // a frozen convolution (LoRA): the input gradient alone
            if (io.dx.defined()) io.backend->conv2d_backward_data(io.dy, io.params[0], io.dx, p_, io.workspace);
            return;
        }
        Tensor no_bias;
        io.backend->conv2d_backward(io.x, io.dy, io.params[0], io.dx, io.grads[0], bias_ ? io.grads[1] : no_bias, p_,
                                    io.workspace);
    }

public:
    bool skips_frozen_gradients() const override { return true; }

private:
    int ci_, co_, k_;
    bool bias_;
    Conv2dParams p_;
};

// ---- Linear ---------------------------------------------------------------------------------------
class Linear : public Layer {
public:
    explicit Linear(const LayerSpec& s) : Layer(s) {
        fi_ = attr_i(s, "in_features");
        fo_ = attr_i(s, "out_features");
        bias_ = layer_attr(s, "bias") != 0;
        // LoRA (ModelOptions::lora_rank; the model sets these attributes, a spec file never does)
        r_ = attr_i(s, "lora_rank");
        scale_ = r_ > 0 ? static_cast<float>(layer_attr(s, "lora_alpha") / r_) : 0.0f;
        // QLoRA (ModelOptions::lora_base_bits): the frozen weight is packed (tensor/quantized_format.h) and
        // dequantised into the workspace's first (out, in) values at each use
        bits_ = r_ > 0 ? static_cast<int>(attr_i(s, "lora_base_bits")) : 0;
        group_ = attr_i(s, "lora_base_group");
        // LoRA dropout (ModelOptions::lora_dropout, peft's): the adapter's input is dropout(x) while training
        p_ = r_ > 0 ? static_cast<float>(layer_attr(s, "lora_dropout")) : 0.0f;
    }
    Shape output_shape(const Shape& in) const override {
        Shape o = in;  // (in) -> (out), (T, in) -> (T, out)
        o.back() = fo_;
        return o;
    }
    std::vector<ParamDecl> params(const Shape&) const override {
        std::vector<ParamDecl> p{{"weight", {fo_, fi_}, ParamDecl::Init::uniform_fan_in, fi_}};
        p[0].packed = bits_ > 0;
        if (bias_) p.push_back({"bias", {fo_}, ParamDecl::Init::uniform_fan_in, fi_});
        if (r_ > 0) {  // PEFT: A kaiming-uniform (PyTorch's default bound 1/sqrt(in)), B zero: starts as the base
            p.push_back({"lora_A", {r_, fi_}, ParamDecl::Init::uniform_fan_in, fi_});
            p.push_back({"lora_B", {fo_, r_}, ParamDecl::Init::zeros, r_});
        }
        return p;
    }
    // LoRA keeps h = x A^T (rows, R) for backward; backward needs (rows, R) for dh
    std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const override {
        if (r_ == 0) return {};
        return {{"lora_h", {batch * rows_per_sample(in), r_}, DType::f32, true}};
    }
    // LoRA: dh (rows, R); QLoRA: the dequantised weight (out, in) before it; LoRA dropout: the dropped input
    // xd (rows, in) and its mask (rows * in, u8) after it
    std::size_t workspace_bytes(const Backend&, std::int64_t batch, const Shape& in, DType dtype) const override {
        if (r_ == 0) return 0;
        const std::int64_t rows = batch * rows_per_sample(in);
        if (p_ > 0) return mask_offset(rows, dtype) + static_cast<std::size_t>(rows * fi_);
        return dh_offset(dtype) + static_cast<std::size_t>(rows * r_) * dtype_size(dtype);
    }
    bool skips_frozen_gradients() const override { return true; }

protected:
    // Sequences (N, T, in) are multiplied as (N*T, in): the weight applies to every token.
    void forward_impl(LayerIO& io) const override {
        // y (N, out) = x (N, in) @ W^T (in, out) + b
        Tensor x = io.x.reshape({io.x.numel() / fi_, fi_}), y = io.y.reshape({io.y.numel() / fo_, fo_});
        const bool output = !io.recompute || io.recompute_output;
        if (output) {
            io.backend->gemm(false, true, 1.0f, x, weight(io), 0.0f, y);
            if (bias_) io.backend->add_bias(y, io.params[1]);
        }
        if (r_ == 0 || io.adapters_off) return;  // (adapters off: the base alone, Model::set_adapters_enabled)
        // LoRA: h = dropout(x) A^T (rows, R), kept; y += (alpha / R) h B^T
        const std::int64_t rows = x.dim(0);
        Tensor h = io.saved[0].view(0, {rows, r_});
        io.backend->gemm(false, true, 1.0f, lora_input(io, x), io.params[lora_a()], 0.0f, h);
        if (output) io.backend->gemm(false, true, scale_, h, io.params[lora_a() + 1], 1.0f, y);
    }
    void backward_impl(LayerIO& io) const override {
        Tensor x = io.x.reshape({io.x.numel() / fi_, fi_}), dy = io.dy.reshape({io.dy.numel() / fo_, fo_});
        // dx (N, in) = dy (N, out) @ W (out, in)
        if (io.dx.defined()) {
            Tensor dx = io.dx.reshape({io.dx.numel() / fi_, fi_});
            io.backend->gemm(false, false, 1.0f, dy, weight(io), 0.0f, dx);
        }
        // dW (out, in) += dy^T (out, N) @ x (N, in); a frozen weight (LoRA) has no gradient to take it
        if (io.grads[0].defined()) io.backend->gemm(true, false, 1.0f, dy, x, 1.0f, io.grads[0]);
        if (bias_ && io.grads[1].defined()) io.backend->bias_grad(dy, io.grads[1]);
        if (r_ == 0) return;
        // LoRA: dB += s dy^T h; dh = s dy B (rows, R); dA += dh^T x; dx += dh A. With LoRA dropout, x is the
        // dropped input xd (its mask drawn again, as forward drew it) and dx += mask (dh A) / (1 - p)
        const std::int64_t rows = x.dim(0);
        const int a = lora_a();
        Tensor h = io.saved[0].view(0, {rows, r_});
        io.backend->gemm(true, false, scale_, dy, h, 1.0f, io.grads[a + 1]);
        Tensor dh(io.workspace.storage(), io.workspace.byte_offset() + dh_offset(dy.dtype()), {rows, r_}, dy.dtype());
        io.backend->gemm(false, false, scale_, dy, io.params[a + 1], 0.0f, dh);
        Tensor xa = lora_input(io, x);
        io.backend->gemm(true, false, 1.0f, dh, xa, 1.0f, io.grads[a]);
        if (io.dx.defined()) {
            Tensor dx = io.dx.reshape({io.dx.numel() / fi_, fi_});
            if (!lora_drops(io)) {
                io.backend->gemm(false, false, 1.0f, dh, io.params[a], 1.0f, dx);
            } else {  // xd's memory takes dh A, then the mask and 1 / (1 - p)
                io.backend->gemm(false, false, 1.0f, dh, io.params[a], 0.0f, xa);
                io.backend->dropout_backward(xa, lora_mask(io, rows), p_, xa);
                io.backend->axpy(1.0f, xa, dx);
            }
        }
    }

private:
    int lora_a() const { return bias_ ? 2 : 1; }
    // The weight to multiply by: the parameter, or a packed one's values in the workspace (QLoRA)
    Tensor weight(LayerIO& io) const {
        if (bits_ == 0) return io.params[0];
        Tensor w(io.workspace.storage(), io.workspace.byte_offset(), {fo_, fi_}, io.x.dtype());
        io.backend->dequantize(io.params[0], bits_, group_, w);
        return w;
    }
    std::size_t dh_offset(DType dtype) const {
        if (bits_ == 0) return 0;
        return (static_cast<std::size_t>(fo_ * fi_) * dtype_size(dtype) + 255) / 256 * 256;
    }
    std::size_t xd_offset(std::int64_t rows, DType dtype) const {
        return (dh_offset(dtype) + static_cast<std::size_t>(rows * r_) * dtype_size(dtype) + 255) / 256 * 256;
    }
    std::size_t mask_offset(std::int64_t rows, DType dtype) const {
        return (xd_offset(rows, dtype) + static_cast<std::size_t>(rows * fi_) * dtype_size(dtype) + 255) / 256 * 256;
    }
    Tensor lora_mask(const LayerIO& io, std::int64_t rows) const {
        return Tensor(io.workspace.storage(), io.workspace.byte_offset() + mask_offset(rows, io.x.dtype()), {rows * fi_},
                      DType::u8);
    }
    // The adapter's input x (rows, in): x itself, or while training with LoRA dropout dropout(x) in the
    // workspace. Element (row, j) draws counter (first_sample * rows per sample + row) * in + j of the
    // layer's LoRA stream, so backward draws the same mask again (nothing is kept), whatever the micro-batch.
    bool lora_drops(const LayerIO& io) const { return io.training && p_ > 0; }
    Tensor lora_input(const LayerIO& io, const Tensor& x) const {
        if (!lora_drops(io)) return x;
        const std::int64_t rows = x.dim(0);
        Tensor xd(io.workspace.storage(), io.workspace.byte_offset() + xd_offset(rows, x.dtype()), {rows, fi_}, x.dtype());
        Tensor mask = lora_mask(io, rows);
        const std::uint64_t first_row =
            io.first_sample * static_cast<std::uint64_t>(rows / io.x.dim(0));
        io.backend->dropout_forward(x, xd, mask, p_, io.seed ^ 0xA24BAED4963EE407ull, first_row * static_cast<std::uint64_t>(fi_));
        return xd;
    }
    std::int64_t rows_per_sample(const Shape& in) const {
        std::int64_t r = 1;
        for (std::size_t k = 0; k + 1 < in.size(); ++k) r *= in[k];
        return r;
    }
    std::int64_t fi_, fo_;
    bool bias_;
    std::int64_t r_ = 0;
    float scale_ = 0.0f;
    int bits_ = 0;
    std::int64_t group_ = 64;
    float p_ = 0.0f;
};

// ---- pooling --------------------------------------------------------------------------------------
Pool2dParams pool_params(const LayerSpec& s) {
    Pool2dParams p;
    p.kernel_h = p.kernel_w = attr_i(s, "kernel_size");
    int st = attr_i(s, "stride");
    p.stride_h = p.stride_w = st == 0 ? p.kernel_h : st;
    p.pad_h = p.pad_w = attr_i(s, "padding");
    return p;
}

Shape pool_out(const Shape& in, const Pool2dParams& p) {
    return {in[0], window_output_size(in[1], p.kernel_h, p.stride_h, p.pad_h),
            window_output_size(in[2], p.kernel_w, p.stride_w, p.pad_w)};
}

class MaxPool2d : public Layer {
public:
    explicit MaxPool2d(const LayerSpec& s) : Layer(s), p_(pool_params(s)) {}
    Shape output_shape(const Shape& in) const override { return pool_out(in, p_); }
    std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const override {
        return {{"indices", with_batch(batch, output_shape(in)), DType::i32}};
    }

protected:
    void forward_impl(LayerIO& io) const override { io.backend->maxpool2d_forward(io.x, io.y, io.saved[0], p_); }
    void backward_impl(LayerIO& io) const override {
        if (io.dx.defined()) io.backend->maxpool2d_backward_windows(io.dy, io.saved[0], io.dx, p_);
    }

private:
    Pool2dParams p_;
};

class AvgPool2d : public Layer {
public:
    explicit AvgPool2d(const LayerSpec& s) : Layer(s), p_(pool_params(s)) {}
    Shape output_shape(const Shape& in) const override { return pool_out(in, p_); }

protected:
    void forward_impl(LayerIO& io) const override { io.backend->avgpool2d_forward(io.x, io.y, p_); }
    void backward_impl(LayerIO& io) const override {
        if (io.dx.defined()) io.backend->avgpool2d_backward(io.dy, io.dx, p_);
    }

private:
    Pool2dParams p_;
};

// ---- activations ----------------------------------------------------------------------------------
class Activation : public Layer {
public:
    Activation(const LayerSpec& s, ActivationKind k) : Layer(s), kind_(k) {
        alpha_ = static_cast<float>(layer_attr(s, "negative_slope"));
        gelu_tanh_ = k == ActivationKind::gelu && layer_attr(s, "tanh") != 0;  // GPT-2's approximation
    }
    Shape output_shape(const Shape& in) const override { return in; }

protected:
    void forward_impl(LayerIO& io) const override {
        if (gelu_tanh_)
            io.backend->gelu_tanh_forward(io.x, io.y);
        else
            io.backend->activation_forward(kind_, alpha_, io.x, io.y);
    }
    void backward_impl(LayerIO& io) const override {
        if (!io.dx.defined()) return;
        if (gelu_tanh_)
            io.backend->gelu_tanh_backward(io.x, io.dy, io.dx);
        // ReLU's gradient only needs the sign of its output: reading y, not x, lets the model recompute
        // less under checkpointing and run ReLU in place (nn/model.cpp)
        else if (kind_ == ActivationKind::relu)
            io.backend->activation_backward(kind_, alpha_, Tensor(), io.y, io.dy, io.dx);
        else
            io.backend->activation_backward(kind_, alpha_, io.x, io.y, io.dy, io.dx);
    }

private:
    ActivationKind kind_;
    float alpha_;
    bool gelu_tanh_ = false;
};

// ---- Dropout --------------------------------------------------------------------------------------
class Dropout : public Layer {
public:
    explicit Dropout(const LayerSpec& s) : Layer(s), p_(static_cast<float>(layer_attr(s, "p"))) {}
    Decoding decoding() const override { return Decoding::per_position; }  // (not training: a copy)
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const override {
        return {{"mask", with_batch(batch, in), DType::u8}};
    }

protected:
    void forward_impl(LayerIO& io) const override {
        if (io.training)
            io.backend->dropout_forward(io.x, io.y, io.saved[0], p_, io.seed, io.counter);
        else
            io.backend->copy(io.x, io.y);
    }
    void backward_impl(LayerIO& io) const override {
        if (io.dx.defined()) io.backend->dropout_backward(io.dy, io.saved[0], p_, io.dx);
    }

private:
    float p_;
};

// ---- Flatten --------------------------------------------------------------------------------------
class Flatten : public Layer {
public:
    using Layer::Layer;
    Shape output_shape(const Shape& in) const override { return {shape_numel(in)}; }
    bool output_is_view() const override { return true; }

protected:
    void forward_impl(LayerIO& io) const override {
        // y is normally a view of x (the model arranges it); copy when it is not.
        if (io.y.raw() != io.x.raw()) {
            Tensor xv = io.x.reshape(io.y.shape());
            io.backend->copy(xv, io.y);
        }
    }
    void backward_impl(LayerIO& io) const override {
        if (io.dx.defined() && io.dx.raw() != io.dy.raw()) {
            Tensor dyv = io.dy.reshape(io.dx.shape());
            io.backend->copy(dyv, io.dx);
        }
    }
};

// ---- BatchNorm2d ----------------------------------------------------------------------------------
class BatchNorm2d : public Layer {
public:
    explicit BatchNorm2d(const LayerSpec& s) : Layer(s) {
        c_ = attr_i(s, "num_features");
        eps_ = static_cast<float>(layer_attr(s, "eps"));
        momentum_ = static_cast<float>(layer_attr(s, "momentum"));
    }
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override {
        return {{"weight", {c_}, ParamDecl::Init::ones, 1}, {"bias", {c_}, ParamDecl::Init::zeros, 1}};
    }
    std::vector<BufferDecl> buffers(const Shape&) const override {
        return {{"running_mean", {c_}, DType::f32, 0.0},
                {"running_var", {c_}, DType::f32, 1.0},
                {"num_batches_tracked", {}, DType::i64, 0.0}};
    }
    std::vector<SavedDecl> saved(std::int64_t, const Shape&) const override {
        return {{"mean", {c_}, DType::f32}, {"invstd", {c_}, DType::f32}};
    }

protected:
    void forward_impl(LayerIO& io) const override {
        if (io.training && io.recompute) {
            // checkpointing's recompute: the statistics saved by this x's forward (kept outside the arena)
            io.backend->batchnorm_forward_recompute(io.x, io.params[0], io.params[1], io.y, io.saved[0], io.saved[1],
                                                    io.buffers[0], io.buffers[1], eps_);
        } else if (io.training) {
            io.backend->batchnorm_forward_train(io.x, io.params[0], io.params[1], io.y, io.saved[0], io.saved[1],
                                                io.buffers[0], io.buffers[1], io.recompute ? 0.0f : momentum_, eps_);
            // num_batches_tracked counts on the device: no host round trip inside a step
            if (!io.recompute) io.backend->increment(io.buffers[2]);
        } else {
            io.backend->batchnorm_forward_infer(io.x, io.params[0], io.params[1], io.buffers[0], io.buffers[1], eps_,
                                                io.y);
        }
    }
    void backward_impl(LayerIO& io) const override {
        Tensor dx = io.dx;
        if (!dx.defined()) throw Error("internal: batchnorm2d backward needs dx");
        io.backend->batchnorm_backward(io.x, io.dy, io.params[0], io.saved[0], io.saved[1], dx, io.grads[0],
                                       io.grads[1]);
    }

private:
    std::int64_t c_;
    float eps_, momentum_;
};

}  // namespace

std::unique_ptr<Layer> make_layer(const LayerSpec& s, const LayerOptions& options) {
    const LayerEntry* e = layer_entry(s.type);
    if (!e || !e->make) throw InputError("unknown layer type '" + s.type + "'");
    return e->make(s, options);
}

// ---- the registry's entries of these types (nn/layer_registry.h) ------------------------------------

namespace image_entries {

using AK = AttrInfo::Kind;

std::string batch_shape(const Shape& s) {
    std::string out = "(N";
    for (auto d : s) out += ", " + std::to_string(d);
    return out + ")";
}

std::string label_of(const char* f, long long a, long long b = 0, long long c = 0) {
    char buf[128];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

// weights plus an optional bias, bounded by kMaxParams
void weights_and_bias(LayerShape& r, std::int64_t a, std::int64_t b, std::int64_t bias) {
    std::int64_t w = 0;
    if (!checked_mul(a, b, w) || !checked_add(w, bias, r.params) || r.params > kMaxParams) r.params_over_limit = true;
}

LayerShape conv2d_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::int64_t ci = x.attr("in_channels"), co = x.attr("out_channels"), k = x.attr("kernel_size"),
                       s = x.attr("stride"), p = x.attr("padding"), d = x.attr("dilation");
    LayerShape r;
    r.label = label_of("conv2d(%lld→%lld, k%lld", ci, co, k) + (s != 1 ? ", s" + std::to_string(s) : "") +
              (p != 0 ? ", p" + std::to_string(p) : "") + ")";
    if (in.size() != 3)
        return r.fail(HR_MSG("spec.conv_needs_image", "layer %1 (%2): expects input (N, %3, H, W), got %4; conv2d "
                                                      "needs image-shaped input: remove the Flatten before it or "
                                                      "use Linear"),
                      {std::to_string(ci), batch_shape(in)});
    if (in[0] != ci)
        return r.fail(HR_MSG("spec.conv_channels", "layer %1 (%2): expects input (N, %3, H, W), got %4; set "
                                                   "in_channels to %5"),
                      {std::to_string(ci), batch_shape(in), std::to_string(in[0])});
    // the operands are bounded (per-sample limit, catalog ranges): no overflow
    const std::int64_t ho = window_output_size(in[1], k, s, p, d), wo = window_output_size(in[2], k, s, p, d);
    if (ho < 1 || wo < 1)
        return r.fail(HR_MSG("spec.conv_kernel_fit", "layer %1 (%2): kernel %3 (dilation %4) does not fit input "
                                                     "%5; use a smaller kernel, more padding, or fewer pooling "
                                                     "layers before it"),
                      {std::to_string(k), std::to_string(d), batch_shape(in)});
    r.out = {co, ho, wo};
    weights_and_bias(r, co * ci, k * k, layer_attr(x.layer, "bias") != 0 ? co : 0);
    if (r.params_over_limit) return r;
    // The im2col matrix of one sample (in_channels * k * k rows, one column per output position) is the
    // largest buffer a convolution needs; it is bounded like any tensor.
    std::int64_t unfolded = 0, positions = 0;
    if (!checked_mul(ho, wo, positions) || !checked_mul(ci * k * k, positions, unfolded) || unfolded > kMaxSampleElements)
        return r.fail(HR_MSG("spec.conv_unfold_limit", "layer %1 (%2): unfolding its input takes in_channels x "
                                                       "kernel x kernel x output positions = more than %3 elements "
                                                       "per sample (see docs/model-spec.md, Limits); use a stride, "
                                                       "fewer channels or a smaller input"),
                      {std::to_string(kMaxSampleElements)});
    return r;
}

LayerShape pool_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::string& t = x.layer.type;
    std::int64_t k = x.attr("kernel_size"), s = x.attr("stride"), p = x.attr("padding");
    if (s == 0) s = k;
    LayerShape r;
    r.label = t + label_of("(k%lld)", k);
    if (in.size() != 3)
        return r.fail(HR_MSG("spec.pool_needs_image", "layer %1 (%2): expects input (N, C, H, W), got %3; pooling "
                                                      "needs image-shaped input"),
                      {batch_shape(in)});
    if (2 * p > k)
        return r.fail(HR_MSG("spec.pool_padding", "layer %1 (%2): padding %3 must be at most half the kernel size %4"),
                      {std::to_string(p), std::to_string(k)});
    const std::int64_t ho = window_output_size(in[1], k, s, p), wo = window_output_size(in[2], k, s, p);
    if (ho < 1 || wo < 1)
        return r.fail(HR_MSG("spec.pool_window_fit", "layer %1 (%2): window %3 is larger than the input %4; use a "
                                                     "smaller kernel_size or remove a pooling layer before it"),
                      {std::to_string(k), batch_shape(in)});
    r.out = {in[0], ho, wo};
    r.saves_indices = t == "maxpool2d";
    return r;
}

LayerShape linear_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::int64_t fi = x.attr("in_features"), fo = x.attr("out_features");
    LayerShape r;
    r.label = label_of("linear(%lld→%lld)", fi, fo);
    if (in.size() == 2) {  // a sequence (T, F): the same weights for every token
        if (in[1] != fi)
            return r.fail(HR_MSG("spec.linear_seq_features", "layer %1 (%2): expects input (N, T, %3), got %4; set "
                                                             "in_features to %5"),
                          {std::to_string(fi), batch_shape(in), std::to_string(in[1])});
        r.out = {in[0], fo};
    } else if (in.size() != 1) {
        return r.fail(HR_MSG("spec.linear_needs_flat", "layer %1 (%2): expects input (N, %3), got %4; insert a "
                                                       "Flatten before it (it would give (N, %5))"),
                      {std::to_string(fi), batch_shape(in), std::to_string(shape_numel(in))});
    } else if (in[0] != fi) {
        return r.fail(HR_MSG("spec.linear_features", "layer %1 (%2): expects input (N, %3), got %4; set "
                                                     "in_features to %5"),
                      {std::to_string(fi), batch_shape(in), std::to_string(in[0])});
    } else {
        r.out = {fo};
    }
    weights_and_bias(r, fo, fi, layer_attr(x.layer, "bias") != 0 ? fo : 0);
    return r;
}

LayerShape same_shape(const LayerShapeInput& x) {
    LayerShape r;
    r.label = x.layer.type;
    r.out = x.in;
    return r;
}

LayerShape dropout_shape(const LayerShapeInput& x) {
    LayerShape r;
    char label[64];
    std::snprintf(label, sizeof label, "dropout(p=%.2g)", layer_attr(x.layer, "p"));
    r.label = label;
    r.out = x.in;
    r.saved_bytes = shape_numel(x.in);  // u8 mask
    return r;
}

LayerShape flatten_shape(const LayerShapeInput& x) {
    LayerShape r;
    r.label = "flatten";
    r.out = {shape_numel(x.in)};
    r.output_is_view = true;
    return r;
}

LayerShape batchnorm2d_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::int64_t c = x.attr("num_features");
    LayerShape r;
    r.label = label_of("batchnorm2d(%lld)", c);
    if (in.size() == 3 && in[0] != c)
        return r.fail(HR_MSG("spec.bn_channels", "layer %1 (%2): expects input (N, %3, H, W), got %4; set "
                                                 "num_features to %5"),
                      {std::to_string(c), batch_shape(in), std::to_string(in[0])});
    if (in.size() != 3)
        return r.fail(HR_MSG("spec.bn_needs_image", "layer %1 (%2): expects input (N, %3, H, W), got %4; "
                                                    "BatchNorm2d needs image-shaped input"),
                      {std::to_string(c), batch_shape(in)});
    r.out = in;
    r.params = 2 * c;
    return r;
}

// FLOPs: a product per output element for convolutions and linear layers (backward: the weight's and the
// input's gradient), a few operations per element for the rest (backward as forward)
double out_numel(const LayerReport& r) { return static_cast<double>(shape_numel(r.output_shape)); }
void conv2d_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const double k = layer_attr(*l, "kernel_size");
    c.forward = 2.0 * out_numel(r) * layer_attr(*l, "in_channels") * k * k;
    c.backward = 2 * c.forward;
}
void linear_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    c.forward = 2.0 * out_numel(r) * layer_attr(*l, "in_features");
    c.backward = 2 * c.forward;
}
template <int kPerElement>
void elementwise_cost(const LayerReport& r, const LayerSpec*, LayerCost& c) {
    c.forward = c.backward = kPerElement * out_numel(r);
}

template <class L>
std::unique_ptr<Layer> make(const LayerSpec& s, const LayerOptions&) {
    return std::make_unique<L>(s);
}
template <ActivationKind K>
std::unique_ptr<Layer> make_activation(const LayerSpec& s, const LayerOptions&) {
    return std::make_unique<Activation>(s, K);
}

}  // namespace image_entries

std::vector<LayerEntry> image_layer_entries() {
    using namespace image_entries;
    std::vector<LayerEntry> c;
    c.push_back({{"conv2d", "Conv2d", "convolution", HR_MSG("layer.conv2d", "2-D convolution over (N, C, H, W) (groups = 1)"),
                  {{"in_channels", AK::integer, 1, 1, 1e6, true, HR_MSG("layer.conv2d.in_channels", "input channels C")},
                   {"out_channels", AK::integer, 8, 1, 1e6, true, HR_MSG("layer.conv2d.out_channels", "output channels (filters)")},
                   {"kernel_size", AK::integer, 3, 1, 1024, true, HR_MSG("layer.conv2d.kernel_size", "square kernel size")},
                   {"stride", AK::integer, 1, 1, 1024, false, HR_MSG("layer.conv2d.stride", "step between windows")},
                   {"padding", AK::integer, 0, 0, 1024, false, HR_MSG("layer.conv2d.padding", "zero padding on each side")},
                   {"dilation", AK::integer, 1, 1, 1024, false, HR_MSG("layer.conv2d.dilation", "spacing between kernel taps")},
                   {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.conv2d.bias", "learn an additive bias per output channel")}}},
                 conv2d_shape, conv2d_cost, make<Conv2d>});
    c.push_back({{"maxpool2d", "MaxPool2d", "pooling", HR_MSG("layer.maxpool2d", "maximum over square windows"),
                  {{"kernel_size", AK::integer, 2, 1, 1024, true, HR_MSG("layer.maxpool2d.kernel_size", "window size")},
                   {"stride", AK::integer, 0, 0, 1024, false, HR_MSG("layer.maxpool2d.stride", "step between windows (0: kernel_size)")},
                   {"padding", AK::integer, 0, 0, 512, false, HR_MSG("layer.maxpool2d.padding", "implicit -inf padding on each side")}}},
                 pool_shape, elementwise_cost<4>, make<MaxPool2d>});
    c.push_back({{"avgpool2d", "AvgPool2d", "pooling", HR_MSG("layer.avgpool2d", "mean over square windows (padding counted)"),
                  {{"kernel_size", AK::integer, 2, 1, 1024, true, HR_MSG("layer.avgpool2d.kernel_size", "window size")},
                   {"stride", AK::integer, 0, 0, 1024, false, HR_MSG("layer.avgpool2d.stride", "step between windows (0: kernel_size)")},
                   {"padding", AK::integer, 0, 0, 512, false, HR_MSG("layer.avgpool2d.padding", "zero padding on each side")}}},
                 pool_shape, elementwise_cost<4>, make<AvgPool2d>});
    c.push_back({{"linear", "Linear", "linear", HR_MSG("layer.linear", "fully connected layer y = x W^T + b"),
                  {{"in_features", AK::integer, 64, 1, 1e8, true, HR_MSG("layer.linear.in_features", "input features")},
                   {"out_features", AK::integer, 10, 1, 1e8, true, HR_MSG("layer.linear.out_features", "output features")},
                   {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.linear.bias", "learn an additive bias")}}},
                 linear_shape, linear_cost, make<Linear>, true});
    c.push_back({{"relu", "ReLU", "activation", HR_MSG("layer.relu", "max(x, 0)"), {}},
                 same_shape, elementwise_cost<1>, make_activation<ActivationKind::relu>});
    c.push_back({{"leaky_relu", "LeakyReLU", "activation", HR_MSG("layer.leaky_relu", "x if x > 0 else slope * x"),
                  {{"negative_slope", AK::real, 0.01, 0, 1, false, HR_MSG("layer.leaky_relu.negative_slope", "slope for x < 0")}}},
                 same_shape, elementwise_cost<1>, make_activation<ActivationKind::leaky_relu>});
    c.push_back({{"tanh", "Tanh", "activation", HR_MSG("layer.tanh", "hyperbolic tangent"), {}},
                 same_shape, elementwise_cost<10>, make_activation<ActivationKind::tanh>});
    c.push_back({{"sigmoid", "Sigmoid", "activation", HR_MSG("layer.sigmoid", "1 / (1 + exp(-x))"), {}},
                 same_shape, elementwise_cost<10>, make_activation<ActivationKind::sigmoid>});
    c.push_back({{"gelu", "GELU", "activation", HR_MSG("layer.gelu", "x * Phi(x) (exact erf form, or its tanh approximation)"),
                  {{"tanh", AK::boolean, 0, 0, 1, false, HR_MSG("layer.gelu.tanh", "tanh approximation, as GPT-2 (nn.GELU(approximate='tanh'))")}}},
                 same_shape, elementwise_cost<10>, make_activation<ActivationKind::gelu>});
    c.push_back({{"batchnorm2d", "BatchNorm2d", "normalisation",
                  HR_MSG("layer.batchnorm2d", "normalises each channel over (N, H, W) with batch statistics"),
                  {{"num_features", AK::integer, 8, 1, 1e6, true, HR_MSG("layer.batchnorm2d.num_features", "channels C")},
                   {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.batchnorm2d.eps", "added to the variance")},
                   {"momentum", AK::real, 0.1, 0, 1, false, HR_MSG("layer.batchnorm2d.momentum", "running statistics update rate")}}},
                 batchnorm2d_shape, elementwise_cost<8>, make<BatchNorm2d>});
    c.push_back({{"dropout", "Dropout", "regularisation", HR_MSG("layer.dropout", "zeroes elements with probability p while training"),
                  {{"p", AK::real, 0.5, 0, 0.99, false, HR_MSG("layer.dropout.p", "drop probability")}}},
                 dropout_shape, elementwise_cost<1>, make<Dropout>});
    c.push_back({{"flatten", "Flatten", "structure", HR_MSG("layer.flatten", "(N, C, H, W) -> (N, C*H*W)"), {}},
                 flatten_shape, elementwise_cost<0>, make<Flatten>});
    // the walkers recurse into its body and shortcut; its own cost is the sum
    c.push_back({{"residual", "Residual block", "structure",
                  HR_MSG("layer.residual", "output = body(x) + shortcut(x); shortcut is the identity when empty"), {}},
                 nullptr, elementwise_cost<1>, nullptr});
    return c;
}

}  // namespace hr
