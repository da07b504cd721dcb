// Fuzzes the table reader (core/data/table.cpp): CSV and TSV parsing, the target's lookup by name or
// number, the class order, the split and the standardisation.
// Input: one mode byte, then the file. Mode bit 0: TSV (1) or CSV (0); bits 1..2: the target is the
// column named "c" (0), column 1 (1), the last column's number (2), or "" (3: refused); the rest is read
// through load_table from an in-memory file (so the file checks run too).
#include <cmath>
#include <cstdint>
#include <string>

#include "data/table.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    static hrfuzz::MemFile file;
    const std::uint8_t mode = data[0];
    file.set(data + 1, size - 1);
    const bool tsv = mode & 1;
    const int pick = (mode >> 1) & 3;
    std::string target = pick == 0 ? "c" : pick == 1 ? "1" : pick == 2 ? "3" : "";
    hrfuzz::expect_ok_or_input_error([&] {
        hr::TableSummary sum;
        const hr::DatasetPair p = hr::load_table((tsv ? "tsv:" : "csv:") + file.path(), target, &sum);
        // what a run relies on: counts, shapes and labels agree, the features are finite
        const std::int64_t F = static_cast<std::int64_t>(sum.columns.size()) - 1;
        if (F < 1 || p.train.sample_shape != hr::Shape{F}) hrfuzz::finding("feature count does not match the header");
        if (p.train.count < 1 || p.test.count < 1 || p.train.count + p.test.count != sum.rows)
            hrfuzz::finding("the split lost or invented rows");
        if (static_cast<std::int64_t>(sum.test_rows.size()) != p.test.count) hrfuzz::finding("test rows disagree");
        for (const hr::Dataset* d : {&p.train, &p.test}) {
            if (static_cast<std::int64_t>(d->features.size()) != d->count * F ||
                static_cast<std::int64_t>(d->labels.size()) != d->count)
                hrfuzz::finding("a split's arrays do not match its count");
            for (float v : d->features)
                if (!std::isfinite(v)) hrfuzz::finding("a non-finite feature");
            for (std::int64_t l : d->labels)
                if (l < 0 || l >= d->num_classes) hrfuzz::finding("a label outside the classes");
        }
        if (sum.classes.size() < 2 || sum.classes.size() > static_cast<std::size_t>(hr::kMaxTableClasses))
            hrfuzz::finding("class count out of bounds");
    });
    return 0;
}
