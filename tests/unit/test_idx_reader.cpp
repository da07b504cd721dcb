// IDX reader and dataset resolver: generated good files (raw and gzip), every corrupt case, the
// idx:DIR / mnist / synthetic specs, and the real Fashion-MNIST when it is installed.
#include <QtTest/QtTest>

#include <zlib.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/dataset.h"
#include "data/idx.h"
#include "test_support.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

std::string be32(std::uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
    return s;
}

std::string idx_bytes(std::uint32_t magic, const std::vector<std::uint32_t>& dims, const std::string& body) {
    std::string s = be32(magic);
    for (auto d : dims) s += be32(d);
    return s + body;
}

void write_raw(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_gz(const std::string& path, const std::string& bytes) {
    gzFile f = gzopen(path.c_str(), "wb");
    QVERIFY(f != nullptr);
    QCOMPARE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
}

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// n images of rows x cols with pixel (i, k) = (7 i + k) % 256, and labels i % classes.
std::string image_body(int n, int rows, int cols) {
    std::string s;
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < rows * cols; ++k) s += static_cast<char>((7 * i + k) % 256);
    return s;
}
std::string label_body(int n, int classes = 10) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>(i % classes);
    return s;
}

// Writes the four files of an IDX dataset folder (train: n_train, test: n_test samples).
void write_idx_dir(const std::string& dir, int n_train, int n_test, bool gz) {
    fs::create_directories(dir);
    auto w = [&](const std::string& name, const std::string& bytes) {
        if (gz)
            write_gz(dir + "/" + name + ".gz", bytes);
        else
            write_raw(dir + "/" + name, bytes);
    };
    w("train-images-idx3-ubyte", idx_bytes(kIdxImagesMagic, {(unsigned)n_train, 28, 28}, image_body(n_train, 28, 28)));
    w("train-labels-idx1-ubyte", idx_bytes(kIdxLabelsMagic, {(unsigned)n_train}, label_body(n_train)));
    w("t10k-images-idx3-ubyte", idx_bytes(kIdxImagesMagic, {(unsigned)n_test, 28, 28}, image_body(n_test, 28, 28)));
    w("t10k-labels-idx1-ubyte", idx_bytes(kIdxLabelsMagic, {(unsigned)n_test}, label_body(n_test)));
}

}  // namespace

class TestIdxReader : public QObject {
    Q_OBJECT

private:
    std::string dir_;

    template <class F>
    void expect_input_error(F&& f, const std::vector<std::string>& parts) {
        try {
            f();
            QFAIL("no error was raised");
        } catch (const InputError& e) {
            std::string msg = e.what();
            for (const auto& p : parts)
                if (msg.find(p) == std::string::npos) QFAIL(("message '" + msg + "' lacks '" + p + "'").c_str());
        }
    }

private slots:
    void initTestCase() {
        dir_ = hrtest::temp_dir("hr-idx");
        unsetenv("HEADROOM_DATA_DIR");
    }

    void reads_good_raw_and_gzip_files() {
        for (bool gz : {false, true}) {
            std::string img = dir_ + (gz ? "/img.gz" : "/img");
            std::string lab = dir_ + (gz ? "/lab.gz" : "/lab");
            auto iw = gz ? write_gz : write_raw;
            iw(img, idx_bytes(kIdxImagesMagic, {5, 4, 3}, image_body(5, 4, 3)));
            iw(lab, idx_bytes(kIdxLabelsMagic, {5}, label_body(5, 3)));
            IdxImages images;
            std::vector<std::int64_t> labels;
            read_idx_pair(img, lab, 3, images, labels);
            QCOMPARE(images.count, std::int64_t{5});
            QCOMPARE(images.rows, std::int64_t{4});
            QCOMPARE(images.cols, std::int64_t{3});
            std::string body = image_body(5, 4, 3);
            QCOMPARE(images.pixels.size(), body.size());
            QVERIFY(std::equal(body.begin(), body.end(), images.pixels.begin(),
                               [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; }));
            QCOMPARE(labels, (std::vector<std::int64_t>{0, 1, 2, 0, 1}));
            IdxHeader h = read_idx_header(img);
            QCOMPARE(h.magic, kIdxImagesMagic);
            QCOMPARE(h.dims, (std::vector<std::int64_t>{5, 4, 3}));
        }
    }

