// Fuzzes the run configuration reader (core/train/config.cpp): run.json (its "config" object) or a
// bare config, train_config_from_json, the JSON round trip, validate_train_config, and for a valid
// config with a valid model the strategy's resolution. Input: the file's text.
#include <cstdint>
#include <string_view>

#include "base/json_limits.h"
#include "fuzz_support.h"
#include "strategy/strategy.h"
#include "train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    hrfuzz::expect_ok_or_input_error([&] {
        const nlohmann::json j = hr::parse_json_limited(text, "fuzz run.json");
        const nlohmann::json& cfg = j.is_object() && j.contains("config") ? j["config"] : j;
        const hr::TrainConfig c = hr::train_config_from_json(cfg);
        const nlohmann::json out = hr::train_config_to_json(c);
        if (hr::train_config_to_json(hr::train_config_from_json(out)) != out) hrfuzz::finding("JSON round trip differs");
        hr::validate_train_config(c);
        if (hr::analyze_model_spec(c.model).ok) {
            const hr::ResolvedStrategy r = hr::resolve_strategy(c.strategy, c.model, c.batch);
            if (r.micro_batch < 1 || r.micro_batch > c.batch || r.accumulate < 1) hrfuzz::finding("strategy out of range");
        }
    });
    return 0;
}
