#include "data/cifar.h"

#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "data/data_file.h"

namespace hr {

namespace fs = std::filesystem;

namespace {
const char* const kKind = "a CIFAR-10 batch file (data_batch_N.bin or test_batch.bin)";

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
}

std::int64_t records_of(const std::string& path, std::uint64_t size) {
    if (size == 0)
        throw InputError(HR_MSG("cifar.empty", "%1: the file is empty; a CIFAR-10 batch holds records of 3073 bytes "
                                               "(a label and a 32x32 colour image): unpack cifar-10-binary.tar.gz again"),
                         {path});
    if (size % kCifarRecordBytes != 0)
        throw InputError(HR_MSG("cifar.partial_record",
                                "%1: %2 bytes is not a whole number of 3073-byte records (a label and a 32x32 colour "
                                "image); the file is truncated or not a CIFAR-10 binary batch (the Python version of "
                                "CIFAR-10 is another format): unpack cifar-10-binary.tar.gz again"),
                         {path, std::to_string(size)});
    if (size > kCifarMaxBatchBytes)
        throw InputError(HR_MSG("cifar.too_large", "%1: %2 records is more than the %3 a batch file may hold; it is "
                                                   "not a CIFAR-10 batch file"),
                         {path, std::to_string(size / kCifarRecordBytes),
                          std::to_string(kCifarMaxBatchBytes / kCifarRecordBytes)});
    return static_cast<std::int64_t>(size / kCifarRecordBytes);
}
}  // namespace

const std::vector<std::string>& cifar10_class_names() {
    static const std::vector<std::string> names = {"airplane", "automobile", "bird",  "cat",  "deer",
                                                   "dog",      "frog",       "horse", "ship", "truck"};
    return names;
}

CifarFiles find_cifar_files(const std::string& dir) {
    CifarFiles f;
    std::error_code ec;
    for (int i = 1; i <= 5; ++i) {
        const std::string name = "data_batch_" + std::to_string(i) + ".bin";
        if (fs::is_regular_file(dir + "/" + name, ec)) f.train.push_back(dir + "/" + name);
        else f.missing.push_back(name);
    }
    if (fs::is_regular_file(dir + "/test_batch.bin", ec)) f.test = dir + "/test_batch.bin";
    else f.missing.push_back("test_batch.bin");
    if (fs::is_regular_file(dir + "/batches.meta.txt", ec)) f.meta = dir + "/batches.meta.txt";
    return f;
}

std::int64_t cifar_batch_records(const std::string& path) { return records_of(path, data_file_size(path, kKind)); }

void read_cifar_batch(const std::string& path, Dataset& d) {
    const std::string bytes = read_data_file(path, kCifarMaxBatchBytes, kKind);  // its size checked before the read
    const std::int64_t n = records_of(path, bytes.size());
    const auto* src = reinterpret_cast<const std::uint8_t*>(bytes.data());
    for (std::int64_t r = 0; r < n; ++r)
        if (src[r * kCifarRecordBytes] >= 10)
            throw InputError(HR_MSG("cifar.bad_label", "%1: record %2 has label %3, but CIFAR-10 labels are 0 to 9; the "
                                                       "file is damaged or of another data set (CIFAR-100's binary "
                                                       "records have two label bytes)"),
                             {path, std::to_string(r + 1), std::to_string(int(src[r * kCifarRecordBytes]))});
    const std::size_t first = d.images.size();
    d.images.resize(first + static_cast<std::size_t>(n * kCifarImageBytes));
    d.labels.reserve(d.labels.size() + static_cast<std::size_t>(n));
    for (std::int64_t r = 0; r < n; ++r) {
        const std::uint8_t* rec = src + r * kCifarRecordBytes;
        d.labels.push_back(rec[0]);
        std::memcpy(d.images.data() + first + static_cast<std::size_t>(r * kCifarImageBytes), rec + 1,
                    static_cast<std::size_t>(kCifarImageBytes));
    }
    d.count += n;
    d.sample_shape = {3, 32, 32};
    d.num_classes = 10;
}

std::vector<std::string> read_cifar_class_names(const std::string& path) {
    if (path.empty()) return cifar10_class_names();
    const std::string text = read_data_file(path, 64 << 10, "batches.meta.txt (the class names, one a line)");
    std::vector<std::string> names;
    std::size_t at = 0;
    while (at <= text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
        if (!line.empty()) names.push_back(line);
        at = end + 1;
    }
    if (names.size() != 10)
        throw InputError(HR_MSG("cifar.meta_names", "%1: names %2 classes, but CIFAR-10 has 10 (one name a line); "
                                                    "unpack cifar-10-binary.tar.gz again or remove the file to use the "
                                                    "published names"),
                         {path, std::to_string(names.size())});
    return names;
}

DatasetPair load_cifar_dir(const std::string& dir, const std::string& name) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw InputError(HR_MSG("cifar.dir_not_found", "%1: folder not found; pass --data cifar10:DIR with the "
                                                       "cifar-10-batches-bin folder of cifar-10-binary.tar.gz"),
                         {dir});
    const CifarFiles f = find_cifar_files(dir);
    if (!f.missing.empty())
        throw InputError(HR_MSG("cifar.missing_files", "%1: missing %2; a CIFAR-10 folder holds data_batch_1.bin to "
                                                       "data_batch_5.bin and test_batch.bin (unpack "
                                                       "cifar-10-binary.tar.gz)"),
                         {dir, join(f.missing)});
    DatasetPair p;
    p.source_dir = dir;
    const std::vector<std::string> names = read_cifar_class_names(f.meta);
    p.train.name = name + "/train";
    p.test.name = name + "/test";
    for (const std::string& b : f.train) read_cifar_batch(b, p.train);
    read_cifar_batch(f.test, p.test);
    const Normalization n = compute_normalization(p.train);
    for (Dataset* d : {&p.train, &p.test}) {
        d->class_names = names;
        d->norm_mean = n.mean;
        d->norm_std = n.stddev;
    }
    return p;
}

}  // namespace hr
