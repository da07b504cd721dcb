// The transformer layers (nn/transformer_layers.h): thin declarations over Backend ops, as layers.cpp.
// Scratch comes from the model's shared workspace (workspace_bytes), carved in a fixed order, so the
// planner counts it exactly.
#include "nn/transformer_layers.h"

#include <cstdio>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "nn/layer_registry.h"

namespace hr {

namespace {

constexpr std::size_t kCarveAlign = 256;

// Hands out consecutive, 256-byte aligned views of a workspace; with no workspace it only counts.
struct Carve {
    Tensor base;
    std::size_t off = 0;
    Tensor take(const Shape& s, DType dt) {
        off = (off + kCarveAlign - 1) / kCarveAlign * kCarveAlign;
        Tensor t;
        if (base.defined()) t = Tensor(base.storage(), base.byte_offset() + off, s, dt);
        off += static_cast<std::size_t>(shape_numel(s)) * dtype_size(dt);
        return t;
    }
    void take_bytes(std::size_t bytes) {
        off = (off + kCarveAlign - 1) / kCarveAlign * kCarveAlign;
        off += bytes;
    }
    std::size_t bytes() const { return off; }
};

std::int64_t attr_i64(const LayerSpec& l, const char* n) { return std::llround(layer_attr(l, n)); }
bool attr_b(const LayerSpec& l, const char* n) { return layer_attr(l, n) != 0; }

Tensor rows_of(const Tensor& t, std::int64_t cols) { return t.reshape({t.numel() / cols, cols}); }

// LoRA on a projection (ModelOptions::lora_rank, Hu et al. 2021): y += s (x A^T) B^T, with A (R, in),
// B (out, R), s = alpha / R. gA and gB take their gradients; h is (rows, R) scratch from the layer's
// workspace. Undefined A: no adapter.
// QLoRA (ModelOptions::lora_base_bits > 0): the frozen weight is packed (tensor/quantized_format.h, u8) and
// each use dequantises it into wq, scratch of the layer's workspace that serves every projection in turn.
// QLoRA quantises every projection of the base, adapted or not (bitsandbytes' load_in_4bit): a projection
// without an adapter has bits > 0 and no A.
// LoRA dropout (ModelOptions::lora_dropout, peft's lora_dropout): while training, the adapter's input is
// dropout(x) with probability p, one mask per projection and forward, inverted scaling 1/(1 - p); the base
// path sees x itself. The mask is not kept: element (row, j) of the input draws
// counter_uniform(seed, first_row * in + row * in + j) (backend.h), so backward draws the same mask again
// into the same scratch (xd, the dropped input (rows, in), and mask, u8), as the recompute of h does.
struct Lora {
    Tensor A, B, gA, gB, h, wq;
    float s = 0;
    int bits = 0;
    std::int64_t group = 0;
    std::int64_t out = 0, in = 0;  // the base weight's shape (packed: its bytes say nothing of it)
    float p = 0;                   // LoRA dropout while training (0: none)
    std::uint64_t seed = 0;        // the projection's own dropout stream
    std::uint64_t first_row = 0;   // run-wide index of x's first row (first_sample * rows per sample)
    Tensor xd, mask;               // scratch of at least rows * in values (dtype, u8) when p > 0
    bool on() const { return A.defined(); }
    bool drops() const { return on() && p > 0; }
    Tensor rows(std::int64_t n) const { return h.view(0, {n, A.dim(0)}); }
    // the adapter's input: x2 (rows, in) itself, or dropout(x2) drawn into xd (its mask into `mask`)
    Tensor input(Backend& be, const Tensor& x2) const {
        if (!drops()) return x2;
        Tensor d = xd.view(0, x2.shape()), m = mask.view(0, {x2.numel()});
        be.dropout_forward(x2, d, m, p, seed, first_row * static_cast<std::uint64_t>(x2.dim(1)));
        return d;
    }
    // The base weight (out, in) to multiply by: w itself, or a quantised w's values in wq.
    Tensor weight(Backend& be, const Tensor& w) const {
        if (bits == 0) return w;
        Tensor W = wq.view(0, {out, in});
        be.dequantize(w, bits, group, W);
        return W;
    }
    std::int64_t in_features(const Tensor& w) const { return bits > 0 ? in : w.dim(1); }
    std::int64_t out_features(const Tensor& w) const { return bits > 0 ? out : w.dim(0); }
};

// y (R, out) = x (R, in) W^T + b, on any (..., in) / (..., out) tensors. The bias is broadcast into y
// first and the product added to it (one pass, instead of add_bias over rows of length 1).
void linear_fwd(Backend& be, const Tensor& x, const Tensor& w_in, const Tensor& b, Tensor y, const Lora& lora = Lora()) {
    const Tensor w = lora.weight(be, w_in);
    Tensor x2 = rows_of(x, w.dim(1)), y2 = rows_of(y, w.dim(0));
    if (b.defined()) {
        Tensor yr = y2.reshape({y2.dim(0), 1, y2.dim(1)});
        be.copy_rows(b.reshape({1, 1, b.numel()}), 0, yr, 0, 1);
    }
    be.gemm(false, true, 1.0f, x2, w, b.defined() ? 1.0f : 0.0f, y2);
    if (!lora.on()) return;
    Tensor h = lora.rows(x2.dim(0));  // h = dropout(x) A^T, then y += s h B^T
    be.gemm(false, true, 1.0f, lora.input(be, x2), lora.A, 0.0f, h);
    be.gemm(false, true, lora.s, h, lora.B, 1.0f, y2);
}

// dW += dy^T x (when dW is defined: a frozen weight has none), db += sum dy (as dy^T times `ones`, a column
// of R ones, when given), and dx = dy W when dx is defined (dx += dy W with add_dx). LoRA: h = x A^T is recomputed (R x in x rank
// multiply-adds, instead of keeping (rows, rank) per projection), gB += s dy^T h, then h's memory takes
// dh = s dy B, gA += dh^T x and dx += dh A. A quantised base weight is dequantised again for dx.
// LoRA dropout: x above is the dropped input xd, drawn again with its mask; then xd's memory takes dh A and
// dx += mask (dh A) / (1 - p).
void linear_bwd(Backend& be, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor dx, Tensor dw, Tensor db,
                const Tensor& ones = Tensor(), const Lora& lora = Lora(), bool add_dx = false) {
    Tensor x2 = rows_of(x, lora.in_features(w)), dy2 = rows_of(dy, lora.out_features(w));
    if (dw.defined()) be.gemm(true, false, 1.0f, dy2, x2, 1.0f, dw);
    if (db.defined()) {
        if (ones.defined()) {
            Tensor db2 = db.reshape({db.numel(), 1});
            be.gemm(true, false, 1.0f, dy2, ones.view(0, {dy2.dim(0), 1}), 1.0f, db2);
        } else {
            be.bias_grad(dy2, db);
        }
    }
    Tensor h, xa;
    if (lora.on()) {
        Tensor gA = lora.gA, gB = lora.gB;
        h = lora.rows(x2.dim(0));
        xa = lora.input(be, x2);
        be.gemm(false, true, 1.0f, xa, lora.A, 0.0f, h);
        be.gemm(true, false, lora.s, dy2, h, 1.0f, gB);
        be.gemm(false, false, lora.s, dy2, lora.B, 0.0f, h);  // dh
        be.gemm(true, false, 1.0f, h, xa, 1.0f, gA);
    }
    if (dx.defined()) {
        Tensor dx2 = rows_of(dx, x2.dim(1));
        be.gemm(false, false, 1.0f, dy2, lora.weight(be, w), add_dx ? 1.0f : 0.0f, dx2);
        if (lora.drops()) {  // dx += mask (dh A) / (1 - p), through xd's memory (xd is done)
            be.gemm(false, false, 1.0f, h, lora.A, 0.0f, xa);
            be.dropout_backward(xa, lora.mask.view(0, {xa.numel()}), lora.p, xa);
            be.axpy(1.0f, xa, dx2);
        } else if (lora.on()) {
            be.gemm(false, false, 1.0f, h, lora.A, 1.0f, dx2);
        }
    }
}

void gelu_fwd(Backend& be, bool tanh_form, const Tensor& x, Tensor& y) {
    if (tanh_form)
        be.gelu_tanh_forward(x, y);
    else
        be.activation_forward(ActivationKind::gelu, 0.0f, x, y);
}
void gelu_bwd(Backend& be, bool tanh_form, const Tensor& x, const Tensor& dy, Tensor& dx) {
    if (tanh_form)
        be.gelu_tanh_backward(x, dy, dx);
    else
        be.activation_backward(ActivationKind::gelu, 0.0f, x, Tensor(), dy, dx);  // reads x only
}

// Distinct dropout streams for the sites of one layer (same layer seed).
std::uint64_t site_seed(std::uint64_t seed, int site) { return seed ^ (0x9E3779B97F4A7C15ull * (site + 1)); }

double residual_std(const LayerOptions& o) {
    return 0.02 / std::sqrt(2.0 * std::max(1, o.transformer_layers));
}

// ---- the two halves of a GPT block, shared by self_attention, mlp and transformer_block ----------

struct AttentionHalf {
    std::int64_t C = 0, H = 1;
    bool causal = true;
    float p = 0;  // dropout of the attention probabilities and of the projection's output
    bool selective = false;

    AttentionParams params(const LayerIO& io, std::int64_t T, int site) const {
        AttentionParams ap;
        ap.heads = static_cast<int>(H);
        ap.causal = causal;
        ap.dropout = io.training ? p : 0.0f;
        ap.seed = site_seed(io.seed, site);
        ap.offset = io.first_sample * static_cast<std::uint64_t>(H * T * T);
        return ap;
    }
    bool drop(const LayerIO& io) const { return io.training && p > 0; }
    std::uint64_t resid_offset(const LayerIO& io, std::int64_t T) const {
        return io.first_sample * static_cast<std::uint64_t>(T * C);
    }

    // h (B, T, C) -> out (B, T, C). qkv (B, T, 3C), att (B, T, C), lse (B, H, T), mask (B, T, C) u8
    // (when dropping); tmp (B, T, C) scratch when dropping; attn_ws: the backend's attention scratch.
    // write_out false (a recompute whose out is kept, LayerIO::recompute_output): the output projection
    // is skipped; with selective recompute the attention core too (backward recomputes it from qkv).
    void forward(Backend& be, const LayerIO& io, const Tensor& h, const Tensor& w_attn, const Tensor& b_attn,
                 const Tensor& w_proj, const Tensor& b_proj, Tensor& qkv, Tensor& att, Tensor& lse, Tensor& mask,
                 Tensor out, Tensor tmp, Tensor& attn_ws, int site, bool write_out = true, const Lora& la = Lora(),
                 const Lora& lp = Lora()) const {
        const std::int64_t T = h.dim(1);
        linear_fwd(be, h, w_attn, b_attn, qkv, la);
        if (!write_out) {
            if (!selective) be.attention_forward(qkv, att, lse, params(io, T, site), attn_ws);
            // the mask depends only on the seed and the element counter, not on the values dropped
            if (drop(io)) be.dropout_forward(tmp, tmp, mask, p, site_seed(io.seed, site + 1), resid_offset(io, T));
            return;
        }
        core(be, io, qkv, att, lse, attn_ws, site);
        if (drop(io)) {
            linear_fwd(be, att, w_proj, b_proj, tmp, lp);
            be.dropout_forward(tmp, out, mask, p, site_seed(io.seed, site + 1), resid_offset(io, T));
        } else {
            linear_fwd(be, att, w_proj, b_proj, out, lp);
        }
    }

    // the attention core: over the whole sequence, or (decoding, LayerIO::kv) the new tokens over the cache
    void core(Backend& be, const LayerIO& io, const Tensor& qkv, Tensor& att, Tensor& lse, Tensor& attn_ws,
              int site) const {
        if (!io.decoding) {
            be.attention_forward(qkv, att, lse, params(io, qkv.dim(1), site), attn_ws);
            return;
        }
        Tensor k = io.kv->k, v = io.kv->v, ws = io.kv->workspace;
        be.attention_cached(qkv, k, v, io.position, params(io, qkv.dim(1), site), att, ws);
    }
    Shape kv_shape(std::int64_t positions) const { return {H, positions, C / H}; }
    std::size_t kv_workspace(const Backend& b, std::int64_t n, std::int64_t positions, DType dt) const {
        const int h = static_cast<int>(H);
        return b.attention_cached_workspace_bytes(n, positions, h, h, C / H, dt);
    }

