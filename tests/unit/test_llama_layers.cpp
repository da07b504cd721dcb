// The LLaMA family's layers (nn/transformer_layers.h: rmsnorm, llama_block) and ops (backend.h: rmsnorm,
// rope_apply, swiglu, grouped-query attention): finite-difference gradient checks in f64 (tolerances as
// torch.autograd.gradcheck: eps 1e-6, atol 1e-5, rtol 1e-3); grouped-query attention over the planes
// layout against a naive T x T reference written here; one block's forward and backward against an
// independent PyTorch 1.13 reference written in plain torch ops as transformers' modeling_llama.py does it
// (GQA, Llama 3's rope scaling, q/k/v biases and a head_dim apart from dim / heads each exercised); a whole
// model through the graph with Hugging Face's state_dict names.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "gradcheck.h"
#include "nn/layer.h"
#include "nn/lora_targets.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"

using namespace hr;
using hrtest::compare;
using hrtest::Mismatch;
using hrtest::random_vec;

namespace {

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

// One LlamaDecoderLayer in plain torch (f64 throughout): reads x, the parameters in declaration order and
// dy from argv[1]; prints y, dx and every parameter's gradient as f64 hex. With argv[16..18] (r, alpha / r,
// p): peft's LoRA on all seven projections, linear(x) + s * lora_B(lora_A(dropout(x))), each adapter's
// dropout given as its keep mask (read after dy) times 1 / (1 - p), as nn.Dropout scales.
const char* const kTorchLlamaBlock = R"(
import math, sys, torch
a = sys.argv
B, T, C, H, KV, D, F = map(int, a[2:9])
eps, theta, factor, low, high, orig = map(float, a[9:15])
bias = a[15] == '1'
buf = torch.frombuffer(bytearray(open(a[1], 'rb').read()), dtype=torch.float64)
off = 0
def take(*shape, grad=True):
    global off
    n = 1
    for s in shape: n *= s
    t = buf[off:off + n].reshape(shape).clone()
    off += n
    return t.requires_grad_(grad)
x = take(B, T, C)
ln1 = take(C)
wq = take(H * D, C); bq = take(H * D) if bias else None
wk = take(KV * D, C); bk = take(KV * D) if bias else None
wv = take(KV * D, C); bv = take(KV * D) if bias else None
wo = take(C, H * D)
ln2 = take(C)
wg = take(F, C); wu = take(F, C); wd = take(C, F)
lora = len(a) > 16
dims = [(H * D, C), (KV * D, C), (KV * D, C), (C, H * D), (F, C), (F, C), (C, F)]
if lora:
    r, sc, p = int(a[16]), float(a[17]), float(a[18])
    ad = [(take(r, i), take(o, r)) for (o, i) in dims]
dy = take(B, T, C, grad=False)
masks = [take(B, T, i, grad=False) for (o, i) in dims] if lora else None
params = [p for p in [ln1, wq, bq, wk, bk, wv, bv, wo, ln2, wg, wu, wd] if p is not None]
if lora:
    params += [t for pair in ad for t in pair]
def lin(k, h, w, b=None):
    y = torch.nn.functional.linear(h, w, b)
    if lora:
        A, Bm = ad[k]
        y = y + sc * torch.nn.functional.linear(torch.nn.functional.linear(h * masks[k] / (1 - p), A), Bm)
    return y
def rms(h, w):  # LlamaRMSNorm
    var = h.pow(2).mean(-1, keepdim=True)
    return w * (h * torch.rsqrt(var + eps))
# LlamaRotaryEmbedding, with _compute_llama3_parameters when factor > 0
inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
if factor > 0:
    low_wl, high_wl = orig / low, orig / high
    wavelen = 2 * math.pi / inv_freq
    inv_l = torch.where(wavelen > low_wl, inv_freq / factor, inv_freq)
    smooth = (orig / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    is_med = ~(wavelen < high_wl) * ~(wavelen > low_wl)
    inv_freq = torch.where(is_med, smoothed, inv_l)
pos = torch.arange(T).float()
freqs = (inv_freq[:, None].float() @ pos[None, :]).transpose(0, 1)
emb = torch.cat((freqs, freqs), dim=-1)
cos, sin = emb.cos().double(), emb.sin().double()
def rotate_half(t):
    return torch.cat((-t[..., D // 2:], t[..., :D // 2]), dim=-1)
n1 = rms(x, ln1)
q = lin(0, n1, wq, bq).view(B, T, H, D).transpose(1, 2)
k = lin(1, n1, wk, bk).view(B, T, KV, D).transpose(1, 2)
v = lin(2, n1, wv, bv).view(B, T, KV, D).transpose(1, 2)
q = q * cos + rotate_half(q) * sin
k = k * cos + rotate_half(k) * sin
k = k[:, :, None].expand(B, KV, H // KV, T, D).reshape(B, H, T, D)  # repeat_kv
v = v[:, :, None].expand(B, KV, H // KV, T, D).reshape(B, H, T, D)
s = q @ k.transpose(2, 3) / math.sqrt(D)
s = s + torch.full((T, T), float('-inf'), dtype=torch.float64).triu(1)
o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, H * D)
h = x + lin(3, o, wo)
n2 = rms(h, ln2)
m = torch.nn.functional.silu(lin(4, n2, wg)) * lin(5, n2, wu)
y = h + lin(6, m, wd)
y.backward(dy)
out = [y.detach(), x.grad] + [p.grad for p in params]
sys.stdout.write(torch.cat([t.reshape(-1) for t in out]).numpy().tobytes().hex())
)";

const char* const kLlamaSpecJson = R"({"input": [8], "num_classes": 11, "layers": [
            {"type": "token_embedding", "vocab_size": 11, "dim": 8},
            {"type": "llama_block", "dim": 8, "heads": 2, "kv_heads": 1, "hidden": 12, "rope_theta": 500000.0,
             "rope_scaling": {"type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 8192}, "max_positions": 16},
            {"type": "rmsnorm", "dim": 8, "eps": 1e-5},
            {"type": "lm_head", "dim": 8, "vocab_size": 11, "tied": false}]})";

struct BlockCase {
    std::int64_t C = 16, H = 4, KV = 2, D = 0, F = 24;
    double theta = 10000, factor = 0;
    bool bias = false;
    int lora = 0;               // LoRA of this rank on all seven projections, alpha 3
    double lora_dropout = 0;    // and its dropout
    LayerSpec spec() const {
        LayerSpec s = L("llama_block", {{"dim", C}, {"heads", H}, {"kv_heads", KV}, {"head_dim", D}, {"hidden", F},
                                        {"rope_theta", theta}, {"qkv_bias", bias}, {"max_positions", 64}});
        if (lora > 0) {
            s.attrs["lora_rank"] = lora;
            s.attrs["lora_alpha"] = 3.0;
            s.attrs["lora_targets"] = 127;
            if (lora_dropout > 0) s.attrs["lora_dropout"] = lora_dropout;
        }
        if (factor > 0) {
            s.attrs["rope_factor"] = factor;
            s.attrs["rope_low_freq_factor"] = 1.0;
            s.attrs["rope_high_freq_factor"] = 4.0;
            s.attrs["rope_original_max_positions"] = 8192;
        }
        return s;
    }
};

}  // namespace

class LlamaLayersTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> be_ = make_cpu_backend(2, std::make_shared<MemoryLedger>());

    Tensor t(const Shape& s, DType dt = DType::f64) { return Tensor::empty(be_->allocator(), s, dt, MemCategory::other); }
    static void put(Tensor& x, const std::vector<double>& v) { std::memcpy(x.data<double>(), v.data(), v.size() * 8); }
    static std::vector<double> get(const Tensor& x) {
        return std::vector<double>(x.data<double>(), x.data<double>() + x.numel());
    }

    struct Io {
        std::unique_ptr<Layer> layer;
        LayerIO io;
    };
    Io make_io(const LayerSpec& spec, const Shape& in, std::int64_t batch, LayerOptions options = {},
               bool frozen_base = false) {
        Io r;
        r.layer = make_layer(spec, options);
        const Shape out = r.layer->output_shape(in);
        LayerIO& io = r.io;
        io.backend = be_.get();
        io.x = t(with_batch(batch, in));
        io.y = t(with_batch(batch, out));
        io.dy = t(with_batch(batch, out));
        io.dx = t(with_batch(batch, in));
        for (auto& p : r.layer->params(in)) {
            io.params.push_back(t(p.shape));
            io.grads.push_back(frozen_base && !p.lora_adapter() ? Tensor() : t(p.shape));
        }
        for (auto& s : r.layer->saved(batch, in)) io.saved.push_back(t(s.shape, s.compute_dtype ? DType::f64 : s.dtype));
        const std::size_t ws = r.layer->workspace_bytes(*be_, batch, in, DType::f64);
        if (ws) io.workspace = t({static_cast<std::int64_t>(ws)}, DType::u8);
        return r;
    }

    void check_layer(const LayerSpec& spec, const Shape& in, std::int64_t batch = 2, LayerOptions options = {},
                     bool frozen_base = false) {
        std::mt19937_64 g(42);
        Io r = make_io(spec, in, batch, options, frozen_base);
        LayerIO& io = r.io;
        put(io.x, random_vec(static_cast<std::size_t>(io.x.numel()), g));
        for (auto& p : io.params) put(p, random_vec(static_cast<std::size_t>(p.numel()), g, -0.5, 0.5));
        const auto w = random_vec(static_cast<std::size_t>(io.y.numel()), g);  // L = sum(y * w)
        put(io.dy, w);
        auto loss = [&]() {
            r.layer->forward(io);
            double s = 0;
            for (std::int64_t i = 0; i < io.y.numel(); ++i) s += io.y.data<double>()[i] * w[i];
            return s;
        };
        loss();
        for (auto& gr : io.grads)
            if (gr.defined()) be_->fill(gr, 0.0);
        r.layer->backward(io);
        std::vector<Mismatch> bad;
        compare("dx", io.x.data<double>(), io.x.numel(), get(io.dx), loss, bad);
        for (std::size_t k = 0; k < io.params.size(); ++k)
            if (io.grads[k].defined())
                compare("param" + std::to_string(k), io.params[k].data<double>(), io.params[k].numel(), get(io.grads[k]),
                        loss, bad);
        for (auto& m : bad) qWarning("%s %s: analytic %.10g numeric %.10g", spec.type.c_str(), m.where.c_str(), m.analytic, m.numeric);
        QVERIFY2(bad.empty(), "gradient mismatch");
    }

    // The block against kTorchLlamaBlock; returns the largest error relative to each tensor's largest value.
    void against_torch(const BlockCase& c) {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) QSKIP("no /usr/bin/python3 for the reference");
        const std::int64_t B = 2, T = 9;
        const std::int64_t D = c.D ? c.D : c.C / c.H;
        std::mt19937_64 g(3);
        Io r = make_io(c.spec(), {T, c.C}, B);
        LayerIO& io = r.io;
        std::vector<double> all;
        auto fill = [&](Tensor& x, double lo, double hi) {
            const auto v = random_vec(static_cast<std::size_t>(x.numel()), g, lo, hi);
            put(x, v);
            all.insert(all.end(), v.begin(), v.end());
        };
        fill(io.x, -1, 1);
        for (auto& p : io.params) fill(p, -0.3, 0.3);
        fill(io.dy, -1, 1);
        // LoRA dropout: the keep masks Headroom draws, written here from the generator backend.h exposes
        // (projection k's stream, element (run-wide row, j) at counter row * in + j), handed to the reference
        io.seed = 7;
        io.first_sample = 3;
        std::int64_t kept = 0, drawn = 0;
        if (c.lora > 0) {
            const std::int64_t ins[7] = {c.C, c.C, c.C, c.H * D, c.C, c.C, c.F};
            for (int k = 0; k < 7; ++k) {
                const std::uint64_t seed = 7ull ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(16 + k + 1));
                for (std::int64_t row = 0; row < B * T; ++row)
                    for (std::int64_t j = 0; j < ins[k]; ++j) {
                        const std::uint64_t counter = static_cast<std::uint64_t>((3 * T + row) * ins[k] + j);
                        const bool keep = c.lora_dropout == 0 || counter_uniform(seed, counter) >= float(c.lora_dropout);
                        all.push_back(keep ? 1.0 : 0.0);
                        kept += keep;
                        ++drawn;
                    }
            }
        }
        QTemporaryDir dir;
        const QString input = dir.filePath(QStringLiteral("in.f64"));
        {
            QFile f(input);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(reinterpret_cast<const char*>(all.data()), static_cast<qint64>(all.size() * 8));
        }
        QStringList args{QStringLiteral("-c"), QString::fromUtf8(kTorchLlamaBlock), input};
        for (std::int64_t v : {B, T, c.C, c.H, c.KV, D, c.F}) args << QString::number(v);
        for (double v : {1e-5, c.theta, c.factor, 1.0, 4.0, 8192.0}) args << QString::number(v, 'g', 17);
        args << (c.bias ? QStringLiteral("1") : QStringLiteral("0"));
        if (c.lora > 0) {
            args << QString::number(c.lora) << QString::number(3.0 / c.lora, 'g', 17)
                 << QString::number(c.lora_dropout, 'g', 17);
            if (c.lora_dropout > 0)  // (the masks drop something, and not everything)
                QVERIFY(kept > drawn / 2 && kept < drawn);
        }
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"), args);
        QVERIFY(py.waitForFinished(120000));
        const QByteArray err = py.readAllStandardError();
        if (py.exitCode() != 0 && err.contains("No module named 'torch'")) QSKIP("no PyTorch (python3-torch) for the reference");
        QVERIFY2(py.exitCode() == 0, err.constData());
        const QByteArray ref = QByteArray::fromHex(py.readAllStandardOutput());
        r.layer->forward(io);
        for (auto& gr : io.grads) be_->fill(gr, 0.0);
        r.layer->backward(io);
        std::vector<const Tensor*> got{&io.y, &io.dx};
        for (auto& gr : io.grads) got.push_back(&gr);
        std::size_t total = 0;
        for (auto* x : got) total += static_cast<std::size_t>(x->numel());
        QCOMPARE(static_cast<std::size_t>(ref.size()), total * 8);
        const double* want = reinterpret_cast<const double*>(ref.constData());
        // f64 on both sides; the rotary angles are f32 on both (transformers' way), their cos and sin rounded
        // to f32: differences of a few f32 ulps of an angle, so 1e-6 of each tensor's largest value
        for (std::size_t k = 0; k < got.size(); ++k) {
            const std::vector<double> v = get(*got[k]);
            double scale = 0, e = 0;
            for (std::size_t i = 0; i < v.size(); ++i) scale = std::max(scale, std::abs(want[i]));
            for (std::size_t i = 0; i < v.size(); ++i) e = std::max(e, std::abs(v[i] - want[i]));
            QVERIFY2(e <= 1e-6 * std::max(scale, 1e-3),
                     qPrintable(QStringLiteral("tensor %1 (0: y, 1: dx, then parameters): error %2 of %3").arg(k).arg(e).arg(scale)));
            want += v.size();
        }
    }

private slots:
    void rmsnormGradcheck() { check_layer(L("rmsnorm", {{"dim", 7}, {"eps", 1e-3}}), {5, 7}); }
    void blockGradcheckMultiHead() { check_layer(BlockCase{8, 2, 2, 0, 12}.spec(), {5, 8}); }
    void blockGradcheckGroupedQuery() { check_layer(BlockCase{16, 4, 2, 0, 20}.spec(), {6, 16}); }
    void blockGradcheckMultiQueryBiasScaledRope() {
        BlockCase c{12, 4, 1, 8, 10, 500000, 32, true};
        check_layer(c.spec(), {5, 12});
    }
    void blockGradcheckSelectiveRecompute() {
        LayerOptions o;
        o.recompute_attention = true;
        check_layer(BlockCase{16, 4, 2, 0, 20}.spec(), {5, 16}, 2, o);
    }
    void blockGradcheckLoraEveryTarget() {
        LayerSpec s = BlockCase{8, 2, 1, 0, 12}.spec();
        s.attrs["lora_rank"] = 2;
        s.attrs["lora_alpha"] = 4;
        s.attrs["lora_targets"] = 127;
        check_layer(s, {4, 8}, 2, {}, true);
    }
    void blockGradcheckLoraDropout() {
        LayerSpec s = BlockCase{8, 2, 1, 0, 12}.spec();
        s.attrs["lora_rank"] = 2;
        s.attrs["lora_alpha"] = 4;
        s.attrs["lora_targets"] = 127;
        s.attrs["lora_dropout"] = 0.3;
        check_layer(s, {4, 8}, 2, {}, true);
        LayerOptions o;
        o.recompute_attention = true;
        s.attrs["lora_targets"] = 0b1010101;  // q, v, gate, down
        check_layer(s, {5, 8}, 2, o, false);
    }
    void blockLoraDefaultTargetsArePeftsForLlama() {
        LayerSpec s = BlockCase{8, 2, 1, 0, 12}.spec();
        s.attrs["lora_rank"] = 2;
        auto layer = make_layer(s);
        QStringList adapters;
        for (const ParamDecl& p : layer->params({4, 8}))
            if (p.lora_adapter()) adapters << QString::fromStdString(p.name);
        QCOMPARE(adapters, QStringList({"self_attn.q_proj.lora_A", "self_attn.q_proj.lora_B", "self_attn.v_proj.lora_A",
                                        "self_attn.v_proj.lora_B"}));
    }

