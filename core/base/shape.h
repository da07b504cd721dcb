#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace hr {

// A tensor shape, outermost dimension first: (N, C, H, W) for images, (N, F) for features.
using Shape = std::vector<std::int64_t>;

std::int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);  // "(64, 1, 28, 28)"
Shape with_batch(std::int64_t batch, const Shape& per_sample);

}  // namespace hr
