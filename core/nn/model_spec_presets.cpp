// The preset models (image classifiers and language models) and their descriptions.
#include "nn/model_spec.h"

#include <cstdint>

#include "base/error.h"
#include "nn/transformer_spec.h"

namespace hr {

using json = nlohmann::json;
using AK = AttrInfo::Kind;

// ---------------------------------------------------------------------------------------------------
// presets

namespace {
LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, json>> attrs = {}) {
    LayerSpec l = default_layer(type);
    for (auto& [k, v] : attrs) l.attrs[k] = v;
    return l;
}
LayerSpec conv(int ci, int co, int k, int s = 1, int p = 0, bool bias = true) {
    return L("conv2d", {{"in_channels", ci}, {"out_channels", co}, {"kernel_size", k}, {"stride", s}, {"padding", p},
                        {"bias", bias}});
}
LayerSpec linear(int fi, int fo) { return L("linear", {{"in_features", fi}, {"out_features", fo}}); }
LayerSpec bn(int c) { return L("batchnorm2d", {{"num_features", c}}); }
LayerSpec pool(const char* t, int k, int s = 0) { return L(t, {{"kernel_size", k}, {"stride", s}}); }
LayerSpec residual(std::vector<LayerSpec> body, std::vector<LayerSpec> shortcut = {}) {
    LayerSpec l = default_layer("residual");
    l.body = std::move(body);
    l.shortcut = std::move(shortcut);
    return l;
}
}  // namespace

std::vector<std::string> preset_names() {
    return {"seed-cnn", "mlp", "lenet5", "resnet-mini", "vit-tiny", "resnet20", "tabular-mlp"};
}

Shape preset_input_shape(const std::string& name) {
    if (name == "resnet20") return {3, 32, 32};  // CIFAR-10's images
    return {1, 28, 28};
}

std::vector<std::string> language_model_preset_names() {
    return {"gpt-tiny",     "gpt-char",     "gpt2-124m",    "gpt2-350m", "gpt2-774m",  "gpt2-1.5b",
            "llama-tiny",   "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b",
            "mistral-7b"};
}

namespace {
// nanoGPT's GPT: wte, wpe, dropout (when p > 0), n_layer blocks, ln_f, a head tied to wte
ModelSpec gpt_spec(const std::string& name, int layers, int heads, int dim, int seq, int vocab, double dropout) {
    ModelSpec s;
    s.name = name;
    s.input_shape = {seq};
    s.num_classes = vocab;
    s.layers.push_back(L("token_embedding", {{"vocab_size", vocab}, {"dim", dim}}));
    s.layers.push_back(L("position_embedding", {{"max_positions", seq}, {"dim", dim}}));
    if (dropout > 0) s.layers.push_back(L("dropout", {{"p", dropout}}));  // nanoGPT's drop (a copy when p = 0)
    for (int i = 0; i < layers; ++i)
        s.layers.push_back(L("transformer_block", {{"dim", dim}, {"heads", heads}, {"dropout", dropout}}));
    s.layers.push_back(L("layernorm", {{"dim", dim}}));
    s.layers.push_back(L("lm_head", {{"dim", dim}, {"vocab_size", vocab}, {"tied", true}}));
    return s;
}
// Hugging Face's LlamaForCausalLM (docs/transformers.md, "The LLaMA family"): embed_tokens, `layers`
// decoder layers, the final RMSNorm and the head, with the sizes of the published config.json.
struct LlamaSizes {
    int vocab, dim, layers, heads, kv_heads, hidden;
    double theta;
    double rope_factor;  // Llama 3's rope_scaling factor (0: none), with low 1, high 4, original 8192
    bool tied, qkv_bias;
    double eps;
    std::int64_t max_positions, seq;
};
ModelSpec llama_spec(const std::string& name, const LlamaSizes& z) {
    ModelSpec s;
    s.name = name;
    s.input_shape = {z.seq};
    s.num_classes = z.vocab;
    s.layers.push_back(L("token_embedding", {{"vocab_size", z.vocab}, {"dim", z.dim}}));
    for (int i = 0; i < z.layers; ++i) {
        LayerSpec b = L("llama_block", {{"dim", z.dim}, {"heads", z.heads}, {"kv_heads", z.kv_heads}, {"hidden", z.hidden},
                                        {"norm_eps", z.eps}, {"rope_theta", z.theta}, {"qkv_bias", z.qkv_bias},
                                        {"max_positions", z.max_positions}});
        if (z.rope_factor > 0) b.attrs["rope_factor"] = z.rope_factor;
        s.layers.push_back(std::move(b));
    }
    s.layers.push_back(L("rmsnorm", {{"dim", z.dim}, {"eps", z.eps}}));
    s.layers.push_back(L("lm_head", {{"dim", z.dim}, {"vocab_size", z.vocab}, {"tied", z.tied}}));
    return s;
}
}  // namespace

