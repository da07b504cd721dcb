#pragma once
// The packed storage of a quantised weight matrix (rows, cols), as QLoRA keeps its frozen base
// (nn/model.h ModelOptions::lora_base_bits) and as the what-ifs count it (nn/compression.h):
//
//   [ scales: f32, scale_count of them, row by row, group by group ][ codes ]
//
// Symmetric absmax quantisation: int8 has one scale per row (s = max|w_row| / 127, q in [-127, 127], one
// signed byte a value); int4 one scale per group of `group` consecutive values of a row (the row's tail is
// a shorter group; s = max|w| / 7, q in [-7, 7]), two values a byte: value k (row-major over the whole
// matrix) in the low nibble of byte k / 2 when k is even, the high nibble when odd, stored as q + 8.
// The value is q x s in f32. The scales come first so that they are 4-byte aligned.
//
// NF4 (QLoRA's NormalFloat, Dettmers et al. 2023; the format code kQuantNf4 where the others carry 8 or 4 in
// their `bits`): 4-bit codes k into the 16 values nf4_level(k) (quantiles of N(0, 1) scaled to [-1, 1], with
// an exact 0), a scale per group of `group` values of a row as int4's, s = max|w| itself (w / s is in
// [-1, 1]; the code is the nearest level, ties to the lower), and the scales double-quantised (QLoRA's
// double quantisation, symmetric int8 here): c = their mean over the matrix (f32), then per block of 256
// scales (in order) a step t = max|s - c| / 127, each scale stored as e = round((s - c) / t) in [-127, 127]
// (t = 0: e = 0). The scale used is fma(e, t, c) in f32, the value nf4_level(k) x that in f32. Layout:
//
//   [ c: f32 ][ t: f32, one a block ][ e: i8, one a scale ][ codes: nibbles, as int4's, of k ]
//
// 4 + 8 / group + 32 / (256 group) bits a value: 4.127 at group 64, against int4's 4.5.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hr {

constexpr int kQuantNf4 = 104;           // NF4 with double-quantised scales (the `bits` fields' code for it)
constexpr std::int64_t kNf4ScaleBlock = 256;  // scales per f32 step

// The 16 NormalFloat levels (bitsandbytes' create_normal_map, as QLoRA publishes them).
inline float nf4_level(int k) {
    static constexpr float levels[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                                         -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                                         0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                                         0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                                         0.7229568362236023f, 1.0f};
    return levels[k & 15];
}

// Whether `bits` names a format (8, 4 or kQuantNf4).
inline bool quantized_format_known(int bits) { return bits == 8 || bits == 4 || bits == kQuantNf4; }

// Values per scale: the whole row for int8, `group` for int4 and NF4.
inline std::int64_t quantized_group(std::int64_t cols, int bits, std::int64_t group) {
    return bits == 8 ? cols : (group < 1 ? 1 : group);
}

// Scales of a rows x cols matrix: one a row (int8), one a group of a row (int4, NF4); 0 without bits.
inline std::int64_t quantized_scale_count(std::int64_t rows, std::int64_t cols, int bits, std::int64_t group) {
    if (bits == 0 || rows <= 0 || cols <= 0) return 0;
    const std::int64_t g = quantized_group(cols, bits, group);
    return rows * ((cols + g - 1) / g);
}

// NF4: the f32 steps of a matrix's scales, one a block of kNf4ScaleBlock.
inline std::int64_t nf4_step_count(std::int64_t scales) { return (scales + kNf4ScaleBlock - 1) / kNf4ScaleBlock; }

// Bytes of the packed matrix: the scales, then (values x bits + 7) / 8 of codes; NF4: c, the steps, a byte a
// scale, then half a byte a value.
inline std::size_t quantized_bytes(std::int64_t rows, std::int64_t cols, int bits, std::int64_t group) {
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    const std::int64_t scales = quantized_scale_count(rows, cols, bits, group);
    if (bits == kQuantNf4)
        return 4 + static_cast<std::size_t>(nf4_step_count(scales)) * 4 + static_cast<std::size_t>(scales) + (n + 1) / 2;
    return static_cast<std::size_t>(scales) * 4 + (n * static_cast<std::size_t>(bits) + 7) / 8;
}

// NF4: the scale of group gi (in order over the matrix), from the packed bytes.
inline float nf4_scale(const std::uint8_t* packed, std::int64_t scales, std::int64_t gi) {
    float c, t;
    std::memcpy(&c, packed, 4);
    std::memcpy(&t, packed + 4 + 4 * (gi / kNf4ScaleBlock), 4);
    const auto e = static_cast<std::int8_t>(packed[4 + 4 * nf4_step_count(scales) + gi]);
    return std::fma(static_cast<float>(e), t, c);
}

// Rows [r0, r1) of a packed (rows, cols) matrix into out (the whole matrix's row-major storage): value k is
// store(q x s) with q x s in f32. The host's decoder (nn/compression.h dequantize_packed) and the CPU
// backend's (Backend::dequantize, rows spread over threads) are this one; the scale is read once per group
// and the codes without a branch, so that the loops vectorise.
template <class T, class Store>
void dequantize_rows(const std::uint8_t* packed, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group,
                     std::int64_t r0, std::int64_t r1, T* out, Store store) {
    const std::int64_t g = quantized_group(cols, bits, group), per_row = (cols + g - 1) / g;
    const std::int64_t scales = quantized_scale_count(rows, cols, bits, group);
    const bool nf4 = bits == kQuantNf4;
    const std::uint8_t* codes = nf4 ? packed + 4 + 4 * nf4_step_count(scales) + scales : packed + scales * 4;
    float nf4_levels[16];
    for (int k = 0; k < 16; ++k) nf4_levels[k] = nf4_level(k);
    for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c0 = 0, gi = r * per_row; c0 < cols; c0 += g, ++gi) {
            float s;
            if (nf4) s = nf4_scale(packed, scales, gi);
            else std::memcpy(&s, packed + 4 * gi, 4);
            const std::int64_t k0 = r * cols, c1 = c0 + g < cols ? c0 + g : cols;
            if (nf4) {  // a level a nibble
                for (std::int64_t k = k0 + c0; k < k0 + c1; ++k)
                    out[k] = store(nf4_levels[(codes[k >> 1] >> ((k & 1) * 4)) & 0x0F] * s);
            } else if (bits == 8) {
                const auto* q = reinterpret_cast<const std::int8_t*>(codes) + k0;
                for (std::int64_t c = c0; c < c1; ++c) out[k0 + c] = store(static_cast<float>(q[c]) * s);
            } else {  // a byte at a time (two values), a lone nibble at either end
                auto one = [&](std::int64_t k) {
                    const int q = static_cast<int>((codes[k >> 1] >> ((k & 1) * 4)) & 0x0F) - 8;
                    out[k] = store(static_cast<float>(q) * s);
                };
                std::int64_t k = k0 + c0;
                const std::int64_t end = k0 + c1;
                if ((k & 1) && k < end) one(k++);
                const std::uint8_t* b = codes + (k >> 1);
                for (; k + 1 < end; k += 2, ++b) {
                    out[k] = store(static_cast<float>(static_cast<int>(*b & 0x0F) - 8) * s);
                    out[k + 1] = store(static_cast<float>(static_cast<int>(*b >> 4) - 8) * s);
                }
                if (k < end) one(k);
            }
        }
}

}  // namespace hr
