// Chooses the CPU backend's fast kernels at run time (cpu_kernels.h).
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

const FastKernels* choose() {
    if (const char* v = std::getenv("HEADROOM_CPU_KERNELS"))
        if (std::strcmp(v, "reference") == 0) return nullptr;
    if (cpu_has_avx2_fma()) return avx2_kernels();
    return nullptr;
}

}  // namespace

const FastKernels* fast_kernels() {
    static const FastKernels* k = choose();
    return k;
}

}  // namespace hr::cpu
