# Sanitizer + fuzzing configuration (issue 13). One configure builds core/ and its unit tests with
# AddressSanitizer + UndefinedBehaviorSanitizer, and the libFuzzer targets of tests/fuzz, with clang:
#
#   CC=clang CXX=clang++ cmake -S . -B build-sanitize -DHEADROOM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
#
# scripts/test runs that build's tests (labels `sanitize` and `fuzz`); scripts/fuzz builds the same
# configuration in build-fuzz/ and fuzzes for longer. In this configuration CUDA is off and bench/ is
# not built (top-level CMakeLists.txt); widgets/ and app/ are, for the window's tests (tests/gui).
#
# Every object is compiled with -fsanitize=address,undefined and -fsanitize=fuzzer-no-link (coverage
# instrumentation, so the fuzzers see core/'s branches); the unit tests link -fsanitize=address,undefined
# (the sanitizer runtime provides the coverage hooks), the fuzz targets -fsanitize=fuzzer,address,undefined.
# UBSan aborts on the first finding (-fno-sanitize-recover=all), so a finding fails the test.
option(HEADROOM_SANITIZE "Build core/ and its unit tests with ASan+UBSan, and the libFuzzer targets (clang)" OFF)

if(HEADROOM_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HEADROOM_SANITIZE needs clang (libFuzzer): configure with CC=clang CXX=clang++")
  endif()
  # No CUDA in this configuration (nvcc does not take these flags; the CUDA code has its own tests).
  set(HEADROOM_WITH_CUDA OFF CACHE BOOL "Build the CUDA backend (needs nvcc, cuBLAS, cuDNN)" FORCE)
  set(HR_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  # -O1: the sanitizers' recommendation (Debug's -O0 makes the unit tests several times slower).
  # -gline-tables-only (after Debug's -g, so it wins): the files and lines the sanitizers' and libFuzzer's
  # stack traces print, without the types and variables a debugger reads, which were most of the objects'
  # size and a good part of their compile and link time (docs/benchmarks.md, "The inner loop").
  add_compile_options(${HR_SANITIZE_FLAGS} -fsanitize=fuzzer-no-link -O1 -gline-tables-only)
  add_link_options(${HR_SANITIZE_FLAGS})
  # LLVM's linker when installed (scripts/setup's test packages: lld): some 100 programs link the
  # instrumented static core, and GNU ld took seconds for each.
  find_program(HEADROOM_LLD ld.lld)
  if(HEADROOM_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
  message(STATUS "Headroom: sanitizer build (ASan + UBSan, libFuzzer targets); CUDA and bench off")
endif()

# Registers the unit tests (tests/unit/test_*.cpp) under the sanitizers, labelled `sanitize`, and the
# fuzz targets (tests/fuzz), and the window's tests. Called from tests/CMakeLists.txt in the sanitizer
# configuration instead of the usual registration (programs made by its hr_test_executable). Unit
# tests that run the `headroom` executable are left out (they are slow under the sanitizers), as are
# the labels cuda, slow and dist.
function(hr_add_sanitize_tests)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  file(GLOB tests CONFIGURE_DEPENDS ${dir}/unit/test_*.cpp)
  foreach(src IN LISTS tests)
    file(READ ${src} text)
    string(FIND "${text}" "qbinary_path(\"headroom\")" needs_app)
    if(NOT needs_app EQUAL -1)
      continue()
    endif()
    get_filename_component(name ${src} NAME_WE)
    string(REGEX REPLACE "^test_" "" name ${name})
    hr_test_executable(${name} ${src} headroom_core)
    add_test(NAME sanitize_${name} COMMAND test_${name})
    # detect_leaks: LeakSanitizer is part of ASan; halt_on_error is the default for ASan.
    set_tests_properties(sanitize_${name} PROPERTIES LABELS "sanitize" TIMEOUT 1500
      ENVIRONMENT "${HR_TEST_ENVIRONMENT};ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1")
  endforeach()
  # The window's tests (tests/gui) under the same sanitizers: the session thread, the rank relay and the
  # window's teardown are where object lifetimes cross threads. Qt's own allocations that live until
  # exit (fonts, the platform plugin) are not ours, so LeakSanitizer is off for them.
  # test_translations is left out: it checks the installed layout (icons come from cmake/Package.cmake,
  # which this configuration does not include).
  file(GLOB gui_tests CONFIGURE_DEPENDS ${dir}/gui/test_*.cpp)
  list(FILTER gui_tests EXCLUDE REGEX "/test_translations\\.cpp$")
  foreach(src IN LISTS gui_tests)
    get_filename_component(name ${src} NAME_WE)
    string(REGEX REPLACE "^test_" "" name ${name})
    hr_test_executable(${name} ${src} headroom_app)
    add_dependencies(test_${name} headroom)  # some start the headroom binary (ranks, the CLI)
    add_test(NAME sanitize_gui_${name} COMMAND test_${name})
    set_tests_properties(sanitize_gui_${name} PROPERTIES LABELS "sanitize" TIMEOUT 1500
      ENVIRONMENT "${HR_TEST_ENVIRONMENT};ASAN_OPTIONS=detect_leaks=0:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1")
  endforeach()
  add_subdirectory(${dir}/fuzz ${CMAKE_BINARY_DIR}/tests/fuzz)
endfunction()
