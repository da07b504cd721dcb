#include "test_support.h"
#include "programs.h"

#include <QProcess>
#include <QProcessEnvironment>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <mutex>
#include <random>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "io/safetensors.h"

namespace hrtest {
namespace {
// Never destroyed: a function-local static built after std::atexit(cleanup) would be destroyed before
// cleanup runs (exit runs both in reverse order of registration), and every temp dir would be left behind.
std::vector<std::filesystem::path>& dirs() {
    static auto* d = new std::vector<std::filesystem::path>;
    return *d;
}
void cleanup() {
    for (auto& p : dirs()) {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
    }
}

// An exception no test caught (an hr::Error from a GPU call, say) reaches std::terminate through Qt Test,
// which would end the program with abort() and "Caught unhandled exception" alone. Every test program
// instead prints the exception's own message, removes its temporary folders and fails with exit code 1.
[[noreturn]] void uncaught_exception() {
    std::string what = "an exception of unknown type";
    if (std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            what = x.what();
        } catch (...) {
        }
    } else {
        what = "std::terminate without an exception";
    }
    std::fprintf(stderr, "FAIL!  : uncaught exception: %s\n", what.c_str());
    std::fflush(stderr);
    cleanup();
    std::_Exit(1);
}
[[maybe_unused]] const bool terminate_handler_installed = [] {
    std::set_terminate(uncaught_exception);
    return true;
}();
}  // namespace

std::string temp_dir(const std::string& prefix) {
    static std::once_flag once;
    std::call_once(once, [] { std::atexit(cleanup); });
    std::random_device rd;
    auto base = std::filesystem::temp_directory_path();
    for (int i = 0; i < 100; ++i) {
        auto p = base / (prefix + "-" + std::to_string(rd()));
        std::error_code ec;
        if (std::filesystem::create_directory(p, ec)) {
            dirs().push_back(p);
            return p.string();
        }
    }
    return (base / prefix).string();
}

namespace {
// The build folder this program lies in: the nearest folder above /proc/self/exe with a CMakeCache.txt.
std::filesystem::path own_build_dir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    for (auto d = exe.parent_path(); !d.empty(); d = d.parent_path()) {
        if (std::filesystem::exists(d / "CMakeCache.txt", ec)) return d;
        if (d == d.root_path()) break;
    }
    return {};
}
std::string cache_value(const std::filesystem::path& cache, const std::string& key) {
    std::ifstream in(cache);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key + ":", 0) == 0) {
            const auto eq = line.find('=');
            if (eq != std::string::npos) return line.substr(eq + 1);
        }
    return {};
}
[[noreturn]] void no_dir(const char* var) {
    std::fprintf(stderr,
                 "test: %s is not set and no CMakeCache.txt lies above this program: run it through ctest "
                 "(ctest -R NAME in the build folder), or set HEADROOM_SOURCE_DIR to the checkout and "
                 "HEADROOM_BINARY_DIR to the build folder\n",
                 var);
    std::exit(2);
}
std::string env_dir(const char* var) {
    const char* v = std::getenv(var);
    return v && *v ? std::string(v) : std::string();
}
std::string joined(const std::string& dir, const std::string& rel) { return rel.empty() ? dir : dir + "/" + rel; }
}  // namespace

const std::string& binary_dir() {
    static const std::string dir = [] {
        std::string d = env_dir("HEADROOM_BINARY_DIR");
        if (d.empty()) d = own_build_dir().string();
        if (d.empty()) no_dir("HEADROOM_BINARY_DIR");
        return d;
    }();
    return dir;
}
const std::string& source_dir() {
    static const std::string dir = [] {
        std::string d = env_dir("HEADROOM_SOURCE_DIR");
        if (d.empty()) {
            const auto build = own_build_dir();
            if (!build.empty()) d = cache_value(build / "CMakeCache.txt", "CMAKE_HOME_DIRECTORY");
        }
        if (d.empty()) no_dir("HEADROOM_SOURCE_DIR");
        return d;
    }();
    return dir;
}
std::string source_path(const std::string& rel) { return joined(source_dir(), rel); }
std::string binary_path(const std::string& rel) { return joined(binary_dir(), rel); }

std::string fashion_mnist_dir() {
    const char* env = std::getenv("HEADROOM_DATA_DIR");
    std::vector<std::string> candidates;
    if (env) candidates.push_back(std::string(env) + "/fashion-mnist");
    candidates.push_back("/usr/share/datasets/fashion-mnist");
    for (auto& c : candidates)
        if (std::filesystem::exists(c + "/train-images-idx3-ubyte.gz") ||
            std::filesystem::exists(c + "/train-images-idx3-ubyte"))
            return c;
    return "";
}