    // dout (B, T, C) -> dh (B, T, C) written when defined; parameter gradients accumulated.
    // da, datt (B, T, C) and dqkv (B, T, 3C) are scratch.
    void backward(Backend& be, const LayerIO& io, const Tensor& h, const Tensor& w_attn, const Tensor& w_proj,
                  const Tensor& qkv, const Tensor& att, const Tensor& lse, const Tensor& mask, const Tensor& dout,
                  Tensor dh, Tensor& gw_attn, Tensor gb_attn, Tensor& gw_proj, Tensor gb_proj, Tensor da, Tensor datt,
                  Tensor dqkv, Tensor& attn_ws, int site, const Tensor& ones, const Lora& la = Lora(),
                  const Lora& lp = Lora()) const {
        const std::int64_t T = h.dim(1);
        Tensor d = dout;
        if (drop(io)) {
            be.dropout_backward(dout, mask, p, da);
            d = da;
        }
        linear_bwd(be, att, w_proj, d, datt, gw_proj, gb_proj, ones, lp);
        be.attention_backward(qkv, att, lse, datt, dqkv, params(io, T, site), attn_ws);
        linear_bwd(be, h, w_attn, dqkv, dh, gw_attn, gb_attn, ones, la);
    }
};

struct MlpHalf {
    std::int64_t C = 0, F = 0;
    bool tanh_form = true;
    float p = 0;

    bool drop(const LayerIO& io) const { return io.training && p > 0; }

    // h (B, T, C) -> out (B, T, C); f (B, T, F) kept; g (B, T, F) and tmp (B, T, C) scratch.
    // write_out false (a recompute whose out is kept, LayerIO::recompute_output): only what backward
    // reads, f and the dropout mask; the GELU and the output projection are skipped.
    void forward(Backend& be, const LayerIO& io, const Tensor& h, const Tensor& w_fc, const Tensor& b_fc,
                 const Tensor& w_proj, const Tensor& b_proj, Tensor& f, Tensor& mask, Tensor out, Tensor g, Tensor tmp,
                 int site, bool write_out = true, const Lora& lf = Lora(), const Lora& lp = Lora()) const {
        const std::int64_t T = h.dim(1);
        linear_fwd(be, h, w_fc, b_fc, f, lf);
        if (!write_out) {
            // the mask depends only on the seed and the element counter (backend.h), not on the values
            // dropped: draw it over scratch
            if (drop(io))
                be.dropout_forward(tmp, tmp, mask, p, site_seed(io.seed, site),
                                   io.first_sample * static_cast<std::uint64_t>(T * C));
            return;
        }
        gelu_fwd(be, tanh_form, f, g);
        if (drop(io)) {
            linear_fwd(be, g, w_proj, b_proj, tmp, lp);
            be.dropout_forward(tmp, out, mask, p, site_seed(io.seed, site),
                               io.first_sample * static_cast<std::uint64_t>(T * C));
        } else {
            linear_fwd(be, g, w_proj, b_proj, out, lp);
        }
    }

    // dout -> dh written when defined. g, dg (B, T, F) and dm (B, T, C) scratch; g is recomputed from f.
    void backward(Backend& be, const LayerIO& io, const Tensor& h, const Tensor& w_fc, const Tensor& w_proj,
                  const Tensor& f, const Tensor& mask, const Tensor& dout, Tensor dh, Tensor& gw_fc, Tensor gb_fc,
                  Tensor& gw_proj, Tensor gb_proj, Tensor g, Tensor dg, Tensor dm, const Tensor& ones,
                  const Lora& lf = Lora(), const Lora& lp = Lora()) const {
        Tensor d = dout;
        if (drop(io)) {
            be.dropout_backward(dout, mask, p, dm);
            d = dm;
        }
        gelu_fwd(be, tanh_form, f, g);                // recompute the GELU output (cheap, saves (B, T, F))
        linear_bwd(be, g, w_proj, d, dg, gw_proj, gb_proj, ones, lp);
        gelu_bwd(be, tanh_form, f, dg, g);            // df into g's memory (g is no longer needed)
        linear_bwd(be, h, w_fc, g, dh, gw_fc, gb_fc, ones, lf);
    }
};

// a saved tensor in the activation dtype
SavedDecl act(const std::string& what, Shape s) {
    SavedDecl d{what, std::move(s), DType::f32};
    d.compute_dtype = true;
    return d;
}

ParamDecl normal(const std::string& name, Shape s, double std) {
    ParamDecl d{name, std::move(s), ParamDecl::Init::normal, 1};
    d.std = std;
    return d;
}
ParamDecl zeros(const std::string& name, Shape s) { return {name, std::move(s), ParamDecl::Init::zeros, 1}; }
ParamDecl ones(const std::string& name, Shape s) { return {name, std::move(s), ParamDecl::Init::ones, 1}; }

Tensor at_or_none(const std::vector<Tensor>& v, int i) { return i >= 0 ? v[static_cast<std::size_t>(i)] : Tensor(); }

// LoRA adapters on a layer's projections (ModelOptions::lora_rank; the model sets lora_rank and lora_alpha,
// a spec file never does): "X.lora_A" (R, in) and "X.lora_B" (out, R) for each projection X, declared after
// the layer's own parameters in projection order, PEFT's initialisation (A as PyTorch's default, B zero).
// h is a (rows, R) scratch carved from the layer's workspace (one serves every projection in turn).
// QLoRA (lora_base_bits > 0, set by the model as well): the projections' frozen weights are packed, and a
// scratch of the largest projection's (out, in) values takes each one dequantised in turn.
// LoRA dropout (lora_dropout > 0, set by the model too): xd and mask, the dropped input of the widest
// adapted projection (rows, largest in) and its mask, serve every projection in turn.
struct LoraScratch {
    Tensor h, wq, xd, mask;
};
struct Adapters {
    std::int64_t r = 0;
    float s = 0;
    int first = 0;  // the index of the first projection's A
    int bits = 0;
    std::int64_t group = 0;
    float p = 0;  // LoRA dropout

