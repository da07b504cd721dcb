#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace hr {

// A tensor shape, outermost dimension first: (N, C, H, W) for images, (N, F) for features.
using Shape = std::vector<std::int64_t>;

// The number of elements. Throws hr::Error when the product does not fit in 64 bits (shapes built
// from user input are checked against tighter limits before they get here: docs/model-spec.md).
std::int64_t shape_numel(const Shape& s);
// The number of elements, or false when the product overflows 64 bits (for code that refuses input).
bool shape_numel_checked(const Shape& s, std::int64_t& out);
std::string shape_str(const Shape& s);  // "(64, 1, 28, 28)"
Shape with_batch(std::int64_t batch, const Shape& per_sample);

}  // namespace hr
