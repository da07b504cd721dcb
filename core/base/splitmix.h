#pragma once
// SplitMix64 (Steele, Lea and Flood 2014), the mixing function that seeds and keys the data order: the
// loader's shuffle and the text windows take their per-step draws from it.
#include <cstdint>

namespace hr {

inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

}  // namespace hr
