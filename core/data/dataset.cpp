#include "data/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <tuple>

#include "base/error.h"
#include "data/cifar.h"
#include "data/idx.h"
#include "data/table.h"

namespace hr {
namespace {

namespace fs = std::filesystem;

const char* const kSpecs = "fashion-mnist, mnist, idx:DIR, synthetic, cifar10, cifar10:DIR, csv:FILE, tsv:FILE";
// Largest generated dataset (784 bytes a sample: 784 MB), so a typo cannot ask for terabytes.
constexpr std::int64_t kMaxSyntheticSamples = 1'000'000;

std::vector<std::string> digit_names() {
    std::vector<std::string> n;
    for (int i = 0; i < 10; ++i) n.push_back(std::to_string(i));
    return n;
}

// Finds "<dir>/<base>" or "<dir>/<base>.gz"; "" if neither exists.
std::string find_file(const std::string& dir, const std::string& base) {
    std::error_code ec;
    for (const std::string& cand : {dir + "/" + base, dir + "/" + base + ".gz"})
        if (fs::is_regular_file(cand, ec)) return cand;
    return "";
}

struct IdxFiles {
    std::string train_images, train_labels, test_images, test_labels;
    std::vector<std::string> missing;
};

IdxFiles find_idx_files(const std::string& dir) {
    IdxFiles f;
    f.train_images = find_file(dir, "train-images-idx3-ubyte");
    f.train_labels = find_file(dir, "train-labels-idx1-ubyte");
    f.test_images = find_file(dir, "t10k-images-idx3-ubyte");
    f.test_labels = find_file(dir, "t10k-labels-idx1-ubyte");
    if (f.train_images.empty()) f.missing.push_back("train-images-idx3-ubyte[.gz]");
    if (f.train_labels.empty()) f.missing.push_back("train-labels-idx1-ubyte[.gz]");
    if (f.test_images.empty()) f.missing.push_back("t10k-images-idx3-ubyte[.gz]");
    if (f.test_labels.empty()) f.missing.push_back("t10k-labels-idx1-ubyte[.gz]");
    return f;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
    return s;
}

// Folders searched for a named dataset, in order.
std::vector<std::string> search_dirs(const std::string& name) {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("HEADROOM_DATA_DIR"); env && *env)
        dirs.push_back(std::string(env) + "/" + name);
    dirs.push_back("/usr/share/datasets/" + name);
    return dirs;
}

// The first searched folder holding all four files, or "" (then `searched` says what was seen).
std::string locate_named(const std::string& name, std::string& searched) {
    std::vector<std::string> seen;
    for (const auto& d : search_dirs(name)) {
        IdxFiles f = find_idx_files(d);
        if (f.missing.empty()) return d;
        std::error_code ec;
        if (fs::is_directory(d, ec))
            seen.push_back(d + " (missing " + join(f.missing, ", ") + ")");
        else
            seen.push_back(d + " (not found)");
    }
    searched = join(seen, "; ");
    return "";
}

// CIFAR-10's folders, in order: the one holding all six batch files, or "" (then `searched` says what was seen).
std::vector<std::string> cifar_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("HEADROOM_DATA_DIR"); env && *env)
        dirs.push_back(std::string(env) + "/cifar-10-batches-bin");
    dirs.push_back("/usr/share/datasets/cifar-10-batches-bin");
    return dirs;
}

std::string locate_cifar(std::string& searched) {
    std::vector<std::string> seen;
    for (const auto& d : cifar_dirs()) {
        const CifarFiles f = find_cifar_files(d);
        if (f.missing.empty()) return d;
        std::error_code ec;
        seen.push_back(fs::is_directory(d, ec) ? d + " (missing " + join(f.missing, ", ") + ")" : d + " (not found)");
    }
    searched = join(seen, "; ");
    return "";
}