    Adapters(const LayerSpec& l, int base_params) : r(attr_i64(l, "lora_rank")), first(base_params) {
        s = r > 0 ? static_cast<float>(layer_attr(l, "lora_alpha") / static_cast<double>(r)) : 0.0f;
        bits = r > 0 ? static_cast<int>(attr_i64(l, "lora_base_bits")) : 0;
        group = attr_i64(l, "lora_base_group");
        p = r > 0 ? static_cast<float>(layer_attr(l, "lora_dropout")) : 0.0f;
    }
    // QLoRA: the projection's weight is taken packed (Lora::weight dequantises it), with or without an adapter
    void pack(std::vector<ParamDecl>& p, const std::string& proj) const {
        for (ParamDecl& d : p)
            if (d.name == proj + ".weight") d.packed = bits > 0;
    }
    void declare(std::vector<ParamDecl>& p, const std::string& proj, std::int64_t out, std::int64_t in) const {
        if (r == 0) return;
        pack(p, proj);
        p.push_back({proj + ".lora_A", {r, in}, ParamDecl::Init::uniform_fan_in, in});
        p.push_back({proj + ".lora_B", {out, r}, ParamDecl::Init::zeros, r});
    }
    // largest_weight: the most values of one projection's weight (QLoRA's dequantisation scratch);
    // largest_in: the widest input of an adapted projection (LoRA dropout's scratch)
    LoraScratch carve(Carve& c, std::int64_t rows, std::int64_t largest_weight, std::int64_t largest_in, DType dt) const {
        if (r == 0) return {};
        LoraScratch l;
        l.h = c.take({rows, r}, dt);
        if (bits > 0) l.wq = c.take({largest_weight}, dt);
        if (p > 0) {
            l.xd = c.take({rows * largest_in}, dt);
            l.mask = c.take({rows * largest_in}, DType::u8);
        }
        return l;
    }
    // proj: the adapter's place among the layer's adapters; site: the projection's place in the layer (its
    // dropout stream)
    Lora at(const LayerIO& io, int proj, const LoraScratch& sc, int site = -1) const {
        if (r == 0) return {};
        const auto a = static_cast<std::size_t>(first + 2 * proj);
        const bool g = io.grads.size() > a + 1;  // (forward has no gradients)
        Lora l;
        l.A = io.params[a];
        l.B = io.params[a + 1];
        l.gA = g ? io.grads[a] : Tensor();
        l.gB = g ? io.grads[a + 1] : Tensor();
        l.h = sc.h;
        l.wq = sc.wq;
        l.s = s;
        l.bits = bits;
        l.group = group;
        l.out = io.params[a + 1].dim(0);
        l.in = io.params[a].dim(1);
        if (io.adapters_off) {  // the base alone (Model::set_adapters_enabled): no adapter, no dropout
            l.A = l.B = Tensor();
            return l;
        }
        if (io.training && p > 0) {
            l.p = p;
            l.seed = site_seed(io.seed, 16 + (site < 0 ? proj : site));
            const std::int64_t per_sample = io.x.numel() / io.x.dim(0);  // (T, C) or (C): T rows or one
            l.first_row = io.first_sample * static_cast<std::uint64_t>(per_sample / io.x.shape().back());
            l.xd = sc.xd;
            l.mask = sc.mask;
        }
        return l;
    }
    // QLoRA: a projection (out, in) of the quantised base that carries no adapter
    Lora base_only(std::int64_t out, std::int64_t in, const LoraScratch& sc) const {
        if (r == 0 || bits == 0) return {};
        Lora l;
        l.wq = sc.wq;
        l.bits = bits;
        l.group = group;
        l.out = out;
        l.in = in;
        return l;
    }
};

// ---- token_embedding ------------------------------------------------------------------------------
class TokenEmbedding : public Layer {
public:
    explicit TokenEmbedding(const LayerSpec& s) : Layer(s), V_(attr_i64(s, "vocab_size")), C_(attr_i64(s, "dim")) {}
    Shape output_shape(const Shape& in) const override { return {in[0], C_}; }
    std::vector<ParamDecl> params(const Shape&) const override { return {normal("weight", {V_, C_}, 0.02)}; }

protected:
    Decoding decoding() const override { return Decoding::per_position; }
    void forward_impl(LayerIO& io) const override { io.backend->embedding_forward(io.x, io.params[0], io.y); }
    void backward_impl(LayerIO& io) const override {
        if (io.grads[0].defined()) io.backend->embedding_backward(io.x, io.dy, io.grads[0]);  // (frozen: none)
    }
    bool skips_frozen_gradients() const override { return true; }

private:
    std::int64_t V_, C_;
};

// ---- position_embedding ---------------------------------------------------------------------------
class PositionEmbedding : public Layer {
public:
    explicit PositionEmbedding(const LayerSpec& s)
        : Layer(s), P_(attr_i64(s, "max_positions")), C_(attr_i64(s, "dim")) {}
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override { return {normal("weight", {P_, C_}, 0.02)}; }

protected:
    Decoding decoding() const override { return Decoding::per_position; }
    // y (N, t, C) = x + weight[:t]: the first t rows of the table, added to every sample (decoding: rows
    // position .. position + t - 1)
    void forward_impl(LayerIO& io) const override {
        const std::int64_t N = io.x.dim(0), tc = io.x.numel() / N;
        const std::int64_t first = io.decoding ? io.position * C_ : 0;
        if (first + tc > P_ * C_)
            throw Error("internal: position_embedding input " + shape_str(io.x.shape()) + " at position " +
                        std::to_string(io.decoding ? io.position : 0) + " runs past its table");
        io.backend->copy(io.x, io.y);
        Tensor y2 = io.y.reshape({N, tc});
        io.backend->add_bias(y2, io.params[0].view(first, {tc}));
    }
    void backward_impl(LayerIO& io) const override {
        const std::int64_t N = io.dy.dim(0), tc = io.dy.numel() / N;
        if (io.dx.defined()) io.backend->copy(io.dy, io.dx);
        if (!io.grads[0].defined()) return;  // frozen (LoRA)
        Tensor g = io.grads[0].view(0, {tc});
        io.backend->bias_grad(io.dy.reshape({N, tc}), g);
    }
    bool skips_frozen_gradients() const override { return true; }

private:
    std::int64_t P_, C_;
};

// ---- layernorm ------------------------------------------------------------------------------------
class LayerNormLayer : public Layer {
public:
    Decoding decoding() const override { return Decoding::per_position; }
    explicit LayerNormLayer(const LayerSpec& s)
        : Layer(s), C_(attr_i64(s, "dim")), eps_(static_cast<float>(layer_attr(s, "eps"))), bias_(attr_b(s, "bias")) {}
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override {
        std::vector<ParamDecl> p{ones("weight", {C_})};
        if (bias_) p.push_back(zeros("bias", {C_}));
        return p;
    }
    std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const override {
        const std::int64_t rows = shape_numel(in) / C_;
        return {{"mean", {batch, rows}, DType::f32}, {"rstd", {batch, rows}, DType::f32}};
    }
    bool backward_needs_dx() const override { return true; }

protected:
    void forward_impl(LayerIO& io) const override {
        io.backend->layernorm_forward(io.x, io.params[0], at_or_none(io.params, bias_ ? 1 : -1), eps_, io.y, io.saved[0],
                                      io.saved[1]);
    }
    void backward_impl(LayerIO& io) const override {
        if (!io.dx.defined()) throw Error("internal: layernorm backward needs dx");
        Tensor db = at_or_none(io.grads, bias_ ? 1 : -1);
        io.backend->layernorm_backward(io.x, io.dy, io.params[0], io.saved[0], io.saved[1], io.dx, io.grads[0], db);
    }

private:
    std::int64_t C_;
    float eps_;
    bool bias_;
};

// ---- self_attention -------------------------------------------------------------------------------
class SelfAttention : public Layer {
public:
    // decoding: causal attention keeps its keys and values (kv_cache_shape)
    Decoding decoding() const override { return a_.causal ? Decoding::cached : Decoding::none; }
    Shape kv_cache_shape(std::int64_t positions) const override { return a_.kv_shape(positions); }
    std::size_t kv_cache_workspace_bytes(const Backend& b, std::int64_t n, std::int64_t positions,
                                         DType dt) const override {
        return a_.kv_workspace(b, n, positions, dt);
    }
    SelfAttention(const LayerSpec& s, const LayerOptions& o) : Layer(s), opt_(o), lora_(s, attr_b(s, "bias") ? 4 : 2) {
        a_.C = attr_i64(s, "dim");
        a_.H = attr_i64(s, "heads");
        a_.causal = attr_b(s, "causal");
        a_.p = static_cast<float>(layer_attr(s, "dropout"));
        a_.selective = o.recompute_attention;
        bias_ = attr_b(s, "bias");
    }
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override {
        const std::int64_t C = a_.C;
        std::vector<ParamDecl> p{normal("c_attn.weight", {3 * C, C}, 0.02)};
        if (bias_) p.push_back(zeros("c_attn.bias", {3 * C}));
        p.push_back(normal("c_proj.weight", {C, C}, residual_std(opt_)));
        if (bias_) p.push_back(zeros("c_proj.bias", {C}));
        lora_.declare(p, "c_attn", 3 * C, C);
        lora_.declare(p, "c_proj", C, C);
        return p;
    }
    // qkv, [att, lse], [mask]
    std::vector<SavedDecl> saved(std::int64_t B, const Shape& in) const override {
        const std::int64_t T = in[0], C = a_.C;
        std::vector<SavedDecl> s{act("qkv", {B, T, 3 * C})};
        if (!a_.selective) {
            s.push_back(act("att", {B, T, C}));
            s.push_back({"lse", {B, a_.H, T}, DType::f32});
        }
        if (a_.p > 0) s.push_back({"mask", {B, T, C}, DType::u8});
        return s;
    }
    std::size_t workspace_bytes(const Backend& b, std::int64_t B, const Shape& in, DType dt) const override {
        Carve c;
        carve(c, b, B, in[0], dt, Tensor());
        return c.bytes();
    }
    bool backward_needs_dx() const override { return false; }
    bool skips_frozen_gradients() const override { return true; }  // (LoRA's frozen base: linear_bwd skips them)

protected:
    struct Ws {
        Tensor attn_ws, da, datt, dqkv, att, lse, ones;
        LoraScratch lh;
    };
    void carve(Carve& c, const Backend& b, std::int64_t B, std::int64_t T, DType dt, const Tensor& base,
               Ws* w = nullptr) const {
        c.base = base;
        const std::size_t aw = b.attention_workspace_bytes(B, T, a_.C, static_cast<int>(a_.H), dt);
        Tensor attn = c.take({static_cast<std::int64_t>(aw)}, DType::u8);
        Tensor da = c.take({B, T, a_.C}, dt), datt = c.take({B, T, a_.C}, dt), dqkv = c.take({B, T, 3 * a_.C}, dt);
        Tensor att, lse;
        if (a_.selective) {
            att = c.take({B, T, a_.C}, dt);
            lse = c.take({B, a_.H, T}, DType::f32);
        }
        Tensor ones = c.take({B * T}, dt);
        LoraScratch lh = lora_.carve(c, B * T, 3 * a_.C * a_.C, a_.C, dt);
        if (w) *w = {attn, da, datt, dqkv, att, lse, ones, lh};
    }
    void views(LayerIO& io, Tensor& qkv, Tensor& att, Tensor& lse, Tensor& mask, Ws& w) const {
        const std::int64_t B = io.x.dim(0), T = io.x.dim(1);
        Carve c;
        carve(c, *io.backend, B, T, io.x.dtype(), io.workspace, &w);
        std::size_t k = 0;
        qkv = io.saved[k++];
        if (a_.selective) {
            att = w.att;
            lse = w.lse;
        } else {
            att = io.saved[k++];
            lse = io.saved[k++];
        }
        if (a_.p > 0) mask = io.saved[k++];
    }
    void forward_impl(LayerIO& io) const override {
        Tensor qkv, att, lse, mask;
        Ws w;
        views(io, qkv, att, lse, mask, w);
        a_.forward(*io.backend, io, io.x, io.params[0], at_or_none(io.params, bias_ ? 1 : -1), io.params[bias_ ? 2 : 1],
                   at_or_none(io.params, bias_ ? 3 : -1), qkv, att, lse, mask, io.y, w.da, w.attn_ws, 0,
                   io.recompute_output, lora_.at(io, 0, w.lh), lora_.at(io, 1, w.lh));
    }
    void backward_impl(LayerIO& io) const override {
        Tensor qkv, att, lse, mask;
        Ws w;
        views(io, qkv, att, lse, mask, w);
        if (a_.selective)  // recompute the attention core from the kept qkv
            io.backend->attention_forward(qkv, att, lse, a_.params(io, io.x.dim(1), 0), w.attn_ws);
        const int wa = 0, ba = bias_ ? 1 : -1, wp = bias_ ? 2 : 1, bp = bias_ ? 3 : -1;
        io.backend->fill(w.ones, 1.0);
        a_.backward(*io.backend, io, io.x, io.params[wa], io.params[wp], qkv, att, lse, mask, io.dy, io.dx, io.grads[wa],
                    at_or_none(io.grads, ba), io.grads[wp], at_or_none(io.grads, bp), w.da, w.datt, w.dqkv, w.attn_ws, 0,
                    w.ones, lora_.at(io, 0, w.lh), lora_.at(io, 1, w.lh));
    }

private:
    LayerOptions opt_;
    AttentionHalf a_;
    bool bias_ = true;
    Adapters lora_;
};

// ---- mlp ------------------------------------------------------------------------------------------
class Mlp : public Layer {
public:
    Decoding decoding() const override { return Decoding::per_position; }
    Mlp(const LayerSpec& s, const LayerOptions& o) : Layer(s), opt_(o), lora_(s, attr_b(s, "bias") ? 4 : 2) {
        m_.C = attr_i64(s, "dim");
        m_.F = attr_i64(s, "hidden");
        if (m_.F == 0) m_.F = 4 * m_.C;
        m_.tanh_form = attr_b(s, "gelu_tanh");
        m_.p = static_cast<float>(layer_attr(s, "dropout"));
        bias_ = attr_b(s, "bias");
    }
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override {
        std::vector<ParamDecl> p{normal("c_fc.weight", {m_.F, m_.C}, 0.02)};
        if (bias_) p.push_back(zeros("c_fc.bias", {m_.F}));
        p.push_back(normal("c_proj.weight", {m_.C, m_.F}, residual_std(opt_)));
        if (bias_) p.push_back(zeros("c_proj.bias", {m_.C}));
        lora_.declare(p, "c_fc", m_.F, m_.C);
        lora_.declare(p, "c_proj", m_.C, m_.F);
        return p;
    }
    bool skips_frozen_gradients() const override { return true; }  // (LoRA's frozen base: linear_bwd skips them)
    std::vector<SavedDecl> saved(std::int64_t B, const Shape& in) const override {
        const std::int64_t R = B * (shape_numel(in) / m_.C);
        std::vector<SavedDecl> s{act("fc", {R, m_.F})};
        if (m_.p > 0) s.push_back({"mask", {R, m_.C}, DType::u8});
        return s;
    }
    std::size_t workspace_bytes(const Backend&, std::int64_t B, const Shape& in, DType dt) const override {
        Carve c;
        carve(c, B * (shape_numel(in) / m_.C), dt, Tensor());
        return c.bytes();
    }

protected:
    struct Ws {
        Tensor g, dg, dm, ones;
        LoraScratch lh;
    };
    void carve(Carve& c, std::int64_t R, DType dt, const Tensor& base, Ws* w = nullptr) const {
        c.base = base;
        Tensor g = c.take({R, m_.F}, dt), dg = c.take({R, m_.F}, dt), dm = c.take({R, m_.C}, dt);
        Tensor ones = c.take({R}, dt);
        LoraScratch lh = lora_.carve(c, R, m_.F * m_.C, std::max(m_.F, m_.C), dt);
        if (w) *w = {g, dg, dm, ones, lh};
    }
    void forward_impl(LayerIO& io) const override {
        const std::int64_t R = io.x.numel() / m_.C;
        Ws w;
        Carve c;
        carve(c, R, io.x.dtype(), io.workspace, &w);
        Tensor mask = m_.p > 0 ? io.saved[1] : Tensor();
        // sequences: the halves work on (B, T, C); a (B, C) input is one token per sample
        Tensor x = io.x.reshape({io.x.dim(0), R / io.x.dim(0), m_.C});
        Tensor f = io.saved[0].reshape({x.dim(0), x.dim(1), m_.F});
        if (mask.defined()) mask = mask.reshape(x.shape());
        m_.forward(*io.backend, io, x, io.params[0], at_or_none(io.params, bias_ ? 1 : -1), io.params[bias_ ? 2 : 1],
                   at_or_none(io.params, bias_ ? 3 : -1), f, mask, io.y.reshape(x.shape()),
                   w.g.reshape(f.shape()), w.dm.reshape(x.shape()), 0, io.recompute_output, lora_.at(io, 0, w.lh),
                   lora_.at(io, 1, w.lh));
    }
    void backward_impl(LayerIO& io) const override {
        const std::int64_t R = io.x.numel() / m_.C;
        Ws w;
        Carve c;
        carve(c, R, io.x.dtype(), io.workspace, &w);
        Tensor mask = m_.p > 0 ? io.saved[1].reshape(io.dy.shape()) : Tensor();
        const int wf = 0, bf = bias_ ? 1 : -1, wp = bias_ ? 2 : 1, bp = bias_ ? 3 : -1;
        io.backend->fill(w.ones, 1.0);
        m_.backward(*io.backend, io, io.x, io.params[wf], io.params[wp], io.saved[0], mask, io.dy, io.dx, io.grads[wf],
                    at_or_none(io.grads, bf), io.grads[wp], at_or_none(io.grads, bp), w.g, w.dg,
                    w.dm.reshape(io.dy.shape()), w.ones, lora_.at(io, 0, w.lh), lora_.at(io, 1, w.lh));
    }

private:
    LayerOptions opt_;
    MlpHalf m_;
    bool bias_ = true;
    Adapters lora_;
};

// ---- transformer_block (nanoGPT's Block: x + attn(ln_1(x)), then + mlp(ln_2(.))) --------------------
//
// Kept for backward (B, T rows): h1 = ln_1(x), ln_1's mean and rstd (f32), qkv, the attention output
// att and its log-sum-exp lse (f32, (B, H, T)) [not with selective recompute], the projection's dropout
// mask (u8) [when dropout > 0], x1 = x + attention half, h2 = ln_2(x1), ln_2's mean and rstd, f = c_fc(h2)
// (B, T, F), the MLP's dropout mask [when dropout > 0]. The GELU output is recomputed from f in backward;
// the attention probabilities are never stored (recomputed tile by tile).
class TransformerBlock : public Layer {
public:
    // decoding: causal attention keeps its keys and values (kv_cache_shape)
    Decoding decoding() const override { return a_.causal ? Decoding::cached : Decoding::none; }
    Shape kv_cache_shape(std::int64_t positions) const override { return a_.kv_shape(positions); }
    std::size_t kv_cache_workspace_bytes(const Backend& b, std::int64_t n, std::int64_t positions,
                                         DType dt) const override {
        return a_.kv_workspace(b, n, positions, dt);
    }
    TransformerBlock(const LayerSpec& s, const LayerOptions& o)
        : Layer(s), opt_(o), lora_(s, attr_b(s, "bias") ? 12 : 6) {
        C_ = attr_i64(s, "dim");
        a_.C = C_;
        a_.H = attr_i64(s, "heads");
        a_.causal = attr_b(s, "causal");
        a_.p = static_cast<float>(layer_attr(s, "dropout"));
        a_.selective = o.recompute_attention;
        m_.C = C_;
        m_.F = attr_i64(s, "hidden");
        if (m_.F == 0) m_.F = 4 * C_;
        m_.tanh_form = attr_b(s, "gelu_tanh");
        m_.p = a_.p;
        bias_ = attr_b(s, "bias");
        eps_ = static_cast<float>(layer_attr(s, "eps"));
        // parameter indices in declaration order (-1: absent without bias)
        int k = 0;
        ln1w_ = k++;
        ln1b_ = bias_ ? k++ : -1;
        attw_ = k++;
        attb_ = bias_ ? k++ : -1;
        prjw_ = k++;
        prjb_ = bias_ ? k++ : -1;
        ln2w_ = k++;
        ln2b_ = bias_ ? k++ : -1;
        fcw_ = k++;
        fcb_ = bias_ ? k++ : -1;
        mpw_ = k++;
        mpb_ = bias_ ? k++ : -1;
    }
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override {
        const std::int64_t C = C_, F = m_.F;
        std::vector<ParamDecl> p{ones("ln_1.weight", {C})};
        if (bias_) p.push_back(zeros("ln_1.bias", {C}));
        p.push_back(normal("attn.c_attn.weight", {3 * C, C}, 0.02));
        if (bias_) p.push_back(zeros("attn.c_attn.bias", {3 * C}));
        p.push_back(normal("attn.c_proj.weight", {C, C}, residual_std(opt_)));
        if (bias_) p.push_back(zeros("attn.c_proj.bias", {C}));
        p.push_back(ones("ln_2.weight", {C}));
        if (bias_) p.push_back(zeros("ln_2.bias", {C}));
        p.push_back(normal("mlp.c_fc.weight", {F, C}, 0.02));
        if (bias_) p.push_back(zeros("mlp.c_fc.bias", {F}));
        p.push_back(normal("mlp.c_proj.weight", {C, F}, residual_std(opt_)));
        if (bias_) p.push_back(zeros("mlp.c_proj.bias", {C}));
        lora_.declare(p, "attn.c_attn", 3 * C, C);
        lora_.declare(p, "attn.c_proj", C, C);
        lora_.declare(p, "mlp.c_fc", F, C);
        lora_.declare(p, "mlp.c_proj", C, F);
        return p;
    }
    // LoRA's frozen base: the projections skip their weights' gradients, the layer norms' go to scratch
    bool skips_frozen_gradients() const override { return true; }
    std::vector<SavedDecl> saved(std::int64_t B, const Shape& in) const override {
        const std::int64_t T = in[0], C = C_;
        std::vector<SavedDecl> s{act("h1", {B, T, C}),
                                 {"mean1", {B, T}, DType::f32},
                                 {"rstd1", {B, T}, DType::f32},
                                 act("qkv", {B, T, 3 * C})};
        if (!a_.selective) {
            s.push_back(act("att", {B, T, C}));
            s.push_back({"lse", {B, a_.H, T}, DType::f32});
        }
        if (a_.p > 0) s.push_back({"mask1", {B, T, C}, DType::u8});
        s.push_back(act("x1", {B, T, C}));
        s.push_back(act("h2", {B, T, C}));
        s.push_back({"mean2", {B, T}, DType::f32});
        s.push_back({"rstd2", {B, T}, DType::f32});
        s.push_back(act("fc", {B, T, m_.F}));
        if (a_.p > 0) s.push_back({"mask2", {B, T, C}, DType::u8});
        return s;
    }
    std::size_t workspace_bytes(const Backend& b, std::int64_t B, const Shape& in, DType dt) const override {
        Carve c;
        carve(c, b, B, in[0], dt, Tensor());
        return c.bytes();
    }

protected:
    struct Ws {
        Tensor attn_ws, g, dg, dqkv, c1, c2, dx1, att, lse, ones;
        LoraScratch lh;
        Tensor lnw, lnb;
    };
    struct Saved {
        Tensor h1, mean1, rstd1, qkv, att, lse, mask1, x1, h2, mean2, rstd2, f, mask2;
    };
    // attention scratch | one region holding either [g | dg] (MLP half) or dqkv (attention half) | c1 |
    // c2 | dx1 | with selective recompute: att, lse
    void carve(Carve& c, const Backend& b, std::int64_t B, std::int64_t T, DType dt, const Tensor& base,
               Ws* w = nullptr) const {
        c.base = base;
        const std::int64_t C = C_, F = m_.F;
        const std::size_t aw = b.attention_workspace_bytes(B, T, C, static_cast<int>(a_.H), dt);
        Tensor attn = c.take({static_cast<std::int64_t>(aw)}, DType::u8);
        // the shared region: g and dg back to back (aligned), or dqkv from its start
        Carve r;
        r.take({B, T, F}, dt);
        r.take({B, T, F}, dt);
        const std::size_t gd_bytes = r.bytes();
        const std::size_t qkv_bytes = static_cast<std::size_t>(B * T * 3 * C) * dtype_size(dt);
        Tensor region = c.take({static_cast<std::int64_t>(std::max(gd_bytes, qkv_bytes))}, DType::u8);
        Tensor c1 = c.take({B, T, C}, dt), c2 = c.take({B, T, C}, dt), dx1 = c.take({B, T, C}, dt);
        Tensor att, lse;
        if (a_.selective) {
            att = c.take({B, T, C}, dt);
            lse = c.take({B, a_.H, T}, DType::f32);
        }
        Tensor ones = c.take({B * T}, dt);
        // LoRA: the adapters' (B T, R) scratch, and where the frozen layer norms' gradients go (never read)
        LoraScratch lh = lora_.carve(c, B * T, std::max(3 * C * C, F * C), std::max(C, F), dt);
        Tensor lnw, lnb;
        if (lora_.r > 0) {
            lnw = c.take({C}, dt);
            if (bias_) lnb = c.take({C}, dt);
        }
        if (w) {
            Carve in;
            in.base = region;
            Tensor g = in.take({B, T, F}, dt), dg = in.take({B, T, F}, dt);
            Tensor dqkv = region.defined() ? Tensor(region.storage(), region.byte_offset(), {B, T, 3 * C}, dt) : Tensor();
            *w = {attn, g, dg, dqkv, c1, c2, dx1, att, lse, ones, lh, lnw, lnb};
        }
    }
    Saved saved_views(LayerIO& io, Ws& w) const {
        Saved s;
        std::size_t k = 0;
        auto next = [&] { return io.saved[k++]; };
        s.h1 = next();
        s.mean1 = next();
        s.rstd1 = next();
        s.qkv = next();
        if (a_.selective) {
            s.att = w.att;
            s.lse = w.lse;
        } else {
            s.att = next();
            s.lse = next();
        }
        if (a_.p > 0) s.mask1 = next();
        s.x1 = next();
        s.h2 = next();
        s.mean2 = next();
        s.rstd2 = next();
        s.f = next();
        if (a_.p > 0) s.mask2 = next();
        return s;
    }
    Ws scratch(LayerIO& io) const {
        Ws w;
        Carve c;
        carve(c, *io.backend, io.x.dim(0), io.x.dim(1), io.x.dtype(), io.workspace, &w);
        return w;
    }

