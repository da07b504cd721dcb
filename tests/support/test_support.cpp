#include "test_support.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <vector>

namespace hrtest {
namespace {
std::vector<std::filesystem::path>& dirs() {
    static std::vector<std::filesystem::path> d;
    return d;
}
void cleanup() {
    for (auto& p : dirs()) {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
    }
}
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

}  // namespace hrtest