Message missing_cifar_message(const std::string& searched) {
    return Message(HR_MSG("data.cifar_not_found",
                          "dataset 'cifar10' not found; searched %1. To use it, download cifar-10-binary.tar.gz "
                          "(https://www.cs.toronto.edu/~kriz/cifar.html) and unpack it into $HEADROOM_DATA_DIR (it "
                          "makes cifar-10-batches-bin/), or pass --data cifar10:DIR with the unpacked folder"),
                   {searched});
}

bool is_cifar_dir_spec(const std::string& spec) { return spec.rfind("cifar10:", 0) == 0; }

Message missing_named_message(const std::string& name, const std::string& searched) {
    if (name == "fashion-mnist")
        return Message(HR_MSG("data.not_found_package",
                              "dataset '%1' not found; searched %2. To use it, install it (apt install "
                              "dataset-fashion-mnist), or set HEADROOM_DATA_DIR to a folder holding %1/, or pass "
                              "--data idx:DIR with a folder holding the four IDX files"),
                       {name, searched});
    return Message(HR_MSG("data.not_found",
                          "dataset '%1' not found; searched %2. To use it, download train-images-idx3-ubyte.gz, "
                          "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz "
                          "into %3, or set HEADROOM_DATA_DIR to a folder holding %1/, or pass --data idx:DIR "
                          "with a folder holding the four IDX files"),
                   {name, searched, search_dirs(name).front()});
}

Dataset load_idx_split(const std::string& images, const std::string& labels, const std::string& name,
                       const std::vector<std::string>& class_names) {
    IdxImages img;
    Dataset d;
    read_idx_pair(images, labels, static_cast<int>(class_names.size()), img, d.labels);
    // An empty split trains nothing or evaluates to 0/0 (test_accuracy=nan): it only comes from a
    // damaged or emptied file, so it is refused here, before any training.
    if (img.count == 0)
        throw InputError(HR_MSG("data.empty_split", "%1 holds no images (its header says 0), so the %2 split is "
                                                    "empty; the file is damaged or truncated, download it again"),
                         {images, name});
    d.name = name;
    d.count = img.count;
    d.sample_shape = {1, img.rows, img.cols};
    d.num_classes = static_cast<int>(class_names.size());
    d.images = std::move(img.pixels);
    d.class_names = class_names;
    return d;
}

DatasetPair load_idx_dir(const std::string& dir, const std::string& name,
                         const std::vector<std::string>& class_names) {
    IdxFiles f = find_idx_files(dir);
    if (!f.missing.empty()) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            throw InputError(HR_MSG("data.idx_dir_not_found",
                                    "idx:%1: folder not found; pass --data idx:DIR with a folder holding "
                                    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
                                    "t10k-labels-idx1-ubyte (raw or .gz)"),
                             {dir});
        throw InputError(HR_MSG("data.idx_missing_files",
                                "%1: missing %2; an IDX dataset folder needs all four files (raw or .gz)"),
                         {dir, join(f.missing, ", ")});
    }
    DatasetPair p;
    p.source_dir = dir;
    p.train = load_idx_split(f.train_images, f.train_labels, name + "/train", class_names);
    p.test = load_idx_split(f.test_images, f.test_labels, name + "/test", class_names);
    if (p.train.sample_shape != p.test.sample_shape)
        throw InputError(HR_MSG("data.split_shapes", "%1: training images are %2 but test images are %3; both "
                                                     "splits must come from the same dataset"),
                         {dir, shape_str(p.train.sample_shape), shape_str(p.test.sample_shape)});
    return p;
}

void apply_limits(DatasetPair& p, const DataOptions& o) {
    if (o.train_limit < 0 || o.test_limit < 0)
        throw InputError(HR_MSG("data.negative_limit", "sample limits must be >= 0 (0 = all)"));
    truncate_dataset(p.train, o.train_limit);
    truncate_dataset(p.test, o.test_limit);
}

// Uniform double in [0, 1) from the raw 64-bit output (portable across standard libraries).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

const std::vector<std::string>& fashion_mnist_class_names() {
    static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    return names;
}