    void rejects_bad_magic() {
        std::string lab = dir_ + "/labels-as-images";
        write_raw(lab, idx_bytes(kIdxLabelsMagic, {5}, label_body(5)));
        expect_input_error([&] { read_idx_images(lab); },
                           {lab, "not an IDX image file (magic 0x00000801, expected 0x00000803)", "swapped"});
        std::string junk = dir_ + "/junk";
        write_raw(junk, "GIF89a.........................");
        expect_input_error([&] { read_idx_labels(junk); }, {junk, "not an IDX label file", "different dataset"});
        // Compressed twice: after one decompression it still starts with the gzip magic.
        std::string once = dir_ + "/once.gz";
        write_gz(once, idx_bytes(kIdxImagesMagic, {2, 2, 2}, image_body(2, 2, 2)));
        std::string twice = dir_ + "/twice.gz";
        write_gz(twice, read_all(once));
        expect_input_error([&] { read_idx_images(twice); },
                           {twice, "magic 0x1f8b08", "expected 0x00000803", "gzip-compressed twice"});
        std::string tiny = dir_ + "/tiny";
        write_raw(tiny, std::string("\0\0", 2));
        expect_input_error([&] { read_idx_images(tiny); }, {tiny, "too short"});
        expect_input_error([&] { read_idx_images(dir_ + "/absent"); }, {"absent", "not found"});
    }

    void rejects_truncated_files() {
        std::string full = idx_bytes(kIdxImagesMagic, {60000, 28, 28}, image_body(2, 28, 28));
        std::string raw = dir_ + "/trunc-images";
        write_raw(raw, full.substr(0, 1200));
        expect_input_error([&] { read_idx_images(raw); },
                           {raw, "truncated: header says 60000 images of 28x28 (47040000 bytes) but the file has 1200 bytes",
                            "download it again"});
        std::string gz = dir_ + "/trunc-images.gz";
        write_gz(gz, full.substr(0, 1200));
        expect_input_error([&] { read_idx_images(gz); }, {gz, "truncated", "decompresses to 1200 bytes"});
        // A gzip stream cut short (a partial download).
        std::string good_gz = dir_ + "/good.gz";
        write_gz(good_gz, idx_bytes(kIdxImagesMagic, {40, 28, 28}, image_body(40, 28, 28)));
        std::string cut = read_all(good_gz);
        std::string cut_path = dir_ + "/cut.gz";
        write_raw(cut_path, cut.substr(0, cut.size() / 2));
        expect_input_error([&] { read_idx_images(cut_path); }, {cut_path, "download it again"});
        // Header cut inside the dimensions.
        std::string hdr = dir_ + "/short-header";
        write_raw(hdr, be32(kIdxImagesMagic) + be32(5));
        expect_input_error([&] { read_idx_images(hdr); }, {hdr, "truncated header"});
        // More data than the header announces.
        std::string longer = dir_ + "/longer";
        write_raw(longer, idx_bytes(kIdxLabelsMagic, {4}, label_body(7)));
        expect_input_error([&] { read_idx_labels(longer); }, {longer, "header says 4 labels", "3 more bytes"});
    }

