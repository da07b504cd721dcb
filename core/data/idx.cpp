#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/error.h"

namespace hr {
namespace {

std::string hex32(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

// A zlib file handle: reads .gz files and (transparently) raw files.
class GzFile {
public:
    explicit GzFile(const std::string& path) : path_(path) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            throw InputError(path + ": file not found; check the path or download the dataset again");
        if (std::filesystem::is_directory(path, ec))
            throw InputError(path + ": is a directory, expected an IDX file");
        errno = 0;
        f_ = gzopen(path.c_str(), "rb");
        if (!f_) {
            std::string why = errno ? std::strerror(errno) : "out of memory";
            throw InputError(path + ": cannot open (" + why + "); check the file's permissions");
        }
        gzbuffer(f_, 1 << 20);
    }
    ~GzFile() {
        if (f_) gzclose_r(f_);
    }
    GzFile(const GzFile&) = delete;
    GzFile& operator=(const GzFile&) = delete;

    // Reads up to n bytes; returns how many were read (less than n only at the end of the data).
    std::size_t read(void* dst, std::size_t n) {
        std::size_t done = 0;
        auto* out = static_cast<unsigned char*>(dst);
        while (done < n) {
            unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
            int got = gzread(f_, out + done, chunk);
            if (got < 0) {
                int code = 0;
                const char* msg = gzerror(f_, &code);
                throw InputError(path_ + ": cannot be decompressed (zlib: " + (msg ? msg : "error") +
                                 "); the download is damaged, download it again");
            }
            if (got == 0) break;
            done += static_cast<std::size_t>(got);
        }
        return done;
    }

    // True if zlib met a cut-short gzip stream.
    bool stream_truncated() {
        int code = Z_OK;
        gzerror(f_, &code);
        return code == Z_BUF_ERROR;
    }

    bool compressed() { return gzdirect(f_) == 0; }

private:
    std::string path_;
    gzFile f_ = nullptr;
};

std::uint32_t be32(const unsigned char* p) {
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
           std::uint32_t(p[3]);
}

const char* kind_name(std::uint32_t magic) {
    return magic == kIdxImagesMagic ? "image" : "label";
}

// Reads and checks the header. expected_magic = 0 accepts any u8 IDX file of 1..3 dimensions.
IdxHeader read_header(GzFile& f, const std::string& path, std::uint32_t expected_magic) {
    unsigned char m[4];
    std::size_t got = f.read(m, 4);
    if (got < 4)
        throw InputError(path + ": too short to be an IDX file (" + std::to_string(got) +
                         " bytes); download it again");
    IdxHeader h;
    h.magic = be32(m);
    bool u8_idx = m[0] == 0 && m[1] == 0 && m[2] == 0x08 && m[3] >= 1 && m[3] <= 3;
    if (expected_magic != 0 && h.magic != expected_magic) {
        std::string what = std::string("not an IDX ") + kind_name(expected_magic) + " file (magic " +
                           hex32(h.magic) + ", expected " + hex32(expected_magic) + "); ";
        if (h.magic == kIdxImagesMagic || h.magic == kIdxLabelsMagic)
            what += std::string("it is an IDX ") + kind_name(h.magic) +
                    " file: are the image and label files swapped?";
        else if (m[0] == 0x1f && m[1] == 0x8b)
            what += "is it gzip-compressed twice or a different dataset? (decompress it once with gunzip)";
        else if (m[0] == 0 && m[1] == 0)
            what += "it is an IDX file of another element type or dimension count; Headroom reads u8 "
                    "images (N, H, W) and u8 labels (N)";
        else
            what += "is it gzip-compressed twice or a different dataset?";
        throw InputError(path + ": " + what);
    }
    if (expected_magic == 0 && !u8_idx)
        throw InputError(path + ": not an IDX u8 file (magic " + hex32(h.magic) +
                         "); is it a different dataset or a damaged download?");
    int ndims = m[3];
    unsigned char d[12];
    got = f.read(d, 4 * static_cast<std::size_t>(ndims));
    if (got < 4u * ndims)
        throw InputError(path + ": truncated header (" + std::to_string(4 + got) + " bytes, expected " +
                         std::to_string(4 + 4 * ndims) + "); download it again");
    for (int i = 0; i < ndims; ++i) h.dims.push_back(be32(d + 4 * i));
    return h;
}

std::string dims_desc(const IdxHeader& h) {
    std::ostringstream s;
    if (h.magic == kIdxImagesMagic)
        s << h.dims[0] << " images of " << h.dims[1] << "x" << h.dims[2];
    else
        s << h.dims[0] << " labels";
    return s.str();
}

// Reads the body into out (already sized from the header) and checks the size exactly.
void read_body(GzFile& f, const std::string& path, const IdxHeader& h, std::uint8_t* out,
               std::size_t expected) {
    std::size_t header_bytes = 4 + 4 * h.dims.size();
    std::size_t got = f.read(out, expected);
    const char* has = f.compressed() ? "it decompresses to" : "the file has";
    if (got < expected) {
        std::string msg = path + ": truncated: header says " + dims_desc(h) + " (" +
                          std::to_string(expected) + " bytes) but " + has + " " +
                          std::to_string(header_bytes + got) + " bytes";
        if (f.compressed() && f.stream_truncated()) msg += " and the gzip stream is cut short";
        throw InputError(msg + "; download it again");
    }
    unsigned char extra[4096];
    std::size_t more = 0;
    for (;;) {
        std::size_t n = f.read(extra, sizeof extra);
        if (n == 0) break;
        more += n;
    }
    if (more > 0)
        throw InputError(path + ": header says " + dims_desc(h) + " (" + std::to_string(expected) +
                         " bytes) but " + has + " " + std::to_string(more) +
                         " more bytes after them; the file is damaged or not a plain IDX file, "
                         "download it again");
}

}  // namespace

IdxHeader read_idx_header(const std::string& path) {
    GzFile f(path);
    return read_header(f, path, 0);
}

IdxImages read_idx_images(const std::string& path) {
    GzFile f(path);
    IdxHeader h = read_header(f, path, kIdxImagesMagic);
    IdxImages img;
    img.count = h.dims[0];
    img.rows = h.dims[1];
    img.cols = h.dims[2];
    if (img.rows == 0 || img.cols == 0)
        throw InputError(path + ": header says images of " + std::to_string(img.rows) + "x" +
                         std::to_string(img.cols) + " pixels; the file is damaged, download it again");
    // Guard against a damaged header asking for absurd amounts of memory (> 64 GiB).
    long double bytes = static_cast<long double>(img.count) * img.rows * img.cols;
    if (bytes > static_cast<long double>(64ull << 30))
        throw InputError(path + ": header says " + dims_desc(h) +
                         ", which is implausibly large; the file is damaged, download it again");
    std::size_t expected = static_cast<std::size_t>(img.count * img.rows * img.cols);
    img.pixels.resize(expected);
    read_body(f, path, h, img.pixels.data(), expected);
    return img;
}

std::vector<std::int64_t> read_idx_labels(const std::string& path, int num_classes) {
    GzFile f(path);
    IdxHeader h = read_header(f, path, kIdxLabelsMagic);
    std::vector<std::uint8_t> raw(static_cast<std::size_t>(h.dims[0]));
    read_body(f, path, h, raw.data(), raw.size());
    std::vector<std::int64_t> labels(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] >= num_classes)
            throw InputError(path + ": label " + std::to_string(raw[i]) + " at index " + std::to_string(i) +
                             " is out of range (expected 0.." + std::to_string(num_classes - 1) +
                             "); the file is damaged or belongs to a dataset with more classes");
        labels[i] = raw[i];
    }
    return labels;
}

void read_idx_pair(const std::string& images_path, const std::string& labels_path, int num_classes,
                   IdxImages& images, std::vector<std::int64_t>& labels) {
    images = read_idx_images(images_path);
    labels = read_idx_labels(labels_path, num_classes);
    if (static_cast<std::int64_t>(labels.size()) != images.count)
        throw InputError(images_path + " holds " + std::to_string(images.count) + " images but " +
                         labels_path + " holds " + std::to_string(labels.size()) +
                         " labels; they must have the same count: are they from the same dataset and "
                         "split (train vs t10k)?");
}

}  // namespace hr
