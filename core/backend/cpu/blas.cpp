#include "backend/cpu/blas.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "base/error.h"

namespace hr::cpu {

namespace {

// CBLAS enum values (cblas.h): row major 101, no-trans 111, trans 112.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                         int);
using SetThreadsFn = void (*)(int);
using ConfigFn = char* (*)();

struct Blas {
    SgemmFn sgemm = nullptr;
    DgemmFn dgemm = nullptr;
    std::string description;
};

const char* choose_coretype() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return nullptr;  // let OpenBLAS detect
}

const Blas& blas() {
    static Blas b;
    static std::once_flag once;
    static std::string error;
    std::call_once(once, [] {
        if (!std::getenv("OPENBLAS_CORETYPE")) {
            if (const char* core = choose_coretype()) setenv("OPENBLAS_CORETYPE", core, 0);
        }
        void* h = nullptr;
        for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
            h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (h) break;
        }
        if (!h) {
            error = "OpenBLAS could not be loaded (libopenblas.so.0); install it with: apt install libopenblas0";
            return;
        }
        b.sgemm = reinterpret_cast<SgemmFn>(dlsym(h, "cblas_sgemm"));
        b.dgemm = reinterpret_cast<DgemmFn>(dlsym(h, "cblas_dgemm"));
        if (!b.sgemm || !b.dgemm) {
            error = "the loaded OpenBLAS has no cblas_sgemm/cblas_dgemm; reinstall libopenblas0";
            return;
        }
        // single-threaded: the backend splits work itself over static partitions (deterministic)
        if (auto set = reinterpret_cast<SetThreadsFn>(dlsym(h, "openblas_set_num_threads"))) set(1);
        std::string cfg = "OpenBLAS";
        if (auto f = reinterpret_cast<ConfigFn>(dlsym(h, "openblas_get_config"))) {
            cfg = f();
            auto first = cfg.find(' ');
            if (first != std::string::npos) {
                auto second = cfg.find(' ', first + 1);
                if (second != std::string::npos) cfg = cfg.substr(0, second);
            }
        }
        if (auto f = reinterpret_cast<ConfigFn>(dlsym(h, "openblas_get_corename"))) cfg += std::string(", ") + f() + " kernels";
        b.description = cfg;
    });
    if (!b.sgemm) throw Error(error);
    return b;
}

}  // namespace

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
    blas().sgemm(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
                 ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
    blas().dgemm(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
                 ldc);
}

std::string blas_description() { return blas().description; }

}  // namespace hr::cpu