namespace {
// The fields of /proc/PID/stat after the command name (state, ppid, ...); empty when it cannot be read.
std::vector<std::string> stat_fields(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return {};
    const std::size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos || line.size() < close + 2) return {};
    std::istringstream rest(line.substr(close + 2));
    std::vector<std::string> fields;
    for (std::string f; rest >> f;) fields.push_back(f);
    return fields;
}
}  // namespace

std::set<long> processes_below(long root) {
    std::map<long, long> parent;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::vector<std::string> f = stat_fields(std::stol(name));
        if (f.size() < 2 || f[0] == "Z") continue;
        parent[std::stol(name)] = std::stol(f[1]);
    }
    std::set<long> out;
    for (const auto& [pid, ppid] : parent) {
        long p = ppid;
        for (int depth = 0; depth < 8 && p > 1; ++depth) {
            if (p == root) {
                out.insert(pid);
                break;
            }
            auto it = parent.find(p);
            p = it == parent.end() ? 0 : it->second;
        }
    }
    return out;
}

std::map<int, long> rank_processes(long root) {
    std::map<int, long> ranks;
    for (long pid : processes_below(root)) {
        std::ifstream env("/proc/" + std::to_string(pid) + "/environ");
        const std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
        const std::string key = "OMPI_COMM_WORLD_RANK=";
        const std::size_t at = all.find(key);
        if (at == std::string::npos) continue;
        std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
        std::string exe;
        std::getline(comm, exe);
        if (exe == "headroom") ranks[std::atoi(all.c_str() + at + key.size())] = pid;
    }
    return ranks;
}

bool process_alive(long pid) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0) return false;
    const std::vector<std::string> f = stat_fields(pid);
    return f.empty() || f[0] != "Z";
}

double process_cpu_seconds(long pid) {
    const std::vector<std::string> f = stat_fields(pid);
    if (f.size() < 13) return -1;  // fields 14 and 15 of stat: utime, stime (clock ticks)
    return static_cast<double>(std::stoll(f[11]) + std::stoll(f[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// --- programs and their files (programs.h) -------------------------------------------------------------
ProcessResult run_program(const QString& program, const QStringList& args, const QString& cwd, int timeout_ms) {
    QProcess p;
    if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
    p.setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished(5000);
    }
    ProcessResult r;
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.output = QString::fromLocal8Bit(p.readAll());
    return r;
}

QString compare_weights(const std::string& a_path, const std::string& ref_path, double tolerance, double* worst) {
    double w = 0;
    if (worst) *worst = 0;
    const hr::SafeTensorsFile a = hr::read_safetensors(a_path), b = hr::read_safetensors(ref_path);
    if (a.tensors.size() != b.tensors.size())
        return QString("tensor counts differ: %1 vs %2").arg(a.tensors.size()).arg(b.tensors.size());
    if (a.tensors.empty()) return QStringLiteral("no tensors");
    for (const hr::SafeTensor& x : a.tensors) {
        const hr::SafeTensor* y = b.find(x.name);
        const QString name = QString::fromStdString(x.name);
        if (!y) return QString("%1 missing").arg(name);
        if (x.dtype != y->dtype || x.shape != y->shape || x.data.size() != y->data.size())
            return QString("%1: dtype or shape differ").arg(name);
        if (tolerance == 0) {
            if (x.data != y->data) return QString("%1 differs (bit for bit expected)").arg(name);
            continue;
        }
        if (x.dtype != hr::DType::f32) return QString("%1: not f32").arg(name);
        const std::size_t n = x.data.size() / sizeof(float);
        std::vector<float> xv(n), yv(n);
        std::memcpy(xv.data(), x.data.data(), x.data.size());
        std::memcpy(yv.data(), y->data.data(), y->data.size());
        double scale = 1e-30, diff = 0;
        for (std::size_t k = 0; k < n; ++k) {
            scale = std::max(scale, std::fabs(static_cast<double>(yv[k])));
            diff = std::max(diff, std::fabs(static_cast<double>(xv[k]) - static_cast<double>(yv[k])));
        }
        w = std::max(w, diff / scale);
        if (worst) *worst = w;
        if (diff > tolerance * scale)
            return QString("%1: max |diff| %2 over max |value| %3").arg(name).arg(diff).arg(scale);
    }
    return QString();
}

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

}  // namespace hrtest