    void rejects_count_mismatch_and_bad_labels() {
        std::string img = dir_ + "/m-img", lab = dir_ + "/m-lab";
        write_raw(img, idx_bytes(kIdxImagesMagic, {6, 2, 2}, image_body(6, 2, 2)));
        write_raw(lab, idx_bytes(kIdxLabelsMagic, {5}, label_body(5)));
        IdxImages images;
        std::vector<std::int64_t> labels;
        expect_input_error([&] { read_idx_pair(img, lab, 10, images, labels); },
                           {img, lab, "holds 6 images but", "holds 5 labels", "same count"});
        std::string bad = dir_ + "/bad-lab";
        write_raw(bad, idx_bytes(kIdxLabelsMagic, {4}, std::string("\x01\x02\x0a\x03", 4)));
        expect_input_error([&] { read_idx_labels(bad, 10); }, {bad, "label 10 at index 2 is out of range (expected 0..9)"});
        QCOMPARE(read_idx_labels(bad, 11).size(), std::size_t{4});
    }

    void loads_idx_dir_spec() {
        std::string d = dir_ + "/idxset";
        write_idx_dir(d, 30, 12, true);
        DatasetPair p = load_dataset("idx:" + d);
        QCOMPARE(p.source_dir, d);
        QCOMPARE(p.train.count, std::int64_t{30});
        QCOMPARE(p.test.count, std::int64_t{12});
        QCOMPARE(p.train.sample_shape, (Shape{1, 28, 28}));
        QCOMPARE(p.train.num_classes, 10);
        QCOMPARE(p.train.class_names.size(), std::size_t{10});
        QCOMPARE(p.train.images.size(), std::size_t{30 * 784});
        Normalization n = compute_normalization(p.train);
        QCOMPARE(p.train.norm_mean, n.mean);
        QCOMPARE(p.test.norm_std, n.stddev);
        DataOptions o;
        o.train_limit = 7;
        o.test_limit = 3;
        DatasetPair q = load_dataset("idx:" + d, o);
        QCOMPARE(q.train.count, std::int64_t{7});
        QCOMPARE(q.train.images.size(), std::size_t{7 * 784});
        QCOMPARE(q.test.labels.size(), std::size_t{3});
        QCOMPARE(q.train.norm_mean, n.mean);  // statistics of the full split
        QVERIFY(probe_dataset("idx:" + d).available);
        QVERIFY(probe_dataset("idx:" + d).detail.find("30 train / 12 test") != std::string::npos);

        fs::remove(d + "/t10k-labels-idx1-ubyte.gz");
        expect_input_error([&] { load_dataset("idx:" + d); }, {d, "missing t10k-labels-idx1-ubyte[.gz]"});
        QVERIFY(!probe_dataset("idx:" + d).available);
        expect_input_error([&] { load_dataset("idx:" + dir_ + "/nowhere"); }, {"nowhere", "folder not found"});
    }

    void resolves_named_specs_and_errors() {
        expect_input_error([&] { load_dataset("cifar-99"); },
                           {"unknown dataset 'cifar-99'", "fashion-mnist", "mnist", "idx:DIR", "synthetic"});
        QCOMPARE(known_datasets().size(), std::size_t{8});  // and cifar10, cifar10:DIR, csv:FILE, tsv:FILE
        QVERIFY(!probe_dataset("cifar-99").available);

        std::string data_dir = dir_ + "/datahome";
        fs::create_directories(data_dir);
        setenv("HEADROOM_DATA_DIR", data_dir.c_str(), 1);
        if (!fs::exists("/usr/share/datasets/mnist")) {
            expect_input_error([&] { load_dataset("mnist"); },
                               {"'mnist' not found", data_dir + "/mnist", "/usr/share/datasets/mnist", "idx:DIR"});
            QVERIFY(!probe_dataset("mnist").available);
        }
        // $HEADROOM_DATA_DIR/mnist is searched first.
        write_idx_dir(data_dir + "/mnist", 20, 10, false);
        DatasetPair p = load_dataset("mnist");
        QCOMPARE(p.source_dir, data_dir + "/mnist");
        QCOMPARE(p.train.class_names[3], std::string("3"));
        QCOMPARE(p.train.norm_mean, 0.1307f);
        QCOMPARE(p.train.norm_std, 0.3081f);
        QVERIFY(probe_dataset("mnist").available);
        QCOMPARE(probe_dataset("mnist").location, data_dir + "/mnist");
        unsetenv("HEADROOM_DATA_DIR");
    }

