#pragma once
// safetensors reader and writer (https://github.com/huggingface/safetensors, format section):
//   8 bytes   N, little-endian u64: the header's length
//   N bytes   UTF-8 JSON: {"__metadata__": {str: str}, "NAME": {"dtype": "F32", "shape": [..],
//             "data_offsets": [begin, end]}, ...}, padded with spaces to a multiple of 8 bytes
//   rest      the byte buffer: tensors back to back, offsets relative to its start, no gaps,
//             no overlaps, little-endian, row-major.
// The writer keeps the tensors in the order given (header keys and data alike) and puts
// "__metadata__" first when there is any. Files load with safetensors.torch.load_file.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"

namespace hr {

struct SafeTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;                     // () for a scalar
    std::vector<std::uint8_t> data;  // host bytes, little-endian, numel * dtype_size
};

struct SafeTensorsFile {
    std::vector<SafeTensor> tensors;
    std::map<std::string, std::string> metadata;

    const SafeTensor* find(const std::string& name) const;
};

// The header as written (JSON plus the space padding), without the 8-byte length. Throws Error
// on an invalid file description (empty or duplicate names, data size not matching the shape).
std::string safetensors_header(const SafeTensorsFile& file);

// Writes through AtomicFile (base/atomic_file.h): on any failure the temporary file is removed, an
// existing file at `path` is left unchanged, and an Error names the path and reason.
void write_safetensors(const std::string& path, const SafeTensorsFile& file);

// Reads and checks a file; a malformed one is an InputError (an HR_MSG id, base/message.h) naming the
// file and the problem. Header arithmetic (shapes, dtype sizes, offsets) is overflow-checked, and every
// allocation is bounded by the file's size: the tensors must tile the data buffer exactly. Tensors come
// back in the header's key order.
SafeTensorsFile read_safetensors(const std::string& path);

// Largest header accepted by the reader (as the reference implementation: 100 MB).
constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;
// JSON nesting accepted in a header (a valid one has 3 levels), checked before parsing.
constexpr int kSafetensorsMaxDepth = 16;
// Dimensions of one tensor (PyTorch's own limit is 64).
constexpr std::size_t kSafetensorsMaxRank = 64;

}  // namespace hr
