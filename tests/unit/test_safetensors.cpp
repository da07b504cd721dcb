// safetensors: bit-exact round trips, the exact bytes of a known file, every malformed case the
// reader must reject, and the atomic write (temp file + rename).
#include <QtTest/QtTest>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "io/safetensors.h"
#include "test_support.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le64(std::uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return s;
}

// A file with the given header text (padded as the writer would not: verbatim) and buffer.
std::string raw_file(const std::string& header, const std::string& buffer) {
    return le64(header.size()) + header + buffer;
}

SafeTensor make_tensor(const std::string& name, DType dt, Shape shape, std::mt19937& rng) {
    SafeTensor t;
    t.name = name;
    t.dtype = dt;
    t.shape = std::move(shape);
    t.data.resize(static_cast<std::size_t>(shape_numel(t.shape)) * dtype_size(dt));
    for (auto& b : t.data) b = static_cast<std::uint8_t>(rng());
    return t;
}

std::vector<std::string> dir_entries(const std::string& dir) {
    std::vector<std::string> v;
    for (auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private:
    std::string dir_;

    // Expects read_safetensors(file with `bytes`) to throw InputError containing `part`.
    void expect_rejected(const std::string& bytes, const std::string& part) {
        std::string path = dir_ + "/bad.safetensors";
        write_bytes(path, bytes);
        try {
            read_safetensors(path);
            QFAIL(("accepted a malformed file; expected an error with: " + part).c_str());
        } catch (const InputError& e) {
            std::string msg = e.what();
            if (msg.find(part) == std::string::npos)
                QFAIL(("message '" + msg + "' lacks '" + part + "'").c_str());
            QVERIFY(msg.find(path) != std::string::npos);  // names the file
        }
    }

private slots:
    void initTestCase() { dir_ = hrtest::temp_dir("hr-safetensors"); }

    void round_trip_every_dtype() {
        std::mt19937 rng(7);
        SafeTensorsFile f;
        f.metadata = {{"format", "pt"}, {"headroom.step", "1200"}, {"note", "héllo ✓ \"quoted\"\n"}};
        // Not sorted by name on purpose: the writer keeps this order.
        f.tensors.push_back(make_tensor("z.weight", DType::f32, {3, 5}, rng));
        f.tensors.push_back(make_tensor("a.bias", DType::f64, {7}, rng));
        f.tensors.push_back(make_tensor("m.bf16", DType::bf16, {2, 3, 4}, rng));
        f.tensors.push_back(make_tensor("m.f16", DType::f16, {9}, rng));
        f.tensors.push_back(make_tensor("count", DType::i32, {1, 1}, rng));
        f.tensors.push_back(make_tensor("step", DType::i64, {}, rng));  // scalar
        f.tensors.push_back(make_tensor("mask", DType::u8, {13}, rng));  // odd size
        f.tensors.push_back(make_tensor("empty", DType::f32, {0, 4}, rng));
        std::string path = dir_ + "/rt.safetensors";
        write_safetensors(path, f);
        SafeTensorsFile g = read_safetensors(path);
        QCOMPARE(g.metadata, f.metadata);
        QCOMPARE(g.tensors.size(), f.tensors.size());
        for (std::size_t i = 0; i < f.tensors.size(); ++i) {
            QCOMPARE(g.tensors[i].name, f.tensors[i].name);
            QVERIFY(g.tensors[i].dtype == f.tensors[i].dtype);
            QCOMPARE(g.tensors[i].shape, f.tensors[i].shape);
            QVERIFY(g.tensors[i].data == f.tensors[i].data);
        }
        QVERIFY(g.find("step") && g.find("step")->shape.empty());
        QVERIFY(g.find("nope") == nullptr);
        // Layout: header a multiple of 8, data in the given order right after it.
        std::string bytes = read_bytes(path);
        std::uint64_t n = 0;
        for (int i = 0; i < 8; ++i) n |= std::uint64_t(std::uint8_t(bytes[i])) << (8 * i);
        QCOMPARE(n % 8, std::uint64_t{0});
        QCOMPARE(bytes.substr(8 + n, f.tensors[0].data.size()),
                 std::string(f.tensors[0].data.begin(), f.tensors[0].data.end()));
        // Writing again over the same path replaces it atomically, leaving no temp files.
        f.tensors.pop_back();
        write_safetensors(path, f);
        QCOMPARE(read_safetensors(path).tensors.size(), f.tensors.size());
        for (auto& e : dir_entries(dir_)) QVERIFY2(e.find(".tmp-") == std::string::npos, e.c_str());
    }

    void exact_bytes_of_known_file() {
        SafeTensorsFile f;
        f.metadata["format"] = "pt";
        SafeTensor a{"a", DType::f32, {2}, {}};
        float vals[2] = {1.0f, -2.5f};
        a.data.resize(8);
        std::memcpy(a.data.data(), vals, 8);
        SafeTensor b{"b", DType::u8, {1, 3}, {7, 8, 9}};
        f.tensors = {a, b};
        std::string path = dir_ + "/known.safetensors";
        write_safetensors(path, f);
        // 140 bytes of JSON + 4 spaces = 144 = 0x90.
        std::string expected = std::string("\x90\0\0\0\0\0\0\0", 8) +
                               "{\"__metadata__\":{\"format\":\"pt\"},"
                               "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                               "\"b\":{\"dtype\":\"U8\",\"shape\":[1,3],\"data_offsets\":[8,11]}}    " +
                               std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0\x07\x08\x09", 11);
        QCOMPARE(read_bytes(path), expected);
        QCOMPARE(safetensors_header(f), expected.substr(8, 144));
    }

    // SafeTensorsStream (checkpoints, train/resume.cpp): the known file again, its tensors handed over in pieces
    // (one of no bytes), equal to the bytes written out by hand above; bytes out of order or past a tensor, and
    // a commit before every tensor is whole, are refused and leave nothing at the path.
    void stream_writes_the_known_file_in_pieces() {
        SafeTensorsFile layout;
        layout.metadata["format"] = "pt";
        layout.tensors = {SafeTensor{"a", DType::f32, {2}, {}}, SafeTensor{"e", DType::f32, {0}, {}},
                          SafeTensor{"b", DType::u8, {1, 3}, {}}};
        const std::string expected_header =
            "{\"__metadata__\":{\"format\":\"pt\"},"
            "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]},"
            "\"b\":{\"dtype\":\"U8\",\"shape\":[1,3],\"data_offsets\":[8,11]}}";
        const std::string padded = expected_header + std::string((8 - expected_header.size() % 8) % 8, ' ');
        const std::string data("\x00\x00\x80\x3f\x00\x00\x20\xc0\x07\x08\x09", 11);
        const auto bytes = [&](std::size_t at) { return reinterpret_cast<const std::uint8_t*>(data.data()) + at; };
        const std::string path = dir_ + "/streamed.safetensors";
        {
            SafeTensorsStream out(path, layout);
            out.append("a", bytes(0), 3);  // a tensor in pieces
            out.append("a", bytes(3), 5);
            out.append("b", bytes(8), 1);  // past "e", which has no bytes
            QVERIFY(!fs::exists(path));    // nothing there before the commit
            out.append("b", bytes(9), 2);
            out.commit();
        }
        QCOMPARE(read_bytes(path), le64(padded.size()) + padded + data);
        const SafeTensorsFile back = read_safetensors(path);
        QCOMPARE(back.tensors.size(), std::size_t(3));
        // refused: out of the header's order, past a tensor's size, a commit with a tensor not whole
        const std::string never = dir_ + "/never-streamed.safetensors";
        {
            SafeTensorsStream out(never, layout);
            QVERIFY_THROWS_EXCEPTION(Error, out.append("b", bytes(8), 3));
        }
        {
            SafeTensorsStream out(never, layout);
            QVERIFY_THROWS_EXCEPTION(Error, out.append("a", bytes(0), 9));
        }
        {
            SafeTensorsStream out(never, layout);
            out.append("a", bytes(0), 8);
            out.append("b", bytes(8), 2);
            QVERIFY_THROWS_EXCEPTION(Error, out.commit());
        }
        QVERIFY(!fs::exists(never));
        const std::vector<std::string> left = dir_entries(dir_);
        QVERIFY(std::none_of(left.begin(), left.end(), [](const std::string& n) { return n.find("never") != std::string::npos; }));
    }

    void writer_rejects_bad_descriptions() {
        std::mt19937 rng(1);
        SafeTensorsFile f;
        f.tensors.push_back(make_tensor("x", DType::f32, {2}, rng));
        f.tensors.push_back(make_tensor("x", DType::f32, {2}, rng));
        QVERIFY_THROWS_EXCEPTION(Error, safetensors_header(f));
        f.tensors.pop_back();
        f.tensors[0].data.pop_back();  // 7 bytes for (2) F32
        try {
            write_safetensors(dir_ + "/never.safetensors", f);
            QFAIL("accepted a tensor whose data does not match its shape");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("needs 8 bytes but holds 7") != std::string::npos);
        }
        QVERIFY(!fs::exists(dir_ + "/never.safetensors"));
    }

    void rejects_malformed_files() {
        const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
        const std::string buf8(8, '\x01');
        // Sanity: the well-formed base case loads.
        write_bytes(dir_ + "/good.safetensors", raw_file("{" + ok_entry + "}", buf8));
        QCOMPARE(read_safetensors(dir_ + "/good.safetensors").tensors.size(), std::size_t{1});

        expect_rejected(std::string("\x05\0\0", 3), "too short");
        expect_rejected(le64(1000) + "{}", "larger than the file");
        expect_rejected(le64(200'000'000) + std::string(64, ' '), "exceeds the 100 MB limit");
        expect_rejected(raw_file("{\"a\":", ""), "not valid JSON");
        expect_rejected(raw_file("[1,2]", ""), "not a JSON object");
        expect_rejected(raw_file(R"({"a":[1,2]})", ""), "entry is not an object");
        expect_rejected(raw_file(R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", "xx"),
                        "unknown or unsupported dtype 'F8_E4M3'");
        expect_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", buf8),
                        "needs 12 bytes but data_offsets [0, 8] span 8");
        expect_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", buf8),
                        "out of range");
        expect_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", buf8),
                        "end before they begin");
        expect_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", buf8),
                        "non-negative");
        expect_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", buf8),
                        "[begin, end]");
        expect_rejected(raw_file(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", buf8), "\"dtype\"");
        expect_rejected(raw_file("{" + ok_entry + R"(,"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})", buf8),
                        "overlap");
        expect_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"U8","shape":[2],"data_offsets":[10,12]}})",
                                 std::string(12, 'x')),
                        "hole of 2 bytes");
        expect_rejected(raw_file("{" + ok_entry + "}", buf8 + "xyz"), "3 bytes after the last tensor");
        expect_rejected(raw_file("{" + ok_entry + "," + ok_entry + "}", buf8), "'a' appears twice");
        expect_rejected(raw_file(R"({"__metadata__":{"k":1},)" + ok_entry + "}", buf8), "is not a string");
        expect_rejected(raw_file(R"({"__metadata__":[],)" + ok_entry + "}", buf8), "must be an object");
        try {
            read_safetensors(dir_ + "/missing.safetensors");
            QFAIL("read a missing file");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("not found") != std::string::npos);
        }
    }

    void atomic_write_failures_leave_no_trace() {
        std::mt19937 rng(3);
        SafeTensorsFile f;
        f.tensors.push_back(make_tensor("w", DType::f32, {256}, rng));  // 1024 bytes

        // 1. The folder does not exist: the error names the path and the reason.
        std::string missing = dir_ + "/no/such/folder/x.safetensors";
        try {
            write_safetensors(missing, f);
            QFAIL("wrote into a missing folder");
        } catch (const Error& e) {
            std::string msg = e.what();
            QVERIFY2(msg.find(missing) != std::string::npos, msg.c_str());
            QVERIFY2(msg.find("No such file or directory") != std::string::npos, msg.c_str());
        }

        // 2. The rename fails (the target is a non-empty folder): the temp file is removed.
        std::string sub = hrtest::temp_dir("hr-st-rename");
        fs::create_directory(sub + "/ckpt.safetensors");
        write_bytes(sub + "/ckpt.safetensors/keep", "keep");
        QVERIFY_THROWS_EXCEPTION(Error, write_safetensors(sub + "/ckpt.safetensors", f));
        QCOMPARE(dir_entries(sub), std::vector<std::string>{"ckpt.safetensors"});
        QCOMPARE(read_bytes(sub + "/ckpt.safetensors/keep"), std::string("keep"));

        // 3. A write fails midway (file size limit, which binds root too): the existing file is
        //    unchanged and no temp file is left.
        std::string sub2 = hrtest::temp_dir("hr-st-fsize");
        std::string target = sub2 + "/model.safetensors";
        SafeTensorsFile small;
        small.tensors.push_back(make_tensor("s", DType::u8, {4}, rng));
        write_safetensors(target, small);
        std::string before = read_bytes(target);
        auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit old_limit{};
        getrlimit(RLIMIT_FSIZE, &old_limit);
        rlimit lim = old_limit;
        lim.rlim_cur = 512;
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &lim), 0);
        bool threw = false;
        std::string msg;
        try {
            write_safetensors(target, f);
        } catch (const Error& e) {
            threw = true;
            msg = e.what();
        }
        setrlimit(RLIMIT_FSIZE, &old_limit);
        std::signal(SIGXFSZ, old_handler);
        QVERIFY(threw);
        QVERIFY2(msg.find(target) != std::string::npos, msg.c_str());
        QCOMPARE(read_bytes(target), before);
        QCOMPARE(dir_entries(sub2), std::vector<std::string>{"model.safetensors"});

        // 4. The temporary file cannot be created: no file descriptor is left (a limit that binds root
        //    too), and for a normal user also a read-only folder (root writes there anyway). Either way the
        //    error names the path, the existing file is unchanged and nothing is added to the folder.
        std::string ro = hrtest::temp_dir("hr-st-ro");
        write_safetensors(ro + "/m.safetensors", small);
        std::string ro_before = read_bytes(ro + "/m.safetensors");
        {
            rlimit old_files{};
            QCOMPARE(getrlimit(RLIMIT_NOFILE, &old_files), 0);
            const int lowest_free = ::open("/dev/null", O_RDONLY);  // the next descriptor open() hands out
            QVERIFY(lowest_free > 0);
            ::close(lowest_free);
            rlimit none = old_files;
            none.rlim_cur = static_cast<rlim_t>(lowest_free);
            QCOMPARE(setrlimit(RLIMIT_NOFILE, &none), 0);
            std::string msg;
            try {
                write_safetensors(ro + "/m.safetensors", f);
            } catch (const Error& e) {
                msg = e.what();
            }
            setrlimit(RLIMIT_NOFILE, &old_files);
            QVERIFY2(!msg.empty(), "wrote a file without a free file descriptor");
            QVERIFY2(msg.find(ro + "/m.safetensors") != std::string::npos, msg.c_str());
            QCOMPARE(read_bytes(ro + "/m.safetensors"), ro_before);
            QCOMPARE(dir_entries(ro), std::vector<std::string>{"m.safetensors"});
        }
        if (geteuid() != 0) {
            chmod(ro.c_str(), 0555);
            QVERIFY_THROWS_EXCEPTION(Error, write_safetensors(ro + "/m.safetensors", f));
            chmod(ro.c_str(), 0755);
            QCOMPARE(read_bytes(ro + "/m.safetensors"), ro_before);
            QCOMPARE(dir_entries(ro), std::vector<std::string>{"m.safetensors"});
        }
    }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