std::string preset_description(const std::string& name) {
    if (name == "seed-cnn") return "two conv layers and two linear layers (PyTorch's MNIST example), 21,840 parameters";
    if (name == "mlp") return "multilayer perceptron 784-256-128-10";
    if (name == "lenet5") return "LeNet-5: conv 6@5x5 (pad 2), avgpool, conv 16@5x5, avgpool, 120-84-10 with tanh";
    if (name == "resnet-mini") return "three residual stages with BatchNorm (16, 32, 64 channels), global average pooling";
    if (name == "vit-tiny") return "vision transformer: 4x4 patches, class token, 4 blocks of width 64 with 4 heads";
    if (name == "resnet20")
        return "ResNet-20 for CIFAR-10 (He et al. 2016): three stages of three residual blocks (16, 32, 64 channels)";
    if (name == "tabular-mlp")
        return "MLP for tables: two hidden layers of 64 with ReLU; takes --data csv:FILE --target COLUMN";
    if (name == "gpt-tiny") return "GPT with 2 blocks of width 128, 4 heads, 128 tokens of context, byte vocabulary";
    if (name == "gpt-char") return "nanoGPT's character model: 6 blocks of width 384, 6 heads, 256 tokens of context";
    if (name == "gpt2-124m") return "GPT-2 small: 12 blocks of width 768, 12 heads, 1024 tokens, vocabulary 50304";
    if (name == "gpt2-350m") return "GPT-2 medium: 24 blocks of width 1024, 16 heads, 1024 tokens, vocabulary 50304";
    if (name == "gpt2-774m") return "GPT-2 large: 36 blocks of width 1280, 20 heads, 1024 tokens, vocabulary 50304";
    if (name == "gpt2-1.5b") return "GPT-2 XL: 48 blocks of width 1600, 25 heads, 1024 tokens, vocabulary 50304";
    if (name == "llama-tiny")
        return "LLaMA-shaped: 2 blocks of width 128, 4 query and 2 key/value heads, SwiGLU 352, rotary positions, "
               "128 tokens, byte vocabulary, untied head";
    if (name == "llama-3.2-1b")
        return "Llama 3.2 1B: 16 blocks of width 2048, 32 heads sharing 8 key/value heads, SwiGLU 8192, vocabulary "
               "128256, rope theta 500000 with Llama 3 scaling (factor 32), tied head; planned at 2048 tokens";
    if (name == "llama-3.2-3b")
        return "Llama 3.2 3B: 28 blocks of width 3072, 24 heads sharing 8 key/value heads, SwiGLU 8192, vocabulary "
               "128256, rope theta 500000 with Llama 3 scaling (factor 32), tied head; planned at 2048 tokens";
    if (name == "llama-3.1-8b")
        return "Llama 3.1 8B: 32 blocks of width 4096, 32 heads sharing 8 key/value heads, SwiGLU 14336, vocabulary "
               "128256, rope theta 500000 with Llama 3 scaling (factor 8); planned at 2048 tokens";
    if (name == "llama-3.1-70b")
        return "Llama 3.1 70B: 80 blocks of width 8192, 64 heads sharing 8 key/value heads, SwiGLU 28672, vocabulary "
               "128256, rope theta 500000 with Llama 3 scaling (factor 8); planned at 2048 tokens";
    if (name == "qwen2.5-7b")
        return "Qwen2.5 7B: 28 blocks of width 3584, 28 heads sharing 4 key/value heads, SwiGLU 18944, q/k/v biases, "
               "vocabulary 152064, rope theta 1000000; planned at 2048 tokens";
    if (name == "mistral-7b")
        return "Mistral 7B v0.1: 32 blocks of width 4096, 32 heads sharing 8 key/value heads, SwiGLU 14336, vocabulary "
               "32000, rope theta 10000 (its 4096-token sliding window is not modelled: attention is full); planned "
               "at 2048 tokens";
    return "";
}