    void synthetic_is_deterministic_and_learnable() {
        DatasetPair a = load_dataset("synthetic");
        DatasetPair b = load_dataset("synthetic");
        QCOMPARE(a.train.count, std::int64_t{2048});
        QCOMPARE(a.test.count, std::int64_t{512});
        QVERIFY(a.train.images == b.train.images);
        QVERIFY(a.test.labels == b.test.labels);
        QVERIFY(a.train.images != a.test.images);
        Normalization n = compute_normalization(a.train);
        QCOMPARE(a.train.norm_mean, n.mean);
        QCOMPARE(a.test.norm_std, n.stddev);
        QVERIFY(n.mean > 0.05f && n.mean < 0.6f);
        std::array<int, 10> hist{};
        for (auto l : a.train.labels) hist[l]++;
        for (int c : hist) QVERIFY(c >= 204 && c <= 205);
        // Learnable: a nearest-class-mean classifier fit on train gets > 90% of test right.
        std::vector<std::array<double, 784>> means(10);
        for (auto& m : means) m.fill(0);
        for (std::int64_t i = 0; i < a.train.count; ++i)
            for (int k = 0; k < 784; ++k) means[a.train.labels[i]][k] += a.train.images[i * 784 + k] / (double)hist[a.train.labels[i]];
        int correct = 0;
        for (std::int64_t i = 0; i < a.test.count; ++i) {
            int best = 0;
            double best_d = 1e300;
            for (int c = 0; c < 10; ++c) {
                double d = 0;
                for (int k = 0; k < 784; ++k) {
                    double e = a.test.images[i * 784 + k] - means[c][k];
                    d += e * e;
                }
                if (d < best_d) best_d = d, best = c;
            }
            correct += best == a.test.labels[i];
        }
        QVERIFY2(correct > 0.9 * a.test.count, qPrintable(QString::number(correct)));
        DataOptions o;
        o.synthetic_train = 100;
        o.synthetic_test = 50;
        DatasetPair s = load_dataset("synthetic", o);
        QCOMPARE(s.train.count, std::int64_t{100});
        QVERIFY(probe_dataset("synthetic").available);
    }

    void real_fashion_mnist() {
        std::string dir = hrtest::fashion_mnist_dir();
        if (dir.empty()) QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        DatasetPair p = load_dataset("fashion-mnist");
        QCOMPARE(p.source_dir, dir);
        QCOMPARE(p.train.count, std::int64_t{60000});
        QCOMPARE(p.test.count, std::int64_t{10000});
        QCOMPARE(p.train.sample_shape, (Shape{1, 28, 28}));
        QCOMPARE(p.train.images.size(), std::size_t{60000 * 784});
        std::array<int, 10> h_train{}, h_test{};
        for (auto l : p.train.labels) h_train[l]++;
        for (auto l : p.test.labels) h_test[l]++;
        for (int c = 0; c < 10; ++c) {
            QCOMPARE(h_train[c], 6000);
            QCOMPARE(h_test[c], 1000);
        }
        QCOMPARE(p.train.class_names[0], std::string("T-shirt/top"));
        QCOMPARE(p.train.class_names[9], std::string("Ankle boot"));
        QCOMPARE(p.train.norm_mean, 0.2860f);
        QCOMPARE(p.train.norm_std, 0.3530f);
        // The published constants are the data's own statistics.
        Normalization n = compute_normalization(p.train);
        QVERIFY(std::abs(n.mean - 0.2860f) < 5e-4f);
        QVERIFY(std::abs(n.stddev - 0.3530f) < 5e-4f);
        DatasetInfo info = probe_dataset("fashion-mnist");
        QVERIFY(info.available);
        QCOMPARE(info.location, dir);
        QVERIFY(info.detail.find("60000 train / 10000 test images of 28x28") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestIdxReader)
#include "test_idx_reader.moc"
