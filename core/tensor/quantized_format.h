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

// The code of value k (row-major) from the codes' start, as a signed integer.
inline int quantized_code(const std::uint8_t* codes, std::int64_t k, int bits) {
    if (bits == 8) return static_cast<int>(static_cast<std::int8_t>(codes[k]));
    const std::uint8_t b = codes[k >> 1];
    return static_cast<int>((k & 1) ? (b >> 4) : (b & 0x0F)) - 8;
}

}  // namespace hr
