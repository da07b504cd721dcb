// Fuzzes the Hugging Face config.json reader (core/nn/hf_config.cpp): parse_hf_config, the spec it builds
// (hf_model_spec, analysed: every size within the spec's limits or an InputError) and the way back
// (hf_config_of_spec, hf_config_json, parsed again to the same config). Input: the file's text.
#include <cstdint>
#include <string_view>

#include "base/json_limits.h"
#include "fuzz_support.h"
#include "nn/hf_config.h"
#include "nn/transformer_spec.h"
#include "nn/model_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    hrfuzz::expect_ok_or_input_error([&] {
        const hr::HfConfig c = hr::parse_hf_config(hr::parse_json_limited(text, "fuzz config.json"), "fuzz config.json");
        const nlohmann::json spec = hr::hf_model_spec_json(c, 16);
        if (spec["layers"].size() != static_cast<std::size_t>(c.num_hidden_layers) + 3) hrfuzz::finding("layer count");
        hr::HfConfig back = hr::parse_hf_config(hr::hf_config_json(c), "back");
        back.name = c.name;
        back.sliding_window = c.sliding_window;
        if (!(back == c)) hrfuzz::finding("config.json round trip differs");
        if (!hr::find_layer_type("llama_block")) return;
        const hr::ModelSpec s = hr::model_spec_from_json(spec);
        const hr::SpecReport r = hr::analyze_model_spec(s);
        if (r.ok && !hr::is_llama_layout(s)) hrfuzz::finding("a config's spec is not the LLaMA layout");
    });
    return 0;
}
