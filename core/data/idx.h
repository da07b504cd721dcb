#pragma once
// IDX reader (the MNIST / Fashion-MNIST file format, http://yann.lecun.com/exdb/mnist/).
// A file is a big-endian header (magic 0x0000TTDD: TT = element type, DD = number of dimensions,
// then DD u32 sizes) followed by the elements. Headroom reads u8 images (magic 0x00000803,
// (N, H, W)) and u8 labels (magic 0x00000801, (N)). Files may be raw or gzip-compressed (.gz);
// zlib reads both transparently. Every problem is an hr::InputError naming the file.
//
// Hostile files: a header is only a claim. A raw file's claimed size is checked against the file's
// size before anything is allocated; a gzip file's buffer grows while it decompresses, so memory is
// at most about twice what the file really holds. Devices and pipes are refused; running out of
// memory is an InputError, never a bare std::bad_alloc.
#include <cstdint>
#include <string>
#include <vector>

namespace hr {

constexpr std::uint32_t kIdxImagesMagic = 0x00000803;
constexpr std::uint32_t kIdxLabelsMagic = 0x00000801;
// Largest image accepted (rows * cols), the model spec's per-sample element limit (docs/model-spec.md).
constexpr std::uint64_t kIdxMaxImagePixels = std::uint64_t{1} << 31;

struct IdxHeader {
    std::uint32_t magic = 0;
    std::vector<std::int64_t> dims;  // (N, H, W) for images, (N) for labels
};

struct IdxImages {
    std::int64_t count = 0;
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::uint8_t> pixels;  // (count, rows, cols), row-major
};

// Reads only the header (cheap: a few bytes even of a .gz). Throws InputError if the file is
// missing or not an IDX u8 file with 1..3 dimensions.
IdxHeader read_idx_header(const std::string& path);

// Reads a whole u8 3-D image file; checks the magic and that the data size matches the header.
IdxImages read_idx_images(const std::string& path);

// Reads a whole u8 1-D label file; checks the magic, the size, and that every label is
// < num_classes.
std::vector<std::int64_t> read_idx_labels(const std::string& path, int num_classes = 10);

// Reads an image file and its label file and checks that they hold the same number of samples.
void read_idx_pair(const std::string& images_path, const std::string& labels_path, int num_classes,
                   IdxImages& images, std::vector<std::int64_t>& labels);

}  // namespace hr
