#pragma once
// What the model_spec*.cpp files share and nothing else uses.
#include <string>

#include <nlohmann/json.hpp>

#include "nn/model_spec.h"

namespace hr {

// The layer types a spec may name (the catalog's, losses left out), comma-separated, for messages.
std::string known_layer_types();
// An attribute's value as JSON of its kind (integer, boolean or real).
nlohmann::json layer_attr_json(const AttrInfo& a, double v);

}  // namespace hr
