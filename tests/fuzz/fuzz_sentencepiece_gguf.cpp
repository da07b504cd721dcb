// Fuzzes the GGUF export's reading of a SentencePiece model (core/train/gguf_export.cpp, gguf_sentencepiece):
// SentencePiece's own parser, then the ModelProto's pieces, trainer and normalizer specs read field by field
// for what llama.cpp's "llama" tokenizer needs. Input: a tokenizer.model. What it accepts must be consistent:
// one score and one type (1 to 6) a piece, special ids inside the vocabulary.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "train/gguf_export.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    hrfuzz::expect_ok_or_input_error([&] {
        const hr::GgufSentencePiece sp = hr::gguf_sentencepiece(bytes, "tokenizer.model");
        const auto n = static_cast<std::int64_t>(sp.pieces.size());
        if (sp.scores.size() != sp.pieces.size() || sp.types.size() != sp.pieces.size())
            hrfuzz::finding("pieces, scores and types of different lengths");
        for (const auto t : sp.types)
            if (t < 1 || t > 6) hrfuzz::finding("a token type outside llama.cpp's 1 to 6");
        for (const auto id : {sp.bos, sp.eos, sp.unk, sp.pad})
            if (id >= n) hrfuzz::finding("a special id outside the vocabulary");
    });
    return 0;
}