ModelSpec preset_model(const std::string& name, const Shape& shape, int num_classes) {
    const Shape input_shape = shape.empty() ? preset_input_shape(name) : shape;
    // language models: their own input (a sequence) and classes (the vocabulary)
    if (name == "gpt-tiny") return gpt_spec(name, 2, 4, 128, 128, 256, 0.0);
    if (name == "gpt-char") return gpt_spec(name, 6, 6, 384, 256, 256, 0.2);
    if (name == "gpt2-124m") return gpt_spec(name, 12, 12, 768, 1024, 50304, 0.0);
    if (name == "gpt2-350m") return gpt_spec(name, 24, 16, 1024, 1024, 50304, 0.0);
    if (name == "gpt2-774m") return gpt_spec(name, 36, 20, 1280, 1024, 50304, 0.0);
    if (name == "gpt2-1.5b") return gpt_spec(name, 48, 25, 1600, 1024, 50304, 0.0);
    // the LLaMA family: the published config.json's sizes
    if (name == "llama-tiny") return llama_spec(name, {256, 128, 2, 4, 2, 352, 10000, 0, false, false, 1e-5, 128, 128});
    if (name == "llama-3.2-1b")
        return llama_spec(name, {128256, 2048, 16, 32, 8, 8192, 500000, 32, true, false, 1e-5, 131072, 2048});
    if (name == "llama-3.2-3b")
        return llama_spec(name, {128256, 3072, 28, 24, 8, 8192, 500000, 32, true, false, 1e-5, 131072, 2048});
    if (name == "llama-3.1-8b")
        return llama_spec(name, {128256, 4096, 32, 32, 8, 14336, 500000, 8, false, false, 1e-5, 131072, 2048});
    if (name == "llama-3.1-70b")
        return llama_spec(name, {128256, 8192, 80, 64, 8, 28672, 500000, 8, false, false, 1e-5, 131072, 2048});
    if (name == "qwen2.5-7b")
        return llama_spec(name, {152064, 3584, 28, 28, 4, 18944, 1000000, 0, false, true, 1e-6, 131072, 2048});
    if (name == "mistral-7b")
        return llama_spec(name, {32000, 4096, 32, 32, 8, 14336, 10000, 0, false, false, 1e-5, 32768, 2048});
    ModelSpec s;
    s.name = name;
    s.input_shape = input_shape;
    s.num_classes = num_classes;
    if (name == "tabular-mlp") {  // a table's (F) features, or any input flattened
        const int f = static_cast<int>(shape_numel(input_shape));
        s.layers = {L("flatten"), linear(f, 64), L("relu"), linear(64, 64), L("relu"), linear(64, num_classes)};
        return s;
    }
    if (input_shape.size() != 3)
        throw InputError("preset '" + name + "' needs image input (C, H, W), got " + shape_str(input_shape) +
                         "; for a table use the preset tabular-mlp");
    const int c = static_cast<int>(input_shape[0]);
    const int h = static_cast<int>(input_shape[1]);
    const int w = static_cast<int>(input_shape[2]);
    if (name == "seed-cnn") {
        // Conv2d(1,10,5) -> MaxPool2d(2) -> ReLU -> Conv2d(10,20,5) -> MaxPool2d(2) -> ReLU -> Flatten ->
        // Linear(320,50) -> ReLU -> Linear(50,10)   (for 28x28 input; 320 = 20*4*4)
        int h2 = ((h - 4) / 2 - 4) / 2, w2 = ((w - 4) / 2 - 4) / 2;
        s.layers = {conv(c, 10, 5), pool("maxpool2d", 2), L("relu"), conv(10, 20, 5), pool("maxpool2d", 2), L("relu"),
                    L("flatten"), linear(20 * h2 * w2, 50), L("relu"), linear(50, num_classes)};
    } else if (name == "mlp") {
        int f = c * h * w;
        s.layers = {L("flatten"), linear(f, 256), L("relu"), linear(256, 128), L("relu"), linear(128, num_classes)};
    } else if (name == "lenet5") {
        // 28x28: pad 2 keeps 28 -> pool 14 -> conv 10 -> pool 5 -> 16*5*5 = 400
        int pad = h == 28 ? 2 : 0;
        int h1 = (h + 2 * pad - 4) / 2, w1 = (w + 2 * pad - 4) / 2;
        int h2 = (h1 - 4) / 2, w2 = (w1 - 4) / 2;
        s.layers = {conv(c, 6, 5, 1, pad), L("tanh"), pool("avgpool2d", 2), conv(6, 16, 5), L("tanh"),
                    pool("avgpool2d", 2), L("flatten"), linear(16 * h2 * w2, 120), L("tanh"), linear(120, 84),
                    L("tanh"), linear(84, num_classes)};
    } else if (name == "resnet-mini" || name == "resnet20") {
        // stem conv3x3(16) + BN + ReLU; stage 1: blocks(16); stage 2: blocks(32, the first of stride 2 with a 1x1
        // projection); stage 3: blocks(64, the same); global average pooling; Linear(64, classes). resnet-mini
        // has one block a stage, ResNet-20 three (He et al. 2016, section 4.2, with projection shortcuts).
        auto block = [](int ci, int co, int stride) {
            std::vector<LayerSpec> body = {conv(ci, co, 3, stride, 1, false), bn(co), L("relu"),
                                           conv(co, co, 3, 1, 1, false), bn(co)};
            std::vector<LayerSpec> sc;
            if (stride != 1 || ci != co) sc = {conv(ci, co, 1, stride, 0, false), bn(co)};
            return residual(std::move(body), std::move(sc));
        };
        int hs = h, ws = w;
        for (int i = 0; i < 2; ++i) {
            hs = (hs + 2 - 3) / 2 + 1;
            ws = (ws + 2 - 3) / 2 + 1;
        }
        if (hs != ws) throw InputError("preset '" + name + "' needs square input, got " + shape_str(input_shape));
        const int per_stage = name == "resnet20" ? 3 : 1;
        s.layers = {conv(c, 16, 3, 1, 1, false), bn(16), L("relu")};
        int ci = 16;
        for (int co : {16, 32, 64})
            for (int b = 0; b < per_stage; ++b) {
                s.layers.push_back(block(ci, co, b == 0 && co != 16 ? 2 : 1));
                s.layers.push_back(L("relu"));
                ci = co;
            }
        for (LayerSpec l : {pool("avgpool2d", hs, hs), L("flatten"), linear(64, num_classes)}) s.layers.push_back(l);
    } else if (name == "vit-tiny") {
        // ViT (Dosovitskiy et al.) at Fashion-MNIST scale: 4x4 patches of 28x28 give 49 tokens + the class token
        const int p = 4, dim = 64;
        if (h % p != 0 || w % p != 0)
            throw InputError("preset 'vit-tiny' needs image sides divisible by 4, got " + shape_str(input_shape));
        const int tokens = (h / p) * (w / p) + 1;
        s.layers = {L("patch_embedding", {{"in_channels", c}, {"dim", dim}, {"patch_size", p}}),
                    L("class_token", {{"dim", dim}}),
                    L("position_embedding", {{"max_positions", tokens}, {"dim", dim}})};
        for (int i = 0; i < 4; ++i)
            s.layers.push_back(L("transformer_block", {{"dim", dim}, {"heads", 4}, {"hidden", 2 * dim}, {"causal", false},
                                                       {"gelu_tanh", false}}));
        s.layers.push_back(L("layernorm", {{"dim", dim}}));
        s.layers.push_back(L("class_token_pool"));
        s.layers.push_back(linear(dim, num_classes));
    } else {
        std::string names;
        for (auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
        for (auto& n : language_model_preset_names()) names += ", " + n;
        throw InputError("unknown preset '" + name + "'; use one of " + names);
    }
    return s;
}

}  // namespace hr
