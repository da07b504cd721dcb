#include "base/dtype.h"

#include <cmath>

#include "base/error.h"

namespace hr {

std::size_t dtype_size(DType t) {
    switch (t) {
        case DType::f32: return 4;
        case DType::f64: return 8;
        case DType::bf16: return 2;
        case DType::f16: return 2;
        case DType::i32: return 4;
        case DType::i64: return 8;
        case DType::u8: return 1;
    }
    return 0;
}

const char* dtype_name(DType t) {
    switch (t) {
        case DType::f32: return "f32";
        case DType::f64: return "f64";
        case DType::bf16: return "bf16";
        case DType::f16: return "f16";
        case DType::i32: return "i32";
        case DType::i64: return "i64";
        case DType::u8: return "u8";
    }
    return "?";
}

const char* dtype_safetensors_name(DType t) {
    switch (t) {
        case DType::f32: return "F32";
        case DType::f64: return "F64";
        case DType::bf16: return "BF16";
        case DType::f16: return "F16";
        case DType::i32: return "I32";
        case DType::i64: return "I64";
        case DType::u8: return "U8";
    }
    return "?";
}

DType dtype_from_name(const std::string& name) {
    for (DType t : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32, DType::i64, DType::u8}) {
        if (name == dtype_name(t) || name == dtype_safetensors_name(t)) return t;
    }
    if (name == "float32" || name == "fp32") return DType::f32;
    if (name == "float64" || name == "fp64") return DType::f64;
    if (name == "bfloat16") return DType::bf16;
    if (name == "float16" || name == "fp16" || name == "half") return DType::f16;
    throw InputError("unknown data type '" + name + "'; use one of f32, f64, bf16, f16, i32, i64, u8");
}

bool dtype_is_float(DType t) {
    return t == DType::f32 || t == DType::f64 || t == DType::bf16 || t == DType::f16;
}

std::uint16_t f32_to_bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // quiet NaN
    std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float bf16_to_f32(std::uint16_t h) {
    std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

std::uint16_t f32_to_f16(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t mant = x & 0x007fffffu;
    int exp = static_cast<int>((x >> 23) & 0xff);
    if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int e = exp - 127 + 15;
    if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (e <= 0) {
        if (e < -10) return static_cast<std::uint16_t>(sign);  // underflow -> signed zero
        mant |= 0x00800000u;
        int shift = 14 - e;
        std::uint32_t half_mant = mant >> shift;
        std::uint32_t rem = mant & ((1u << shift) - 1u);
        std::uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
        return static_cast<std::uint16_t>(sign | half_mant);
    }
    std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
    std::uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: correct
    return static_cast<std::uint16_t>(half);
}

float f16_to_f32(std::uint16_t h) {
    std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t mant = h & 0x3ffu;
    std::uint32_t u;
    if (exp == 0) {
        if (mant == 0) {
            u = sign;
        } else {
            int e = -1;
            do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
            u = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 0x1f) {
        u = sign | 0x7f800000u | (mant << 13);
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

}  // namespace hr