    void forward_impl(LayerIO& io) const override {
        Backend& be = *io.backend;
        Ws w = scratch(io);
        Saved s = saved_views(io, w);
        const auto& P = io.params;
        be.layernorm_forward(io.x, P[ln1w_], at_or_none(P, ln1b_), eps_, s.h1, s.mean1, s.rstd1);
        a_.forward(be, io, s.h1, P[attw_], at_or_none(P, attb_), P[prjw_], at_or_none(P, prjb_), s.qkv, s.att, s.lse,
                   s.mask1, s.x1, w.c1, w.attn_ws, 0, true, lora_.at(io, 0, w.lh), lora_.at(io, 1, w.lh));
        be.axpy(1.0f, io.x, s.x1);  // x1 = x + attention half
        be.layernorm_forward(s.x1, P[ln2w_], at_or_none(P, ln2b_), eps_, s.h2, s.mean2, s.rstd2);
        // a recompute of a kept output (LayerIO::recompute_output false) stops at what backward reads: f and
        // the MLP's dropout mask (the GELU, the output projection and the residual sum only feed y)
        m_.forward(be, io, s.h2, P[fcw_], at_or_none(P, fcb_), P[mpw_], at_or_none(P, mpb_), s.f, s.mask2, io.y, w.g,
                   w.c1, 2, io.recompute_output, lora_.at(io, 2, w.lh), lora_.at(io, 3, w.lh));
        if (io.recompute_output) be.axpy(1.0f, s.x1, io.y);  // y = x1 + MLP half
    }

