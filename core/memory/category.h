#pragma once
#include <array>
#include <cstddef>
#include <string>

namespace hr {

// Every allocation carries one of these (docs/design.md decision 3).
enum class MemCategory : int {
    parameters = 0,
    gradients,
    optimizer_state,
    master_weights,
    activations,
    workspace,
    data,
    communication,
    other,
};

constexpr std::size_t kMemCategoryCount = 9;

const char* category_name(MemCategory c);  // "parameters", "optimizer_state", ...
MemCategory category_from_name(const std::string& name);  // throws InputError
constexpr std::array<MemCategory, kMemCategoryCount> all_categories() {
    return {MemCategory::parameters, MemCategory::gradients, MemCategory::optimizer_state,
            MemCategory::master_weights, MemCategory::activations, MemCategory::workspace,
            MemCategory::data, MemCategory::communication, MemCategory::other};
}

using CategoryBytes = std::array<std::size_t, kMemCategoryCount>;

inline std::size_t& at(CategoryBytes& b, MemCategory c) { return b[static_cast<std::size_t>(c)]; }
inline std::size_t at(const CategoryBytes& b, MemCategory c) { return b[static_cast<std::size_t>(c)]; }
std::size_t total(const CategoryBytes& b);

}  // namespace hr
