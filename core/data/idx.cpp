#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <sstream>

#include "base/checked_math.h"
#include "base/error.h"

namespace hr {
namespace {

namespace fs = std::filesystem;

std::string hex32(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string num(std::uint64_t v) { return std::to_string(v); }

// A zlib file handle: reads .gz files and (transparently) raw files.
class GzFile {
public:
    explicit GzFile(const std::string& path) : path_(path) {
        std::error_code ec;
        const fs::file_status st = fs::status(path, ec);
        if (!fs::exists(st))
            throw InputError(HR_MSG("idx.not_found", "%1: file not found; check the path or download the dataset again"),
                             {path});
        if (fs::is_directory(st))
            throw InputError(HR_MSG("idx.is_directory", "%1: is a directory, expected an IDX file"), {path});
        // A device or a pipe could block or never end (/dev/zero); datasets are plain files.
        if (!fs::is_regular_file(st))
            throw InputError(HR_MSG("idx.not_regular", "%1: is not a regular file (a device, pipe or socket); "
                                                       "point to the IDX file itself"),
                             {path});
        file_size_ = static_cast<std::uint64_t>(fs::file_size(path, ec));
        if (ec) file_size_ = 0;
        errno = 0;
        f_ = gzopen(path.c_str(), "rb");
        if (!f_) {
            std::string why = errno ? std::strerror(errno) : "out of memory";
            throw InputError(HR_MSG("idx.cannot_open", "%1: cannot open (%2); check the file's permissions"), {path, why});
        }
        // zlib's buffers (1 MiB in, 2 MiB out for the datasets) are sized to the file, so a small file
        // allocates little.
        gzbuffer(f_, static_cast<unsigned>(std::clamp<std::uint64_t>(file_size_, 8 << 10, 1 << 20)));
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
                throw InputError(HR_MSG("idx.zlib_error",
                                        "%1: cannot be decompressed (zlib: %2); the download is damaged, download it again"),
                                 {path_, msg ? msg : "error"});
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
    std::uint64_t file_size() const { return file_size_; }

private:
    std::string path_;
    gzFile f_ = nullptr;
    std::uint64_t file_size_ = 0;
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
        throw InputError(HR_MSG("idx.too_short", "%1: too short to be an IDX file (%2 bytes); download it again"),
                         {path, num(got)});
    IdxHeader h;
    h.magic = be32(m);
    bool u8_idx = m[0] == 0 && m[1] == 0 && m[2] == 0x08 && m[3] >= 1 && m[3] <= 3;
    if (expected_magic != 0 && h.magic != expected_magic) {
        const std::vector<std::string> args = {path, kind_name(expected_magic), hex32(h.magic), hex32(expected_magic),
                                               kind_name(h.magic)};
        if (h.magic == kIdxImagesMagic || h.magic == kIdxLabelsMagic)
            throw InputError(HR_MSG("idx.swapped", "%1: not an IDX %2 file (magic %3, expected %4); it is an IDX %5 "
                                                   "file: are the image and label files swapped?"),
                             args);
        if (m[0] == 0x1f && m[1] == 0x8b)
            throw InputError(HR_MSG("idx.gzip_twice", "%1: not an IDX %2 file (magic %3, expected %4); is it "
                                                      "gzip-compressed twice or a different dataset? (decompress it "
                                                      "once with gunzip)"),
                             args);
        if (m[0] == 0 && m[1] == 0)
            throw InputError(HR_MSG("idx.other_type", "%1: not an IDX %2 file (magic %3, expected %4); it is an IDX "
                                                      "file of another element type or dimension count; Headroom reads "
                                                      "u8 images (N, H, W) and u8 labels (N)"),
                             args);
        throw InputError(HR_MSG("idx.bad_magic", "%1: not an IDX %2 file (magic %3, expected %4); is it "
                                                 "gzip-compressed twice or a different dataset?"),
                         args);
    }
    if (expected_magic == 0 && !u8_idx)
        throw InputError(HR_MSG("idx.not_u8", "%1: not an IDX u8 file (magic %2); is it a different dataset or a "
                                              "damaged download?"),
                         {path, hex32(h.magic)});
    int ndims = m[3];
    unsigned char d[12];
    got = f.read(d, 4 * static_cast<std::size_t>(ndims));
    if (got < 4u * ndims)
        throw InputError(HR_MSG("idx.truncated_header",
                                "%1: truncated header (%2 bytes, expected %3); download it again"),
                         {path, num(4 + got), num(4 + 4 * static_cast<std::uint64_t>(ndims))});
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

// Grows `out` to n bytes; a failed allocation becomes an InputError naming the file (a bare
// std::bad_alloc would reach the person as "std::bad_alloc").
void grow(std::vector<std::uint8_t>& out, std::size_t n, const std::string& path, std::uint64_t expected) {
    try {
        out.resize(n);
    } catch (const std::bad_alloc&) {
        throw InputError(HR_MSG("idx.no_memory", "%1: not enough memory to load it (%2 bytes of data); close other "
                                                 "programs or use a machine with more memory"),
                         {path, num(expected)});
    }
}

// Bytes read past the end of the announced data before giving up counting (a huge or endless
// gzip stream is not read to its end only to say how much too long it is).
constexpr std::size_t kExtraCountLimit = 1 << 20;

// Reads the body (exactly `expected` bytes) and checks its size. Raw files are checked against the
// file size before anything is allocated; a gzip file's size is only known once decompressed, so the
// buffer grows (doubling) as data arrives: a small file never causes a large allocation.
std::vector<std::uint8_t> read_body(GzFile& f, const std::string& path, const IdxHeader& h, std::uint64_t expected) {
    const std::uint64_t header_bytes = 4 + 4 * h.dims.size();
    const bool compressed = f.compressed();
    auto truncated = [&](std::uint64_t got) {
        if (compressed && f.stream_truncated())
            return InputError(HR_MSG("idx.truncated_gzip", "%1: truncated: header says %2 (%3 bytes) but it "
                                                           "decompresses to %4 bytes and the gzip stream is cut "
                                                           "short; download it again"),
                              {path, dims_desc(h), num(expected), num(header_bytes + got)});
        if (compressed)
            return InputError(HR_MSG("idx.truncated_data_gz", "%1: truncated: header says %2 (%3 bytes) but it "
                                                              "decompresses to %4 bytes; download it again"),
                              {path, dims_desc(h), num(expected), num(header_bytes + got)});
        return InputError(HR_MSG("idx.truncated_data", "%1: truncated: header says %2 (%3 bytes) but the file has "
                                                       "%4 bytes; download it again"),
                          {path, dims_desc(h), num(expected), num(header_bytes + got)});
    };
    auto too_long = [&](std::uint64_t more, bool at_least) {
        const std::string amount = (at_least ? "at least " : "") + num(more);
        if (compressed)
            return InputError(HR_MSG("idx.extra_data_gz", "%1: header says %2 (%3 bytes) but it decompresses to %4 "
                                                          "more bytes after them; the file is damaged or not a plain "
                                                          "IDX file, download it again"),
                              {path, dims_desc(h), num(expected), amount});
        return InputError(HR_MSG("idx.extra_data", "%1: header says %2 (%3 bytes) but the file has %4 more bytes "
                                                   "after them; the file is damaged or not a plain IDX file, "
                                                   "download it again"),
                          {path, dims_desc(h), num(expected), amount});
    };
    if (!compressed && f.file_size() >= header_bytes) {
        const std::uint64_t have = f.file_size() - header_bytes;
        if (have < expected) throw truncated(have);
        if (have > expected) throw too_long(have - expected, false);
    }
    std::vector<std::uint8_t> out;
    std::uint64_t got = 0;
    if (!compressed) {
        grow(out, static_cast<std::size_t>(expected), path, expected);
        got = f.read(out.data(), out.size());
    } else {
        constexpr std::uint64_t kFirstChunk = 64 << 10;
        while (got < expected) {
            if (got == out.size())
                grow(out, static_cast<std::size_t>(std::min(expected, std::max(kFirstChunk, 2 * got))), path, expected);
            const std::size_t want = out.size() - static_cast<std::size_t>(got);
            const std::size_t n = f.read(out.data() + got, want);
            got += n;
            if (n < want) break;  // the end of the data
        }
    }
    if (got < expected) throw truncated(got);
    unsigned char extra[4096];
    std::size_t more = 0;
    while (more < kExtraCountLimit) {
        std::size_t n = f.read(extra, sizeof extra);
        if (n == 0) break;
        more += n;
    }
    if (more > 0) throw too_long(more, more >= kExtraCountLimit);
    return out;
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
        throw InputError(HR_MSG("idx.empty_images", "%1: header says images of %2x%3 pixels; the file is damaged, "
                                                    "download it again"),
                         {path, num(img.rows), num(img.cols)});
    // Each dimension is a u32, so rows * cols fits in 64 bits; count * rows * cols may not.
    const std::uint64_t pixels = static_cast<std::uint64_t>(img.rows) * static_cast<std::uint64_t>(img.cols);
    std::uint64_t expected = 0;
    if (pixels > kIdxMaxImagePixels || !checked_mul(pixels, static_cast<std::uint64_t>(img.count), expected))
        throw InputError(HR_MSG("idx.implausible", "%1: header says %2, which is implausibly large (at most %3 "
                                                   "pixels an image); the file is damaged, download it again"),
                         {path, dims_desc(h), num(kIdxMaxImagePixels)});
    img.pixels = read_body(f, path, h, expected);
    return img;
}

std::vector<std::int64_t> read_idx_labels(const std::string& path, int num_classes) {
    GzFile f(path);
    IdxHeader h = read_header(f, path, kIdxLabelsMagic);
    std::vector<std::uint8_t> raw = read_body(f, path, h, static_cast<std::uint64_t>(h.dims[0]));
    std::vector<std::int64_t> labels;  // as large as the data actually read, times 8
    try {
        labels.resize(raw.size());
    } catch (const std::bad_alloc&) {
        throw InputError(HR_MSG("idx.no_memory", "%1: not enough memory to load it (%2 bytes of data); close other "
                                                 "programs or use a machine with more memory"),
                         {path, num(raw.size() * sizeof(std::int64_t))});
    }
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] >= num_classes)
            throw InputError(HR_MSG("idx.label_range", "%1: label %2 at index %3 is out of range (expected 0..%4); "
                                                       "the file is damaged or belongs to a dataset with more classes"),
                             {path, num(raw[i]), num(i), std::to_string(num_classes - 1)});
        labels[i] = raw[i];
    }
    return labels;
}

void read_idx_pair(const std::string& images_path, const std::string& labels_path, int num_classes,
                   IdxImages& images, std::vector<std::int64_t>& labels) {
    images = read_idx_images(images_path);
    labels = read_idx_labels(labels_path, num_classes);
    if (static_cast<std::int64_t>(labels.size()) != images.count)
        throw InputError(HR_MSG("idx.count_mismatch", "%1 holds %2 images but %3 holds %4 labels; they must have the "
                                                      "same count: are they from the same dataset and split (train "
                                                      "vs t10k)?"),
                         {images_path, num(images.count), labels_path, num(labels.size())});
}

}  // namespace hr
