// Chooses the CPU backend's fast kernels at run time (cpu_kernels.h): AVX-512 where cpuid and the OS
// allow it, else AVX2 + FMA, else none.
#include "backend/cpu/cpu_kernels.h"

#include <cstdlib>
#include <cstring>

namespace hr::cpu {

namespace {

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    // __builtin_cpu_supports checks the OS's XSAVE support of the YMM state as well (libgcc).
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    // as above: libgcc reports AVX-512 only when the OS saves the opmask and ZMM state too
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

const FastKernels* choose() {
    const char* v = std::getenv("HEADROOM_CPU_KERNELS");
    if (v && std::strcmp(v, "reference") == 0) return nullptr;
    if (!cpu_has_avx2_fma()) return nullptr;
    if (v && std::strcmp(v, "avx2") == 0) return avx2_kernels();
    if (cpu_has_avx512()) return avx512_kernels();
    return avx2_kernels();
}

}  // namespace

const FastKernels* fast_kernels() {
    static const FastKernels* k = choose();
    return k;
}

}  // namespace hr::cpu
