// Fuzzes the instruction data reader (core/data/instruct_data.cpp): rows of prompt/completion, messages,
// Alpaca or ShareGPT, a row a line or one JSON array (seeds of each in corpus/jsonl), then every chat
// template and both sequence layouts with the byte tokenizer.
// Input: the file. Rows that parse must give windows whose targets are -100 or a byte, counted as they say.
#include <cstdint>
#include <string>

#include "data/instruct_data.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    static const auto tok = hr::make_tokenizer("byte", "");
    hrfuzz::expect_ok_or_input_error([&] {
        const hr::InstructRows rows = hr::parse_instruct_data(text, "rows.jsonl");
        if (rows.train.empty() || rows.validation.empty()) hrfuzz::finding("a split without rows");
        for (const auto* r : rows.file_rows())
            if (r->line < 1 || (rows.json_array && r->element < 1)) hrfuzz::finding("a row without its place");
        for (const char* t : {"plain", "llama3", "chatml", "mistral"})
            for (const char* layout : {"pad", "pack"}) {
                for (const auto& r : rows.train) hr::check_chat_roles(t, r, "rows.jsonl");
                const hr::TokenWindows w = hr::make_token_windows(rows.train, t, *tok, 8, layout);
                if (w.x.size() != w.y.size() || w.x.size() != static_cast<std::size_t>(w.windows() * 8) ||
                    w.counted.size() != static_cast<std::size_t>(w.windows()))
                    hrfuzz::finding("windows of the wrong size");
                std::int64_t counted = 0;
                for (auto y : w.y) {
                    if (y != -100 && (y < 0 || y >= 256)) hrfuzz::finding("a target outside the vocabulary");
                    counted += y != -100;
                }
                std::int64_t said = 0;
                for (auto c : w.counted) said += c;
                if (said != counted) hrfuzz::finding("counted targets disagree");
            }
    });
    return 0;
}
