# Transformers (issue 12): the BPE tokenizer is SentencePiece (Debian libsentencepiece-dev, installed by
# scripts/setup). Included from the top-level CMakeLists.txt after core/ exists.
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET GLOBAL sentencepiece)
target_link_libraries(headroom_core PRIVATE PkgConfig::SENTENCEPIECE)
