#include "backend/cpu/blas.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
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
using SgemvFn = void (*)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using SetThreadsFn = void (*)(int);
using ConfigFn = char* (*)();

struct Blas {
    SgemmFn sgemm = nullptr;
    DgemmFn dgemm = nullptr;
    SgemvFn sgemv = nullptr;
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
        b.sgemv = reinterpret_cast<SgemvFn>(dlsym(h, "cblas_sgemv"));
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

// OpenBLAS packs the rows of C's operand op(A) (its B operand: it works on the transposed, column-major
// problem) into a buffer of its own, mmap'd once for each caller at a time (BUFFER_SIZE, 128 MiB on x86-64)
// and made resident only as far as a call packs: min(k, GEMM_Q) x rows floats (for k = 256, 1 KB a row).
// One call over a batch's rows therefore made memory resident in proportion to the batch, outside the heap
// and outside the ledger (mlp, batch 4096 -> 16384: about 1 KB a sample, +4.9 %; issue 46 item 7). So a call
// is cut into pieces of `rows_per_call` rows of C, the last piece taking the rest: the buffer's resident part
// stays below a constant (about 2 MB + 32 MiB / n a call) whatever the batch. The numbers stay the same to the
// bit: every piece starts at a multiple of 768 rows from the call's first, so OpenBLAS's kernels cover the
// rows in the same tiles as in one call (the Haswell kernels' results depend on a row's place in its tile),
// and every piece has at least 2^23 multiply-adds, so OpenBLAS takes its blocked path for each piece, as for
// the whole call, not its direct or small-matrix kernels (which sum in another order; checked on the SkylakeX
// and Haswell kernels of 0.3.21 over random shapes, both transposes, alpha and beta).
std::int64_t rows_per_call(int n, int k) {
    constexpr std::int64_t kTile = 768, kMinWork = std::int64_t(1) << 23;
    const std::int64_t nk = std::max<std::int64_t>(1, static_cast<std::int64_t>(n) * k);
    return (kMinWork / nk / kTile + 1) * kTile;
}

template <class T, class F>
void by_rows(F&& gemm, bool ta, int m, int n, int k, const T* a, int lda, T* c, int ldc) {
    const std::int64_t rows = rows_per_call(n, k);
    if (m < 2 * rows) {
        gemm(m, a, c);
        return;
    }
    for (std::int64_t m0 = 0; m0 < m; m0 += rows) {
        const std::int64_t m1 = m - m0 < 2 * rows ? m : m0 + rows;  // the last piece takes the rest
        gemm(static_cast<int>(m1 - m0), ta ? a + m0 : a + m0 * lda, c + m0 * ldc);
        if (m1 == m) break;
    }
}

}  // namespace

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
    const auto& f = blas().sgemm;
    by_rows<float>(
        [&](int rows, const float* ap, float* cp) {
            f(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, rows, n, k, alpha, ap, lda, b, ldb, beta, cp,
              ldc);
        },
        ta, m, n, k, a, lda, c, ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
    const auto& f = blas().dgemm;
    by_rows<double>(
        [&](int rows, const double* ap, double* cp) {
            f(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, rows, n, k, alpha, ap, lda, b, ldb, beta, cp,
              ldc);
        },
        ta, m, n, k, a, lda, c, ldc);
}

void sgemv(bool trans, int n, int k, float alpha, const float* a, int lda, const float* x, int incx, float beta,
           float* y) {
    const Blas& b = blas();
    if (!b.sgemv) {  // (every OpenBLAS has it; as a product of one row, should one not)
        sgemm(false, !trans, 1, n, k, alpha, x, incx == 1 ? k : 1, a, lda, beta, y, n);
        return;
    }
    // row-major: trans false is y = A x with A (n rows, k columns); trans true, y = A^T x with A (k, n)
    if (trans)
        b.sgemv(kRowMajor, kTrans, k, n, alpha, a, lda, x, incx, beta, y, 1);
    else
        b.sgemv(kRowMajor, kNoTrans, n, k, alpha, a, lda, x, incx, beta, y, 1);
}

std::string blas_description() { return blas().description; }

}  // namespace hr::cpu