Normalization standard_normalization(const std::string& spec) {
    if (spec == "fashion-mnist") return {0.2860f, 0.3530f};
    if (spec == "mnist") return {0.1307f, 0.3081f};
    throw InputError(HR_MSG("data.no_normalisation", "no published normalisation for '%1'; compute it from the data"),
                     {spec});
}

Normalization compute_normalization(const Dataset& d) {
    if (d.images.empty()) return {0.0f, 1.0f};
    double sum = 0, sum2 = 0;
    for (std::uint8_t v : d.images) {
        double x = v / 255.0;
        sum += x;
        sum2 += x * x;
    }
    double n = static_cast<double>(d.images.size());
    double mean = sum / n;
    double var = std::max(0.0, sum2 / n - mean * mean);
    double sd = std::sqrt(var);
    return {static_cast<float>(mean), static_cast<float>(sd > 1e-12 ? sd : 1.0)};
}

void truncate_dataset(Dataset& d, std::int64_t limit) {
    if (limit <= 0 || limit >= d.count) return;
    d.count = limit;
    if (d.tabular()) {
        d.features.resize(static_cast<std::size_t>(limit * d.sample_numel()));
        d.features.shrink_to_fit();
    } else {
        d.images.resize(static_cast<std::size_t>(limit * d.sample_numel()));
        d.images.shrink_to_fit();
    }
    d.labels.resize(static_cast<std::size_t>(limit));
    d.labels.shrink_to_fit();
}

Dataset make_synthetic(const std::string& name, std::int64_t count, std::uint64_t seed) {
    if (count <= 0 || count > kMaxSyntheticSamples)
        throw InputError(HR_MSG("data.synthetic_size", "synthetic dataset size must be between 1 and %1, got %2"),
                         {std::to_string(kMaxSyntheticSamples), std::to_string(count)});
    constexpr int H = 28, W = 28, K = 10;
    constexpr double kPi = 3.14159265358979323846;
    Dataset d;
    d.name = name;
    d.count = count;
    d.sample_shape = {1, H, W};
    d.num_classes = K;
    d.class_names = digit_names();
    d.images.resize(static_cast<std::size_t>(count) * H * W);
    d.labels.resize(static_cast<std::size_t>(count));
    std::mt19937_64 rng(seed);
    for (std::int64_t i = 0; i < count; ++i) {
        int label = static_cast<int>(i % K);
        d.labels[i] = label;
        double angle = 2 * kPi * label / K;
        double cy = 13.5 + 8 * std::sin(angle) + (uniform01(rng) * 4 - 2);
        double cx = 13.5 + 8 * std::cos(angle) + (uniform01(rng) * 4 - 2);
        double amp = 170 + uniform01(rng) * 60;
        double s2 = 2 * 2.5 * 2.5;
        double inner_sigma = 1.0 + 0.3 * label;  // the centre blob grows with the label
        double i2 = 2 * inner_sigma * inner_sigma;
        std::uint8_t* px = d.images.data() + static_cast<std::size_t>(i) * H * W;
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                double dy = y - cy, dx = x - cx;
                double ry = y - 13.5, rx = x - 13.5;
                double v = amp * std::exp(-(dy * dy + dx * dx) / s2) +
                           90 * std::exp(-(ry * ry + rx * rx) / i2) + uniform01(rng) * 48;
                px[y * W + x] = static_cast<std::uint8_t>(std::min(255.0, std::floor(v)));
            }
    }
    Normalization n = compute_normalization(d);
    d.norm_mean = n.mean;
    d.norm_std = n.stddev;
    return d;
}

namespace {
DatasetPair load_dataset_impl(const std::string& spec, const DataOptions& options);
}  // namespace

DatasetPair load_dataset(const std::string& spec, const DataOptions& options) {
    try {
        return load_dataset_impl(spec, options);
    } catch (const std::bad_alloc&) {  // never a bare "std::bad_alloc" for the person
        throw InputError(HR_MSG("data.no_memory", "not enough memory to load dataset '%1'; close other programs "
                                                  "or use a machine with more memory"),
                         {spec});
    }
}

