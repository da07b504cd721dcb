# The CUDA backend as a module loaded at run time (README "The CUDA backend").
#
# headroom_core never links CUDA: it dlopen()s libheadroom_cuda.so on first use
# (core/backend/cuda/cuda_module.cpp), so `headroom` starts on a machine without the CUDA libraries and
# trains on the CPU there. The module links the CUDA runtime (statically), cuBLAS and cuDNN; it is built here when nvcc is
# found (-DHEADROOM_WITH_CUDA=ON/OFF; CI sets ON, so that a missing toolkit fails the build instead of
# building without CUDA), written next to `headroom` in the build tree and installed to lib/headroom/
# (component "cuda": the headroom-cuda package).
#
# Included once from the top-level CMakeLists.txt (after project()); core/CMakeLists.txt calls
# headroom_add_cuda_module() once headroom_core exists.
# HEADROOM_CUDA_ARCHS as CMAKE_CUDA_ARCHITECTURES (out) and as the explicit list the module states and
# checks a GPU against (text, for core/backend/cuda_compat.h). "all" and "all-major" are resolved from
# what this nvcc can build (CMake 3.25's own lists still name architectures CUDA 13 dropped); "native" is
# the GPUs nvidia-smi sees (machine code and PTX for each), or 80 on a machine where it sees none.
function(_headroom_resolve_cuda_archs archs out text)
  set(_text "${archs}")
  if(archs STREQUAL "all" OR archs STREQUAL "all-major")
    execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-code OUTPUT_VARIABLE _codes
                    RESULT_VARIABLE _rc ERROR_QUIET)
    string(REGEX MATCHALL "sm_[0-9]+" _codes "${_codes}")
    set(_list "")
    foreach(_c IN LISTS _codes)
      string(REPLACE "sm_" "" _n "${_c}")
      math(EXPR _minor "${_n} % 10")
      if(archs STREQUAL "all" OR _minor EQUAL 0)
        list(APPEND _list "${_n}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _list)
    list(SORT _list COMPARE NATURAL)
    if(NOT _list)
      message(FATAL_ERROR "HEADROOM_CUDA_ARCHS=${archs}: '${CMAKE_CUDA_COMPILER} --list-gpu-code' named no "
                          "architecture; give a list instead, e.g. -DHEADROOM_CUDA_ARCHS=\"80-real;90\"")
    endif()
    # machine code for each, and PTX of the newest for GPUs after it
    list(POP_BACK _list _last)
    list(TRANSFORM _list APPEND "-real")
    list(APPEND _list "${_last}")
    set(archs "${_list}")
    set(_text "${_list}")
  elseif(archs STREQUAL "native")
    # resolved here rather than by CMake, whose "native" fails to generate on a machine without a GPU
    set(_list "")
    find_program(_hr_nvidia_smi nvidia-smi)
    if(_hr_nvidia_smi)
      execute_process(COMMAND "${_hr_nvidia_smi}" --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET)
      if(_rc EQUAL 0)
        string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _caps "${_caps}")
        foreach(_c IN LISTS _caps)
          string(REPLACE "." "" _c "${_c}")
          list(APPEND _list "${_c}")
        endforeach()
        list(REMOVE_DUPLICATES _list)
      endif()
    endif()
    if(NOT _list)
      message(STATUS "Headroom: HEADROOM_CUDA_ARCHS=native, but nvidia-smi sees no GPU here: building for 80 "
                     "(the code compiles; name the architectures to build for a GPU elsewhere)")
      set(_list "80")
    endif()
    set(archs "${_list}")
    set(_text "${_list}")
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
  set(${text} "${_text}" PARENT_SCOPE)
endfunction()

include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_hr_cuda_default ON)
else()
  set(_hr_cuda_default OFF)
