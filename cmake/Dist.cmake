# Distributed training (core/dist, docs/design.md decision 8): Open MPI for CPU ranks and bootstrapping,
# NCCL for GPU ranks. Neither is linked: both are dlopen()ed when a run asks for several ranks
# (core/dist/mpi_runtime.h says why), so only their headers are needed to build. Without them the
# build still works and says "no MPI / no NCCL support" when ranks are asked for.
#
# Sets HEADROOM_MPIEXEC (mpirun, for the dist tests), HEADROOM_WITH_MPI / HEADROOM_WITH_NCCL.
find_package(MPI COMPONENTS C QUIET)
set(HEADROOM_WITH_MPI OFF)
if(MPI_C_FOUND)
  find_path(HEADROOM_MPI_INCLUDE_DIR mpi.h HINTS ${MPI_C_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(HEADROOM_MPI_INCLUDE_DIR)
    file(STRINGS "${HEADROOM_MPI_INCLUDE_DIR}/mpi.h" _hr_ompi REGEX "^#define OMPI_MAJOR_VERSION")
    if(_hr_ompi)
      set(HEADROOM_WITH_MPI ON)
    else()
      message(STATUS "Headroom: mpi.h in ${HEADROOM_MPI_INCLUDE_DIR} is not Open MPI's; CPU ranks disabled")
    endif()
  endif()
endif()
if(HEADROOM_WITH_MPI)
  # headers only: the library is loaded at run time (soname libmpi.so.40; the path found here is a fallback)
  target_include_directories(headroom_core PRIVATE ${HEADROOM_MPI_INCLUDE_DIR})
  target_compile_definitions(headroom_core PRIVATE HEADROOM_WITH_MPI=1)
  set(_hr_mpi_lib "")
  foreach(_l IN LISTS MPI_C_LIBRARIES)
    if(_l MATCHES "libmpi\\.so")
      get_filename_component(_hr_mpi_lib "${_l}" REALPATH)
    endif()
  endforeach()
  if(_hr_mpi_lib)
    set_property(SOURCE ${CMAKE_SOURCE_DIR}/core/dist/mpi_communicator.cpp TARGET_DIRECTORY headroom_core APPEND PROPERTY
                 COMPILE_DEFINITIONS HEADROOM_MPI_LIBRARY="${_hr_mpi_lib}")
  endif()
endif()
set(HEADROOM_MPIEXEC "${MPIEXEC_EXECUTABLE}")
message(STATUS "Headroom: MPI (CPU ranks) ${HEADROOM_WITH_MPI}, mpirun: ${HEADROOM_MPIEXEC}")

set(HEADROOM_WITH_NCCL OFF)
if(HEADROOM_WITH_CUDA)
  find_path(HEADROOM_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(HEADROOM_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
               ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  if(HEADROOM_NCCL_INCLUDE_DIR)
    set(HEADROOM_WITH_NCCL ON)
    target_include_directories(headroom_core PRIVATE ${HEADROOM_NCCL_INCLUDE_DIR})
    target_compile_definitions(headroom_core PRIVATE HEADROOM_WITH_NCCL=1)
    if(HEADROOM_NCCL_LIBRARY)
      get_filename_component(_hr_nccl_lib "${HEADROOM_NCCL_LIBRARY}" REALPATH)
      set_property(SOURCE ${CMAKE_SOURCE_DIR}/core/dist/nccl_communicator.cpp TARGET_DIRECTORY headroom_core APPEND PROPERTY
                   COMPILE_DEFINITIONS HEADROOM_NCCL_LIBRARY="${_hr_nccl_lib}")
    endif()
  endif()
endif()
message(STATUS "Headroom: NCCL (GPU ranks) ${HEADROOM_WITH_NCCL}")
