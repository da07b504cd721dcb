#include "base/json_limits.h"

#include <cmath>

#include "base/error.h"

namespace hr {

int json_nesting_depth(std::string_view text, int stop_above) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) {
                deepest = depth;
                if (deepest > stop_above) return deepest;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

namespace {

template <class J>
J parse_limited(std::string_view text, const std::string& what) {
    if (json_nesting_depth(text) > kMaxJsonDepth)
        throw InputError(HR_MSG("json.too_deep", "%1: JSON nested more than %2 levels deep; the file is damaged or "
                                                 "not what Headroom writes"),
                         {what, std::to_string(kMaxJsonDepth)});
    try {
        return J::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e400
        throw InputError(HR_MSG("json.invalid", "%1 is not valid JSON: %2"), {what, e.what()});
    }
}

}  // namespace

nlohmann::json parse_json_limited(std::string_view text, const std::string& what) {
    return parse_limited<nlohmann::json>(text, what);
}

nlohmann::ordered_json parse_ordered_json_limited(std::string_view text, const std::string& what) {
    return parse_limited<nlohmann::ordered_json>(text, what);
}

std::string json_brief(const nlohmann::json& v) {
    if (v.is_array()) return "an array of " + std::to_string(v.size()) + (v.size() == 1 ? " item" : " items");
    if (v.is_object()) return "an object of " + std::to_string(v.size()) + (v.size() == 1 ? " key" : " keys");
    std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

nlohmann::json json_finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace hr