namespace {
DatasetPair load_dataset_impl(const std::string& spec, const DataOptions& options) {
    DatasetPair p;
    if (spec == "fashion-mnist" || spec == "mnist") {
        std::string searched;
        std::string dir = locate_named(spec, searched);
        if (dir.empty()) throw InputError(missing_named_message(spec, searched));
        p = load_idx_dir(dir, spec, spec == "mnist" ? digit_names() : fashion_mnist_class_names());
        Normalization n = standard_normalization(spec);
        for (Dataset* d : {&p.train, &p.test}) {
            d->norm_mean = n.mean;
            d->norm_std = n.stddev;
        }
        apply_limits(p, options);
        return p;
    }
    if (spec.rfind("idx:", 0) == 0) {
        std::string dir = spec.substr(4);
        if (dir.empty())
            throw InputError(HR_MSG("data.idx_no_folder", "idx: needs a folder, e.g. --data idx:/path/to/mnist"));
        p = load_idx_dir(dir, "idx:" + dir, digit_names());
        // Statistics of the full training split, as one would compute them for Normalize().
        Normalization n = compute_normalization(p.train);
        for (Dataset* d : {&p.train, &p.test}) {
            d->norm_mean = n.mean;
            d->norm_std = n.stddev;
        }
        apply_limits(p, options);
        return p;
    }
    if (spec == "cifar10" || is_cifar_dir_spec(spec)) {
        std::string dir = spec == "cifar10" ? "" : spec.substr(8);
        if (spec == "cifar10") {
            std::string searched;
            dir = locate_cifar(searched);
            if (dir.empty()) throw InputError(missing_cifar_message(searched));
        } else if (dir.empty()) {
            throw InputError(HR_MSG("data.cifar_no_folder", "cifar10: needs a folder, e.g. --data "
                                                            "cifar10:/path/to/cifar-10-batches-bin"));
        }
        p = load_cifar_dir(dir, spec);
        apply_limits(p, options);
        return p;
    }
    if (is_table_data(spec)) {
        p = load_table(spec, options.target);
        apply_limits(p, options);
        return p;
    }
    if (spec == "synthetic") {
        p.train = make_synthetic("synthetic/train", options.synthetic_train, options.synthetic_seed);
        p.test = make_synthetic("synthetic/test", options.synthetic_test, options.synthetic_seed + 1);
        p.test.norm_mean = p.train.norm_mean;  // normalise both splits with the training statistics
        p.test.norm_std = p.train.norm_std;
        apply_limits(p, options);
        return p;
    }
    throw InputError(HR_MSG("data.unknown", "unknown dataset '%1'; use one of %2"), {spec, kSpecs});
}

}  // namespace

std::vector<DatasetInfo> known_datasets() {
    auto info = [](const char* spec, MessageText description, const char* location) {
        DatasetInfo d;
        d.spec = spec;
        d.description_message = Message(description);
        d.description = d.description_message.english();
        d.location = location;
        return d;
    };
    return {
        info("fashion-mnist",
             HR_MSG("data.fashion_mnist", "Fashion-MNIST: 60000/10000 grey 28x28 images of clothing, 10 classes"), ""),
        info("mnist", HR_MSG("data.mnist", "MNIST: 60000/10000 grey 28x28 handwritten digits, 10 classes"), ""),
        info("idx:DIR",
             HR_MSG("data.idx", "IDX files (MNIST format) from a folder: train-/t10k- images and labels, raw or .gz"),
             ""),
        info("synthetic",
             HR_MSG("data.synthetic", "Generated 28x28 blobs, 10 classes, 2048/512 samples; needs no download"),
             "generated"),
        info("cifar10", HR_MSG("data.cifar10", "CIFAR-10: 50000/10000 colour 32x32 images of 10 classes (binary "
                                               "version, cifar-10-batches-bin)"),
             ""),
        info("cifar10:DIR", HR_MSG("data.cifar10_dir", "CIFAR-10 from a folder: data_batch_1.bin to data_batch_5.bin "
                                                       "and test_batch.bin"),
             ""),
        info("csv:FILE", HR_MSG("data.csv", "A CSV table: a header row, numeric columns and a class column named by "
                                            "--target; a fifth of the rows is the test set"),
             ""),
        info("tsv:FILE", HR_MSG("data.tsv", "A TSV table (tab-separated), as csv:FILE"), ""),
    };
}

