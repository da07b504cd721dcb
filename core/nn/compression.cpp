#include "nn/compression.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "memory/counting_allocator.h"

namespace hr {

namespace {
// The tensors the transforms touch (compression.h): trainable, two or more dimensions; a tied one is skipped
// by the callers (its embedding is counted once).
bool transformed(const NamedTensor& nt) { return nt.trainable && nt.tensor.shape().size() >= 2; }

// Values of an n-value tensor that pruning the fraction sets to zero: PyTorch's round(amount * n).
std::int64_t pruned_count(std::int64_t n, double fraction) {
    if (n <= 0 || fraction <= 0) return 0;
    return std::min(n, static_cast<std::int64_t>(std::nearbyint(fraction * static_cast<double>(n))));
}

// What one weight tensor of n values takes stored as `o` says, with `zeros` of its values zero.
std::size_t stored_bytes(std::int64_t n, std::int64_t zeros, std::int64_t scales, const CompressionOptions& o) {
    const std::size_t un = static_cast<std::size_t>(n);
    const std::size_t bits = o.bits == kQuantNf4 ? 4 : o.bits ? static_cast<std::size_t>(o.bits) : 32;
    const std::size_t stored_values = o.prune > 0 ? un - static_cast<std::size_t>(zeros) : un;
    // NF4: a byte a scale, an f32 step a block of them, and their mean (tensor/quantized_format.h)
    const std::size_t scale_bytes = o.bits == kQuantNf4
                                        ? static_cast<std::size_t>(scales) + 4 + 4 * static_cast<std::size_t>(nf4_step_count(scales))
                                        : static_cast<std::size_t>(scales) * 4;
    std::size_t stored = (stored_values * bits + 7) / 8 + scale_bytes;
    if (o.prune > 0) stored += (un + 7) / 8;  // the bitmask of the non-zeros
    return stored;
}
}  // namespace

void validate_compression(const CompressionOptions& o) {
    if (!(o.prune >= 0 && o.prune < 1))
        throw InputError(HR_MSG("compress.prune", "--prune %1: give the fraction of each weight tensor to set to zero, "
                                                  "from 0 up to (not including) 1, e.g. 0.5"),
                         {std::to_string(o.prune)});
    if (o.bits != 0 && !quantized_format_known(o.bits))
        throw InputError(HR_MSG("compress.bits", "--quantize: %1-bit weights are not offered; use int8, int4 or nf4"),
                         {std::to_string(o.bits)});
    if (o.group < 1 || o.group > (std::int64_t(1) << 20))
        throw InputError(HR_MSG("compress.group", "a quantisation group of %1 values: use 1 to 1048576"),
                         {std::to_string(o.group)});
}

int quantize_bits(const std::string& name) {
    if (name.empty() || name == "none") return 0;
    if (name == "int8") return 8;
    if (name == "int4") return 4;
    if (name == "nf4") return kQuantNf4;
    throw InputError(HR_MSG("compress.quantize", "--quantize %1: use int8 (a scale per output row), int4 (a scale "
                                                     "per 64 values) or nf4 (QLoRA's 4-bit NormalFloat, its scales "
                                                     "quantised too)"),
                     {name});
}

const char* quantize_name(int bits) {
    return bits == 8 ? "int8" : bits == 4 ? "int4" : bits == kQuantNf4 ? "nf4" : "none";
}

void prune_by_magnitude(float* w, std::int64_t n, double fraction) {
    // PyTorch: nparams_toprune = round(amount * n); the smallest |w| go (a stable order among equals)
    const std::int64_t kk = pruned_count(n, fraction);
    if (kk <= 0) return;
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), std::int64_t(0));
    std::nth_element(order.begin(), order.begin() + (kk - 1), order.end(), [&](std::int64_t a, std::int64_t b) {
        const float fa = std::fabs(w[a]), fb = std::fabs(w[b]);
        return fa < fb || (fa == fb && a < b);
    });
    for (std::int64_t i = 0; i < kk; ++i) w[order[static_cast<std::size_t>(i)]] = 0.0f;
}

