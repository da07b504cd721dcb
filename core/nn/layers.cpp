// The layer implementations: thin declarations over Backend ops.
#include <cmath>

#include "base/error.h"
#include "base/window_size.h"
#include "nn/layer.h"
#include "nn/transformer_layers.h"

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
    if (auto l = make_transformer_layer(s, options)) return l;
    const std::string& t = s.type;
    if (t == "conv2d") return std::make_unique<Conv2d>(s);
    if (t == "linear") return std::make_unique<Linear>(s);
    if (t == "maxpool2d") return std::make_unique<MaxPool2d>(s);
    if (t == "avgpool2d") return std::make_unique<AvgPool2d>(s);
    if (t == "relu") return std::make_unique<Activation>(s, ActivationKind::relu);
    if (t == "leaky_relu") return std::make_unique<Activation>(s, ActivationKind::leaky_relu);
    if (t == "tanh") return std::make_unique<Activation>(s, ActivationKind::tanh);
    if (t == "sigmoid") return std::make_unique<Activation>(s, ActivationKind::sigmoid);
    if (t == "gelu") return std::make_unique<Activation>(s, ActivationKind::gelu);
    if (t == "dropout") return std::make_unique<Dropout>(s);
    if (t == "flatten") return std::make_unique<Flatten>(s);
    if (t == "batchnorm2d") return std::make_unique<BatchNorm2d>(s);
    throw InputError("unknown layer type '" + t + "'");
}

}  // namespace hr
