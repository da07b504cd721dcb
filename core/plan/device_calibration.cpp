#include "plan/device_calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "base/atomic_file.h"
#include "base/error.h"

namespace hr {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kRatesFile = "device-rates.json";

std::mutex& rates_mutex() {
    static std::mutex m;
    return m;
}
std::optional<DeviceRates>& pinned() {
    static std::optional<DeviceRates> p;
    return p;
}

bool nominal_requested() {
    const char* e = std::getenv("HEADROOM_RATES");
    return e && std::string(e) == "nominal";
}

// Seconds per call of fn, after one warm-up call, with the device drained before and after.
template <class F>
double seconds_per(Backend& b, int reps, F&& fn) {
    fn();
    b.synchronize();
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    b.synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count() / reps;
}

// f32 (or bf16) GEMM + convolution forward/backward: seconds and FLOPs of one round.
struct Round {
    double seconds = 0, flops = 0;
};
Round work_round(Backend& b, DType dt, bool gpu) {
    Allocator& a = b.allocator();
    const std::int64_t n = gpu ? 2048 : 320;
    Tensor x = Tensor::empty(a, {n, n}, dt, MemCategory::other);
    Tensor w = Tensor::empty(a, {n, n}, dt, MemCategory::other);
    Tensor y = Tensor::empty(a, {n, n}, dt, MemCategory::other);
    b.fill(x, 0.5);
    b.fill(w, 0.25);
    const double gemm_flops = 2.0 * double(n) * double(n) * double(n);
    const std::int64_t N = gpu ? 128 : 8, C = 32, K = 64, H = 28;
    Tensor xi = Tensor::empty(a, {N, C, H, H}, dt, MemCategory::other);
    Tensor wk = Tensor::empty(a, {K, C, 3, 3}, dt, MemCategory::other);
    Tensor yo = Tensor::empty(a, {N, K, H, H}, dt, MemCategory::other);
    b.fill(xi, 0.5);
    b.fill(wk, 0.125);
    Conv2dParams p;
    p.pad_h = p.pad_w = 1;
    const std::size_t wsb = b.conv2d_workspace_bytes(xi.shape(), wk.shape(), yo.shape(), p, dt);
    Tensor ws = wsb ? Tensor::empty(a, {static_cast<std::int64_t>(wsb)}, DType::u8, MemCategory::workspace) : Tensor();
    Tensor none;
    const double conv_flops = 3.0 * 2.0 * double(N) * double(K) * double(H) * double(H) * double(C) * 9.0;
    const int reps = gpu ? 10 : 2;
    Round r;
    r.seconds = seconds_per(b, reps, [&] {
        b.gemm(false, true, 1.0f, x, w, 0.0f, y);
        b.conv2d_forward(xi, wk, none, yo, p, ws);
        b.conv2d_backward_data(yo, wk, xi, p, ws);
        b.conv2d_backward_filter(xi, yo, wk, none, p, ws);
    });
    r.flops = gemm_flops + conv_flops;
    return r;
}

std::string today() {
    char when[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%d", std::gmtime(&t));
    return when;
}

}  // namespace

DeviceRates nominal_rates(const std::string& kind) {
    DeviceRates r;
    if (kind == "cuda") {
        r.flops = 30e12;
        r.lowp_factor = 0.5;
        r.host_link = 20e9;
    } else {
        r.flops = 40e9;
        r.lowp_factor = 1.15;  // low precision is stored, then computed in f32 (conversions cost)
        r.host_link = 10e9;
    }
    r.per_layer_seconds = 2e-5;
    r.source = "nominal (not measured)";
    return r;
}

void pin_device_rates(std::optional<DeviceRates> rates) {
    std::lock_guard<std::mutex> lock(rates_mutex());
    pinned() = std::move(rates);
}

DeviceRates measure_rates(Backend& b, Backend& host) {
    const bool gpu = !b.device().is_cpu();
    DeviceRates r;
    const Round f32 = work_round(b, DType::f32, gpu);
    const Round bf16 = work_round(b, DType::bf16, gpu);
    r.flops = f32.seconds > 0 ? f32.flops / f32.seconds : nominal_rates(gpu ? "cuda" : "cpu").flops;
    r.lowp_factor = f32.seconds > 0 ? std::clamp(bf16.seconds / f32.seconds, 0.05, 4.0) : 1.0;
    {
        const std::int64_t bytes = gpu ? (std::int64_t(64) << 20) : (std::int64_t(16) << 20);
        Tensor t = Tensor::empty(b.allocator(), {bytes}, DType::u8, MemCategory::other);
        std::vector<unsigned char> h(static_cast<std::size_t>(bytes), 1);
        const double s = seconds_per(b, 3, [&] {
            b.copy_from_host(h.data(), t);
            b.copy_to_host(t, h.data());
        });
        r.host_link = s > 0 ? 2.0 * double(bytes) / s : nominal_rates(gpu ? "cuda" : "cpu").host_link;
    }
    {
        Tensor t = Tensor::empty(b.allocator(), {256}, DType::f32, MemCategory::other);
        const double s = seconds_per(b, 300, [&] { b.scale(t, 1.0f); });
        r.per_layer_seconds = 3.0 * s;  // a layer queues about three small ops per micro-batch
    }
    (void)host;
    return r;
}

DeviceRates device_rates(const DeviceDescription& d, int threads) {
    {
        std::lock_guard<std::mutex> lock(rates_mutex());
        if (pinned()) return *pinned();
    }
    if (d.defaults) return d.rates;  // a GPU from the table: its table rates (set by describe_device)
    if (nominal_requested()) {
        DeviceRates r = nominal_rates(d.kind);
        r.source = "nominal (HEADROOM_RATES=nominal; not measured)";
        return r;
    }
    const std::string key =
        d.name + (d.gpu() ? " | " + cuda_versions() : " | " + std::to_string(threads) + " threads");
    nlohmann::json cache = nlohmann::json::parse(read_cache_file(kRatesFile), nullptr, false);
    if (!cache.is_object()) cache = nlohmann::json::object();
    if (cache.contains(key) && cache[key].is_object()) {
        const auto& e = cache[key];
        DeviceRates r;
        r.flops = e.value("flops", 0.0);
        r.lowp_factor = e.value("lowp_factor", 1.0);
        r.host_link = e.value("host_link", 0.0);
        r.per_layer_seconds = e.value("per_layer_seconds", 2e-5);
        if (r.flops > 0 && r.host_link > 0) {
            r.source = "measured on " + e.value("measured", std::string("an earlier run")) + " (cached in " +
                       headroom_cache_dir() + "/" + kRatesFile + ")";
            return r;
        }
    }
    DeviceRates r;
    try {
        auto host = make_cpu_backend(threads, std::make_shared<MemoryLedger>());
        if (d.gpu()) {
            auto b = make_cuda_backend(d.index, std::make_shared<MemoryLedger>());
            r = measure_rates(*b, *host);
        } else {
            r = measure_rates(*host, *host);
        }
    } catch (const std::exception& e) {
        DeviceRates n = nominal_rates(d.kind);
        n.source = std::string("nominal (the micro-benchmark failed: ") + e.what() + ")";
        return n;
    }
    cache[key] = {{"flops", r.flops},
                  {"lowp_factor", r.lowp_factor},
                  {"host_link", r.host_link},
                  {"per_layer_seconds", r.per_layer_seconds},
                  {"measured", today()}};
    write_cache_file(kRatesFile, cache.dump(2));
    r.source = "measured now (cached in " + headroom_cache_dir() + "/" + kRatesFile + ")";
    return r;
}

std::string headroom_cache_dir() {
    std::filesystem::path dir;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        dir = std::filesystem::path(x) / "headroom";
    else if (const char* h = std::getenv("HOME"); h && *h)
        dir = std::filesystem::path(h) / ".cache" / "headroom";
    else
        dir = std::filesystem::temp_directory_path() / "headroom-cache";
    return dir.string();
}

std::string read_cache_file(const std::string& name) {
    std::ifstream f(std::filesystem::path(headroom_cache_dir()) / name);
    if (!f) return "{}";
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str().empty() ? "{}" : ss.str();
}

void write_cache_file(const std::string& name, const std::string& text) {
    try {
        std::error_code ec;
        std::filesystem::create_directories(headroom_cache_dir(), ec);
        write_file_atomic((std::filesystem::path(headroom_cache_dir()) / name).string(), text);
    } catch (...) {
        // a cache that cannot be written is simply not kept
    }
}

}  // namespace hr
