#pragma once
// Overflow-checked integer arithmetic for sizes computed from input a person (or an attacker) wrote:
// a file header, a model spec, a configuration. Each returns false instead of overflowing (signed
// overflow is undefined behaviour), so the caller can refuse the input with a message.
#include <cstdint>

namespace hr {

// out = a * b; false (out unspecified) when the product does not fit.
inline bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    return !__builtin_mul_overflow(a, b, &out);
}
// out = a + b; false (out unspecified) when the sum does not fit.
inline bool checked_add(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
inline bool checked_add(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    return !__builtin_add_overflow(a, b, &out);
}

}  // namespace hr
