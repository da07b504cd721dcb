# Transformers (issue 12): the BPE tokenizer is SentencePiece (Debian libsentencepiece-dev, installed by
# scripts/setup). Included from the top-level CMakeLists.txt after core/ exists.
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET GLOBAL sentencepiece)
target_link_libraries(headroom_core PRIVATE PkgConfig::SENTENCEPIECE)
# Hugging Face tokenizer.json pre-tokenizer patterns (\p{L}, \p{N}, lookahead; issue 46) need a Unicode
# regex library: PCRE2 (Debian libpcre2-dev, installed by scripts/setup).
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET GLOBAL libpcre2-8)
target_link_libraries(headroom_core PRIVATE PkgConfig::PCRE2)
