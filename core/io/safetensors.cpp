#include "io/safetensors.h"

#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/json_limits.h"

namespace hr {
namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr DType kAllTypes[] = {DType::bf16, DType::f16, DType::f32, DType::f64,
                               DType::i32,  DType::i64, DType::u8};

const char* const kTypeList = "BF16, F16, F32, F64, I32, I64, U8";

bool parse_dtype(const std::string& s, DType& out) {
    for (DType t : kAllTypes)
        if (s == dtype_safetensors_name(t)) {
            out = t;
            return true;
        }
    return false;
}

std::string offsets_str(std::uint64_t b, std::uint64_t e) {
    return "[" + std::to_string(b) + ", " + std::to_string(e) + "]";
}

}  // namespace

void SafeTensor::materialize() {
    if (!mapped) return;
    data.assign(mapped, mapped + mapped_size);
    mapped = nullptr;
    mapped_size = 0;
    mapping.reset();
}

const SafeTensor* SafeTensorsFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

namespace {
std::string header_of(const SafeTensorsFile& file, bool layout_only);
}

std::string safetensors_header(const SafeTensorsFile& file) { return header_of(file, false); }

namespace {
// layout_only: the tensors' data is not there yet (SafeTensorsStream); their sizes come from the shapes
std::string header_of(const SafeTensorsFile& file, bool layout_only) {
    ojson h = ojson::object();
    if (!file.metadata.empty()) {
        ojson m = ojson::object();
        for (const auto& [k, v] : file.metadata) m[k] = v;
        h["__metadata__"] = std::move(m);
    }
    std::set<std::string> seen;
    std::uint64_t offset = 0;
    for (const auto& t : file.tensors) {
        if (t.name.empty()) throw Error("safetensors: a tensor has an empty name; every tensor needs a name");
        if (t.name == "__metadata__")
            throw Error("safetensors: '__metadata__' is reserved and cannot be a tensor name");
        if (!seen.insert(t.name).second)
            throw Error("safetensors: tensor name '" + t.name + "' appears twice; names must be unique");
        for (auto d : t.shape)
            if (d < 0) throw Error("safetensors: tensor '" + t.name + "' has a negative dimension in " + shape_str(t.shape));
        std::uint64_t bytes = 0;
        if (!checked_mul(static_cast<std::uint64_t>(shape_numel(t.shape)), std::uint64_t{dtype_size(t.dtype)}, bytes) ||
            (!layout_only && bytes != t.nbytes()))
            throw Error("safetensors: tensor '" + t.name + "' " + shape_str(t.shape) + " " +
                        dtype_safetensors_name(t.dtype) + " needs " + std::to_string(bytes) + " bytes but holds " +
                        std::to_string(t.nbytes()));
        ojson e = ojson::object();
        e["dtype"] = dtype_safetensors_name(t.dtype);
        e["shape"] = ojson::array();
        for (auto d : t.shape) e["shape"].push_back(d);
        e["data_offsets"] = ojson::array({offset, offset + bytes});
        h[t.name] = std::move(e);
        offset += bytes;
    }
    std::string s = h.dump();
    s.append((8 - s.size() % 8) % 8, ' ');
    return s;
}
}  // namespace

void write_safetensors(const std::string& path, const SafeTensorsFile& file) {
    std::string header = safetensors_header(file);  // validates before touching the disk
    AtomicFile out(path);
    unsigned char len[8];
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    out.write(len, 8);
    out.write(header);
    for (const auto& t : file.tensors)
        if (t.nbytes() > 0) out.write(t.bytes(), t.nbytes());
    out.commit();
}

SafeTensorsStream::SafeTensorsStream(const std::string& path, const SafeTensorsFile& layout)
    : header_(header_of(layout, true)), out_(path) {  // the header checked before the file is made
    for (const auto& t : layout.tensors)
        sizes_.emplace_back(t.name, static_cast<std::uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype));
    unsigned char len[8];
    const std::uint64_t n = header_.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    out_.write(len, 8);
    out_.write(header_);
}

