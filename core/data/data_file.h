#pragma once
// Reading a whole data file (a CIFAR-10 batch, a CSV table) into memory, the way every loader of
// core/data refuses what is not a plain file: a missing path, a folder, a device or a pipe (which
// could block or never end), a file larger than the loader's limit (named with the limit, before
// anything is allocated), and a read error. Each is an InputError naming the file.
#include <cstdint>
#include <string>

namespace hr {

// The file's bytes. `kind` names what the file should be ("a CIFAR-10 batch file", "a CSV table").
std::string read_data_file(const std::string& path, std::uint64_t max_bytes, const std::string& kind);

// The size of a plain file, with the same checks (no read).
std::uint64_t data_file_size(const std::string& path, const std::string& kind);

}  // namespace hr
