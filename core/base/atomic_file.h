#pragma once
// AtomicFile: the one way core/ writes a file a person keeps (weights, run records, specs, checkpoints).
// Bytes go to a fresh temporary file in the destination's folder (unique name, O_EXCL), then commit()
// flushes it to disk (fsync), renames it onto the destination and makes the rename durable (fsync of
// the folder). Until commit() the destination is untouched; an AtomicFile destroyed without commit()
// (an exception, a cancelled write) removes its temporary file. A crash at any point leaves either the
// old file or the new one, never half of one (docs/design.md decision 6), and at worst a stray
// ".NAME.tmp-XXXXXX" that is_atomic_temp_name() recognises.
//
// Errors are hr::Error naming the path, what was being done and the system's reason, with a hint for
// the usual causes (missing folder, no permission, disk full).
#include <cstddef>
#include <string>
#include <string_view>

namespace hr {

class AtomicFile {
public:
    explicit AtomicFile(std::string path, unsigned mode = 0644);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* data, std::size_t bytes);
    void write(std::string_view text) { write(text.data(), text.size()); }
    // fsync, rename onto the destination, fsync the folder. The object is spent afterwards.
    void commit();
    const std::string& path() const { return path_; }

private:
    [[noreturn]] void fail(const std::string& what, int err);
    std::string path_, tmp_;
    int fd_ = -1;
};

// The whole file in one call.
void write_file_atomic(const std::string& path, std::string_view bytes);
// True for the temporary names AtomicFile uses (".NAME.tmp-XXXXXX"), so tools can skip or clean them.
bool is_atomic_temp_name(const std::string& filename);

}  // namespace hr
