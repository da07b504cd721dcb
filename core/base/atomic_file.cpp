#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace hr {

namespace {
std::string folder_of(const std::string& path) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    return dir.empty() ? "." : dir;
}
std::string hint_for(int err) {
    switch (err) {
        case ENOENT: return "; check that the folder exists";
        case EACCES:
        case EPERM: return "; pick a folder you can write to";
        case EROFS: return "; the file system is read-only";
        case ENOSPC:
        case EDQUOT: return "; free some disk space";
        case EFBIG: return "; the file is too large for this file system or limit";
        default: return "";
    }
}
}  // namespace

AtomicFile::AtomicFile(std::string path, unsigned mode) : path_(std::move(path)) {
    const std::filesystem::path p(path_);
    std::string dir = folder_of(path_);
    tmp_ = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
    fd_ = ::mkostemp(tmp_.data(), O_CLOEXEC);
    if (fd_ < 0) {
        const int e = errno;
        tmp_.clear();
        throw Error("cannot write " + path_ + ": " + std::strerror(e) +
                    " (while creating a temporary file in its folder)" + hint_for(e));
    }
    ::fchmod(fd_, static_cast<mode_t>(mode));
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    throw Error("cannot write " + path_ + ": " + what + ": " + std::strerror(err) + hint_for(err) +
                " (the previous file, if any, is unchanged)");
}

void AtomicFile::write(const void* data, std::size_t bytes) {
    if (fd_ < 0) throw Error("internal: AtomicFile::write after commit (" + path_ + ")");
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
        ssize_t n = ::write(fd_, p, bytes);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("writing", errno);
        }
        p += n;
        bytes -= static_cast<std::size_t>(n);
    }
}

void AtomicFile::commit() {
    if (fd_ < 0) throw Error("internal: AtomicFile::commit twice (" + path_ + ")");
    if (::fsync(fd_) != 0) fail("flushing to disk", errno);
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) fail("closing the file", errno);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("renaming the temporary file onto it", errno);
    tmp_.clear();
    // make the rename itself durable
    int dfd = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
    AtomicFile f(path);
    f.write(bytes);
    f.commit();
}

bool is_atomic_temp_name(const std::string& name) {
    if (name.size() < 13 || name[0] != '.') return false;
    const std::size_t at = name.rfind(".tmp-");
    return at != std::string::npos && at > 1 && name.size() - at == 11;
}

}  // namespace hr
