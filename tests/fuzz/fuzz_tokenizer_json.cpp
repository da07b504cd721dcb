// Fuzzes the Hugging Face tokenizer.json reader (core/data/hf_tokenizer.cpp): the JSON, the vocabulary,
// merges and added tokens, the pre-tokenizer's PCRE2 pattern, then encoding and decoding with what loaded.
// Input: the file. A tokenizer that loads must encode any text into ids below its vocabulary size and
// decode them without failing.
#include <cstdint>
#include <string>

#include "data/hf_tokenizer.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    hrfuzz::expect_ok_or_input_error([&] {
        const auto tok = hr::parse_hf_tokenizer(text, "tokenizer.json");
        if (tok->vocab_size() <= 0) hrfuzz::finding("a loaded tokenizer with no vocabulary");
        for (const std::string& s : {std::string("Hello <|eot_id|> w\xC3\xB6rld 12345 \n\n  it's"),
                                     text.substr(0, std::min<std::size_t>(text.size(), 256))}) {
            const auto ids = tok->encode(s);
            for (auto id : ids)
                if (id < 0 || id >= tok->vocab_size()) hrfuzz::finding("an id outside the vocabulary");
            (void)tok->decode(ids);
        }
    });
    return 0;
}
