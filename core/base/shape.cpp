#include "base/shape.h"

#include "base/checked_math.h"
#include "base/error.h"

namespace hr {

bool shape_numel_checked(const Shape& s, std::int64_t& out) {
    std::int64_t n = 1;
    for (auto d : s)
        if (!checked_mul(n, d, n)) return false;
    out = n;
    return true;
}

std::int64_t shape_numel(const Shape& s) {
    std::int64_t n = 1;
    if (!shape_numel_checked(s, n))
        throw Error(HR_MSG("shape.overflow",
                           "shape %1 has more elements than a 64-bit count holds; make its dimensions smaller"),
                    {shape_str(s)});
    return n;
}

std::string shape_str(const Shape& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(s[i]);
    }
    if (s.size() == 1) out += ",";
    return out + ")";
}

Shape with_batch(std::int64_t batch, const Shape& per_sample) {
    Shape s;
    s.reserve(per_sample.size() + 1);
    s.push_back(batch);
    s.insert(s.end(), per_sample.begin(), per_sample.end());
    return s;
}

}  // namespace hr
