// The CUDA module configures and compiles with every form of architecture list a user or a package can
// give (cmake/Cuda.cmake): the release list (several entries: its semicolons once broke the build),
// "all-major" (CMake 3.25's own list names architectures CUDA 13 dropped) and "native" (on a machine
// without a GPU too, where CMake's own "native" fails to generate). Each is configured in a scratch tree from this source tree with this build's nvcc;
// the release list then compiles the module's architecture text and one kernel file for all four
// architectures, as the release build does. Skips in a build without the CUDA module.
#include <QProcess>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "test_support.h"

namespace {

std::string cache_value(const std::string& cache, const std::string& key) {
    std::ifstream in(cache);
    std::string line;
    const std::string prefix = key + ":";
    while (std::getline(in, line))
        if (line.rfind(prefix, 0) == 0) return line.substr(line.find('=') + 1);
    return {};
}

struct Ran {
    int code = -1;
    std::string output;
};

Ran run(const QString& program, const QStringList& args, int timeout_ms) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    Ran r;
    if (!p.waitForStarted(10000)) {
        r.output = "could not start " + program.toStdString();
        return r;
    }
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        r.output = "timed out: " + program.toStdString() + " " + args.join(' ').toStdString();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.output = p.readAll().toStdString();
    return r;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

class CudaConfigureTest : public QObject {
    Q_OBJECT

    std::string nvcc_;
    std::string cmake_;

    // Configures a scratch tree with HEADROOM_CUDA_ARCHS=archs; returns its folder.
    std::string configure(const std::string& archs) {
        const std::string dir = hrtest::temp_dir("hr-cuda-configure");
        const Ran r = run(QString::fromStdString(cmake_),
                          {"-S", hrtest::qsource_path(), "-B", QString::fromStdString(dir), "-DCMAKE_BUILD_TYPE=Release",
                           "-DHEADROOM_WITH_CUDA=ON", QString::fromStdString("-DCMAKE_CUDA_COMPILER=" + nvcc_),
                           QString::fromStdString("-DHEADROOM_CUDA_ARCHS=" + archs)},
                          300000);
        if (r.code != 0) QTest::qFail(("configure with " + archs + " failed:\n" + r.output).c_str(), __FILE__, __LINE__);
        return r.code == 0 ? dir : std::string();
    }

    // The architectures the module states (the generated header's text).
    static std::string stated_archs(const std::string& dir) {
        const std::string h = read_file(dir + "/generated/headroom_cuda_archs.h");
        std::smatch m;
        static const std::regex re("#define HEADROOM_CUDA_ARCHS_TEXT \"([^\"]*)\"");
        return std::regex_search(h, m, re) ? m[1].str() : std::string("(no header)");
    }

    // Compiles one object of the module (Unix Makefiles' per-object target in core/).
    static Ran compile_object(const std::string& dir, const std::string& object) {
        return run("make", {"-C", QString::fromStdString(dir + "/core"), QString::fromStdString(object)}, 900000);
    }

private slots:
    void initTestCase() {
        const std::string cache = hrtest::binary_path("CMakeCache.txt");
        if (cache_value(cache, "HEADROOM_WITH_CUDA") != "ON")
            QSKIP("this build has no CUDA module (-DHEADROOM_WITH_CUDA=OFF)");
        nvcc_ = cache_value(cache, "CMAKE_CUDA_COMPILER");
        cmake_ = cache_value(cache, "CMAKE_COMMAND");
        QVERIFY2(std::filesystem::exists(nvcc_), nvcc_.c_str());
        QVERIFY2(std::filesystem::exists(cmake_), cmake_.c_str());
        if (cache_value(cache, "CMAKE_GENERATOR") != "Unix Makefiles")
            QSKIP("the per-object targets used here are Unix Makefiles'");
    }

    void releaseListCompiles() {
        const std::string release = "80-real;86-real;89-real;90";
        const std::string dir = configure(release);
        if (dir.empty()) return;
        QCOMPARE(stated_archs(dir), release);
        // core/ has no Qt: no AutoMoc step for core or the module (whose predefs step broke on the list)
        QVERIFY(!std::filesystem::exists(dir + "/core/CMakeFiles/headroom_cuda_autogen.dir"));
        QVERIFY(!std::filesystem::exists(dir + "/core/CMakeFiles/headroom_core_autogen.dir"));
        QVERIFY(std::filesystem::exists(dir + "/app/CMakeFiles/headroom_run_autogen.dir"));
        // the host file that states the list (the -D flag that held it broke the build at its semicolons)
        Ran r = compile_object(dir, "backend/cuda/cuda_backend.cpp.o");
        QVERIFY2(r.code == 0, r.output.c_str());
        // a kernel file, for all four architectures: nvcc gets each as its own -gencode
        r = compile_object(dir, "backend/cuda/cuda_kernels.cu.o");
        QVERIFY2(r.code == 0, r.output.c_str());
        const std::string flags = read_file(dir + "/core/CMakeFiles/headroom_cuda.dir/flags.make");
        for (const char* code : {"code=[sm_80]", "code=[sm_86]", "code=[sm_89]", "code=[compute_90,sm_90]"})
            QVERIFY2(flags.find(code) != std::string::npos, (std::string(code) + " not in:\n" + flags).c_str());
    }

    void allMajorIsWhatThisNvccBuilds() {
        const std::string dir = configure("all-major");
        if (dir.empty()) return;
        // CUDA 13 builds 7.5 and up: the majors are 80, 90, 100, ...; no 35/50/60/70 (CMake 3.25's list)
        const std::string stated = stated_archs(dir);
        QVERIFY2(stated.rfind("80-real;90-real;", 0) == 0, stated.c_str());
        std::stringstream items(stated);
        for (std::string item; std::getline(items, item, ';');)
            QVERIFY2(std::stoi(item) >= 75 && std::stoi(item) % 10 == 0, (item + " in " + stated).c_str());
        QVERIFY2(stated.back() != 'l', ("the newest keeps its PTX: " + stated).c_str());
        const std::string flags = read_file(dir + "/core/CMakeFiles/headroom_cuda.dir/flags.make");
        QVERIFY2(flags.find("sm_35") == std::string::npos && flags.find("sm_50") == std::string::npos, flags.c_str());
        const Ran r = compile_object(dir, "backend/cuda/cuda_backend.cpp.o");
        QVERIFY2(r.code == 0, r.output.c_str());
    }

    void nativeConfiguresWithOrWithoutAGpu() {
        const std::string dir = configure("native");
        if (dir.empty()) return;
        // the GPUs nvidia-smi sees ("90"), or 80 where it sees none (CMake's own "native" fails to generate
        // there): an explicit list either way, which the module states and checks a GPU against
        const std::string stated = stated_archs(dir);
        QVERIFY2(std::regex_match(stated, std::regex("[0-9]+(;[0-9]+)*")), stated.c_str());
        const std::string flags = read_file(dir + "/core/CMakeFiles/headroom_cuda.dir/flags.make");
        QVERIFY2(flags.find("arch=native") == std::string::npos, flags.c_str());
        const Ran r = compile_object(dir, "backend/cuda/cuda_backend.cpp.o");
        QVERIFY2(r.code == 0, r.output.c_str());
    }
};

QTEST_GUILESS_MAIN(CudaConfigureTest)
#include "test_cuda_configure.moc"
