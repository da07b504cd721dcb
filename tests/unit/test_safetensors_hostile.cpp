// Hostile safetensors headers (issue 13, "Bad input"): header arithmetic that overflowed (a huge shape
// entry next to a 0 dimension came back as a negative dimension), offsets near 2^64, nesting, numbers
// JSON cannot hold, devices. Each is one InputError with an id that names the file; a small file never
// allocates more than it holds (checked against the kernel's peak resident memory, VmHWM).
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <functional>

#include "base/error.h"
#include "io/safetensors.h"
#include "test_support.h"

using namespace hr;

namespace {

std::string le64(std::uint64_t v) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
}

std::string file_bytes(const std::string& header, const std::string& buffer) {
    return le64(header.size()) + header + buffer;
}

long status_kb(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return -1;
}

}  // namespace

class TestSafetensorsHostile : public QObject {
    Q_OBJECT

    std::string dir_;
    int n_ = 0;

    std::string write(const std::string& bytes) {
        const std::string p = dir_ + "/f" + std::to_string(n_++) + ".safetensors";
        std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return p;
    }

    // read_safetensors(path) must throw an InputError with `id` naming the file and containing `part`,
    // with the peak resident memory growing by less than 32 MiB.
    void expect_refused(const std::string& path, const char* id, const std::string& part) {
        {
            std::ofstream clear("/proc/self/clear_refs");
            clear << "5";
        }
        const long before = status_kb("VmRSS:");
        try {
            read_safetensors(path);
            QFAIL(("accepted; expected " + std::string(id)).c_str());
        } catch (const InputError& e) {
            const std::string msg = e.what();
            QVERIFY2(e.message().id == id, (e.message().id + " != " + id + ": " + msg).c_str());
            QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
            QVERIFY2(msg.find(part) != std::string::npos, ("'" + msg + "' lacks '" + part + "'").c_str());
        }
        const long peak = status_kb("VmHWM:");
        if (before > 0 && peak > 0) QVERIFY2(peak - before < 32 * 1024, std::to_string(peak - before).c_str());
    }

private slots:
    void initTestCase() { dir_ = hrtest::temp_dir("hr-st-hostile"); }

    void huge_dimension_next_to_zero() {
        // [0, 2^64 - 1] F32 spans 0 bytes, so the size check passed, and the dimension came back as -1.
        const std::string p = write(file_bytes(R"({"a":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}})", ""));
        expect_refused(p, "safetensors.bad_entry", "has more elements than a 64-bit count holds");
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[9223372036854775808,0],"data_offsets":[0,0]}})", "")),
                       "safetensors.bad_entry", "64-bit");
        // The largest signed dimension next to a zero is representable, and comes back as it is.
        const std::string ok =
            write(file_bytes(R"({"a":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}})", ""));
        SafeTensorsFile f = read_safetensors(ok);
        QCOMPARE(f.tensors.at(0).shape, (Shape{0, INT64_MAX}));
    }

    void element_and_byte_counts_overflowing() {
        // 2^32 x 2^32 elements: the product wraps to 0 in 64 bits
        expect_refused(write(file_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", "")),
                       "safetensors.bad_entry", "64-bit");
        // 2^62 x 4 bytes wraps to 0 too
        expect_refused(write(file_bytes(R"({"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", "")),
                       "safetensors.bad_entry", "64-bit");
        // 2^63 elements of u8 is not a signed count
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[4294967296,2147483648],"data_offsets":[0,0]}})", "")),
                       "safetensors.bad_entry", "64-bit");
        // too many dimensions
        std::string shape = "[";
        for (int i = 0; i < 65; ++i) shape += (i ? ",1" : "1");
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":)" + shape + R"(],"data_offsets":[0,1]}})", "x")),
                       "safetensors.bad_entry", "65 dimensions");
    }

    void offsets_near_two_to_the_64() {
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[0],)"
                                        R"("data_offsets":[18446744073709551615,18446744073709551615]}})", "")),
                       "safetensors.offsets_range", "out of range");
        // 4 GiB claimed, 8 bytes present: refused before anything is allocated
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[4294967296],"data_offsets":[0,4294967296]}})",
                                        std::string(8, 'x'))),
                       "safetensors.offsets_range", "the data buffer has 8 bytes");
        // two tensors each claiming the whole buffer
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                                        R"("b":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})",
                                        std::string(8, 'x'))),
                       "safetensors.overlap", "overlap tensor");
        // header length past the file
        expect_refused(write(le64(UINT64_MAX) + "{}"), "safetensors.header_limit", "exceeds the 100 MB limit");
        expect_refused(write(le64(99'000'000) + "{}      "), "safetensors.header_past_end", "larger than the file");
    }

    void header_json_that_is_not_a_header() {
        std::string deep(100000, '[');
        deep += std::string(100000, ']');
        expect_refused(write(file_bytes(R"({"__metadata__":{},"a":)" + deep + "}", "")), "safetensors.header_deep",
                       "nested more than 16 levels");
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[1e400],"data_offsets":[0,0]}})", "")),
                       "safetensors.header_json", "not valid JSON");
        expect_refused(write(file_bytes(R"({"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})", "x")),
                       "safetensors.bad_entry", "non-negative integers");
    }

    void devices_and_pipes() {
        const std::string fifo = dir_ + "/pipe.safetensors";
        QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);
        expect_refused(fifo, "safetensors.not_regular", "not a regular file");
        expect_refused("/dev/zero", "safetensors.not_regular", "not a regular file");
    }
};

QTEST_APPLESS_MAIN(TestSafetensorsHostile)
#include "test_safetensors_hostile.moc"
