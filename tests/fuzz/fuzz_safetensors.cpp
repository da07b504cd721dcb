// Fuzzes the safetensors reader (core/io/safetensors.cpp). Input: the file.
// What it accepts must be consistent: non-negative shapes, data exactly numel * dtype size, and a
// description our writer accepts too (or refuses with an hr::Error, never anything else).
#include <cstdint>

#include "fuzz_support.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static hrfuzz::MemFile file;
    file.set(data, size);
    hrfuzz::expect_ok_or_input_error([&] {
        hr::SafeTensorsFile f = hr::read_safetensors(file.path());
        std::size_t total = 0;
        for (const auto& t : f.tensors) {
            for (auto d : t.shape)
                if (d < 0) hrfuzz::finding("negative dimension accepted in '" + t.name + "'");
            std::int64_t n = 0;
            if (!hr::shape_numel_checked(t.shape, n)) hrfuzz::finding("element count overflows");
            if (static_cast<std::size_t>(n) * hr::dtype_size(t.dtype) != t.data.size())
                hrfuzz::finding("data size does not match shape");
            total += t.data.size();
        }
        if (total > size) hrfuzz::finding("more tensor bytes than the file holds");
        try {
            (void)hr::safetensors_header(f);
        } catch (const hr::Error&) {
            // e.g. a tensor named "": the reader takes what the format allows, the writer is stricter
        }
    });
    return 0;
}