    void backward_impl(LayerIO& io) const override {
        Backend& be = *io.backend;
        Ws w = scratch(io);
        Saved s = saved_views(io, w);
        const auto& P = io.params;
        auto& G = io.grads;
        if (bias_) be.fill(w.ones, 1.0);
        // MLP half: y = x1 + mlp(ln_2(x1))
        m_.backward(be, io, s.h2, P[fcw_], P[mpw_], s.f, s.mask2, io.dy, w.c2, G[fcw_], at_or_none(G, fcb_), G[mpw_],
                    at_or_none(G, mpb_), w.g, w.dg, w.c1, w.ones, lora_.at(io, 2, w.lh), lora_.at(io, 3, w.lh));
        // a frozen layer norm (LoRA) has no gradient tensor: its gradients go to scratch
        auto grad_or = [&](int i, const Tensor& scratch) { return i < 0 ? Tensor() : G[i].defined() ? G[i] : scratch; };
        Tensor gw2 = grad_or(ln2w_, w.lnw), gb2 = grad_or(ln2b_, w.lnb);
        be.layernorm_backward(s.x1, w.c2, P[ln2w_], s.mean2, s.rstd2, w.dx1, gw2, gb2);
        be.axpy(1.0f, io.dy, w.dx1);  // dx1 = d(ln_2 path) + dy (the residual)
        // attention half: x1 = x + attn(ln_1(x))
        if (a_.selective)
            be.attention_forward(s.qkv, s.att, s.lse, a_.params(io, io.x.dim(1), 0), w.attn_ws);
        a_.backward(be, io, s.h1, P[attw_], P[prjw_], s.qkv, s.att, s.lse, s.mask1, w.dx1, w.c2, G[attw_],
                    at_or_none(G, attb_), G[prjw_], at_or_none(G, prjb_), w.c1, w.c2, w.dqkv, w.attn_ws, 0, w.ones,
                    lora_.at(io, 0, w.lh), lora_.at(io, 1, w.lh));
        // (a_.backward used c2 as datt, then wrote dh1 into c2: the projections run in that order)
        Tensor dx = io.dx.defined() ? io.dx : w.c1;  // without dx, ln_1's input gradient goes to scratch
        Tensor gw1 = grad_or(ln1w_, w.lnw), gb1 = grad_or(ln1b_, w.lnb);
        be.layernorm_backward(io.x, w.c2, P[ln1w_], s.mean1, s.rstd1, dx, gw1, gb1);
        if (io.dx.defined()) be.axpy(1.0f, w.dx1, io.dx);
    }

private:
    LayerOptions opt_;
    std::int64_t C_ = 0;
    AttentionHalf a_;
    MlpHalf m_;
    bool bias_ = true;
    float eps_ = 1e-5f;
    int ln1w_, ln1b_, attw_, attb_, prjw_, prjb_, ln2w_, ln2b_, fcw_, fcb_, mpw_, mpb_;
    Adapters lora_;
};

// ---- rmsnorm (LlamaRMSNorm: the final norm of a LLaMA-family model) ---------------------------------
class RmsNormLayer : public Layer {
public:
    Decoding decoding() const override { return Decoding::per_position; }
    explicit RmsNormLayer(const LayerSpec& s)
        : Layer(s), C_(attr_i64(s, "dim")), eps_(static_cast<float>(layer_attr(s, "eps"))) {}
    Shape output_shape(const Shape& in) const override { return in; }
    std::vector<ParamDecl> params(const Shape&) const override { return {ones("weight", {C_})}; }
    std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const override {
        return {{"rstd", {batch, shape_numel(in) / C_}, DType::f32}};
    }
    bool backward_needs_dx() const override { return true; }
    std::size_t workspace_bytes(const Backend&, std::int64_t, const Shape&, DType dt) const override {
        return static_cast<std::size_t>(C_) * dtype_size(dt);  // a frozen weight's gradient (LoRA), never read
    }
    bool skips_frozen_gradients() const override { return true; }

protected:
    void forward_impl(LayerIO& io) const override {
        io.backend->rmsnorm_forward(io.x, io.params[0], eps_, io.y, io.saved[0]);
    }
    void backward_impl(LayerIO& io) const override {
        if (!io.dx.defined()) throw Error("internal: rmsnorm backward needs dx");
        Tensor g = io.grads[0].defined() ? io.grads[0]
                                         : Tensor(io.workspace.storage(), io.workspace.byte_offset(), {C_}, io.x.dtype());
        io.backend->rmsnorm_backward(io.x, io.dy, io.params[0], io.saved[0], io.dx, g);
    }

private:
    std::int64_t C_;
    float eps_;
};

// ---- llama_block (Hugging Face's LlamaDecoderLayer; Mistral's and Qwen2's alike) ---------------------
//
// h = x + o_proj(attention(rope(q_proj(n1)), rope(k_proj(n1)), v_proj(n1))) with n1 = input_layernorm(x);
// y = h + down_proj(silu(gate_proj(n2)) * up_proj(n2)) with n2 = post_attention_layernorm(h). Causal
// grouped-query attention: KV key/value heads, each serving H/KV query heads. No biases but q, k and v's
// with qkv_bias (Qwen2). The three projections write the planes of one qkv tensor (B, T, (H + 2 KV) D)
// (AttentionParams::planes), rotated in place, which the memory-efficient attention reads as they are.
//
// Kept for backward (B, T rows): n1 and its rstd (f32), qkv after the rotation, the attention output
// att (B, T, H D) and its log-sum-exp lse (f32, (B, H, T)) [not with selective recompute], h, n2 and its
// rstd, gate (B, T, F) and up (B, T, F). silu(gate) * up is recomputed in backward; the attention
// probabilities are never stored.
//
// LoRA (peft's names): adapters on the projections in lora_targets, a bit mask in projection order
// q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj (set by the model; 0 = q_proj and v_proj,
// peft's default for the family).
constexpr int kLlamaProjections = 7;
const char* const kLlamaProjectionNames[kLlamaProjections] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                                             "self_attn.o_proj", "mlp.gate_proj",   "mlp.up_proj",
                                                             "mlp.down_proj"};
constexpr int kLlamaDefaultLoraTargets = 0b101;  // q_proj, v_proj

class LlamaBlock : public Layer {
public:
    Decoding decoding() const override { return Decoding::cached; }
    Shape kv_cache_shape(std::int64_t positions) const override { return {KV_, positions, D_}; }
    std::size_t kv_cache_workspace_bytes(const Backend& b, std::int64_t n, std::int64_t positions,
                                         DType dt) const override {
        return b.attention_cached_workspace_bytes(n, positions, static_cast<int>(H_), static_cast<int>(KV_), D_, dt);
    }
    LlamaBlock(const LayerSpec& s, const LayerOptions& o) : Layer(s), lora_(s, 0) {
        C_ = attr_i64(s, "dim");
        H_ = attr_i64(s, "heads");
        KV_ = attr_i64(s, "kv_heads");
        if (KV_ == 0) KV_ = H_;
        D_ = attr_i64(s, "head_dim");
        if (D_ == 0) D_ = C_ / H_;
        F_ = attr_i64(s, "hidden");
        eps_ = static_cast<float>(layer_attr(s, "norm_eps"));
        qkv_bias_ = attr_b(s, "qkv_bias");
        rope_.theta = layer_attr(s, "rope_theta");
        rope_.factor = layer_attr(s, "rope_factor");
        rope_.low_freq_factor = layer_attr(s, "rope_low_freq_factor");
        rope_.high_freq_factor = layer_attr(s, "rope_high_freq_factor");
        rope_.original_max_positions = layer_attr(s, "rope_original_max_positions");
        selective_ = o.recompute_attention;
        targets_ = static_cast<int>(attr_i64(s, "lora_targets"));
        if (targets_ == 0) targets_ = kLlamaDefaultLoraTargets;
        int k = 0;
        ln1_ = k++;
        qw_ = k++;
        qb_ = qkv_bias_ ? k++ : -1;
        kw_ = k++;
        kb_ = qkv_bias_ ? k++ : -1;
        vw_ = k++;
        vb_ = qkv_bias_ ? k++ : -1;
        ow_ = k++;
        ln2_ = k++;
        gw_ = k++;
        uw_ = k++;
        dw_ = k++;
        lora_.first = k;
    }
    Shape output_shape(const Shape& in) const override { return in; }
    std::int64_t q_width() const { return H_ * D_; }
    std::int64_t kv_width() const { return KV_ * D_; }
    std::int64_t proj_out(int i) const {
        const std::int64_t outs[kLlamaProjections] = {q_width(), kv_width(), kv_width(), C_, F_, F_, C_};
        return outs[i];
    }
    std::int64_t proj_in(int i) const {
        const std::int64_t ins[kLlamaProjections] = {C_, C_, C_, q_width(), C_, C_, F_};
        return ins[i];
    }
    std::vector<ParamDecl> params(const Shape&) const override {
        const std::int64_t C = C_, F = F_;
        std::vector<ParamDecl> p{ones("input_layernorm.weight", {C})};
        p.push_back(normal("self_attn.q_proj.weight", {q_width(), C}, 0.02));
        if (qkv_bias_) p.push_back(zeros("self_attn.q_proj.bias", {q_width()}));
        p.push_back(normal("self_attn.k_proj.weight", {kv_width(), C}, 0.02));
        if (qkv_bias_) p.push_back(zeros("self_attn.k_proj.bias", {kv_width()}));
        p.push_back(normal("self_attn.v_proj.weight", {kv_width(), C}, 0.02));
        if (qkv_bias_) p.push_back(zeros("self_attn.v_proj.bias", {kv_width()}));
        p.push_back(normal("self_attn.o_proj.weight", {C, q_width()}, 0.02));
        p.push_back(ones("post_attention_layernorm.weight", {C}));
        p.push_back(normal("mlp.gate_proj.weight", {F, C}, 0.02));
        p.push_back(normal("mlp.up_proj.weight", {F, C}, 0.02));
        p.push_back(normal("mlp.down_proj.weight", {C, F}, 0.02));
        for (int i = 0; i < kLlamaProjections; ++i) {
            if (targets_ & (1 << i))
                lora_.declare(p, kLlamaProjectionNames[i], proj_out(i), proj_in(i));
            else if (lora_.r > 0)  // QLoRA: the projections without adapters are quantised too
                lora_.pack(p, kLlamaProjectionNames[i]);
        }
        return p;
    }
    bool skips_frozen_gradients() const override { return true; }
    std::vector<SavedDecl> saved(std::int64_t B, const Shape& in) const override {
        const std::int64_t T = in[0], C = C_;
        std::vector<SavedDecl> s{act("n1", {B, T, C}), {"rstd1", {B, T}, DType::f32},
                                 act("qkv", {B, T, q_width() + 2 * kv_width()})};
        if (!selective_) {
            s.push_back(act("att", {B, T, q_width()}));
            s.push_back({"lse", {B, H_, T}, DType::f32});
        }
        s.push_back(act("h", {B, T, C}));
        s.push_back(act("n2", {B, T, C}));
        s.push_back({"rstd2", {B, T}, DType::f32});
        s.push_back(act("gate", {B, T, F_}));
        s.push_back(act("up", {B, T, F_}));
        return s;
    }
    std::size_t workspace_bytes(const Backend& b, std::int64_t B, const Shape& in, DType dt) const override {
        Carve c;
        carve(c, b, B, in[0], dt, Tensor());
        return c.bytes();
    }

protected:
    struct Ws {
        Tensor attn_ws, m, dm, dqkv, c1, dh, datt, att, lse, ones;
        LoraScratch lh;
        Tensor lnw;
    };
    struct Saved {
        Tensor n1, rstd1, qkv, att, lse, h, n2, rstd2, gate, up;
    };
    // attention scratch | one region holding either [m | dm] (MLP half) or dqkv (attention half) | c1 | dh |
    // datt | with selective recompute: att, lse | ones (biases) | LoRA scratch | a frozen norm's gradient
    void carve(Carve& c, const Backend& b, std::int64_t B, std::int64_t T, DType dt, const Tensor& base,
               Ws* w = nullptr) const {
        c.base = base;
        const std::int64_t C = C_, F = F_, W = q_width() + 2 * kv_width();
        const std::size_t aw = b.attention_workspace_bytes(B, T, q_width(), static_cast<int>(H_), dt);
        Tensor attn = c.take({static_cast<std::int64_t>(aw)}, DType::u8);
        Carve r;
        r.take({B, T, F}, dt);
        r.take({B, T, F}, dt);
        const std::size_t mm_bytes = r.bytes();
        const std::size_t qkv_bytes = static_cast<std::size_t>(B * T * W) * dtype_size(dt);
        Tensor region = c.take({static_cast<std::int64_t>(std::max(mm_bytes, qkv_bytes))}, DType::u8);
        Tensor c1 = c.take({B, T, C}, dt), dh = c.take({B, T, C}, dt), datt = c.take({B, T, q_width()}, dt);
        Tensor att, lse;
        if (selective_) {
            att = c.take({B, T, q_width()}, dt);
            lse = c.take({B, H_, T}, DType::f32);
        }
        Tensor ones_t;
        if (qkv_bias_) ones_t = c.take({B * T}, dt);
        std::int64_t largest = 0;  // QLoRA's dequantisation scratch: every projection is quantised
        std::int64_t widest = 0;  // LoRA dropout's scratch: the widest adapted projection's input
        for (int i = 0; i < kLlamaProjections; ++i) {
            largest = std::max(largest, proj_out(i) * proj_in(i));
            if (targets_ & (1 << i)) widest = std::max(widest, proj_in(i));
        }
        LoraScratch lh = lora_.carve(c, B * T, largest, widest, dt);
        Tensor lnw;
        if (lora_.r > 0) lnw = c.take({C}, dt);
        if (w) {
            Carve in;
            in.base = region;
            Tensor m = in.take({B, T, F}, dt), dm = in.take({B, T, F}, dt);
            Tensor dqkv = region.defined() ? Tensor(region.storage(), region.byte_offset(), {B, T, W}, dt) : Tensor();
            *w = {attn, m, dm, dqkv, c1, dh, datt, att, lse, ones_t, lh, lnw};
        }
    }
    Saved saved_views(LayerIO& io, const Ws& w) const {
        Saved s;
        std::size_t k = 0;
        auto next = [&] { return io.saved[k++]; };
        s.n1 = next();
        s.rstd1 = next();
        s.qkv = next();
        if (selective_) {
            s.att = w.att;
            s.lse = w.lse;
        } else {
            s.att = next();
            s.lse = next();
        }
        s.h = next();
        s.n2 = next();
        s.rstd2 = next();
        s.gate = next();
        s.up = next();
        return s;
    }
    Ws scratch(LayerIO& io) const {
        Ws w;
        Carve c;
        carve(c, *io.backend, io.x.dim(0), io.x.dim(1), io.x.dtype(), io.workspace, &w);
        return w;
    }
    AttentionParams attn_params() const {
        AttentionParams ap;
        ap.heads = static_cast<int>(H_);
        ap.kv_heads = static_cast<int>(KV_);
        ap.planes = true;
        ap.causal = true;
        return ap;
    }
    // the q, k and v planes of a (B, T, (H + 2 KV) D) tensor
    void planes(const Tensor& qkv, Tensor& q, Tensor& k, Tensor& v) const {
        const std::int64_t B = qkv.dim(0), T = qkv.dim(1);
        q = qkv.view(0, {B, T, q_width()});
        k = qkv.view(B * T * q_width(), {B, T, kv_width()});
        v = qkv.view(B * T * (q_width() + kv_width()), {B, T, kv_width()});
    }
    Lora adapter(const LayerIO& io, int proj, const LoraScratch& sc) const {
        if (lora_.r == 0) return {};
        if (!(targets_ & (1 << proj))) return lora_.base_only(proj_out(proj), proj_in(proj), sc);
        int before = 0;  // adapters declared before this projection's
        for (int i = 0; i < proj; ++i) before += (targets_ >> i) & 1;
        return lora_.at(io, before, sc, proj);
    }