namespace {
// NF4 with double-quantised scales (tensor/quantized_format.h)
void nf4_pack(const float* w, std::int64_t rows, std::int64_t cols, std::int64_t group, std::uint8_t* out) {
    const std::int64_t g = quantized_group(cols, kQuantNf4, group);
    const std::int64_t nscales = quantized_scale_count(rows, cols, kQuantNf4, group);
    const std::int64_t nsteps = nf4_step_count(nscales);
    std::vector<float> absmax(static_cast<std::size_t>(nscales));
    for (std::int64_t r = 0, si = 0; r < rows; ++r)
        for (std::int64_t c0 = 0; c0 < cols; c0 += g, ++si) {
            float amax = 0.0f;
            for (std::int64_t c = c0; c < std::min(cols, c0 + g); ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
            absmax[static_cast<std::size_t>(si)] = amax;
        }
    // the scales' mean (summed in double), then a step a block of them and an int8 code a scale
    double sum = 0;
    for (float a : absmax) sum += a;
    const float mean = nscales ? static_cast<float>(sum / static_cast<double>(nscales)) : 0.0f;
    std::memcpy(out, &mean, 4);
    auto* e = reinterpret_cast<std::int8_t*>(out + 4 + 4 * nsteps);
    for (std::int64_t b = 0; b < nsteps; ++b) {
        const std::int64_t i0 = b * kNf4ScaleBlock, i1 = std::min(nscales, i0 + kNf4ScaleBlock);
        float far = 0.0f;
        for (std::int64_t i = i0; i < i1; ++i) far = std::max(far, std::fabs(absmax[static_cast<std::size_t>(i)] - mean));
        const float t = far / 127.0f;
        std::memcpy(out + 4 + 4 * b, &t, 4);
        for (std::int64_t i = i0; i < i1; ++i)
            e[i] = static_cast<std::int8_t>(
                t == 0.0f ? 0.0f : std::min(127.0f, std::max(-127.0f, std::nearbyint((absmax[static_cast<std::size_t>(i)] - mean) / t))));
    }
    // the codes: the nearest level to w / absmax (ties to the lower; absmax 0: the level 0)
    std::uint8_t* codes = out + 4 + 4 * nsteps + nscales;
    std::memset(codes, 0, static_cast<std::size_t>((rows * cols + 1) / 2));
    for (std::int64_t r = 0, si = 0; r < rows; ++r)
        for (std::int64_t c0 = 0; c0 < cols; c0 += g, ++si) {
            const float amax = absmax[static_cast<std::size_t>(si)];
            for (std::int64_t c = c0; c < std::min(cols, c0 + g); ++c) {
                const std::int64_t k = r * cols + c;
                int best = 7;
                if (amax > 0.0f) {
                    const float x = w[k] / amax;
                    float dist = std::fabs(x - nf4_level(0));
                    best = 0;
                    for (int q = 1; q < 16; ++q)
                        if (const float d = std::fabs(x - nf4_level(q)); d < dist) {
                            dist = d;
                            best = q;
                        }
                }
                codes[k >> 1] = static_cast<std::uint8_t>(codes[k >> 1] | (best << ((k & 1) ? 4 : 0)));
            }
        }
}
}  // namespace

void quantize_pack(const float* w, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group,
                   std::uint8_t* out) {
    if (bits == kQuantNf4) return nf4_pack(w, rows, cols, group, out);
    if (bits != 8 && bits != 4) throw Error("internal: quantize_pack takes 8 or 4 bits, got " + std::to_string(bits));
    const float qmax = bits == 8 ? 127.0f : 7.0f;
    const std::int64_t g = quantized_group(cols, bits, group);
    const std::int64_t nscales = quantized_scale_count(rows, cols, bits, group);
    std::uint8_t* codes = out + nscales * 4;
    std::memset(codes, 0, quantized_bytes(rows, cols, bits, group) - static_cast<std::size_t>(nscales) * 4);
    std::int64_t si = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = w + r * cols;
        for (std::int64_t c0 = 0; c0 < cols; c0 += g) {
            const std::int64_t c1 = std::min(cols, c0 + g);
            float amax = 0.0f;
            for (std::int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(row[c]));
            const float s = amax / qmax;  // f32, as the reference computes it
            std::memcpy(out + 4 * si++, &s, 4);
            for (std::int64_t c = c0; c < c1; ++c) {
                // round half to even (torch.round); s = 0: every value of the group is 0
                const int q = s == 0.0f ? 0 : static_cast<int>(std::min(qmax, std::max(-qmax, std::nearbyint(row[c] / s))));
                const std::int64_t k = r * cols + c;
                if (bits == 8)
                    codes[k] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
                else
                    codes[k >> 1] = static_cast<std::uint8_t>(codes[k >> 1] | ((q + 8) << ((k & 1) ? 4 : 0)));
            }
        }
    }
}

