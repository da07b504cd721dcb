// Fuzzes the CIFAR-10 reader (core/data/cifar.cpp): a batch file, and batches.meta.txt.
// Input: one mode byte, then the file. Mode bit 0: the file is batches.meta.txt (1) or a batch (0).
#include <cstdint>
#include <string>

#include "data/cifar.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    static hrfuzz::MemFile file;
    file.set(data + 1, size - 1);
    if (data[0] & 1) {
        hrfuzz::expect_ok_or_input_error([&] {
            if (hr::read_cifar_class_names(file.path()).size() != 10) hrfuzz::finding("not ten class names");
        });
        return 0;
    }
    hrfuzz::expect_ok_or_input_error([&] {
        hr::Dataset d;
        hr::read_cifar_batch(file.path(), d);
        if (d.count < 1 || static_cast<std::int64_t>(d.images.size()) != d.count * hr::kCifarImageBytes ||
            static_cast<std::int64_t>(d.labels.size()) != d.count)
            hrfuzz::finding("records do not match the file's size");
        for (std::int64_t l : d.labels)
            if (l < 0 || l > 9) hrfuzz::finding("a label outside 0..9");
        if (hr::cifar_batch_records(file.path()) != d.count) hrfuzz::finding("the size check disagrees");
    });
    return 0;
}
