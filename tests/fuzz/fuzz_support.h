#pragma once
// Helpers for the libFuzzer harnesses (tests/fuzz/CMakeLists.txt says how to add one).
//
// The readers under test take a path, so the input is written to an in-memory file (memfd) and
// read back through /proc/self/fd/N: no disk traffic, no temporary files left behind.
//
// The contract every harness checks: bad input ends in hr::InputError (the message a person sees).
// Anything else escaping -- another exception (std::bad_alloc, a JSON library exception, a plain
// hr::Error from deeper code), a sanitizer report, a timeout, a huge allocation -- is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hrfuzz {

// An anonymous in-memory file; path() names it for APIs that open files.
class MemFile {
public:
    MemFile();
    ~MemFile();
    MemFile(const MemFile&) = delete;
    MemFile& operator=(const MemFile&) = delete;
    // Replaces the contents.
    void set(const void* data, std::size_t size);
    void set(std::string_view s) { set(s.data(), s.size()); }
    const std::string& path() const { return path_; }

private:
    int fd_ = -1;
    std::string path_;
};

// Aborts (a finding libFuzzer reports with the input) with a reason.
[[noreturn]] void finding(const std::string& why);

// Runs f; hr::InputError is the expected outcome for bad input, and its message must not be empty.
template <class F>
void expect_ok_or_input_error(F&& f);

}  // namespace hrfuzz

#include "base/error.h"

template <class F>
void hrfuzz::expect_ok_or_input_error(F&& f) {
    try {
        f();
    } catch (const hr::InputError& e) {
        if (std::string(e.what()).empty()) finding("an InputError with an empty message");
    }
}
