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
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_hr_cuda_default ON)
else()
  set(_hr_cuda_default OFF)
endif()
option(HEADROOM_WITH_CUDA "Build the CUDA backend module (needs nvcc, cuBLAS, cuDNN)" ${_hr_cuda_default})
# Machine code for Ampere (80, 86), Ada (89) and Hopper (90), and one PTX copy (90) that the driver compiles
# for newer GPUs; the module refuses a GPU none of them covers (core/backend/cuda_compat.h).
set(HEADROOM_CUDA_ARCHS "80-real;86-real;89-real;90" CACHE STRING "CUDA architectures to build for")
set(HEADROOM_CUDA_MODULE_FILE "libheadroom_cuda.so")
if(HEADROOM_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "HEADROOM_WITH_CUDA is ON but no CUDA compiler (nvcc) was found; "
                        "put nvcc on PATH or configure with -DHEADROOM_WITH_CUDA=OFF")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${HEADROOM_CUDA_ARCHS}")
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 does not know nvcc 13's C++20 flag; kernels need only C++17
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
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
  target_compile_definitions(headroom_cuda PRIVATE HEADROOM_CUDA_MODULE_BUILD=1
                             HEADROOM_CUDA_ARCHS_TEXT="${HEADROOM_CUDA_ARCHS}")
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
function(_headroom_cuda_module_dependents)
  if(NOT TARGET headroom_cuda)
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
