#include "fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace hrfuzz {

MemFile::MemFile() {
    fd_ = memfd_create("hr-fuzz", 0);
    if (fd_ < 0) {
        std::perror("memfd_create");
        std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() {
    if (fd_ >= 0) close(fd_);
}

void MemFile::set(const void* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0 || (size > 0 && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size))) {
        std::perror("memfd write");
        std::abort();
    }
}

void finding(const std::string& why) {
    std::fprintf(stderr, "fuzz finding: %s\n", why.c_str());
    std::abort();
}

}  // namespace hrfuzz
