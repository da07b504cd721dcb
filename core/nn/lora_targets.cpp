#include "nn/lora_targets.h"

#include "base/error.h"

namespace hr {

const std::vector<std::string>& lora_target_names() {
    static const std::vector<std::string> names = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
    return names;
}

int parse_lora_targets(const std::string& list) {
    const auto& names = lora_target_names();
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ",") + n;
    int mask = 0;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = list.find(',', start);
        std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!name.empty() && name.front() == ' ') name.erase(name.begin());
        while (!name.empty() && name.back() == ' ') name.pop_back();
        int bit = -1;
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) bit = static_cast<int>(i);
        if (bit < 0 || (mask & (1 << bit)))
            throw InputError(HR_MSG("strategy.lora_targets",
                                    "--lora-targets %1: '%2' is not one of peft's projection names or is repeated; "
                                    "give a comma list of %3"),
                             {list, name, known});
        mask |= 1 << bit;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return mask;
}

std::string lora_targets_text(int mask) {
    if (mask == 0) mask = 0b101;
    std::string s;
    const auto& names = lora_target_names();
    for (std::size_t i = 0; i < names.size(); ++i)
        if (mask & (1 << i)) s += (s.empty() ? "" : ",") + names[i];
    return s;
}

}  // namespace hr
