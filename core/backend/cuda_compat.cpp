#include "backend/cuda_compat.h"

#include <cctype>
#include <sstream>

namespace hr {

std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

int cuda_min_driver_branch(int cuda_major) {
    switch (cuda_major) {
        case 11: return 450;
        case 12: return 525;
        case 13: return 580;
        default: return 0;
    }
}

std::optional<Message> cuda_driver_mismatch(int driver_version, int runtime_version) {
    if (driver_version <= 0 || runtime_version <= 0) return std::nullopt;
    if (driver_version / 1000 >= runtime_version / 1000) return std::nullopt;
    const int branch = cuda_min_driver_branch(runtime_version / 1000);
    const std::string need = branch ? "r" + std::to_string(branch) : std::string("a newer one");
    return Message(HR_MSG("cuda.driver_too_old",
                          "the NVIDIA driver supports CUDA %1, but this Headroom was built with CUDA %2, which needs "
                          "driver %3 or newer; update the driver, use a Headroom built with CUDA %1, or use --device "
                          "cpu"),
                   {cuda_version_text(driver_version), cuda_version_text(runtime_version), need});
}

namespace {

struct Arch {
    int major = 0, minor = 0;
    bool sass = true, ptx = true;
};

std::optional<Arch> parse_arch(std::string item) {
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(item.begin());
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    Arch a;
    if (const auto dash = item.find('-'); dash != std::string::npos) {
        const std::string kind = item.substr(dash + 1);
        item.resize(dash);
        if (kind == "real") a.ptx = false;
        else if (kind == "virtual") a.sass = false;
        else return std::nullopt;
    }
    // "90a": architecture-specific features, machine code for exactly that architecture
    bool specific = false;
    if (!item.empty() && std::isalpha(static_cast<unsigned char>(item.back()))) {
        specific = true;
        item.pop_back();
    }
    if (item.size() < 2) return std::nullopt;
    for (char c : item)
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const int v = std::stoi(item);
    a.major = v / 10;
    a.minor = v % 10;
    if (specific) a.ptx = false;
    return a;
}

}  // namespace

bool cuda_archs_cover(const std::string& archs, int cc_major, int cc_minor) {
    // CMake's keywords that the build could not resolve to a list: the kernel-image probe decides
    if (archs == "native" || archs == "all" || archs == "all-major" || archs == "unknown") return true;
    std::stringstream in(archs);
    std::string item;
    while (std::getline(in, item, ';')) {
        const auto a = parse_arch(item);
        if (!a) continue;
        if (a->sass && a->major == cc_major && a->minor <= cc_minor) return true;
        if (a->ptx && (a->major < cc_major || (a->major == cc_major && a->minor <= cc_minor))) return true;
    }
    return false;
}

Message cuda_arch_missing(const std::string& gpu_name, int cc_major, int cc_minor, const std::string& archs) {
    return Message(HR_MSG("cuda.no_arch",
                          "%1 has compute capability %2.%3, but this Headroom holds GPU code only for %4; build it "
                          "with -DHEADROOM_CUDA_ARCHS=%2%3 (or a list that includes it), or use --device cpu"),
                   {gpu_name, std::to_string(cc_major), std::to_string(cc_minor), archs});
}

}  // namespace hr
