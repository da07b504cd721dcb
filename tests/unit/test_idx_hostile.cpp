// Hostile IDX files (issue 13, "Bad input"): a header is only a claim. Each case is refused with one
// message naming the file and what to do, and -- checked against the operating system's view, the
// process's peak resident memory (VmHWM, reset through /proc/self/clear_refs) -- without allocating
// what the header claims. Before the fix an 8-byte label file made the reader allocate 4 GiB.
#include <QtTest/QtTest>

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

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

// Writes bytes + `zeros` zero bytes gzip-compressed (zeros compress ~1000:1, so the file stays small).
void write_gz(const std::string& path, const std::string& bytes, std::size_t zeros = 0) {
    gzFile f = gzopen(path.c_str(), "wb9");
    QVERIFY(f != nullptr);
    QCOMPARE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    std::string block(1 << 16, '\0');
    while (zeros > 0) {
        unsigned n = static_cast<unsigned>(std::min(zeros, block.size()));
        QCOMPARE(gzwrite(f, block.data(), n), static_cast<int>(n));
        zeros -= n;
    }
    gzclose(f);
}

long status_kb(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return -1;
}

// Peak resident memory growth (bytes) while f runs, as the kernel counts it; -1 if it cannot be measured.
long long peak_rss_growth(const std::function<void()>& f) {
    {
        std::ofstream clear("/proc/self/clear_refs");
        clear << "5";  // resets VmHWM to the current resident size
        if (!clear) return -1;
    }
    const long before = status_kb("VmRSS:");
    f();
    const long peak = status_kb("VmHWM:");
    if (before < 0 || peak < 0) return -1;
    return (static_cast<long long>(peak) - before) * 1024;
}

}  // namespace

class TestIdxHostile : public QObject {
    Q_OBJECT

    std::string dir_;

    // Runs f, which must throw an InputError with message id `id` containing every part, and checks
    // that the peak resident memory grew by less than max_bytes meanwhile.
    void expect_refused(const std::function<void()>& f, const char* id, const std::vector<std::string>& parts,
                        long long max_bytes = 64ll << 20) {
        bool thrown = false;
        long long grew = peak_rss_growth([&] {
            try {
                f();
            } catch (const InputError& e) {
                thrown = true;
                const std::string msg = e.what();
                QVERIFY2(e.message().id == id, (e.message().id + " != " + id + ": " + msg).c_str());
                for (const auto& p : parts)
                    QVERIFY2(msg.find(p) != std::string::npos, ("'" + msg + "' lacks '" + p + "'").c_str());
            }
        });
        QVERIFY2(thrown, "no InputError");
        if (grew >= 0)
            QVERIFY2(grew < max_bytes, ("peak resident memory grew by " + std::to_string(grew) + " bytes").c_str());
    }

private slots:
    void initTestCase() { dir_ = hrtest::temp_dir("hr-idx-hostile"); }

    void tiny_label_file_claiming_4g_labels() {
        const std::string p = dir_ + "/labels-4g";
        write_raw(p, idx_bytes(kIdxLabelsMagic, {0xffffffffu}, ""));  // 8 bytes
        QCOMPARE(fs::file_size(p), std::uintmax_t{8});
        expect_refused([&] { read_idx_labels(p); }, "idx.truncated_data",
                       {p, "header says 4294967295 labels (4294967295 bytes) but the file has 8 bytes",
                        "download it again"});
        const std::string gz = dir_ + "/labels-4g.gz";
        write_gz(gz, idx_bytes(kIdxLabelsMagic, {0xffffffffu}, "\x01\x02"));
        expect_refused([&] { read_idx_labels(gz); }, "idx.truncated_data_gz",
                       {gz, "4294967295 labels", "decompresses to 10 bytes", "download it again"});
    }

    void image_headers_claiming_gigabytes() {
        // 16 bytes claiming 4 GiB of pixels
        const std::string a = dir_ + "/images-4g";
        write_raw(a, idx_bytes(kIdxImagesMagic, {0xffffffffu, 1, 1}, ""));
        expect_refused([&] { read_idx_images(a); }, "idx.truncated_data",
                       {a, "header says 4294967295 images of 1x1 (4294967295 bytes) but the file has 16 bytes"});
        // 23 bytes claiming 57.6 GB
        const std::string b = dir_ + "/images-57g";
        write_raw(b, idx_bytes(kIdxImagesMagic, {100000000u, 24, 24}, "1234567"));
        QCOMPARE(fs::file_size(b), std::uintmax_t{23});
        expect_refused([&] { read_idx_images(b); }, "idx.truncated_data", {b, "57600000000 bytes", "23 bytes"});
        // count * rows * cols overflows 64 bits
        const std::string c = dir_ + "/images-overflow";
        write_raw(c, idx_bytes(kIdxImagesMagic, {0xffffffffu, 0xffffffffu, 0xffffffffu}, ""));
        expect_refused([&] { read_idx_images(c); }, "idx.implausible", {c, "implausibly large", "download it again"});
        // no images at all, but each one 65536 x 65536 pixels: past the per-image limit
        const std::string d = dir_ + "/images-huge-each";
        write_raw(d, idx_bytes(kIdxImagesMagic, {0, 65536, 65536}, ""));
        expect_refused([&] { read_idx_images(d); }, "idx.implausible", {d, "2147483648 pixels an image"});
    }

