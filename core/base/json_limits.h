#pragma once
// Guarded JSON parsing for files a person (or an attacker) hands us: model specs, run.json,
// safetensors headers. nlohmann's parser is iterative, but much of what follows a parse is not
// (copies, comparisons, dump(), our own readers), so a file of 100,000 nested brackets would overflow
// the stack later. The nesting depth is therefore counted before parsing and refused past a
// documented limit, and every parse failure becomes an hr::InputError.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hr {

// Deepest nesting of arrays and objects a JSON document may have (docs/model-spec.md). A model spec
// at the residual-nesting limit (64 levels) is about 135 levels deep.
constexpr int kMaxJsonDepth = 256;

// The deepest nesting of [ and { outside strings; counting stops once it passes `stop_above`.
int json_nesting_depth(std::string_view text, int stop_above = kMaxJsonDepth);

// Parses `text` after the depth check. `what` names the source in messages ("runs/a/run.json",
// "model spec 'm.json'"). Throws InputError for too-deep or invalid JSON (including numbers out of
// range such as 1e400).
nlohmann::json parse_json_limited(std::string_view text, const std::string& what);
nlohmann::ordered_json parse_ordered_json_limited(std::string_view text, const std::string& what);

// A short description of a JSON value for messages: the value itself when small, else its kind
// ("an array of 3 items"). Never recursive beyond a few levels, unlike dump().
std::string json_brief(const nlohmann::json& v);

// A number for a JSON record: the value, or null where it is not finite (JSON has no NaN or infinity).
nlohmann::json json_finite(double v);

}  // namespace hr
