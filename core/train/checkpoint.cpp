#include "train/checkpoint.h"

#include <cstdlib>
#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "nn/compression.h"
#include "nn/transformer_spec.h"

namespace hr {

SafeTensorsFile state_file(const std::vector<NamedTensor>& named, Backend& be, const ModelSpec& spec) {
    SafeTensorsFile f;
    for (const auto& nt : named) {  // a tied head comes again under its own name
        SafeTensor t;
        t.name = nt.name;
        t.dtype = nt.tensor.dtype();
        t.shape = nt.tensor.shape();
        t.data.resize(nt.tensor.nbytes());
        be.copy_to_host(nt.tensor, t.data.data());
        if (nt.quantized()) {  // QLoRA's base: its values, f32
            const Shape& s = nt.quantized_shape;
            std::vector<std::uint8_t> packed = std::move(t.data);
            t.dtype = DType::f32;
            t.shape = s;
            t.data.assign(static_cast<std::size_t>(shape_numel(s)) * 4, 0);
            dequantize_packed(packed.data(), s[0], s[1], nt.quantized_bits, nt.quantized_group,
                              reinterpret_cast<float*>(t.data.data()));
        }
        f.tensors.push_back(std::move(t));
    }
    f.metadata["format"] = "pt";
    f.metadata["producer"] = std::string("headroom ") + HEADROOM_VERSION;
    f.metadata["model_spec"] = model_spec_to_json(spec).dump();
    return f;
}

SafeTensorsFile model_state_file(Model& model) { return state_file(model.state_dict(), model.backend(), model.spec()); }

namespace {

bool ends_with(const std::string& s, const char* suffix) {
    const std::size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The four GPT-2 projections Hugging Face stores as Conv1D, [in, out].
bool is_conv1d_weight(const std::string& name) {
    return ends_with(name, ".attn.c_attn.weight") || ends_with(name, ".attn.c_proj.weight") ||
           ends_with(name, ".mlp.c_fc.weight") || ends_with(name, ".mlp.c_proj.weight");
}

// Hugging Face's attention-mask buffers, not parameters.
bool is_hf_buffer(const std::string& name) { return ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias"); }

// Names a model tensor may have in a file: its own, and for nanoGPT names the Hugging Face GPT2Model one.
std::vector<std::string> candidates(const std::string& name, bool gpt) {
    std::vector<std::string> c{name};
    if (gpt && name.rfind("transformer.", 0) == 0) c.push_back(name.substr(12));
    return c;
}

const SafeTensor* find_any(const SafeTensorsFile& f, const std::vector<std::string>& names) {
    for (const auto& n : names)
        if (const SafeTensor* t = f.find(n)) return t;
    return nullptr;
}

std::vector<std::uint8_t> transposed(const SafeTensor& t) {
    const std::size_t rows = static_cast<std::size_t>(t.shape[0]), cols = static_cast<std::size_t>(t.shape[1]);
    const std::size_t es = dtype_size(t.dtype);
    std::vector<std::uint8_t> out(t.nbytes());
    const std::uint8_t* in = t.bytes();
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) std::memcpy(&out[(c * rows + r) * es], &in[(r * cols + c) * es], es);
    return out;
}

}  // namespace

namespace {
// A LoRA run's weights read into a model without adapters: each "X.lora_A" (R, in) and "X.lora_B" (out, R)
// are merged into "X.weight" (out, in) as W + s B A, s the file's lora_scale (PEFT's merge_and_unload).
// f32 only; the merged copy replaces the file's tensors.
void merge_lora_in_place(SafeTensorsFile& file, const std::string& path) {
    const auto it = file.metadata.find("lora_scale");
    if (it == file.metadata.end())
        throw InputError(HR_MSG("weights.lora_scale", "%1 has LoRA adapters but no lora_scale in its metadata, so they "
                                                      "cannot be merged into the weights; train with --lora to use them"),
                         {path});
    const double scale = std::strtod(it->second.c_str(), nullptr);
    for (const SafeTensor& a : file.tensors) {
        if (a.name.size() < 7 || a.name.compare(a.name.size() - 7, 7, ".lora_A") != 0) continue;
        const std::string stem = a.name.substr(0, a.name.size() - 7);
        const SafeTensor* b = file.find(stem + ".lora_B");
        SafeTensor* w = nullptr;
        for (SafeTensor& t : file.tensors)
            if (t.name == stem + ".weight") w = &t;
        if (!b || !w || a.dtype != DType::f32 || b->dtype != DType::f32 || w->dtype != DType::f32 || a.shape.size() != 2 ||
            b->shape.size() != 2 || w->shape.size() != 2 || a.shape[0] != b->shape[1] || w->shape[0] != b->shape[0] ||
            w->shape[1] != a.shape[1])
            throw InputError(HR_MSG("weights.lora_merge", "%1: the LoRA adapters of %2 do not fit its weight (f32 "
                                                          "%3 with A %4 and B %5 expected); the file is damaged"),
                             {path, stem, w ? shape_str(w->shape) : std::string("?"), shape_str(a.shape), shape_str(b ? b->shape : Shape{})});
        const std::int64_t R = a.shape[0], in = a.shape[1], rows = b->shape[0];
        const auto* A = reinterpret_cast<const float*>(a.bytes());
        const auto* B = reinterpret_cast<const float*>(b->bytes());
        w->materialize();  // changed in place: out of a mapped file first
        auto* W = reinterpret_cast<float*>(w->data.data());
        for (std::int64_t o = 0; o < rows; ++o)
            for (std::int64_t i = 0; i < in; ++i) {
                double acc = 0;
                for (std::int64_t r = 0; r < R; ++r) acc += static_cast<double>(B[o * R + r]) * A[r * in + i];
                W[o * in + i] = static_cast<float>(W[o * in + i] + scale * acc);
            }
    }
    file.tensors.erase(std::remove_if(file.tensors.begin(), file.tensors.end(),
                                      [](const SafeTensor& t) { return is_lora_adapter(t.name); }),
                       file.tensors.end());
}

SafeTensorsFile merged_lora(const SafeTensorsFile& file, const std::string& path) {
    SafeTensorsFile out = file;
    merge_lora_in_place(out, path);
    return out;
}
}  // namespace

void merge_lora_adapters_in_place(SafeTensorsFile& file, const std::string& path) {
    for (const auto& t : file.tensors)
        if (is_lora_adapter(t.name)) return merge_lora_in_place(file, path);
}

SafeTensorsFile merge_lora_adapters(const SafeTensorsFile& file, const std::string& path) {
    for (const auto& t : file.tensors)
        if (is_lora_adapter(t.name)) return merged_lora(file, path);
    return file;
}

void load_model_state(Model& model, const SafeTensorsFile& file_in, const std::string& path) {
    Backend& be = model.backend();
    auto sd = model.state_dict();
    // a LoRA run's file into a model without adapters: merged first
    bool model_adapters = false, file_adapters = false;
    for (const auto& nt : sd) model_adapters = model_adapters || is_lora_adapter(nt.name);
    for (const auto& t : file_in.tensors) file_adapters = file_adapters || is_lora_adapter(t.name);
    SafeTensorsFile merged;
    if (file_adapters && !model_adapters) merged = merged_lora(file_in, path);
    const SafeTensorsFile& file = file_adapters && !model_adapters ? merged : file_in;
    const bool gpt = is_gpt_layout(model.spec());
    // Hugging Face's Conv1D layout: recognised by the first block's c_attn weight stored (C, 3C)
    bool conv1d = false;
    if (gpt)
        for (const auto& nt : sd)
            if (ends_with(nt.name, ".attn.c_attn.weight")) {
                const SafeTensor* t = find_any(file, candidates(nt.name, gpt));
                const Shape& m = nt.value_shape();
                conv1d = t && t->shape.size() == 2 && m.size() == 2 && t->shape[0] == m[1] && t->shape[1] == m[0];
                break;
            }
    struct Source {
        const SafeTensor* t = nullptr;
        bool transpose = false;
    };
    std::vector<Source> src(sd.size());
    // check everything first, so that the model stays unchanged on error
    for (std::size_t i = 0; i < sd.size(); ++i) {
        const auto& nt = sd[i];
        const SafeTensor* t = find_any(file, candidates(nt.name, gpt));
        if (!t && nt.tied) continue;  // the tied head is the token embedding's weight
        if (!t && is_lora_adapter(nt.name)) continue;  // LoRA's adapters on a base model's file: they start fresh
        if (!t)  // an embedding tied to a head: the head's copy will do ("either accepted on reading")
            for (const auto& other : sd)
                if (other.tied && other.tensor.raw() == nt.tensor.raw() && !t) t = find_any(file, candidates(other.name, gpt));
        if (!t)
            throw InputError(path + ": tensor '" + nt.name + "' is missing; the file was written for a different model "
                             "(compare its model_spec with this one)");
        const bool tr = conv1d && is_conv1d_weight(nt.name);
        Shape want = nt.value_shape();
        if (tr) want = {want[1], want[0]};
        if (t->shape != want)
            throw InputError(path + ": tensor '" + nt.name + "' has shape " + shape_str(t->shape) + " but the model needs " +
                             shape_str(want) + "; the file was written for a different model");
        const bool both_float = dtype_is_float(t->dtype) && (nt.quantized() || dtype_is_float(nt.tensor.dtype()));
        if (!both_float && t->dtype != nt.tensor.dtype())
            throw InputError(path + ": tensor '" + nt.name + "' is " + dtype_name(t->dtype) + " but the model needs " +
                             dtype_name(nt.tensor.dtype()));
        src[i] = {t, tr};
    }
    for (const auto& t : file.tensors) {
        bool known = gpt && is_hf_buffer(t.name);
        for (const auto& nt : sd)
            for (const auto& n : candidates(nt.name, gpt)) known = known || n == t.name;
        if (!known)
            throw InputError(path + ": unexpected tensor '" + t.name + "'; the file was written for a different model");
    }
    // a tied head that the file has as well: the embedding's copy wins (they are one tensor here)
    for (std::size_t i = 0; i < sd.size(); ++i) {
        if (!src[i].t || sd[i].tied) continue;
        const SafeTensor& t = *src[i].t;
        std::vector<std::uint8_t> flipped;
        const std::uint8_t* bytes = t.bytes();
        if (src[i].transpose) {
            flipped = transposed(t);
            bytes = flipped.data();
        }
        Tensor& dst = sd[i].tensor;
        if (sd[i].quantized()) {  // QLoRA's base: the file's values as f32, quantised into the packed bytes
            const Shape& s = sd[i].quantized_shape;
            const std::size_t n = static_cast<std::size_t>(shape_numel(s));
            std::vector<float> f(n);
            for (std::size_t k = 0; k < n; ++k) {
                const std::uint8_t* p = bytes + k * dtype_size(t.dtype);
                if (t.dtype == DType::f32) {
                    std::memcpy(&f[k], p, 4);
                } else if (t.dtype == DType::f64) {
                    double d;
                    std::memcpy(&d, p, 8);
                    f[k] = static_cast<float>(d);
                } else {
                    std::uint16_t h;
                    std::memcpy(&h, p, 2);
                    f[k] = t.dtype == DType::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
                }
            }
            std::vector<std::uint8_t> packed(dst.nbytes());
            quantize_pack(f.data(), s[0], s[1], sd[i].quantized_bits, sd[i].quantized_group, packed.data());
            be.copy_from_host(packed.data(), dst);
            continue;
        }
        if (t.dtype == dst.dtype()) {
            be.copy_from_host(bytes, dst);
        } else {
            // convert through a host tensor of the file's dtype
            CpuAllocator host(std::make_shared<MemoryLedger>());
            Tensor s = Tensor::empty(host, dst.shape(), t.dtype, MemCategory::other);
            std::memcpy(s.raw(), bytes, t.nbytes());
            Tensor tmp = Tensor::empty(be.allocator(), dst.shape(), t.dtype, MemCategory::other);
            be.copy_from_host(s.raw(), tmp);
            be.copy(tmp, dst);
        }
    }
}

ModelSpec model_spec_of(const SafeTensorsFile& file, const std::string& path) {
    if (auto it = file.metadata.find("model_spec"); it != file.metadata.end()) {
        try {
            return model_spec_from_json(nlohmann::json::parse(it->second));
        } catch (const nlohmann::json::exception& e) {
            throw InputError(path + ": the model_spec in its metadata is not valid JSON (" + e.what() + ")");
        }
    }
    // a GPT-2 checkpoint without Headroom's metadata (nanoGPT's or Hugging Face's names)
    auto get = [&](const std::string& name) -> const SafeTensor* {
        if (const SafeTensor* t = file.find("transformer." + name)) return t;
        return file.find(name);
    };
    const SafeTensor* wte = get("wte.weight");
    const SafeTensor* wpe = get("wpe.weight");
    if (!wte || !wpe || wte->shape.size() != 2 || wpe->shape.size() != 2)
        throw InputError(HR_MSG("checkpoint.no_spec",
                                "%1 has no model_spec in its metadata and is not a GPT-2 checkpoint (no wte/wpe "
                                "weights); weights written by Headroom, nanoGPT or Hugging Face GPT-2 can be read"),
                         {path});
    const std::int64_t V = wte->shape[0], C = wte->shape[1], P = wpe->shape[0];
    int blocks = 0;
    while (get("h." + std::to_string(blocks) + ".ln_1.weight")) ++blocks;
    const SafeTensor* c_attn = get("h.0.attn.c_attn.weight");
    const SafeTensor* c_fc = get("h.0.mlp.c_fc.weight");
    if (blocks == 0 || !c_attn || !c_fc || C % 64 != 0)
        throw InputError(HR_MSG("checkpoint.not_gpt2",
                                "%1 looks like a GPT checkpoint but its blocks are not GPT-2's (h.K.ln_1, attn.c_attn, "
                                "mlp.c_fc, width a multiple of 64)"),
                         {path});
    const bool conv1d = c_attn->shape.size() == 2 && c_attn->shape[0] == C && c_attn->shape[1] == 3 * C;
    const std::int64_t F = conv1d ? c_fc->shape[1] : c_fc->shape[0];
    const bool bias = get("h.0.attn.c_attn.bias") != nullptr;
    bool tied = true;
    if (const SafeTensor* head = file.find("lm_head.weight"))
        tied = head->shape == wte->shape && head->data == wte->data;
    ModelSpec s;
    s.name = "gpt2";
    s.input_shape = {P};
    s.num_classes = static_cast<int>(V);
    auto L = [](const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a) {
        LayerSpec l = default_layer(type);
        for (auto& [k, v] : a) l.attrs[k] = v;
        return l;
    };
    s.layers.push_back(L("token_embedding", {{"vocab_size", V}, {"dim", C}}));
    s.layers.push_back(L("position_embedding", {{"max_positions", P}, {"dim", C}}));
    for (int i = 0; i < blocks; ++i)
        s.layers.push_back(
            L("transformer_block", {{"dim", C}, {"heads", C / 64}, {"hidden", F == 4 * C ? 0 : F}, {"bias", bias}}));
    s.layers.push_back(L("layernorm", {{"dim", C}, {"bias", bias}}));
    s.layers.push_back(L("lm_head", {{"dim", C}, {"vocab_size", V}, {"tied", tied}}));
    return s;
}

}  // namespace hr
