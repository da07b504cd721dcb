#pragma once
// The "no number changes" guard's hashes (tests/unit/test_same_numbers.cpp, one process, and
// tests/dist/test_train_same_numbers.cpp, ranks): FNV-1a over a run's figures and over its weights file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/safetensors.h"

namespace hr_test {

struct Fnv {
    std::uint64_t h = 1469598103934665603ull;
    void bytes(const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ull;
        }
    }
    void number(double v) { bytes(&v, sizeof v); }
    void text(const std::string& s) { bytes(s.data(), s.size() + 1); }
};

// Every tensor's name and bytes, in name order.
inline std::uint64_t weights_hash(const std::string& path) {
    hr::SafeTensorsFile f = hr::read_safetensors(path);
    std::sort(f.tensors.begin(), f.tensors.end(), [](const hr::SafeTensor& a, const hr::SafeTensor& b) { return a.name < b.name; });
    Fnv h;
    for (const hr::SafeTensor& t : f.tensors) {
        h.text(t.name);
        h.bytes(t.data.data(), t.data.size());
    }
    return h.h;
}

}  // namespace hr_test