    void forward_impl(LayerIO& io) const override {
        Backend& be = *io.backend;
        Ws w = scratch(io);
        Saved s = saved_views(io, w);
        const auto& P = io.params;
        be.rmsnorm_forward(io.x, P[ln1_], eps_, s.n1, s.rstd1);
        Tensor q, k, v;
        planes(s.qkv, q, k, v);
        linear_fwd(be, s.n1, P[qw_], at_or_none(P, qb_), q, adapter(io, 0, w.lh));
        linear_fwd(be, s.n1, P[kw_], at_or_none(P, kb_), k, adapter(io, 1, w.lh));
        linear_fwd(be, s.n1, P[vw_], at_or_none(P, vb_), v, adapter(io, 2, w.lh));
        if (io.decoding) {  // the new tokens at their positions, attending over the cache
            be.rope_apply_at(q, static_cast<int>(H_), rope_, io.position);
            be.rope_apply_at(k, static_cast<int>(KV_), rope_, io.position);
            Tensor kc = io.kv->k, vc = io.kv->v, ws = io.kv->workspace;
            be.attention_cached(s.qkv, kc, vc, io.position, attn_params(), s.att, ws);
        } else {
            be.rope_apply(q, static_cast<int>(H_), rope_, false);
            be.rope_apply(k, static_cast<int>(KV_), rope_, false);
            be.attention_forward(s.qkv, s.att, s.lse, attn_params(), w.attn_ws);
        }
        linear_fwd(be, s.att, P[ow_], Tensor(), s.h, adapter(io, 3, w.lh));
        be.axpy(1.0f, io.x, s.h);  // h = x + attention half
        be.rmsnorm_forward(s.h, P[ln2_], eps_, s.n2, s.rstd2);
        linear_fwd(be, s.n2, P[gw_], Tensor(), s.gate, adapter(io, 4, w.lh));
        linear_fwd(be, s.n2, P[uw_], Tensor(), s.up, adapter(io, 5, w.lh));
        // a recompute of a kept output (LayerIO::recompute_output false) stops at what backward reads
        if (!io.recompute_output) return;
        be.swiglu_forward(s.gate, s.up, w.m);
        linear_fwd(be, w.m, P[dw_], Tensor(), io.y, adapter(io, 6, w.lh));
        be.axpy(1.0f, s.h, io.y);  // y = h + MLP half
    }

    void backward_impl(LayerIO& io) const override {
        Backend& be = *io.backend;
        Ws w = scratch(io);
        Saved s = saved_views(io, w);
        const auto& P = io.params;
        auto& G = io.grads;
        auto grad_or = [&](int i, const Tensor& scratch) { return i < 0 ? Tensor() : G[i].defined() ? G[i] : scratch; };
        // MLP half: y = h + down(silu(gate) * up)
        be.swiglu_forward(s.gate, s.up, w.m);  // recomputed (cheap, saves (B, T, F))
        linear_bwd(be, w.m, P[dw_], io.dy, w.dm, G[dw_], Tensor(), Tensor(), adapter(io, 6, w.lh));
        be.swiglu_backward(s.gate, s.up, w.dm, w.m, w.dm);  // dgate into m, dup into dm
        linear_bwd(be, s.n2, P[gw_], w.m, w.c1, G[gw_], Tensor(), Tensor(), adapter(io, 4, w.lh));
        linear_bwd(be, s.n2, P[uw_], w.dm, w.c1, G[uw_], Tensor(), Tensor(), adapter(io, 5, w.lh), true);
        Tensor g2 = grad_or(ln2_, w.lnw);
        be.rmsnorm_backward(s.h, w.c1, P[ln2_], s.rstd2, w.dh, g2);
        be.axpy(1.0f, io.dy, w.dh);  // dh = d(post_attention_layernorm path) + dy (the residual)
        // attention half: h = x + o_proj(attention(...))
        if (selective_) be.attention_forward(s.qkv, s.att, s.lse, attn_params(), w.attn_ws);
        linear_bwd(be, s.att, P[ow_], w.dh, w.datt, G[ow_], Tensor(), Tensor(), adapter(io, 3, w.lh));
        be.attention_backward(s.qkv, s.att, s.lse, w.datt, w.dqkv, attn_params(), w.attn_ws);
        Tensor dq, dk, dv;
        planes(w.dqkv, dq, dk, dv);
        be.rope_apply(dq, static_cast<int>(H_), rope_, true);  // the rotation's backward
        be.rope_apply(dk, static_cast<int>(KV_), rope_, true);
        if (qkv_bias_) be.fill(w.ones, 1.0);
        linear_bwd(be, s.n1, P[qw_], dq, w.c1, G[qw_], at_or_none(G, qb_), w.ones, adapter(io, 0, w.lh));
        linear_bwd(be, s.n1, P[kw_], dk, w.c1, G[kw_], at_or_none(G, kb_), w.ones, adapter(io, 1, w.lh), true);
        linear_bwd(be, s.n1, P[vw_], dv, w.c1, G[vw_], at_or_none(G, vb_), w.ones, adapter(io, 2, w.lh), true);
        Tensor dx = io.dx.defined() ? io.dx : w.dh;  // without dx, input_layernorm's goes to scratch (dh is done)
        Tensor g1 = grad_or(ln1_, w.lnw);
        be.rmsnorm_backward(io.x, w.c1, P[ln1_], s.rstd1, dx, g1);
        if (io.dx.defined()) be.axpy(1.0f, w.dh, io.dx);
    }

private:
    std::int64_t C_ = 0, H_ = 1, KV_ = 1, D_ = 0, F_ = 0;
    float eps_ = 1e-5f;
    bool qkv_bias_ = false, selective_ = false;
    RopeParams rope_;
    int targets_ = kLlamaDefaultLoraTargets;
    int ln1_, qw_, qb_, kw_, kb_, vw_, vb_, ow_, ln2_, gw_, uw_, dw_;
    Adapters lora_;
};

// ---- lm_head --------------------------------------------------------------------------------------
class LmHead : public Layer {
public:
    Decoding decoding() const override { return Decoding::per_position; }
    explicit LmHead(const LayerSpec& s)
        : Layer(s), C_(attr_i64(s, "dim")), V_(attr_i64(s, "vocab_size")), tied_(attr_b(s, "tied")) {}
    Shape output_shape(const Shape& in) const override {
        Shape o = in;
        o.back() = V_;
        return o;
    }
    std::vector<ParamDecl> params(const Shape&) const override {
        ParamDecl d = normal("weight", {V_, C_}, 0.02);
        d.tied_to_token_embedding = tied_;
        return {d};
    }

protected:
    void forward_impl(LayerIO& io) const override { linear_fwd(*io.backend, io.x, io.params[0], Tensor(), io.y); }
    // dy may be the logits' own memory (the fused loss writes the gradient over them): y is not read
    void backward_impl(LayerIO& io) const override {
        linear_bwd(*io.backend, io.x, io.params[0], io.dy, io.dx, io.grads[0], Tensor());  // (frozen: no dW)
    }
    bool skips_frozen_gradients() const override { return true; }

private:
    std::int64_t C_, V_;
    bool tied_;
};

// ---- patch_embedding (ViT): a convolution with kernel = stride = patch, tokens in raster order ------
class PatchEmbedding : public Layer {
public:
    explicit PatchEmbedding(const LayerSpec& s)
        : Layer(s), Ci_(attr_i64(s, "in_channels")), C_(attr_i64(s, "dim")), p_(attr_i64(s, "patch_size")) {
        cp_.stride_h = cp_.stride_w = static_cast<int>(p_);
    }
    Shape output_shape(const Shape& in) const override { return {(in[1] / p_) * (in[2] / p_), C_}; }
    std::vector<ParamDecl> params(const Shape&) const override {
        const std::int64_t fan_in = Ci_ * p_ * p_;
        return {{"weight", {C_, Ci_, p_, p_}, ParamDecl::Init::uniform_fan_in, fan_in},
                {"bias", {C_}, ParamDecl::Init::uniform_fan_in, fan_in}};
    }
    std::size_t workspace_bytes(const Backend& b, std::int64_t B, const Shape& in, DType dt) const override {
        Carve c;
        c.take({B, C_, in[1] / p_, in[2] / p_}, dt);
        c.take_bytes(b.conv2d_workspace_bytes(with_batch(B, in), {C_, Ci_, p_, p_}, {B, C_, in[1] / p_, in[2] / p_}, cp_, dt));
        return c.bytes();
    }
    bool backward_needs_dx() const override { return false; }

protected:
    void split(const LayerIO& io, Tensor& maps, Tensor& conv_ws) const {
        const std::int64_t B = io.x.dim(0), Hp = io.x.dim(2) / p_, Wp = io.x.dim(3) / p_;
        Carve c;
        c.base = io.workspace;
        maps = c.take({B, C_, Hp, Wp}, io.x.dtype());
        const std::size_t cw = io.backend->conv2d_workspace_bytes(io.x.shape(), {C_, Ci_, p_, p_}, maps.shape(), cp_,
                                                                   io.x.dtype());
        conv_ws = cw ? c.take({static_cast<std::int64_t>(cw)}, DType::u8) : Tensor();
    }
    void forward_impl(LayerIO& io) const override {
        Tensor maps, ws;
        split(io, maps, ws);
        io.backend->conv2d_forward(io.x, io.params[0], io.params[1], maps, cp_, ws);
        const std::int64_t B = maps.dim(0), P = maps.dim(2) * maps.dim(3);
        io.backend->transpose_last2(maps.reshape({B, C_, P}), io.y);
    }
    void backward_impl(LayerIO& io) const override {
        Tensor maps, ws;
        split(io, maps, ws);
        const std::int64_t B = maps.dim(0), P = maps.dim(2) * maps.dim(3);
        Tensor dm = maps.reshape({B, C_, P});
        io.backend->transpose_last2(io.dy, dm);
        io.backend->conv2d_backward_filter(io.x, maps, io.grads[0], io.grads[1], cp_, ws);
        if (io.dx.defined()) io.backend->conv2d_backward_data(maps, io.params[0], io.dx, cp_, ws);
    }

private:
    std::int64_t Ci_, C_, p_;
    Conv2dParams cp_;
};

// ---- class_token (ViT): a learned token put in front of the sequence --------------------------------
class ClassToken : public Layer {
public:
    explicit ClassToken(const LayerSpec& s) : Layer(s), C_(attr_i64(s, "dim")) {}
    Shape output_shape(const Shape& in) const override { return {in[0] + 1, C_}; }
    std::vector<ParamDecl> params(const Shape&) const override { return {zeros("weight", {1, 1, C_})}; }
    std::size_t workspace_bytes(const Backend&, std::int64_t B, const Shape&, DType dt) const override {
        return static_cast<std::size_t>(B * C_) * dtype_size(dt);
    }

protected:
    void forward_impl(LayerIO& io) const override {
        const std::int64_t P = io.x.dim(1);
        io.backend->copy_rows(io.params[0], 0, io.y, 0, 1);
        io.backend->copy_rows(io.x, 0, io.y, 1, P);
    }
    void backward_impl(LayerIO& io) const override {
        const std::int64_t B = io.dy.dim(0), P = io.dy.dim(1) - 1;
        if (io.dx.defined()) io.backend->copy_rows(io.dy, 1, io.dx, 0, P);
        Tensor first(io.workspace.storage(), io.workspace.byte_offset(), {B, 1, C_}, io.dy.dtype());
        io.backend->copy_rows(io.dy, 0, first, 0, 1);
        Tensor g = io.grads[0].reshape({C_});
        io.backend->bias_grad(first.reshape({B, C_}), g);
    }

private:
    std::int64_t C_;
};

// ---- class_token_pool (ViT): the class token's features, for the classification head ----------------
class ClassTokenPool : public Layer {
public:
    using Layer::Layer;
    Shape output_shape(const Shape& in) const override { return {in[1]}; }
    bool backward_needs_dx() const override { return false; }

protected:
    void forward_impl(LayerIO& io) const override {
        Tensor y = io.y.reshape({io.y.dim(0), 1, io.y.dim(1)});
        io.backend->copy_rows(io.x, 0, y, 0, 1);
    }
    void backward_impl(LayerIO& io) const override {
        if (!io.dx.defined()) return;
        io.backend->fill(io.dx, 0.0);
        Tensor dy = io.dy.reshape({io.dy.dim(0), 1, io.dy.dim(1)});
        io.backend->copy_rows(dy, 0, io.dx, 0, 1);
    }
};

}  // namespace

