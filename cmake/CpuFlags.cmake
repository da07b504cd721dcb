# CPU code generation for headroom_core (issue 14).
#
# The core is compiled for the x86-64 baseline, so `headroom` starts on every x86-64 CPU. The hot loops
# of the CPU backend live in core/backend/cpu/*_avx2.cpp, compiled with AVX2 + FMA, and *_avx512.cpp
# (AVX-512 F + VL), and are chosen at run time from cpuid (core/backend/cpu/cpu_kernels.cpp); on a CPU without AVX2 the backend runs its
# portable reference kernels (im2col + OpenBLAS, which picks its own kernels at run time).
# The *_avx2.cpp and *_avx512.cpp files must not instantiate inline or template code shared with other files (standard
# containers, project headers with inline functions): the linker keeps one copy of such code, and an
# AVX2 copy would be called from baseline code (tests/unit/test_cpu_dispatch.cpp checks the objects).
#
# HEADROOM_CPU_MARCH: -march for the rest of the core ("" = the compiler's default, x86-64). Set it to
# "native" for a build that only ever runs on the machine that builds it.
set(HEADROOM_CPU_MARCH "" CACHE STRING "-march for headroom_core (empty: the compiler's x86-64 baseline)")

function(headroom_cpu_flags target)
  if(HEADROOM_CPU_MARCH)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=${HEADROOM_CPU_MARCH}>)
  endif()
  get_target_property(_srcs ${target} SOURCES)
  foreach(_src IN LISTS _srcs)
    if(_src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
        COMPILE_OPTIONS "-mavx2;-mfma;-ffp-contract=off")
    elseif(_src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES
        COMPILE_OPTIONS "-mavx512f;-mavx512vl;-mavx2;-mfma;-ffp-contract=off")
    endif()
  endforeach()
endfunction()
