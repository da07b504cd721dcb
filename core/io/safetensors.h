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
#include <memory>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/dtype.h"
#include "base/shape.h"

namespace hr {

struct SafeTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;                     // () for a scalar
    std::vector<std::uint8_t> data;  // host bytes, little-endian, numel * dtype_size (empty when mapped)
    // A tensor of a file read with SafetensorsRead::mapped: its bytes in the file's read-only mapping,
    // which `mapping` keeps alive (shared by the file's tensors; unmapped when the last copy goes).
    std::shared_ptr<const void> mapping;
    const std::uint8_t* mapped = nullptr;
    std::size_t mapped_size = 0;

    // The tensor's bytes wherever they are (the mapping or data).
    const std::uint8_t* bytes() const { return mapped ? mapped : data.data(); }
    std::size_t nbytes() const { return mapped ? mapped_size : data.size(); }
    // Copies mapped bytes into data (to change them); nothing for a tensor already in data.
    void materialize();
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

// A safetensors file written tensor by tensor, so that the writer holds no more than one piece at a time:
// `layout` gives every tensor's name, dtype and shape (its data empty) and the metadata; the header is
// checked as write_safetensors checks it before the file is created. append() takes the next bytes, in the
// layout's order, of the tensor `name` (a tensor may come in several pieces); an Error for bytes out of order
// or past a tensor's size. commit() checks that every tensor came whole, then commits as AtomicFile does;
// without it (an exception, say) nothing is left at `path`.
class SafeTensorsStream {
public:
    SafeTensorsStream(const std::string& path, const SafeTensorsFile& layout);
    void append(const std::string& name, const std::uint8_t* bytes, std::size_t n);
    void commit();

private:
    std::string header_;
    std::vector<std::pair<std::string, std::uint64_t>> sizes_;
    std::size_t at_ = 0;         // the tensor being written
    std::uint64_t written_ = 0;  // its bytes so far
    AtomicFile out_;
};

// Reads and checks a file; a malformed one is an InputError (an HR_MSG id, base/message.h) naming the
// file and the problem. Header arithmetic (shapes, dtype sizes, offsets) is overflow-checked, and every
// allocation is bounded by the file's size: the tensors must tile the data buffer exactly. Tensors come
// back in the header's key order.
// SafetensorsRead::mapped maps the file read-only (mmap) instead of copying it: the tensors point into
// the mapping (SafeTensor::bytes), so a model folder of many GiB is read page by page as it is used;
// the checks are the same.
enum class SafetensorsRead { copy, mapped };
SafeTensorsFile read_safetensors(const std::string& path, SafetensorsRead mode = SafetensorsRead::copy);

// Largest header accepted by the reader (as the reference implementation: 100 MB).
constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;
// JSON nesting accepted in a header (a valid one has 3 levels), checked before parsing.
constexpr int kSafetensorsMaxDepth = 16;
// Dimensions of one tensor (PyTorch's own limit is 64).
constexpr std::size_t kSafetensorsMaxRank = 64;

}  // namespace hr