void SafeTensorsStream::append(const std::string& name, const std::uint8_t* bytes, std::size_t n) {
    // past the tensors that are whole (and those of no bytes) to the one these bytes belong to
    while (at_ < sizes_.size() && written_ == sizes_[at_].second && sizes_[at_].first != name) {
        ++at_;
        written_ = 0;
    }
    if (at_ == sizes_.size() || sizes_[at_].first != name || n > sizes_[at_].second - written_)
        throw Error("internal: safetensors stream " + out_.path() + ": " + std::to_string(n) + " bytes of '" + name +
                    "' out of the header's order or past its size");
    if (n > 0) out_.write(bytes, n);
    written_ += n;
}

void SafeTensorsStream::commit() {
    while (at_ < sizes_.size() && written_ == sizes_[at_].second) {
        ++at_;
        written_ = 0;
    }
    if (at_ != sizes_.size())
        throw Error("internal: safetensors stream " + out_.path() + ": tensor '" + sizes_[at_].first + "' is not whole");
    out_.commit();
}

SafeTensorsFile read_safetensors(const std::string& path, SafetensorsRead mode) {
    // Every refusal names the file; most end with the same advice.
    auto bad = [&](MessageText t, std::vector<std::string> args = {}) -> InputError {
        args.insert(args.begin(), path);
        return InputError(t, std::move(args));
    };
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) throw bad(HR_MSG("safetensors.not_found", "%1: file not found; check the path"));
    if (fs::is_directory(st)) throw bad(HR_MSG("safetensors.is_folder", "%1: is a folder, expected a .safetensors file"));
    if (!fs::is_regular_file(st))
        throw bad(HR_MSG("safetensors.not_regular", "%1: is not a regular file (a device, pipe or socket); point to "
                                                    "the .safetensors file itself"));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw bad(HR_MSG("safetensors.cannot_open", "%1: cannot open (%2); check its permissions"), {std::strerror(errno)});
    in.seekg(0, std::ios::end);
    const std::streamoff end_pos = in.tellg();
    in.seekg(0);
    if (end_pos < 0) throw bad(HR_MSG("safetensors.no_size", "%1: cannot tell its size; is it a regular file?"));
    const std::uint64_t file_size = static_cast<std::uint64_t>(end_pos);
    if (file_size < 8)
        throw bad(HR_MSG("safetensors.too_short", "%1: too short to be a safetensors file (%2 bytes, the 8-byte header "
                                                  "length alone needs 8); the file is damaged or not a safetensors file"),
                  {std::to_string(file_size)});
    unsigned char len[8];
    in.read(reinterpret_cast<char*>(len), 8);
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(len[i]) << (8 * i);
    if (n > kSafetensorsMaxHeader)
        throw bad(HR_MSG("safetensors.header_limit", "%1: header length %2 bytes exceeds the 100 MB limit; the file is "
                                                     "damaged or not a safetensors file"),
                  {std::to_string(n)});
    if (n > file_size - 8)
        throw bad(HR_MSG("safetensors.header_past_end", "%1: header length %2 bytes is larger than the file (%3 bytes); "
                                                        "the file is truncated or not a safetensors file"),
                  {std::to_string(n), std::to_string(file_size)});
    // From here on every size is bounded by the file's: the header (n bytes) is read, and the tensors
    // must tile the rest exactly, so a small file never causes a large allocation.
    std::string header(static_cast<std::size_t>(n), '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    if (!in) throw bad(HR_MSG("safetensors.header_unreadable", "%1: cannot read the header (%2)"), {std::strerror(errno)});
    const std::uint64_t buffer_size = file_size - 8 - n;

    if (json_nesting_depth(header, kSafetensorsMaxDepth) > kSafetensorsMaxDepth)
        throw bad(HR_MSG("safetensors.header_deep", "%1: header JSON is nested more than %2 levels deep (a safetensors "
                                                    "header has 3); the file is damaged or not a safetensors file"),
                  {std::to_string(kSafetensorsMaxDepth)});
    std::string duplicate;
    std::set<std::string> top_keys;
    ojson::parser_callback_t cb = [&](int depth, ojson::parse_event_t event, ojson& parsed) {
        if (event == ojson::parse_event_t::key && depth == 1) {
            std::string k = parsed.get<std::string>();
            if (!top_keys.insert(k).second && duplicate.empty()) duplicate = k;
        }
        return true;
    };
    ojson h;
    try {
        h = ojson::parse(header, cb);
    } catch (const ojson::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
        throw bad(HR_MSG("safetensors.header_json", "%1: header is not valid JSON (%2); the file is damaged or not a "
                                                    "safetensors file"),
                  {e.what()});
    }
    const MessageText damaged_entry =
        HR_MSG("safetensors.bad_entry", "%1: tensor '%2': %3; the file is damaged or not a safetensors file");
    if (!h.is_object())
        throw bad(HR_MSG("safetensors.header_not_object", "%1: header is not a JSON object; the file is damaged or not "
                                                          "a safetensors file"));
    if (!duplicate.empty())
        throw bad(HR_MSG("safetensors.duplicate", "%1: tensor name '%2' appears twice in the header; the file is "
                                                  "damaged or not a safetensors file"),
                  {duplicate});

    struct Entry {
        std::size_t index;
        std::uint64_t begin, end;
    };
    SafeTensorsFile out;
    std::vector<Entry> entries;
    for (auto it = h.begin(); it != h.end(); ++it) {
        const std::string& name = it.key();
        const ojson& v = it.value();
        if (name == "__metadata__") {
            if (!v.is_object())
                throw bad(HR_MSG("safetensors.metadata_not_object", "%1: \"__metadata__\" must be an object of strings; "
                                                                    "the file is damaged or not a safetensors file"));
            for (auto m = v.begin(); m != v.end(); ++m) {
                if (!m.value().is_string())
                    throw bad(HR_MSG("safetensors.metadata_not_string", "%1: \"__metadata__\" entry '%2' is not a "
                                                                        "string; the file is damaged or not a "
                                                                        "safetensors file"),
                              {m.key()});
                out.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        auto entry_error = [&](const std::string& what) { return bad(damaged_entry, {name, what}); };
        if (!v.is_object()) throw entry_error("entry is not an object");
        if (!v.contains("dtype") || !v["dtype"].is_string()) throw entry_error("missing or non-string \"dtype\"");
        if (!v.contains("shape") || !v["shape"].is_array()) throw entry_error("missing or non-array \"shape\"");
        if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
            throw entry_error("\"data_offsets\" must be [begin, end]");
        SafeTensor t;
        t.name = name;
        std::string dt = v["dtype"].get<std::string>();
        if (!parse_dtype(dt, t.dtype))
            throw bad(HR_MSG("safetensors.dtype", "%1: tensor '%2': unknown or unsupported dtype '%3'; Headroom reads %4"),
                      {name, dt, kTypeList});
        if (v["shape"].size() > kSafetensorsMaxRank)
            throw entry_error("shape has " + std::to_string(v["shape"].size()) + " dimensions, more than " +
                              std::to_string(kSafetensorsMaxRank));
        // The element count in checked arithmetic. Every dimension must fit a signed 64-bit Shape
        // entry, and so must the product of the non-zero ones: [0, 2^64 - 1] used to come back as a
        // negative dimension.
        std::uint64_t nonzero = 1;
        bool has_zero = false, overflow = false;
        for (const auto& d : v["shape"]) {
            if (!d.is_number_unsigned()) throw entry_error("shape entries must be non-negative integers");
            const std::uint64_t u = d.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(INT64_MAX)) {
                overflow = true;
                break;
            }
            if (u == 0)
                has_zero = true;
            else if (!checked_mul(nonzero, u, nonzero))
                overflow = true;
            t.shape.push_back(static_cast<std::int64_t>(u));
        }
        const std::uint64_t numel = has_zero ? 0 : nonzero;
        std::uint64_t need = 0;
        if (overflow || nonzero > static_cast<std::uint64_t>(INT64_MAX) ||
            !checked_mul(numel, std::uint64_t{dtype_size(t.dtype)}, need))
            throw entry_error("shape " + v["shape"].dump().substr(0, 200) +
                              " has more elements than a 64-bit count holds");
        const auto& off = v["data_offsets"];
        if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            throw entry_error("data_offsets must be non-negative integers");
        std::uint64_t b = off[0].get<std::uint64_t>(), e = off[1].get<std::uint64_t>();
        if (e < b) throw entry_error("data_offsets " + offsets_str(b, e) + " end before they begin");
        if (need != e - b)
            throw entry_error("shape " + shape_str(t.shape) + " of " + dt + " needs " + std::to_string(need) +
                              " bytes but data_offsets " + offsets_str(b, e) + " span " + std::to_string(e - b));
        if (e > buffer_size)
            throw bad(HR_MSG("safetensors.offsets_range", "%1: tensor '%2': data_offsets %3 are out of range: the data "
                                                          "buffer has %4 bytes; the file is truncated or damaged"),
                      {name, offsets_str(b, e), std::to_string(buffer_size)});
        entries.push_back({out.tensors.size(), b, e});
        out.tensors.push_back(std::move(t));
    }
    // The buffer must be covered exactly: no gaps, no overlaps, nothing left over.
    std::vector<Entry> sorted = entries;
    std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::uint64_t expected = 0;
    const SafeTensor* prev = nullptr;
    for (const auto& e : sorted) {
        const SafeTensor& t = out.tensors[e.index];
        if (e.begin < expected)
            throw bad(HR_MSG("safetensors.overlap", "%1: tensor '%2' data_offsets %3 overlap tensor '%4'; the file is "
                                                    "damaged or not a safetensors file"),
                      {t.name, offsets_str(e.begin, e.end), prev ? prev->name : std::string("?")});
        if (e.begin > expected)
            throw bad(HR_MSG("safetensors.hole", "%1: hole of %2 bytes in the data buffer before tensor '%3' "
                                                 "(data_offsets %4); the file is damaged or not a safetensors file"),
                      {std::to_string(e.begin - expected), t.name, offsets_str(e.begin, e.end)});
        expected = e.end;
        prev = &t;
    }
    if (expected != buffer_size)
        throw bad(HR_MSG("safetensors.trailing", "%1: the data buffer has %2 bytes after the last tensor that no tensor "
                                                 "uses (a hole at the end); the file is damaged or not a safetensors "
                                                 "file"),
                  {std::to_string(buffer_size - expected)});
    if (mode == SafetensorsRead::mapped && buffer_size > 0) {
        // the whole file, read-only and private; the tensors' pointers are offsets into it
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            throw bad(HR_MSG("safetensors.cannot_open", "%1: cannot open (%2); check its permissions"), {std::strerror(errno)});
        void* p = ::mmap(nullptr, static_cast<std::size_t>(file_size), PROT_READ, MAP_PRIVATE, fd, 0);
        const int map_errno = errno;
        ::close(fd);
        if (p == MAP_FAILED)
            throw bad(HR_MSG("safetensors.cannot_map", "%1: cannot be memory-mapped (%2)"), {std::strerror(map_errno)});
        const std::size_t len = static_cast<std::size_t>(file_size);
        std::shared_ptr<const void> mapping(p, [len](const void* q) { ::munmap(const_cast<void*>(q), len); });
        const auto* base = static_cast<const std::uint8_t*>(p) + 8 + n;
        for (const auto& e : entries) {
            SafeTensor& t = out.tensors[e.index];
            t.mapping = mapping;
            t.mapped = base + e.begin;
            t.mapped_size = static_cast<std::size_t>(e.end - e.begin);
        }
        return out;
    }
    for (const auto& e : entries) {
        SafeTensor& t = out.tensors[e.index];
        t.data.resize(static_cast<std::size_t>(e.end - e.begin));  // the tensors tile the file: total <= its size
        if (t.data.empty()) continue;
        in.seekg(static_cast<std::streamoff>(8 + n + e.begin));
        in.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
        if (!in)
            throw bad(HR_MSG("safetensors.tensor_unreadable", "%1: cannot read tensor '%2' (%3)"),
                      {t.name, std::strerror(errno)});
    }
    return out;
}

}  // namespace hr