    void gzip_claim_grows_only_with_the_data() {
        // 8 MiB of real (zero) pixels in a ~10 KB file whose header claims 4 GiB: the buffer follows the
        // data (doubling), so the peak stays near 2 x 8 MiB instead of 4 GiB.
        const std::string p = dir_ + "/images-claim.gz";
        write_gz(p, idx_bytes(kIdxImagesMagic, {0xffffffffu, 1, 1}, ""), 8u << 20);
        QVERIFY(fs::file_size(p) < 64 * 1024);
        expect_refused([&] { read_idx_images(p); }, "idx.truncated_data_gz",
                       {p, "4294967295 images of 1x1", "decompresses to 8388624 bytes"}, 48ll << 20);
        // the same data with a true header loads, byte for byte
        const std::string ok = dir_ + "/images-ok.gz";
        write_gz(ok, idx_bytes(kIdxImagesMagic, {8, 1024, 1024}, ""), 8u << 20);
        IdxImages img = read_idx_images(ok);
        QCOMPARE(img.count, std::int64_t{8});
        QCOMPARE(img.pixels.size(), std::size_t{8u << 20});
        QCOMPARE(std::count(img.pixels.begin(), img.pixels.end(), std::uint8_t{0}), std::ptrdiff_t{8 << 20});
    }

    void endless_trailing_data_is_not_read_to_its_end() {
        const std::string p = dir_ + "/labels-trailing.gz";
        write_gz(p, idx_bytes(kIdxLabelsMagic, {4}, std::string("\x00\x01\x02\x03", 4)), 64u << 20);
        expect_refused([&] { read_idx_labels(p); }, "idx.extra_data_gz", {p, "header says 4 labels", "at least"});
        const std::string raw = dir_ + "/labels-trailing";
        write_raw(raw, idx_bytes(kIdxLabelsMagic, {4}, std::string(100, '\x01')));
        expect_refused([&] { read_idx_labels(raw); }, "idx.extra_data", {raw, "96 more bytes"});
    }

    void devices_and_pipes_are_refused() {
        const std::string fifo = dir_ + "/pipe";
        QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);
        // Opening a FIFO for reading would block until a writer came; the check comes before the open.
        expect_refused([&] { read_idx_images(fifo); }, "idx.not_regular", {fifo, "not a regular file"});
        expect_refused([&] { read_idx_labels("/dev/zero"); }, "idx.not_regular", {"/dev/zero"});
        expect_refused([&] { read_idx_header(dir_); }, "idx.is_directory", {dir_});
    }

    void empty_split_is_refused_before_training() {
        // A damaged download whose test split holds no images would train and report test_accuracy=nan.
        const std::string d = dir_ + "/empty-test";
        fs::create_directories(d);
        std::string body(3 * 28 * 28, '\x10');
        write_raw(d + "/train-images-idx3-ubyte", idx_bytes(kIdxImagesMagic, {3, 28, 28}, body));
        write_raw(d + "/train-labels-idx1-ubyte", idx_bytes(kIdxLabelsMagic, {3}, std::string("\x00\x01\x02", 3)));
        write_raw(d + "/t10k-images-idx3-ubyte", idx_bytes(kIdxImagesMagic, {0, 28, 28}, ""));
        write_raw(d + "/t10k-labels-idx1-ubyte", idx_bytes(kIdxLabelsMagic, {0}, ""));
        DataOptions o;
        o.test_limit = 0;  // 0 means all: the emptiness is the file's
        expect_refused([&] { load_dataset("idx:" + d, o); }, "data.empty_split",
                       {d + "/t10k-images-idx3-ubyte", "holds no images", "test split is empty", "download it again"});
    }

    void synthetic_size_is_bounded() {
        DataOptions o;
        o.synthetic_train = std::int64_t{1} << 40;
        expect_refused([&] { load_dataset("synthetic", o); }, "data.synthetic_size", {"between 1 and 1000000"});
    }
};

QTEST_APPLESS_MAIN(TestIdxHostile)
#include "test_idx_hostile.moc"
