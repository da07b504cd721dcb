#include "data/data_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>

#include "base/error.h"
#include "memory/allocator.h"

namespace hr {

namespace fs = std::filesystem;

std::uint64_t data_file_size(const std::string& path, const std::string& kind) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st))
        throw InputError(HR_MSG("datafile.not_found", "%1: file not found; check the path (expected %2)"), {path, kind});
    if (fs::is_directory(st))
        throw InputError(HR_MSG("datafile.is_directory", "%1: is a folder, expected %2"), {path, kind});
    if (!fs::is_regular_file(st))
        throw InputError(HR_MSG("datafile.not_regular", "%1: is not a regular file (a device, pipe or socket); "
                                                        "point to %2 itself"),
                         {path, kind});
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec)
        throw InputError(HR_MSG("datafile.cannot_stat", "%1: cannot read its size (%2)"), {path, ec.message()});
    return size;
}

std::string read_data_file(const std::string& path, std::uint64_t max_bytes, const std::string& kind) {
    const std::uint64_t size = data_file_size(path, kind);
    if (size > max_bytes)
        throw InputError(HR_MSG("datafile.too_large", "%1: %2 is larger than the %3 Headroom reads as %4; use a "
                                                      "smaller file or a part of it"),
                         {path, format_bytes(size), format_bytes(max_bytes), kind});
    errno = 0;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f)
        throw InputError(HR_MSG("datafile.cannot_open", "%1: cannot open (%2); check the file's permissions"),
                         {path, errno ? std::strerror(errno) : "unknown error"});
    std::string bytes;
    try {
        bytes.resize(static_cast<std::size_t>(size));
    } catch (const std::bad_alloc&) {
        throw InputError(HR_MSG("datafile.no_memory", "%1: not enough memory to read its %2; close other programs"),
                         {path, format_bytes(size)});
    }
    const std::size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f.get());
    if (got != bytes.size())
        throw InputError(HR_MSG("datafile.short_read", "%1: could read only %2 of its %3 bytes; the file changed "
                                                       "while it was read or the disk has an error"),
                         {path, std::to_string(got), std::to_string(bytes.size())});
    return bytes;
}

}  // namespace hr
