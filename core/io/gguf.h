#pragma once
// GGUF writer (llama.cpp's model file, version 3; ggml's docs/gguf.md):
//   u32 magic "GGUF", u32 version 3, u64 tensor count, u64 metadata count
//   metadata: string key (u64 length + UTF-8 bytes), u32 value type, value (arrays: u32 element type,
//             u64 count, the elements)
//   tensor infos: string name, u32 dims, u64 dims (ggml's order: the innermost, row-length dimension
//             first, i.e. PyTorch's shape reversed), u32 ggml type, u64 offset into the data section
//   padding to the alignment (32 bytes, general.alignment's default), then each tensor's data at its
//   offset, each offset a multiple of 32.
// Tensor types written: f32, f16, bf16 and q8_0 (blocks of 32 values: an f16 scale d = max|x| / 127 and
// 32 int8 round(x / d), ggml's quantize_row_q8_0_ref). Values are handed over as f32 rows and converted.
//
// GgufWriter computes every offset from the layout first, writes the header, then takes each tensor's rows
// in the layout's order (a tensor may come in several pieces, so the caller holds no more than a piece);
// the file goes through AtomicFile: nothing is left at the path until commit(), which checks every tensor
// came whole.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/atomic_file.h"

namespace hr {

enum class GgufTensorType : std::uint32_t { f32 = 0, f16 = 1, q8_0 = 8, bf16 = 30 };
const char* gguf_type_name(GgufTensorType t);  // "f32", "f16", "q8_0", "bf16"
// Bytes of a row of n values (q8_0: n a multiple of 32).
std::uint64_t gguf_row_bytes(GgufTensorType t, std::int64_t n);

// The values `n` values of a matrix row hold once written as `type` and read back, in place: f16 / bf16
// rounded (to nearest even), q8_0 quantized in blocks of 32 (n a multiple of 32) and dequantized as ggml
// does (q * d); f32 unchanged. What `headroom generate --as-exported TYPE` computes with.
void gguf_round_trip(GgufTensorType type, float* values, std::size_t n);

using GgufValue = std::variant<std::uint32_t, std::int32_t, float, bool, std::string, std::vector<std::string>,
                               std::vector<std::int32_t>, std::vector<float>>;
struct GgufKv {
    std::string key;
    GgufValue value;
};

struct GgufTensorInfo {
    std::string name;
    std::vector<std::int64_t> shape;  // PyTorch's order (rows first); written reversed
    GgufTensorType type = GgufTensorType::f32;
};

// The bytes of the header (metadata and tensor infos, padded to 32) and each tensor's offset in the data
// section. Error for an empty or duplicate name, a q8_0 tensor whose rows are not a multiple of 32, a shape
// with a dimension < 1 or more than 4 dimensions (ggml's limit).
struct GgufLayout {
    std::string header;
    std::vector<std::uint64_t> offsets;  // per tensor, relative to the data section
    std::uint64_t data_bytes = 0;        // the data section, padding included
};
GgufLayout gguf_layout(const std::vector<GgufKv>& kvs, const std::vector<GgufTensorInfo>& tensors);

class GgufWriter {
public:
    GgufWriter(const std::string& path, const std::vector<GgufKv>& kvs, std::vector<GgufTensorInfo> tensors);
    // The next rows (whole rows: a multiple of the row length) of the current tensor, as f32 values.
    void append_rows(const float* values, std::size_t count);
    void commit();
    std::uint64_t file_bytes() const { return layout_.header.size() + layout_.data_bytes; }

private:
    void pad_to(std::uint64_t offset);
    std::vector<GgufTensorInfo> tensors_;
    GgufLayout layout_;
    std::size_t at_ = 0;          // the tensor being written
    std::uint64_t values_ = 0;    // its values so far
    std::uint64_t written_ = 0;   // bytes of the data section so far
    std::vector<std::uint8_t> buf_;
    AtomicFile out_;
};

}  // namespace hr