namespace {

// A table's probe reads the whole file: remembered per (spec, target, size, modification time), so the
// window's plan, asked again at every change, reads it once.
struct TableProbe {
    bool available = false;
    Message detail;
    Shape shape;
    int classes = 0;
    std::size_t bytes = 0;
    std::int64_t train = 0, test = 0;
};

TableProbe probe_table(const std::string& spec, const std::string& target) {
    static std::mutex mutex;
    static std::map<std::tuple<std::string, std::string, std::uintmax_t, std::int64_t>, TableProbe> cache;
    const std::string path = spec.substr(4);
    std::error_code ec;
    const std::uintmax_t size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
    const std::int64_t mtime =
        fs::is_regular_file(path, ec) ? static_cast<std::int64_t>(fs::last_write_time(path, ec).time_since_epoch().count())
                                      : 0;
    const auto key = std::make_tuple(spec, target, size, mtime);
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    TableProbe t;
    try {
        TableSummary sum;
        const DatasetPair p = load_table(spec, target, &sum);
        t.available = true;
        t.shape = p.train.sample_shape;
        t.classes = p.train.num_classes;
        t.bytes = p.train.bytes() + p.test.bytes();
        t.train = p.train.count;
        t.test = p.test.count;
        t.detail = Message(HR_MSG("data.probe_table", "%1 rows (%2 train / %3 test), %4 numeric columns, %5 classes "
                                                      "in '%6'"),
                           {std::to_string(sum.rows), std::to_string(p.train.count), std::to_string(p.test.count),
                            std::to_string(p.train.sample_shape[0]), std::to_string(p.train.num_classes),
                            sum.columns[std::size_t(sum.target_column)]});
    } catch (const std::bad_alloc&) {
        t.detail = Message(HR_MSG("data.no_memory", "not enough memory to load dataset '%1'; close other programs "
                                                    "or use a machine with more memory"),
                           {spec});
    } catch (const Error& e) {
        t.detail = e.message();
    }
    if (size > 0) {  // a missing file is not remembered: it may appear
        std::lock_guard<std::mutex> lock(mutex);
        if (cache.size() > 16) cache.clear();
        cache[key] = t;
    }
    return t;
}

}  // namespace