void dequantize_packed(const std::uint8_t* packed, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group,
                       float* w) {
    dequantize_rows(packed, rows, cols, bits, group, 0, rows, w, [](float v) { return v; });
}

std::int64_t quantize_rows(float* w, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group) {
    if (bits == 0 || rows <= 0 || cols <= 0) return 0;
    std::vector<std::uint8_t> packed(quantized_bytes(rows, cols, bits, group));
    quantize_pack(w, rows, cols, bits, group, packed.data());
    dequantize_packed(packed.data(), rows, cols, bits, group, w);
    return quantized_scale_count(rows, cols, bits, group);
}

CompressionReport compress_model_weights(Model& model, const CompressionOptions& o) {
    validate_compression(o);
    CompressionReport rep;
    Backend& be = model.backend();
    for (NamedTensor& nt : model.state_dict()) {
        if (nt.tied) continue;  // the embedding it is: counted and transformed once
        Tensor& t = nt.tensor;
        const std::int64_t n = t.numel();
        if (!transformed(nt) || t.dtype() != DType::f32) {
            rep.other_bytes += t.nbytes();
            continue;
        }
        std::vector<float> w(static_cast<std::size_t>(n));
        be.copy_to_host(t, w.data());
        const std::vector<float> before = w;
        prune_by_magnitude(w.data(), n, o.prune);
        const std::int64_t rows = t.shape()[0];
        const std::int64_t scales = quantize_rows(w.data(), rows, n / rows, o.bits, o.group);
        be.copy_from_host(w.data(), t);
        std::int64_t zeros = 0;
        for (std::size_t i = 0; i < w.size(); ++i) {
            if (w[i] == 0.0f) ++zeros;
            rep.max_abs_change = std::max(rep.max_abs_change, static_cast<double>(std::fabs(w[i] - before[i])));
        }
        const std::size_t un = static_cast<std::size_t>(n);
        const std::size_t stored = stored_bytes(n, zeros, scales, o);
        ++rep.tensors;
        rep.values += n;
        rep.zeros += zeros;
        rep.scales += scales;
        rep.dense_bytes += un * 4;
        rep.stored_bytes += stored;
    }
    be.synchronize();
    return rep;
}

CompressionReport compression_bytes(const ModelSpec& spec, const CompressionOptions& o) {
    validate_compression(o);
    auto ledger = std::make_shared<MemoryLedger>();
    CountingAllocator alloc(Device::cpu(), ledger);
    CpuBackend be(1, ledger);
    ModelOptions mo;
    mo.batch = 1;
    mo.dry_run = true;  // shapes only: nothing is touched
    mo.allocator = &alloc;
    Model model(spec, be, mo);
    CompressionReport rep;
    for (const NamedTensor& nt : model.state_dict()) {
        if (nt.tied) continue;
        const Tensor& t = nt.tensor;
        const std::int64_t n = t.numel();
        if (!transformed(nt)) {
            rep.other_bytes += t.nbytes();
            continue;
        }
        const std::int64_t rows = t.shape()[0];
        const std::int64_t zeros = pruned_count(n, o.prune);  // exactly what prune_by_magnitude sets to zero
        const std::int64_t scales = quantized_scale_count(rows, n / rows, o.bits, o.group);
        ++rep.tensors;
        rep.values += n;
        rep.zeros += zeros;
        rep.scales += scales;
        rep.dense_bytes += static_cast<std::size_t>(n) * 4;
        rep.stored_bytes += stored_bytes(n, zeros, scales, o);
    }
    return rep;
}

}  // namespace hr
