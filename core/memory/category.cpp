#include "memory/category.h"

#include "base/error.h"

namespace hr {

const char* category_name(MemCategory c) {
    switch (c) {
        case MemCategory::parameters: return "parameters";
        case MemCategory::gradients: return "gradients";
        case MemCategory::optimizer_state: return "optimizer_state";
        case MemCategory::master_weights: return "master_weights";
        case MemCategory::activations: return "activations";
        case MemCategory::workspace: return "workspace";
        case MemCategory::data: return "data";
        case MemCategory::communication: return "communication";
        case MemCategory::other: return "other";
    }
    return "other";
}

MemCategory category_from_name(const std::string& name) {
    for (MemCategory c : all_categories())
        if (name == category_name(c)) return c;
    throw InputError("unknown memory category '" + name + "'");
}

std::size_t total(const CategoryBytes& b) {
    std::size_t t = 0;
    for (auto v : b) t += v;
    return t;
}

}  // namespace hr
