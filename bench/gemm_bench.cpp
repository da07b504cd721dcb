// headroom_bench_gemm: the machine's own matrix-multiply rate through Headroom's CPU backend (Backend::gemm: the
// OpenBLAS sgemm calls and thread partition every linear layer uses; bf16 tensors as Headroom computes them today,
// converted to f32 around sgemm), for scripts/bench cpu's "share of the machine" columns (docs/benchmarks.md).
// PyTorch's side is bench/gemm_torch.py. Not a test: it asserts nothing and prints one JSON object.
//
//   headroom_bench_gemm [--n 2048] [--threads 2] [--repeat 5]
//
// For each dtype (f32, bf16): C = A B with A, B, C n x n, one untimed call, then --repeat timed calls; GFLOP/s =
// 2 n^3 / seconds, the best and the median call. Also prints the CPU's vector/matrix flags (avx2, avx512f,
// avx512_bf16, amx_bf16) read from /proc/cpuinfo.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "base/error.h"
#include "memory/ledger.h"
#include "train/device.h"

using json = nlohmann::json;

namespace {

std::vector<std::string> cpu_flags() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("flags", 0) == 0) {
            std::istringstream s(line.substr(line.find(':') + 1));
            std::vector<std::string> have, wanted = {"avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"};
            std::string w;
            std::vector<std::string> all;
            while (s >> w) all.push_back(w);
            for (const auto& x : wanted)
                if (std::find(all.begin(), all.end(), x) != all.end()) have.push_back(x);
            return have;
        }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    std::int64_t n = 2048;
    int threads = 2, repeat = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "headroom_bench_gemm: %s needs a value\nusage: headroom_bench_gemm [--n 2048] "
                                 "[--threads 2] [--repeat 5]\n", a.c_str());
            return 2;
        }
        const std::string v = argv[++i];
        if (a == "--n") n = std::stoll(v);
        else if (a == "--threads") threads = std::stoi(v);
        else if (a == "--repeat") repeat = std::max(1, std::stoi(v));
        else {
            std::fprintf(stderr, "headroom_bench_gemm: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    try {
        auto ledger = std::make_shared<hr::MemoryLedger>();
        std::unique_ptr<hr::Backend> be = hr::make_backend("cpu", threads, ledger, false, nullptr);
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> u(-1, 1);
        std::vector<float> host(static_cast<std::size_t>(n * n));
        json out = {{"peer", "headroom"}, {"n", n}, {"threads", threads}, {"device", be->name()},
                    {"cpu_flags", cpu_flags()}};
        for (hr::DType dt : {hr::DType::f32, hr::DType::bf16}) {
            auto make = [&] {
                hr::Tensor t = hr::Tensor::empty(be->allocator(), {n, n}, dt, hr::MemCategory::workspace);
                if (dt == hr::DType::f32) {
                    for (auto& x : host) x = u(rng);
                    be->copy_from_host(host.data(), t);
                } else {  // bf16 from f32 through the backend's own conversion
                    hr::Tensor f = hr::Tensor::empty(be->allocator(), {n, n}, hr::DType::f32, hr::MemCategory::workspace);
                    for (auto& x : host) x = u(rng);
                    be->copy_from_host(host.data(), f);
                    be->copy(f, t);
                }
                return t;
            };
            hr::Tensor a = make(), b = make(), c = make();
            std::vector<double> s;
            for (int r = 0; r <= repeat; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                be->gemm(false, false, 1.0f, a, b, 0.0f, c);
                be->synchronize();
                const double dt_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (r > 0) s.push_back(dt_s);  // the first call warms the caches and the thread pool
            }
            std::sort(s.begin(), s.end());
            const double flop = 2.0 * double(n) * double(n) * double(n);
            out[dt == hr::DType::f32 ? "f32" : "bf16"] = {{"best_gflops", flop / s.front() / 1e9},
                                                          {"median_gflops", flop / s[s.size() / 2] / 1e9},
                                                          {"seconds", s}};
        }
        std::printf("%s\n", out.dump().c_str());
        return 0;
    } catch (const hr::Error& e) {
        std::fprintf(stderr, "headroom_bench_gemm: %s\n", e.what());
        return 2;
    }
}
