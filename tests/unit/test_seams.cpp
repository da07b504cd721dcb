// The seams where Headroom takes something from the outside world by name, checked on a machine without a
// GPU (docs/design.md decision 12):
// - every CUDA runtime function core asks the CUDA module for resolves through the built module (one
//   list, backend/cuda/cuda_runtime_functions.h, that both sides expand);
// - every NCCL function the GPU ranks ask libnccl for resolves in the NCCL this build found;
// - every environment variable the program and the scripts read is documented (docs/environment.md),
//   and every one documented is still read;
// - every script and benchmark a script runs by path is in the tree and executable.
#include <QTest>
#include "test_support.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_runtime_functions.h"
#include "dist/communicator.h"

using namespace hr;

namespace {

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The files of `dirs` (under the source tree) whose names end in one of `exts` ("" for any).
std::vector<std::filesystem::path> files_under(std::initializer_list<const char*> dirs,
                                               std::initializer_list<const char*> exts) {
    std::vector<std::filesystem::path> out;
    for (const char* d : dirs) {
        const std::filesystem::path root = std::filesystem::path(hrtest::source_dir()) / d;
        if (!std::filesystem::exists(root)) continue;
        for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
            if (!e.is_regular_file()) continue;
            const std::string name = e.path().filename().string();
            for (const char* ext : exts) {
                const std::string x = ext;
                if (name.size() >= x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0) {
                    out.push_back(e.path());
                    break;
                }
            }
        }
    }
    return out;
}

std::set<std::string> matches(const std::string& text, const std::regex& re, int group = 1) {
    std::set<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
        out.insert((*it)[group].str());
    return out;
}

}  // namespace

class SeamsTest : public QObject {
    Q_OBJECT
private slots:
    void everyCudaRuntimeFunctionResolvesThroughTheModule() {
        const char* env = std::getenv("HEADROOM_CUDA_MODULE");  // ctest: this build tree's module
        if (!env || !std::filesystem::exists(env)) QSKIP("this build has no CUDA module (-DHEADROOM_WITH_CUDA=OFF)");
        const CudaStatus s = cuda_status();
        // the module must load on a machine with the toolkit and no GPU, and say why it cannot train
        QVERIFY2(s.state != CudaStatus::State::module_missing && s.state != CudaStatus::State::module_mismatch &&
                     s.state != CudaStatus::State::libraries_missing,
                 s.reason.c_str());
        if (s.state != CudaStatus::State::available) QVERIFY2(!s.reason.empty(), "no reason given");
        int n = 0;
        for (const char* name : kCudaRuntimeFunctionNames) {
            QVERIFY2(cuda_runtime_function(name) != nullptr,
                     (std::string("the CUDA module does not offer ") + name + ", which core asks for").c_str());
            ++n;
        }
        QVERIFY(n >= 11);
        // it offers the list, not anything by name
        QVERIFY(cuda_runtime_function("cudaMalloc") == nullptr);
        QVERIFY(cuda_runtime_function("no such function") == nullptr);
        QVERIFY(cuda_runtime_function(nullptr) == nullptr);
    }

    void theAskerUsesTheSameList() {
        // nccl_communicator.cpp resolves HR_CUDA_RUNTIME_FUNCTIONS, not a list of its own
        const std::string src = read_file(std::filesystem::path(hrtest::source_dir()) / "core/dist/nccl_communicator.cpp");
        QVERIFY(src.find("#define HR_CUDART_FUNCTIONS(X) HR_CUDA_RUNTIME_FUNCTIONS(X)") != std::string::npos);
        const std::string entry =
            read_file(std::filesystem::path(hrtest::source_dir()) / "core/backend/cuda/cuda_module_entry.cpp");
        QVERIFY(entry.find("HR_CUDA_RUNTIME_FUNCTIONS(HR_CUDA_RUNTIME_ENTRY)") != std::string::npos);
        // and no other file asks the module for a runtime function by a name outside the list
        const std::set<std::string> listed(std::begin(kCudaRuntimeFunctionNames), std::end(kCudaRuntimeFunctionNames));
        const std::regex ask("cuda_runtime_function\\(\"([A-Za-z0-9_]+)\"\\)");
        for (const auto& f : files_under({"core", "app"}, {".cpp", ".h"}))
            for (const auto& name : matches(read_file(f), ask))
                QVERIFY2(listed.count(name), (f.string() + " asks for " + name + ", not in the list").c_str());
    }

