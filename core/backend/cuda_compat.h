#pragma once
// Whether this machine's NVIDIA driver and GPU can run the CUDA module that was built: pure functions of
// version numbers and architecture lists, so that they are tested on a machine without a GPU (the module
// calls them with what the runtime reports; tests/unit/test_cuda_compat.cpp with made-up figures).
//
// Two things stop a GPU run before any kernel, and both used to be reported as "no driver":
//   * the driver is older than the CUDA runtime the module was built with (CUDA 13 needs driver r580 or
//     newer; many H100/H200 hosts run r535-r570, which support CUDA 12.2-12.8);
//   * the module holds no code for the GPU's architecture (built for 80-real;86-real;89-real;90, a GPU
//     of compute capability 7.5 has none).
#include <optional>
#include <string>

#include "base/message.h"

namespace hr {

// CUDA's version numbers as cudaDriverGetVersion/cudaRuntimeGetVersion give them: 13000 is 13.0.
std::string cuda_version_text(int version);  // 12080 -> "12.8"
// The oldest driver branch that runs a CUDA `major` runtime (with CUDA's minor-version compatibility):
// 11 -> 450, 12 -> 525, 13 -> 580; 0 when unknown.
int cuda_min_driver_branch(int cuda_major);

// The message for a person when a driver that supports CUDA `driver_version` cannot run a runtime of
// `runtime_version` (its major version is newer than the driver's); nullopt when it can, or when the
// driver version is unknown (0: no driver at all, which is said elsewhere).
std::optional<Message> cuda_driver_mismatch(int driver_version, int runtime_version);

// Architectures as CMake's CUDA_ARCHITECTURES writes them: "80-real;86-real;89-real;90". "NN-real" is
// machine code for NN, "NN-virtual" PTX only, "NN" both. Machine code for X.Y runs on X.Z with Z >= Y;
// PTX for X.Y is compiled by the driver for any X'.Y' >= X.Y. "native" (or "unknown": a build that could not
// resolve its list) covers every GPU here; the run-time kernel-image probe then decides.
bool cuda_archs_cover(const std::string& archs, int cc_major, int cc_minor);
// The message when they do not: names the GPU, its compute capability and the built architectures.
Message cuda_arch_missing(const std::string& gpu_name, int cc_major, int cc_minor, const std::string& archs);

}  // namespace hr
