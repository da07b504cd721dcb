#include "backend/backend.h"

namespace hr {

float counter_uniform(std::uint64_t seed, std::uint64_t counter) {
    // SplitMix64 over (seed, counter): cheap, stateless, identical on every backend.
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

}  // namespace hr
