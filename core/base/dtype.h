#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace hr {

enum class DType : std::uint8_t { f32, f64, bf16, f16, i32, i64, u8 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);          // "f32", "bf16", ...
const char* dtype_safetensors_name(DType t);  // "F32", "BF16", ...
DType dtype_from_name(const std::string& name);  // accepts both spellings; throws InputError
bool dtype_is_float(DType t);

// bf16 / f16 storage helpers (round to nearest even; NaN preserved).
std::uint16_t f32_to_bf16(float f);
float bf16_to_f32(std::uint16_t h);
std::uint16_t f32_to_f16(float f);
float f16_to_f32(std::uint16_t h);

}  // namespace hr