// ---- the registry's entries of these types (nn/layer_registry.h) ------------------------------------

namespace transformer_entries {

using AK = AttrInfo::Kind;

std::string batch(const Shape& s) {
    std::string r = "(N";
    for (auto d : s) r += ", " + std::to_string(d);
    return r + ")";
}

std::string fmt(const char* f, long long a, long long b = 0, long long c = 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

// a sequence (T, C): false with the error set otherwise
bool need_seq(const Shape& in, std::int64_t C, const char* what, LayerShape& r) {
    if (in.size() != 2) {
        r.fail("expects a sequence (N, T, " + std::to_string(C) + "), got " + batch(in) + "; " + what);
        return false;
    }
    if (in[1] != C) {
        r.fail("expects (N, T, " + std::to_string(C) + "), got " + batch(in) + "; set dim to " + std::to_string(in[1]));
        return false;
    }
    return true;
}

// a norm over the last dimension C: false with the error set otherwise
bool need_last(const Shape& in, std::int64_t C, LayerShape& r) {
    if (!in.empty() && in.back() == C) return true;
    r.fail("normalises the last dimension of size " + std::to_string(C) + ", got " + batch(in) +
           (in.empty() ? std::string() : "; set dim to " + std::to_string(in.back())));
    return false;
}

LayerShape token_embedding_shape(const LayerShapeInput& x) {
    const std::int64_t V = x.attr("vocab_size"), C = x.attr("dim");
    LayerShape r;
    r.label = fmt("token_embedding(%lld→%lld)", V, C);
    if (x.path != "0") return r.fail("takes token ids from the data, so it must be the model's first layer");
    if (x.in.size() != 1)
        return r.fail("takes token ids (N, T), got " + batch(x.in) + "; set the model's \"input\" to [T], the sequence length");
    r.out = {x.in[0], C};
    r.params = V * C;
    return r;
}

LayerShape position_embedding_shape(const LayerShapeInput& x) {
    const std::int64_t P = x.attr("max_positions"), C = x.attr("dim");
    LayerShape r;
    r.label = fmt("position_embedding(%lld×%lld)", P, C);
    if (!need_seq(x.in, C, "put it after an embedding", r)) return r;
    if (x.in[0] > P)
        return r.fail("the sequence has " + std::to_string(x.in[0]) + " tokens but only " + std::to_string(P) +
                      " positions are learned; raise max_positions to " + std::to_string(x.in[0]) +
                      " or use a shorter sequence");
    r.out = x.in;
    r.params = P * C;
    return r;
}

LayerShape layernorm_shape(const LayerShapeInput& x) {
    const std::int64_t C = x.attr("dim");
    LayerShape r;
    r.label = fmt("layernorm(%lld)", C);
    if (!need_last(x.in, C, r)) return r;
    r.out = x.in;
    r.params = C * (x.attr("bias") ? 2 : 1);
    r.saved_bytes = 8 * (shape_numel(x.in) / C);  // mean and rstd, f32 per row
    return r;
}

LayerShape rmsnorm_shape(const LayerShapeInput& x) {
    const std::int64_t C = x.attr("dim");
    LayerShape r;
    r.label = fmt("rmsnorm(%lld)", C);
    if (!need_last(x.in, C, r)) return r;
    r.out = x.in;
    r.params = C;
    r.saved_bytes = 4 * (shape_numel(x.in) / C);  // rstd, f32 per row
    return r;
}

// self_attention, and transformer_block (attention and an MLP, each after a LayerNorm)
LayerShape attention_shape(const LayerShapeInput& x) {
    const bool block = x.layer.type == "transformer_block";
    const std::int64_t C = x.attr("dim"), H = x.attr("heads"), p_bias = x.attr("bias");
    const bool drop = layer_attr(x.layer, "dropout") > 0;
    const std::int64_t F = !block ? 0 : (x.attr("hidden") == 0 ? 4 * C : x.attr("hidden"));
    LayerShape r;
    r.label = !block ? fmt("self_attention(%lld, %lld heads)", C, H) : fmt("transformer_block(%lld, %lld heads, mlp %lld)", C, H, F);
    if (!need_seq(x.in, C, "attention works on token sequences", r)) return r;
    if (C % H != 0)
        return r.fail("dim " + std::to_string(C) + " is not divisible by " + std::to_string(H) +
                      " heads; pick a head count that divides it");
    const std::int64_t T = x.in[0];
    r.out = x.in;
    const std::int64_t attn_params = 3 * C * C + C * C + (p_bias ? 4 * C : 0);
    // qkv + att (f32) + lse (f32 per head and token) + mask (u8)
    const std::int64_t attn_saved = 4 * (3 * T * C + T * C) + 4 * H * T + (drop ? T * C : 0);
    r.params = attn_params;
    r.saved_bytes = attn_saved;
    if (block) {
        r.params += 2 * C * F + (p_bias ? F + C : 0) + 2 * C * (p_bias ? 2 : 1);
        // h1, x1, h2 + two LayerNorms' statistics + fc + mlp mask
        r.saved_bytes += 4 * 3 * T * C + 16 * T + 4 * T * F + (drop ? T * C : 0);
    }
    return r;
}

LayerShape llama_block_shape(const LayerShapeInput& x) {
    const std::int64_t C = x.attr("dim"), H = x.attr("heads"), KV = x.attr("kv_heads") == 0 ? H : x.attr("kv_heads");
    const std::int64_t D = x.attr("head_dim") == 0 ? (H > 0 ? C / H : 0) : x.attr("head_dim"), F = x.attr("hidden");
    LayerShape r;
    r.label = KV == H ? fmt("llama_block(%lld, %lld heads, mlp %lld)", C, H, F)
                      : fmt("llama_block(%lld, %lld heads / %lld kv, mlp ", C, H, KV) + std::to_string(F) + ")";
    if (!need_seq(x.in, C, "attention works on token sequences", r)) return r;
    if (x.attr("head_dim") == 0 && C % H != 0)
        return r.fail("dim " + std::to_string(C) + " is not divisible by " + std::to_string(H) +
                      " heads; pick a head count that divides it or set head_dim");
    if (H % KV != 0)
        return r.fail(std::to_string(H) + " query heads cannot share " + std::to_string(KV) +
                      " key/value heads; pick a kv_heads that divides heads");
    if (D % 2 != 0)
        return r.fail("head size " + std::to_string(D) + " is odd; rotary embeddings pair dimensions, so pick an even head_dim");
    const std::int64_t T = x.in[0], P = x.attr("max_positions");
    if (T > P)
        return r.fail("the sequence has " + std::to_string(T) + " tokens but the block is built for " + std::to_string(P) +
                      "; raise max_positions to " + std::to_string(T) + " or use a shorter sequence");
    r.out = x.in;
    const std::int64_t Q = H * D, K = KV * D;
    r.params = 2 * C + C * (Q + 2 * K) + (x.attr("qkv_bias") ? Q + 2 * K : 0) + Q * C + 3 * C * F;
    // n1, qkv, att, h, n2 (f32), gate and up, lse (f32 per head and token), two rstd rows
    r.saved_bytes = 4 * (T * C + T * (Q + 2 * K) + T * Q + 2 * T * C + 2 * T * F) + 4 * H * T + 8 * T;
    return r;
}

LayerShape mlp_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::int64_t C = x.attr("dim"), F = x.attr("hidden") == 0 ? 4 * C : x.attr("hidden");
    LayerShape r;
    r.label = fmt("mlp(%lld→%lld→%lld)", C, F, C);
    if (in.empty() || in.size() > 2 || in.back() != C)
        return r.fail("expects (N, T, " + std::to_string(C) + ") or (N, " + std::to_string(C) + "), got " + batch(in) +
                      (in.empty() ? std::string() : "; set dim to " + std::to_string(in.back())));
    r.out = in;
    r.params = 2 * C * F + (x.attr("bias") ? F + C : 0);
    const std::int64_t rows = shape_numel(in) / C;
    r.saved_bytes = 4 * rows * F + (layer_attr(x.layer, "dropout") > 0 ? rows * C : 0);
    return r;
}

LayerShape lm_head_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::int64_t C = x.attr("dim"), V = x.attr("vocab_size");
    const bool tied = x.attr("tied") != 0;
    LayerShape r;
    r.label = fmt(tied ? "lm_head(%lld→%lld, tied)" : "lm_head(%lld→%lld)", C, V);
    if (in.size() != 2 || in[1] != C)
        return r.fail("expects (N, T, " + std::to_string(C) + "), got " + batch(in) +
                      (in.size() == 2 ? "; set dim to " + std::to_string(in[1]) : std::string()));
    if (tied) {
        const auto& L = x.spec.layers;
        const LayerSpec* e = L.empty() || L.front().type != "token_embedding" ? nullptr : &L.front();
        if (!e || std::llround(layer_attr(*e, "vocab_size")) != V || std::llround(layer_attr(*e, "dim")) != C)
            return r.fail("is tied to the token embedding, which must be the first layer with vocab_size " +
                          std::to_string(V) + " and dim " + std::to_string(C) + "; match them or set tied to false");
    }
    r.out = {in[0], V};
    r.params = tied ? 0 : V * C;
    return r;
}

LayerShape patch_embedding_shape(const LayerShapeInput& x) {
    const Shape& in = x.in;
    const std::int64_t Ci = x.attr("in_channels"), C = x.attr("dim"), p = x.attr("patch_size");
    LayerShape r;
    r.label = fmt("patch_embedding(%lld→%lld, %lldpx)", Ci, C, p);
    if (in.size() != 3 || in[0] != Ci)
        return r.fail("expects images (N, " + std::to_string(Ci) + ", H, W), got " + batch(in) +
                      (in.size() == 3 ? "; set in_channels to " + std::to_string(in[0]) : std::string()));
    if (in[1] % p != 0 || in[2] % p != 0)
        return r.fail("patches of " + std::to_string(p) + " pixels do not tile " + std::to_string(in[1]) + "x" +
                      std::to_string(in[2]) + " images; pick a patch_size that divides both");
    r.out = {(in[1] / p) * (in[2] / p), C};
    r.params = C * Ci * p * p + C;
    return r;
}

LayerShape class_token_shape(const LayerShapeInput& x) {
    const std::int64_t C = x.attr("dim");
    LayerShape r;
    r.label = fmt("class_token(%lld)", C);
    if (!need_seq(x.in, C, "put it after a patch_embedding", r)) return r;
    r.out = {x.in[0] + 1, C};
    r.params = C;
    return r;
}

LayerShape class_token_pool_shape(const LayerShapeInput& x) {
    LayerShape r;
    r.label = "class_token_pool";
    if (x.in.size() != 2)
        return r.fail("expects a sequence (N, T, C), got " + batch(x.in) + "; put it after the transformer blocks");
    r.out = {x.in[1]};
    return r;
}

// ---- FLOPs per sample (multiply-adds count 2; causal attention: the scores below the diagonal) ----

double attr(const LayerSpec* l, const char* n) { return layer_attr(*l, n); }
double out_numel(const LayerReport& r) { return static_cast<double>(shape_numel(r.output_shape)); }
double seq_len(const LayerReport& r) { return r.input_shape.empty() ? 1.0 : static_cast<double>(r.input_shape[0]); }
double hidden_or_4c(const LayerSpec* l, double C) { return attr(l, "hidden") == 0 ? 4 * C : attr(l, "hidden"); }

// attention on (T, C): the q/k/v and output projections, and the core (scores and weighted sum)
void attention(double T, double C, bool causal, LayerCost& c) {
    const double proj = 2 * T * C * 3 * C + 2 * T * C * C;
    const double core = (causal ? 0.5 : 1.0) * 4 * T * T * C;  // q k^T and p v
    c.forward += proj + core;
    // the backward recomputes the scores and forms dP, dQ, dK, dV: 5 products against 2 in forward
    c.backward += 2 * proj + 2.5 * core;
    c.attention_core += core;
}
void mlp(double T, double C, double F, LayerCost& c) {
    const double mm = 4 * T * C * F;
    c.forward += mm + 10 * T * F;
    c.backward += 2 * mm + 20 * T * F;  // and the GELU recomputed from its input
}

