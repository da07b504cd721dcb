#include "io/safetensors.h"

#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

#include "base/error.h"

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

const SafeTensor* SafeTensorsFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::string safetensors_header(const SafeTensorsFile& file) {
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
        std::uint64_t bytes = static_cast<std::uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
        if (bytes != t.data.size())
            throw Error("safetensors: tensor '" + t.name + "' " + shape_str(t.shape) + " " +
                        dtype_safetensors_name(t.dtype) + " needs " + std::to_string(bytes) + " bytes but holds " +
                        std::to_string(t.data.size()));
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

void write_safetensors(const std::string& path, const SafeTensorsFile& file) {
    std::string header = safetensors_header(file);  // validates before touching the disk
    AtomicFile out(path);
    unsigned char len[8];
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    out.write(len, 8);
    out.write(header);
    for (const auto& t : file.tensors)
        if (!t.data.empty()) out.write(t.data.data(), t.data.size());
    out.commit();
}

SafeTensorsFile read_safetensors(const std::string& path) {
    auto bad = [&](const std::string& what) -> InputError {
        return InputError(path + ": " + what);
    };
    std::error_code ec;
    if (!fs::exists(path, ec)) throw InputError(path + ": file not found; check the path");
    if (fs::is_directory(path, ec)) throw InputError(path + ": is a folder, expected a .safetensors file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open (" + std::strerror(errno) + "); check its permissions");
    in.seekg(0, std::ios::end);
    std::uint64_t file_size = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0);
    const std::string damaged = "; the file is damaged or not a safetensors file";
    if (file_size < 8)
        throw bad("too short to be a safetensors file (" + std::to_string(file_size) +
                  " bytes, the 8-byte header length alone needs 8)" + damaged);
    unsigned char len[8];
    in.read(reinterpret_cast<char*>(len), 8);
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(len[i]) << (8 * i);
    if (n > kSafetensorsMaxHeader)
        throw bad("header length " + std::to_string(n) + " bytes exceeds the 100 MB limit" + damaged);
    if (n > file_size - 8)
        throw bad("header length " + std::to_string(n) + " bytes is larger than the file (" +
                  std::to_string(file_size) + " bytes); the file is truncated or not a safetensors file");
    std::string header(static_cast<std::size_t>(n), '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    if (!in) throw bad("cannot read the header (" + std::string(std::strerror(errno)) + ")");
    const std::uint64_t buffer_size = file_size - 8 - n;

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
    } catch (const ojson::exception& e) {
        throw bad(std::string("header is not valid JSON (") + e.what() + ")" + damaged);
    }
    if (!h.is_object()) throw bad("header is not a JSON object" + damaged);
    if (!duplicate.empty()) throw bad("tensor name '" + duplicate + "' appears twice in the header" + damaged);

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
            if (!v.is_object()) throw bad("\"__metadata__\" must be an object of strings" + damaged);
            for (auto m = v.begin(); m != v.end(); ++m) {
                if (!m.value().is_string())
                    throw bad("\"__metadata__\" entry '" + m.key() + "' is not a string" + damaged);
                out.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        const std::string where = "tensor '" + name + "': ";
        if (!v.is_object()) throw bad(where + "entry is not an object" + damaged);
        if (!v.contains("dtype") || !v["dtype"].is_string()) throw bad(where + "missing or non-string \"dtype\"" + damaged);
        if (!v.contains("shape") || !v["shape"].is_array()) throw bad(where + "missing or non-array \"shape\"" + damaged);
        if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
            throw bad(where + "\"data_offsets\" must be [begin, end]" + damaged);
        SafeTensor t;
        t.name = name;
        std::string dt = v["dtype"].get<std::string>();
        if (!parse_dtype(dt, t.dtype))
            throw bad(where + "unknown or unsupported dtype '" + dt + "'; Headroom reads " + kTypeList);
        long double numel = 1;
        for (const auto& d : v["shape"]) {
            if (!d.is_number_unsigned()) throw bad(where + "shape entries must be non-negative integers" + damaged);
            t.shape.push_back(static_cast<std::int64_t>(d.get<std::uint64_t>()));
            numel *= static_cast<long double>(d.get<std::uint64_t>());
        }
        const auto& off = v["data_offsets"];
        if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            throw bad(where + "data_offsets must be non-negative integers" + damaged);
        std::uint64_t b = off[0].get<std::uint64_t>(), e = off[1].get<std::uint64_t>();
        if (e < b) throw bad(where + "data_offsets " + offsets_str(b, e) + " end before they begin" + damaged);
        long double need = numel * dtype_size(t.dtype);
        if (need != static_cast<long double>(e - b))
            throw bad(where + "shape " + shape_str(t.shape) + " of " + dt + " needs " +
                      std::to_string(static_cast<unsigned long long>(need)) + " bytes but data_offsets " +
                      offsets_str(b, e) + " span " + std::to_string(e - b) + damaged);
        if (e > buffer_size)
            throw bad(where + "data_offsets " + offsets_str(b, e) + " are out of range: the data buffer has " +
                      std::to_string(buffer_size) + " bytes; the file is truncated or damaged");
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
            throw bad("tensor '" + t.name + "' data_offsets " + offsets_str(e.begin, e.end) + " overlap tensor '" +
                      (prev ? prev->name : std::string("?")) + "'" + damaged);
        if (e.begin > expected)
            throw bad("hole of " + std::to_string(e.begin - expected) + " bytes in the data buffer before tensor '" +
                      t.name + "' (data_offsets " + offsets_str(e.begin, e.end) + ")" + damaged);
        expected = e.end;
        prev = &t;
    }
    if (expected != buffer_size)
        throw bad("the data buffer has " + std::to_string(buffer_size - expected) +
                  " bytes after the last tensor that no tensor uses (a hole at the end)" + damaged);
    for (const auto& e : entries) {
        SafeTensor& t = out.tensors[e.index];
        t.data.resize(static_cast<std::size_t>(e.end - e.begin));
        if (t.data.empty()) continue;
        in.seekg(static_cast<std::streamoff>(8 + n + e.begin));
        in.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
        if (!in) throw bad("cannot read tensor '" + t.name + "' (" + std::strerror(errno) + ")");
    }
    return out;
}

}  // namespace hr
