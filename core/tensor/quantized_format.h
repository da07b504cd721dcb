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
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hr {

// Values per scale: the whole row for int8, `group` for int4.
inline std::int64_t quantized_group(std::int64_t cols, int bits, std::int64_t group) {
    return bits == 8 ? cols : (group < 1 ? 1 : group);
}

// Scales of a rows x cols matrix: one a row (int8), one a group of a row (int4); 0 without bits.
inline std::int64_t quantized_scale_count(std::int64_t rows, std::int64_t cols, int bits, std::int64_t group) {
    if (bits == 0 || rows <= 0 || cols <= 0) return 0;
    const std::int64_t g = quantized_group(cols, bits, group);
    return rows * ((cols + g - 1) / g);
}

// Bytes of the packed matrix: the scales, then (values x bits + 7) / 8 of codes.
inline std::size_t quantized_bytes(std::int64_t rows, std::int64_t cols, int bits, std::int64_t group) {
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    return static_cast<std::size_t>(quantized_scale_count(rows, cols, bits, group)) * 4 +
           (n * static_cast<std::size_t>(bits) + 7) / 8;
}

// Rows [r0, r1) of a packed (rows, cols) matrix into out (the whole matrix's row-major storage): value k is
// store(q x s) with q x s in f32. The host's decoder (nn/compression.h dequantize_packed) and the CPU
// backend's (Backend::dequantize, rows spread over threads) are this one; the scale is read once per group
// and the codes without a branch, so that the loops vectorise.
template <class T, class Store>
void dequantize_rows(const std::uint8_t* packed, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group,
                     std::int64_t r0, std::int64_t r1, T* out, Store store) {
    const std::int64_t g = quantized_group(cols, bits, group), per_row = (cols + g - 1) / g;
    const std::uint8_t* codes = packed + quantized_scale_count(rows, cols, bits, group) * 4;
    for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c0 = 0, gi = r * per_row; c0 < cols; c0 += g, ++gi) {
            float s;
            std::memcpy(&s, packed + 4 * gi, 4);
            const std::int64_t k0 = r * cols, c1 = c0 + g < cols ? c0 + g : cols;
            if (bits == 8) {
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