    void everyNcclFunctionResolves() {
        const NcclLibraryProbe p = nccl_library_probe();
        if (!p.built) QSKIP("this build has no NCCL support (no CUDA or no nccl.h)");
        if (!p.library_known && !p.loaded) QSKIP(qPrintable(QString::fromStdString("no libnccl here: " + p.error)));
        QVERIFY2(p.loaded, p.error.c_str());
        QVERIFY2(std::regex_match(p.version, std::regex("2\\.[0-9]+\\.[0-9]+")), p.version.c_str());
        qInfo("NCCL %s, ncclCommSplit %s", p.version.c_str(), p.has_split ? "yes" : "no");
    }

    void everyEnvironmentVariableIsDocumented() {
        // read by the program (getenv, qgetenv, qEnvironmentVariable*) and by the scripts ($HEADROOM_X)
        std::set<std::string> read;
        const std::regex in_code("\"(HEADROOM_[A-Z0-9_]+)\"");
        for (const auto& f : files_under({"core", "app", "widgets"}, {".cpp", ".h", ".cu"}))
            for (const auto& n : matches(read_file(f), in_code)) read.insert(n);
        const std::regex in_shell("\\$\\{?(HEADROOM_[A-Z0-9_]+)");
        for (const auto& f : files_under({"scripts", "bench", ".ci"}, {""}))
            for (const auto& n : matches(read_file(f), in_shell)) read.insert(n);
        // names the build defines for the code (compile definitions), not environment variables
        for (const char* defined : {"HEADROOM_VERSION", "HEADROOM_CUDA_MODULE_FILE", "HEADROOM_CUDA_ARCHS_TEXT",
                                    "HEADROOM_NCCL_LIBRARY", "HEADROOM_MPI_LIBRARY"})
            read.erase(defined);
        QVERIFY(read.count("HEADROOM_CUDA_MODULE"));
        const std::string doc = read_file(std::filesystem::path(hrtest::source_dir()) / "docs/environment.md");
        QVERIFY2(!doc.empty(), "docs/environment.md is missing");
        const std::set<std::string> documented = matches(doc, std::regex("`(HEADROOM_[A-Z0-9_]+)`"));
        for (const auto& n : read)
            QVERIFY2(documented.count(n), (n + " is read but not in docs/environment.md").c_str());
        for (const auto& n : documented)
            QVERIFY2(read.count(n), (n + " is in docs/environment.md but nothing reads it").c_str());
    }

    void everyScriptAScriptRunsIsThere() {
        // "$root/scripts/NAME", "$ROOT/bench/NAME.sh", scripts/NAME in the scripts, .ci/run and the README
        const std::regex ref("(?:^|[\\s\"'/(])((?:scripts/[a-z][a-z0-9_.-]*[a-z0-9])|(?:bench/[a-z][a-z0-9_-]*\\.(?:sh|py)))");
        std::set<std::string> refs;
        for (const auto& f : files_under({"scripts", ".ci"}, {""}))
            for (const auto& n : matches(read_file(f), ref)) refs.insert(n);
        for (const auto& n : matches(read_file(std::filesystem::path(hrtest::source_dir()) / "README.md"), ref))
            refs.insert(n);
        QVERIFY(refs.count("scripts/setup") && refs.count("scripts/test") && refs.count("scripts/demo"));
        for (const auto& n : refs) {
            const auto path = std::filesystem::path(hrtest::source_dir()) / n;
            QVERIFY2(std::filesystem::exists(path), (n + " is run by a script but is not in the tree").c_str());
            if (n.rfind("scripts/", 0) == 0 && n.find('.') == std::string::npos) {  // run as a program
                const auto perms = std::filesystem::status(path).permissions();
                QVERIFY2((perms & std::filesystem::perms::owner_exec) != std::filesystem::perms::none,
                         (n + " is not executable").c_str());
            }
        }
    }
};

QTEST_APPLESS_MAIN(SeamsTest)
#include "test_seams.moc"