void lookup_cost(const LayerReport& r, const LayerSpec*, LayerCost& c) { c.forward = c.backward = out_numel(r); }
void layernorm_cost(const LayerReport& r, const LayerSpec*, LayerCost& c) {
    c.forward = 8 * out_numel(r);
    c.backward = 16 * out_numel(r);
}
void rmsnorm_cost(const LayerReport& r, const LayerSpec*, LayerCost& c) {
    c.forward = 4 * out_numel(r);
    c.backward = 8 * out_numel(r);
}
void self_attention_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const double T = seq_len(r), C = attr(l, "dim");
    attention(T, C, attr(l, "causal") != 0, c);
    // kept output: the q/k/v projection and the core (none of the core with selective recompute, counted by
    // the planner as attention_core); the output projection is skipped
    c.recompute_kept = c.forward - 2 * T * C * C;
}
void mlp_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const double C = attr(l, "dim"), F = hidden_or_4c(l, C), rows = out_numel(r) / C;
    mlp(rows, C, F, c);
    c.recompute_kept = 2 * rows * C * F;  // the first projection only (its output is what backward reads)
}
void transformer_block_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const double T = seq_len(r), C = attr(l, "dim"), F = hidden_or_4c(l, C);
    attention(T, C, attr(l, "causal") != 0, c);
    mlp(T, C, F, c);
    c.forward += 2 * 8 * T * C + 2 * T * C;  // two LayerNorms, two residual additions
    c.backward += 2 * 16 * T * C + 2 * T * C;
    // kept output: everything up to the MLP's first projection; its GELU, output projection and the second
    // residual sum only feed the output
    c.recompute_kept = c.forward - (2 * T * F * C + 10 * T * F + T * C);
}
// RMSNorm, grouped-query attention with RoPE, RMSNorm, SwiGLU
void llama_block_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const double T = seq_len(r), C = attr(l, "dim"), H = attr(l, "heads"), KV = attr(l, "kv_heads") == 0 ? H : attr(l, "kv_heads");
    const double D = attr(l, "head_dim") == 0 ? C / H : attr(l, "head_dim"), F = attr(l, "hidden");
    const double Q = H * D, K = KV * D;
    const double proj = 2 * T * C * (Q + 2 * K) + 2 * T * Q * C;
    const double core = 0.5 * 4 * T * T * Q;  // causal: q k^T and p v
    const double mm = 2 * T * C * F * 3;      // gate, up, down
    c.forward = proj + core + mm + 8 * T * F + 2 * 4 * T * C + 2 * T * C + 6 * T * (Q + K);  // SwiGLU, norms, sums, rope
    c.backward = 2 * proj + 2.5 * core + 2 * mm + 16 * T * F + 2 * 8 * T * C + 2 * T * C + 6 * T * (Q + K);
    c.attention_core += core;
    // kept output: everything up to gate and up; the SwiGLU, down_proj and the second sum only feed y
    c.recompute_kept = c.forward - (2 * T * F * C + 8 * T * F + T * C);
}
void lm_head_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {  // tied or not: the V x C product
    c.forward = 2 * out_numel(r) * attr(l, "dim");
    c.backward = 2 * c.forward;
}
void patch_embedding_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const double p = attr(l, "patch_size");
    c.forward = 2 * out_numel(r) * attr(l, "in_channels") * p * p;
    c.backward = 2 * c.forward;
}

template <class L>
std::unique_ptr<Layer> make(const LayerSpec& s, const LayerOptions&) {
    return std::make_unique<L>(s);
}
template <class L>
std::unique_ptr<Layer> make_with_options(const LayerSpec& s, const LayerOptions& o) {
    return std::make_unique<L>(s, o);
}

}  // namespace transformer_entries

std::vector<LayerEntry> transformer_layer_entries() {
    using namespace transformer_entries;
    std::vector<LayerEntry> c;
    c.push_back({{"token_embedding", "Token embedding", "embedding",
                  HR_MSG("layer.token_embedding", "looks up a learned vector for each token id: (N, T) -> (N, T, dim); must come first"),
                  {{"vocab_size", AK::integer, 256, 2, 1e7, true, HR_MSG("layer.token_embedding.vocab_size", "vocabulary size V (token ids 0 .. V-1)")},
                   {"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.token_embedding.dim", "embedding width")}}},
                 token_embedding_shape, lookup_cost, make<TokenEmbedding>});
    c.push_back({{"position_embedding", "Position embedding", "embedding",
                  HR_MSG("layer.position_embedding", "adds a learned vector for each position of the sequence"),
                  {{"max_positions", AK::integer, 256, 1, 1e6, true, HR_MSG("layer.position_embedding.max_positions", "longest sequence it has positions for")},
                   {"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.position_embedding.dim", "embedding width")}}},
                 position_embedding_shape, lookup_cost, make<PositionEmbedding>});
    c.push_back({{"layernorm", "LayerNorm", "normalisation", HR_MSG("layer.layernorm", "normalises each token over its features"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.layernorm.dim", "features (the last dimension)")},
                   {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.layernorm.eps", "added to the variance")},
                   {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.layernorm.bias", "learn an additive bias")}}},
                 layernorm_shape, layernorm_cost, make<LayerNormLayer>});
    c.push_back({{"self_attention", "Self-attention", "transformer",
                  HR_MSG("layer.self_attention", "multi-head self-attention: fused q, k, v projection, scaled dot product, output projection"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.self_attention.dim", "model width (a multiple of heads)")},
                   {"heads", AK::integer, 4, 1, 4096, true, HR_MSG("layer.self_attention.heads", "attention heads")},
                   {"causal", AK::boolean, 1, 0, 1, false, HR_MSG("layer.self_attention.causal", "each token sees only earlier ones (language models)")},
                   {"dropout", AK::real, 0, 0, 0.99, false, HR_MSG("layer.self_attention.dropout", "drop probability of attention weights and output")},
                   {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.self_attention.bias", "learn biases in the projections")}}},
                 attention_shape, self_attention_cost, make_with_options<SelfAttention>, true});
    c.push_back({{"mlp", "MLP", "transformer", HR_MSG("layer.mlp", "linear, GELU, linear: the feed-forward half of a transformer block"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.mlp.dim", "model width")},
                   {"hidden", AK::integer, 0, 0, 1e8, false, HR_MSG("layer.mlp.hidden", "hidden width (0: 4 x dim)")},
                   {"dropout", AK::real, 0, 0, 0.99, false, HR_MSG("layer.mlp.dropout", "drop probability of the output")},
                   {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.mlp.bias", "learn biases")},
                   {"gelu_tanh", AK::boolean, 1, 0, 1, false, HR_MSG("layer.mlp.gelu_tanh", "GELU in its tanh form (GPT-2); off: exact (ViT)")}}},
                 mlp_shape, mlp_cost, make_with_options<Mlp>, true});
    c.push_back({{"transformer_block", "Transformer block", "transformer",
                  HR_MSG("layer.transformer_block", "x + attention(LayerNorm(x)), then + MLP(LayerNorm(.)): one GPT or ViT block"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.transformer_block.dim", "model width (a multiple of heads)")},
                   {"heads", AK::integer, 4, 1, 4096, true, HR_MSG("layer.transformer_block.heads", "attention heads")},
                   {"hidden", AK::integer, 0, 0, 1e8, false, HR_MSG("layer.transformer_block.hidden", "MLP hidden width (0: 4 x dim)")},
                   {"causal", AK::boolean, 1, 0, 1, false, HR_MSG("layer.transformer_block.causal", "each token sees only earlier ones (GPT); off for ViT")},
                   {"dropout", AK::real, 0, 0, 0.99, false, HR_MSG("layer.transformer_block.dropout", "drop probability (attention weights and both outputs)")},
                   {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.transformer_block.bias", "learn biases in projections and LayerNorms")},
                   {"gelu_tanh", AK::boolean, 1, 0, 1, false, HR_MSG("layer.transformer_block.gelu_tanh", "GELU in its tanh form (GPT-2); off: exact (ViT)")},
                   {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.transformer_block.eps", "LayerNorm epsilon")}}},
                 attention_shape, transformer_block_cost, make_with_options<TransformerBlock>, true});
    c.push_back({{"lm_head", "Language-model head", "linear",
                  HR_MSG("layer.lm_head", "scores every vocabulary token at each position: (N, T, dim) -> (N, T, V)"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.lm_head.dim", "model width")},
                   {"vocab_size", AK::integer, 256, 2, 1e7, true, HR_MSG("layer.lm_head.vocab_size", "vocabulary size V")},
                   {"tied", AK::boolean, 1, 0, 1, false, HR_MSG("layer.lm_head.tied", "share the token embedding's weight (no parameters of its own)")}}},
                 lm_head_shape, lm_head_cost, make<LmHead>});
    // the LLaMA family (Llama, Mistral, Qwen2; docs/transformers.md)
    c.push_back({{"rmsnorm", "RMSNorm", "normalisation", HR_MSG("layer.rmsnorm", "scales each token by the reciprocal of its root mean square (LLaMA's norm)"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.rmsnorm.dim", "features (the last dimension)")},
                   {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.rmsnorm.eps", "added to the mean square")}}},
                 rmsnorm_shape, rmsnorm_cost, make<RmsNormLayer>});
    c.push_back({{"llama_block", "LLaMA block", "transformer",
                  HR_MSG("layer.llama_block", "x + attention(RMSNorm(x)) with rotary positions and grouped-query heads, then + SwiGLU MLP(RMSNorm(.)): one Llama, Mistral or Qwen2 decoder layer"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.llama_block.dim", "model width")},
                   {"heads", AK::integer, 4, 1, 4096, true, HR_MSG("layer.llama_block.heads", "query heads")},
                   {"kv_heads", AK::integer, 0, 0, 4096, false, HR_MSG("layer.llama_block.kv_heads", "key/value heads, dividing heads (0: as many as heads)")},
                   {"head_dim", AK::integer, 0, 0, 65536, false, HR_MSG("layer.llama_block.head_dim", "head size, even (0: dim / heads)")},
                   {"hidden", AK::integer, 176, 1, 1e8, true, HR_MSG("layer.llama_block.hidden", "SwiGLU MLP hidden width")},
                   {"norm_eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.llama_block.norm_eps", "RMSNorm epsilon")},
                   {"rope_theta", AK::real, 10000, 1.0001, 1e12, false, HR_MSG("layer.llama_block.rope_theta", "rotary base: frequencies theta^(-2i/D)")},
                   {"rope_factor", AK::real, 0, 0, 1e6, false, HR_MSG("layer.llama_block.rope_factor", "Llama 3 frequency scaling factor (0: none; \"rope_scaling\" in JSON)")},
                   {"rope_low_freq_factor", AK::real, 1, 1e-6, 1e6, false, HR_MSG("layer.llama_block.rope_low_freq_factor", "Llama 3 scaling: low_freq_factor")},
                   {"rope_high_freq_factor", AK::real, 4, 1e-6, 1e6, false, HR_MSG("layer.llama_block.rope_high_freq_factor", "Llama 3 scaling: high_freq_factor")},
                   {"rope_original_max_positions", AK::integer, 8192, 1, 1e9, false, HR_MSG("layer.llama_block.rope_original_max_positions", "Llama 3 scaling: original_max_position_embeddings")},
                   {"qkv_bias", AK::boolean, 0, 0, 1, false, HR_MSG("layer.llama_block.qkv_bias", "learn biases in the q, k and v projections (Qwen2)")},
                   {"max_positions", AK::integer, 4096, 1, 1e8, false, HR_MSG("layer.llama_block.max_positions", "longest sequence it is built for")}}},
                 llama_block_shape, llama_block_cost, make_with_options<LlamaBlock>, true});
    c.push_back({{"patch_embedding", "Patch embedding", "embedding",
                  HR_MSG("layer.patch_embedding", "cuts images into square patches and projects each to a token: (N, C, H, W) -> (N, P, dim)"),
                  {{"in_channels", AK::integer, 1, 1, 1e6, true, HR_MSG("layer.patch_embedding.in_channels", "image channels C")},
                   {"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.patch_embedding.dim", "token width")},
                   {"patch_size", AK::integer, 4, 1, 1024, true, HR_MSG("layer.patch_embedding.patch_size", "patch side in pixels (divides H and W)")}}},
                 patch_embedding_shape, patch_embedding_cost, make<PatchEmbedding>});
    c.push_back({{"class_token", "Class token", "embedding", HR_MSG("layer.class_token", "puts a learned token in front of the sequence"),
                  {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.class_token.dim", "token width")}}},
                 class_token_shape, lookup_cost, make<ClassToken>});
    c.push_back({{"class_token_pool", "Class-token pooling", "structure",
                  HR_MSG("layer.class_token_pool", "takes the first token's features for a classifier: (N, T, C) -> (N, C)"), {}},
                 class_token_pool_shape, lookup_cost, make<ClassTokenPool>});
    return c;
}

}  // namespace hr
