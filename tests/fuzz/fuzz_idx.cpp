// Fuzzes the IDX reader (core/data/idx.cpp): images and labels, raw and gzip.
// Input: one mode byte, then the file. Mode bit 0: labels (1) or images (0); bit 1: gzip-compress
// the rest before reading (explores the growing-buffer path with structured content; a raw input
// that starts with the gzip magic is read as a gzip stream too, so damaged streams are explored);
// bits 2..7: num_classes - 1 for labels.
#include <zlib.h>

#include <cstdint>
#include <string>

#include "data/idx.h"
#include "fuzz_support.h"

namespace {

std::string gzip(const std::string& in) {
    z_stream zs{};
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) hrfuzz::finding("deflateInit2");
    std::string out(deflateBound(&zs, static_cast<uLong>(in.size())) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) hrfuzz::finding("deflate");
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    static hrfuzz::MemFile file;
    const std::uint8_t mode = data[0];
    std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (mode & 2) body = gzip(body);
    file.set(body);
    const std::string& path = file.path();
    hrfuzz::expect_ok_or_input_error([&] {
        hr::IdxHeader h = hr::read_idx_header(path);
        if (h.dims.empty() || h.dims.size() > 3) hrfuzz::finding("header with " + std::to_string(h.dims.size()) + " dims");
    });
    if (mode & 1) {
        const int classes = 1 + (mode >> 2);
        hrfuzz::expect_ok_or_input_error([&] {
            std::vector<std::int64_t> labels = hr::read_idx_labels(path, classes);
            for (auto l : labels)
                if (l < 0 || l >= classes) hrfuzz::finding("label out of range accepted");
        });
    } else {
        hrfuzz::expect_ok_or_input_error([&] {
            hr::IdxImages img = hr::read_idx_images(path);
            if (img.count < 0 || img.rows < 1 || img.cols < 1 ||
                img.pixels.size() != static_cast<std::size_t>(img.count * img.rows * img.cols))
                hrfuzz::finding("image size does not match its header");
        });
    }
    return 0;
}