DatasetInfo probe_dataset(const std::string& spec, const std::string& target) {
    DatasetInfo info;
    info.spec = spec;
    for (const auto& k : known_datasets())
        if (k.spec == spec || (k.spec == "idx:DIR" && spec.rfind("idx:", 0) == 0) ||
            (k.spec == "cifar10:DIR" && is_cifar_dir_spec(spec)) || (k.spec == "csv:FILE" && spec.rfind("csv:", 0) == 0) ||
            (k.spec == "tsv:FILE" && spec.rfind("tsv:", 0) == 0)) {
            info.description = k.description;
            info.description_message = k.description_message;
        }
    auto detail = [&](Message m) {
        info.detail = m.english();
        info.detail_message = std::move(m);
    };
    auto check_dir = [&](const std::string& dir) {
        IdxFiles f = find_idx_files(dir);
        if (!f.missing.empty()) {
            detail(Message(HR_MSG("data.probe_missing", "%1: missing %2"), {dir, join(f.missing, ", ")}));
            return;
        }
        try {
            IdxHeader ti = read_idx_header(f.train_images);
            IdxHeader te = read_idx_header(f.test_images);
            if (ti.magic != kIdxImagesMagic || te.magic != kIdxImagesMagic) {
                detail(Message(HR_MSG("data.probe_not_idx", "%1: image files are not IDX u8 (N, H, W) files"), {dir}));
                return;
            }
            info.available = true;
            info.location = dir;
            info.sample_shape = {1, ti.dims[1], ti.dims[2]};
            info.num_classes = 10;
            info.bytes = static_cast<std::size_t>((ti.dims[0] + te.dims[0]) * (ti.dims[1] * ti.dims[2] + 8));
            info.train_count = ti.dims[0];
            info.test_count = te.dims[0];
            detail(Message(HR_MSG("data.probe_summary", "%1 train / %2 test images of %3x%4"),
                           {std::to_string(ti.dims[0]), std::to_string(te.dims[0]), std::to_string(ti.dims[1]),
                            std::to_string(ti.dims[2])}));
        } catch (const Error& e) {
            detail(e.message());
        }
    };
    auto check_cifar = [&](const std::string& dir) {
        const CifarFiles f = find_cifar_files(dir);
        if (!f.missing.empty()) {
            detail(Message(HR_MSG("data.probe_missing", "%1: missing %2"), {dir, join(f.missing, ", ")}));
            return;
        }
        try {
            std::int64_t train = 0;
            for (const std::string& b : f.train) train += cifar_batch_records(b);
            const std::int64_t test = cifar_batch_records(f.test);
            info.available = true;
            info.location = dir;
            info.bytes = static_cast<std::size_t>((train + test) * (kCifarImageBytes + 8));
            info.train_count = train;
            info.test_count = test;
            detail(Message(HR_MSG("data.probe_cifar", "%1 train / %2 test colour images of 32x32"),
                           {std::to_string(train), std::to_string(test)}));
        } catch (const Error& e) {
            detail(e.message());
        }
    };
    if (spec == "cifar10" || is_cifar_dir_spec(spec)) {  // what a model takes, installed or not
        info.sample_shape = {3, 32, 32};
        info.num_classes = 10;
    }
    if (spec == "fashion-mnist" || spec == "mnist") {
        info.sample_shape = {1, 28, 28};
        info.num_classes = 10;
        std::string searched;
        std::string dir = locate_named(spec, searched);
        if (dir.empty())
            detail(missing_named_message(spec, searched));
        else
            check_dir(dir);
    } else if (spec.rfind("idx:", 0) == 0) {
        std::string dir = spec.substr(4);
        std::error_code ec;
        if (dir.empty() || !fs::is_directory(dir, ec))
            detail(Message(HR_MSG("data.probe_no_folder", "folder '%1' not found"), {dir}));
        else
            check_dir(dir);
    } else if (spec == "cifar10") {
        std::string searched;
        const std::string dir = locate_cifar(searched);
        if (dir.empty())
            detail(missing_cifar_message(searched));
        else
            check_cifar(dir);
    } else if (is_cifar_dir_spec(spec)) {
        const std::string dir = spec.substr(8);
        std::error_code ec;
        if (dir.empty() || !fs::is_directory(dir, ec))
            detail(Message(HR_MSG("data.probe_no_folder", "folder '%1' not found"), {dir}));
        else
            check_cifar(dir);
    } else if (is_table_data(spec)) {
        const TableProbe t = probe_table(spec, target);
        info.available = t.available;
        if (t.available) info.location = spec.substr(4);
        info.sample_shape = t.shape;
        info.num_classes = t.classes;
        info.bytes = t.bytes;
        info.train_count = t.train;
        info.test_count = t.test;
        detail(t.detail);
    } else if (spec == "synthetic") {
        const DataOptions o;
        info.available = true;
        info.location = "generated";
        info.sample_shape = {1, 28, 28};
        info.num_classes = 10;
        info.bytes = static_cast<std::size_t>((o.synthetic_train + o.synthetic_test) * (28 * 28 + 8));
        info.train_count = o.synthetic_train;
        info.test_count = o.synthetic_test;
        detail(Message(HR_MSG("data.probe_generated", "generated in memory")));
    } else {
        detail(Message(HR_MSG("data.unknown", "unknown dataset '%1'; use one of %2"), {spec, kSpecs}));
    }
    return info;
}

}  // namespace hr