endif()
option(HEADROOM_WITH_CUDA "Build the CUDA backend module (needs nvcc, cuBLAS, cuDNN)" ${_hr_cuda_default})
# Machine code for Ampere (80, 86), Ada (89) and Hopper (90), and one PTX copy (90) that the driver compiles
# for newer GPUs; the module refuses a GPU none of them covers (core/backend/cuda_compat.h). scripts/setup
# passes its own choice (the GPU's architecture, or one architecture on a machine without a GPU);
# scripts/package keeps this release list. Any CMake form works: a list, "native", "all", "all-major".
set(HEADROOM_CUDA_ARCHS "80-real;86-real;89-real;90" CACHE STRING "CUDA architectures to build for")
set(HEADROOM_CUDA_MODULE_FILE "libheadroom_cuda.so")
if(HEADROOM_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "HEADROOM_WITH_CUDA is ON but no CUDA compiler (nvcc) was found; "
                        "put nvcc on PATH or configure with -DHEADROOM_WITH_CUDA=OFF")
  endif()
  _headroom_resolve_cuda_archs("${HEADROOM_CUDA_ARCHS}" _hr_cuda_archs _hr_cuda_archs_text)
  set(CMAKE_CUDA_ARCHITECTURES "${_hr_cuda_archs}")
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 does not know nvcc 13's C++20 flag; kernels need only C++17
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  # Debian 12's CMake 3.25.1 FindCUDAToolkit marks CUDA::nvToolsExt deprecated whenever the project requires
  # 3.25, and fails where the toolkit has no nvToolsExt (CUDA 13 has only the header-only nvtx3): "set_property
  # could not find TARGET CUDA::nvToolsExt" (CMake 3.25.2 checks for the target first). The module is read
  # as by a project requiring 3.24: the deprecation note is all that changes.
  set(_hr_cmake_minimum "${CMAKE_MINIMUM_REQUIRED_VERSION}")
  set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_MINIMUM_REQUIRED_VERSION "${_hr_cmake_minimum}")
  # cuDNN ships next to the toolkit here (/usr/local/cuda/lib64) or in the distribution's lib dir.
  find_library(HEADROOM_CUDNN_LIBRARY cudnn
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  find_path(HEADROOM_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(NOT HEADROOM_CUDNN_LIBRARY OR NOT HEADROOM_CUDNN_INCLUDE_DIR)
    message(FATAL_ERROR "HEADROOM_WITH_CUDA is ON but cuDNN 9 (libcudnn.so, cudnn.h) was not found; "
                        "install cuDNN 9 or configure with -DHEADROOM_WITH_CUDA=OFF")
  endif()
endif()
message(STATUS "Headroom: CUDA backend module ${HEADROOM_WITH_CUDA}")

# Tests load the module from the build tree (ctest sets HEADROOM_CUDA_MODULE to this path).
set(HEADROOM_CUDA_MODULE_BUILD_PATH "${CMAKE_BINARY_DIR}/${HEADROOM_CUDA_MODULE_FILE}")

function(headroom_add_cuda_module)
  # Always: the module's file name, for the loader's search and messages.
  target_compile_definitions(headroom_core PRIVATE HEADROOM_CUDA_MODULE_FILE="${HEADROOM_CUDA_MODULE_FILE}")
  if(NOT HEADROOM_WITH_CUDA)
    return()
  endif()
  # The program was built together with a module (app/ prints GPU details only then; the loader is
  # in every build and finds a module installed later, e.g. the headroom-cuda package).
  target_compile_definitions(headroom_core PUBLIC HEADROOM_WITH_CUDA=1)
  set(_dir "${CMAKE_SOURCE_DIR}/core/backend/cuda")
  file(GLOB _hr_cuda_sources CONFIGURE_DEPENDS ${_dir}/*.cpp ${_dir}/*.cu)
  list(FILTER _hr_cuda_sources EXCLUDE REGEX "/cuda_module\\.cpp$")  # the loader: part of headroom_core
  add_library(headroom_cuda MODULE ${_hr_cuda_sources})
  set_target_properties(headroom_cuda PROPERTIES
    OUTPUT_NAME headroom_cuda PREFIX "lib" SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}"
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    # found next to the CUDA libraries it was linked with when they are not on the loader's path
    INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}" BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR}")
  target_include_directories(headroom_cuda PRIVATE ${HEADROOM_CUDNN_INCLUDE_DIR})
  target_compile_definitions(headroom_cuda PRIVATE HEADROOM_CUDA_MODULE_BUILD=1)
  # The architectures as text in a generated header, not a -D flag: a list holds semicolons, which
  # CMake splits a definition at (the build broke that way for every list of more than one).
  file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/generated/headroom_cuda_archs.h"
       CONTENT "// Generated by cmake/Cuda.cmake from HEADROOM_CUDA_ARCHS=@HEADROOM_CUDA_ARCHS@\n#define HEADROOM_CUDA_ARCHS_TEXT \"@_hr_cuda_archs_text@\"\n"
       @ONLY)
  target_include_directories(headroom_cuda PRIVATE "${CMAKE_BINARY_DIR}/generated")
  target_compile_options(headroom_cuda PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -Wno-unknown-pragmas $<$<CONFIG:Release>:-O3>>)
  # The parts of core the module uses (tensors, allocator, ledger, errors) come from the static,
  # position-independent headroom_core, kept private to the module (--exclude-libs): the program and the
  # module each hold their own copy of that code, built from the same sources, and exchange only
  # objects through the Backend interface. --no-undefined: a missing symbol is a link error, not a
  # dlopen error on the user's machine.
  # The CUDA runtime is linked statically: on the user's machine the module needs the driver, cuBLAS and
  # cuDNN, not a libcudart of the same version (neither cuBLAS 13 nor cuDNN 9 links libcudart).
  target_link_libraries(headroom_cuda PRIVATE headroom_core CUDA::cudart_static CUDA::cublas CUDA::cublasLt
                        ${HEADROOM_CUDNN_LIBRARY})
  target_link_options(headroom_cuda PRIVATE -Wl,--exclude-libs,ALL -Wl,--no-undefined)
  install(TARGETS headroom_cuda LIBRARY DESTINATION lib/headroom COMPONENT cuda)
endfunction()

# Building the program or a test also builds the module (so `--target headroom` or `--target
# test_cuda_backend` gives a tree that uses the GPU); run at the end of the top-level directory.
# scripts/setup --demo turns it off on a machine without a GPU: the program alone, no module to build.
option(HEADROOM_CUDA_MODULE_WITH_PROGRAMS "Building a program or a test also builds the CUDA module" ON)
function(_headroom_cuda_module_dependents)
  if(NOT TARGET headroom_cuda OR NOT HEADROOM_CUDA_MODULE_WITH_PROGRAMS)
    return()
  endif()
  foreach(_dir IN ITEMS ${CMAKE_SOURCE_DIR}/app ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/bench)
    if(EXISTS ${_dir}/CMakeLists.txt)
      get_property(_targets DIRECTORY ${_dir} PROPERTY BUILDSYSTEM_TARGETS)
      foreach(_t IN LISTS _targets)
        get_target_property(_type ${_t} TYPE)
        if(_type STREQUAL "EXECUTABLE")
          add_dependencies(${_t} headroom_cuda)
        endif()
      endforeach()
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _headroom_cuda_module_dependents)

# What every test runs with (tests/CMakeLists.txt): the module of this build tree, and the planner's
# nominal step-time rates instead of this machine's calibration, so that rankings are the same on
# every machine (core/plan/device_calibration.h).
set(HEADROOM_TEST_ENVIRONMENT "HEADROOM_CUDA_MODULE=${HEADROOM_CUDA_MODULE_BUILD_PATH};HEADROOM_RATES=nominal")
