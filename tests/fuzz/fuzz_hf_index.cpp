// Fuzzes the readers of a Hugging Face folder's small JSON files (core/io/hf_folder.cpp): the sharded
// weights' model.safetensors.index.json (parse_hf_index: shard names that are plain file names, limits)
// and a peft adapter's adapter_config.json (parse_peft_config), with peft's tensor names mapped back.
// Input: the file's text (both readers get it).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "io/hf_folder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    hrfuzz::expect_ok_or_input_error([&] {
        const hr::HfIndex idx = hr::parse_hf_index(text, "fuzz index.json");
        if (idx.shards.empty() || idx.shards.size() > hr::kHfMaxShards) hrfuzz::finding("shard count out of range");
        for (const auto& s : idx.shards)
            if (s.find('/') != std::string::npos || s == ".." || s.empty()) hrfuzz::finding("a shard name is a path");
    });
    hrfuzz::expect_ok_or_input_error([&] {
        const hr::PeftAdapterConfig c = hr::parse_peft_config(text, "fuzz adapter_config.json");
        if (c.r < 1) hrfuzz::finding("rank below 1");
        const hr::PeftAdapterConfig back =
            hr::parse_peft_config(hr::peft_config_json(c).dump(), "back");
        if (back.r != c.r || back.target_modules != c.target_modules) hrfuzz::finding("adapter_config round trip differs");
    });
    const std::string name = text.substr(0, 200);  // a tensor name: mapped back and forth to the same
    if (const std::string h = hr::headroom_name_of_peft(name); !h.empty() && hr::headroom_name_of_peft(hr::peft_name_of(h)) != h)
        hrfuzz::finding("peft name mapping");
    return 0;
}