    // Grouped-query attention over three planes equals the naive T x T computation with K and V repeated.
    void groupedQueryAttentionMatchesNaive() {
        const std::int64_t B = 2, T = 70, H = 4, KV = 2, D = 3;  // T past one 64-row tile
        std::mt19937_64 g(5);
        Tensor qkv = t({B, T, (H + 2 * KV) * D}), out = t({B, T, H * D}), lse = t({B, H, T}, DType::f32);
        const auto v = random_vec(static_cast<std::size_t>(qkv.numel()), g);
        put(qkv, v);
        AttentionParams p;
        p.heads = int(H);
        p.kv_heads = int(KV);
        p.planes = true;
        Tensor ws = t({static_cast<std::int64_t>(be_->attention_workspace_bytes(B, T, H * D, int(H), DType::f64))}, DType::u8);
        be_->attention_forward(qkv, out, lse, p, ws);
        const double* q = v.data();
        const double* k = q + B * T * H * D;
        const double* vv = k + B * T * KV * D;
        double e = 0, el = 0;
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < H; ++h)
                for (std::int64_t i = 0; i < T; ++i) {
                    const std::int64_t kh = h / (H / KV);
                    std::vector<double> s(static_cast<std::size_t>(i + 1));
                    double mx = -INFINITY;
                    for (std::int64_t j = 0; j <= i; ++j) {
                        double d = 0;
                        for (std::int64_t c = 0; c < D; ++c) d += q[(b * T + i) * H * D + h * D + c] * k[(b * T + j) * KV * D + kh * D + c];
                        s[j] = d / std::sqrt(double(D));
                        mx = std::max(mx, s[j]);
                    }
                    double sum = 0;
                    for (double x : s) sum += std::exp(x - mx);
                    el = std::max(el, std::abs(double(lse.data<float>()[(b * H + h) * T + i]) - (mx + std::log(sum))));
                    for (std::int64_t c = 0; c < D; ++c) {
                        double o = 0;
                        for (std::int64_t j = 0; j <= i; ++j) o += std::exp(s[j] - mx) / sum * vv[(b * T + j) * KV * D + kh * D + c];
                        e = std::max(e, std::abs(out.data<double>()[(b * T + i) * H * D + h * D + c] - o));
                    }
                }
        QVERIFY2(e < 1e-12, qPrintable(QString::number(e)));
        QVERIFY2(el < 1e-5, qPrintable(QString::number(el)));
    }

    void blockMatchesTorchGroupedQuery() { against_torch({16, 4, 2, 0, 24}); }
    void blockMatchesTorchLlama3RopeScaling() { against_torch({16, 2, 1, 8, 20, 500000, 32}); }
    void blockMatchesTorchQkvBiasHeadDim() { against_torch({12, 2, 2, 8, 18, 1000000, 0, true}); }
    // peft's LoRA with lora_dropout on all seven projections, the reference given the masks Headroom draws;
    // then p = 0 (no masks) and a head_dim apart from dim / heads with q/k/v biases
    void blockLoraDropoutMatchesTorch() {
        against_torch({16, 4, 2, 0, 24, 10000, 0, false, 2, 0.3});
        against_torch({12, 2, 2, 8, 18, 1000000, 0, true, 3, 0.0});
        against_torch({12, 2, 2, 8, 18, 1000000, 0, true, 3, 0.5});
    }

    void ropeFrequenciesFollowLlama3() {
        RopeParams p;
        p.theta = 500000;
        p.factor = 32;
        const std::vector<float> f = rope_frequencies(p, 8);  // wavelengths 6.3, 167, 4443, 118000 tokens
        const double pi = 3.14159265358979323846;
        const double f2 = 1.0 / std::pow(500000.0, 0.5), s = (8192.0 / (2 * pi / f2) - 1.0) / 3.0;
        QCOMPARE(f[0], 1.0f);                                                         // high frequency: kept
        QCOMPARE(f[1], static_cast<float>(1.0 / std::pow(500000.0, 0.25)));            // kept (wavelength < 2048)
        QVERIFY(std::abs(f[2] - ((1 - s) * f2 / 32 + s * f2)) < 1e-9);                 // blended
        QVERIFY(std::abs(f[3] - 1.0 / std::pow(500000.0, 0.75) / 32) < 1e-12);         // low frequency: / 32
    }

    // A whole model: gradients through the graph, and Hugging Face's names.
    void modelGradcheckAndNames() {
        ModelSpec s;
        s.name = "llama-gradcheck";
        s.input_shape = {5};
        s.num_classes = 11;
        s.layers = {L("token_embedding", {{"vocab_size", 11}, {"dim", 8}}),
                    BlockCase{8, 2, 1, 0, 12}.spec(),
                    BlockCase{8, 2, 2, 0, 10, 10000, 0, true}.spec(),
                    L("rmsnorm", {{"dim", 8}}),
                    L("lm_head", {{"dim", 8}, {"vocab_size", 11}, {"tied", false}})};
        QVERIFY(is_llama_layout(s));
        ModelOptions o;
        o.batch = 2;
        o.dtype = DType::f64;
        o.seed = 5;
        Model m(s, *be_, o);
        QCOMPARE(m.param_count(), analyze_model_spec(s).total_params);
        std::vector<std::string> names;
        for (const NamedTensor& n : m.state_dict()) names.push_back(n.name);
        const std::vector<std::string> want_some = {"model.embed_tokens.weight", "model.layers.0.input_layernorm.weight",
                                                    "model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.bias",
                                                    "model.layers.1.mlp.down_proj.weight", "model.norm.weight", "lm_head.weight"};
        for (const auto& w : want_some) QVERIFY2(std::find(names.begin(), names.end(), w) != names.end(), w.c_str());
        const std::int64_t N = 2, rows = N * 5;
        Tensor x = t({N, 5}, DType::i64), targets = t({rows}, DType::i64);
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data<std::int64_t>()[i] = (i * 5 + 3) % 11;
        for (std::int64_t i = 0; i < rows; ++i) targets.data<std::int64_t>()[i] = (i * 3 + 1) % 11;
        Tensor scratch = t({rows, 11});
        auto loss = [&] {
            Tensor logits = m.forward(x, true, 4);
            be_->copy(logits, scratch);
            return be_->cross_entropy_inplace(scratch, targets, false, 1.0f).loss;
        };
        m.zero_grad();
        Tensor logits = m.forward(x, true, 4);
        Tensor lv = logits.reshape({rows, 11});
        be_->cross_entropy_inplace(lv, targets, true, 1.0f);
        m.backward(logits);
        std::vector<Mismatch> bad;
        compare("params", m.parameters().data<double>(), m.flat_param_numel(), get(m.gradients()), loss, bad, 200);
        for (auto& b : bad) qWarning("%s: analytic %.10g numeric %.10g", b.where.c_str(), b.analytic, b.numeric);
        QVERIFY(bad.empty());
    }

    void specRejectsBadHeadsWithOneMessage() {
        ModelSpec s;
        s.input_shape = {4};
        s.num_classes = 11;
        s.layers = {L("token_embedding", {{"vocab_size", 11}, {"dim", 12}}), BlockCase{12, 4, 3, 0, 8}.spec(),
                    L("rmsnorm", {{"dim", 12}}), L("lm_head", {{"dim", 12}, {"vocab_size", 11}, {"tied", false}})};
        const SpecReport r = analyze_model_spec(s);
        QVERIFY(!r.ok);
        QVERIFY2(QString::fromStdString(r.error).contains("kv_heads that divides heads"), r.error.c_str());
    }

    // --lora-targets by peft's names: the mask, the text, refusals; and the model puts adapters exactly there
    void loraTargetsByPeftNames() {
        QCOMPARE(parse_lora_targets("q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"), 127);
        QCOMPARE(parse_lora_targets("v_proj, q_proj"), 0b101);
        QCOMPARE(lora_targets_text(0), std::string("q_proj,v_proj"));
        QCOMPARE(lora_targets_text(0b101000), std::string("o_proj,up_proj"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_lora_targets("q_proj,c_attn"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_lora_targets("q_proj,q_proj"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_lora_targets(""));
        ModelSpec s = preset_model("llama-tiny");
        apply_sequence_length(s, 8);
        ModelOptions o;
        o.batch = 1;
        o.lora_rank = 4;
        o.lora_targets = parse_lora_targets("o_proj,down_proj");
        Model m(s, *be_, o);
        std::vector<std::string> adapters;
        for (const NamedTensor& n : m.state_dict())
            if (is_lora_adapter(n.name)) adapters.push_back(n.name);
        const std::vector<std::string> want = {
            "model.layers.0.self_attn.o_proj.lora_A", "model.layers.0.self_attn.o_proj.lora_B",
            "model.layers.0.mlp.down_proj.lora_A",    "model.layers.0.mlp.down_proj.lora_B",
            "model.layers.1.self_attn.o_proj.lora_A", "model.layers.1.self_attn.o_proj.lora_B",
            "model.layers.1.mlp.down_proj.lora_A",    "model.layers.1.mlp.down_proj.lora_B"};
        QCOMPARE(adapters, want);
        // (rank 4: o_proj A (4, 128) + B (128, 4), down_proj A (4, 352) + B (128, 4), two blocks)
        QCOMPARE(m.lora_param_count(), std::int64_t(2 * (4 * 128 + 128 * 4 + 4 * 352 + 128 * 4)));
    }

    void ropeScalingRoundTripsThroughJson() {
        const nlohmann::json j = nlohmann::json::parse(kLlamaSpecJson);
        const ModelSpec s = model_spec_from_json(j);
        QCOMPARE(layer_attr(s.layers[1], "rope_factor"), 32.0);
        const nlohmann::json back = model_spec_to_json(s);
        QCOMPARE(back["layers"][1]["rope_scaling"]["factor"].get<double>(), 32.0);
        QVERIFY(!back["layers"][1].contains("rope_factor"));
        QVERIFY(model_spec_from_json(back) == s);
        nlohmann::json wrong = j;
        wrong["layers"][1]["rope_scaling"]["type"] = "yarn";
        QVERIFY_THROWS_EXCEPTION(InputError, model_spec_from_json(wrong));
    }
};

QTEST_GUILESS_MAIN(LlamaLayersTest)
#include "test_llama_layers.moc"
