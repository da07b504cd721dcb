#pragma once
// Small helpers shared by the tests (no Qt in the core helpers).
#include <map>
#include <set>
#include <string>

namespace hrtest {

// --- the checkout and the build folder, at run time ------------------------------------------------------
// CTest gives every test program HEADROOM_SOURCE_DIR (the checkout) and HEADROOM_BINARY_DIR (the build
// folder); they are not compiled in, so a second clone's test objects are the same bytes and hit ccache.
// A program started by hand (./build/tests/test_x) finds them from its own location: the build folder is
// the nearest folder above it with a CMakeCache.txt, the checkout is that cache's CMAKE_HOME_DIRECTORY.
// Neither found: the program stops at once with a message that says what to set.
const std::string& source_dir();
const std::string& binary_dir();
// source_dir() or binary_dir() + "/" + rel (no "/" when rel is empty)
std::string source_path(const std::string& rel = {});
std::string binary_path(const std::string& rel = {});

// A fresh empty directory under the system temp folder, removed at process exit.
std::string temp_dir(const std::string& prefix);
// Path of the Fashion-MNIST folder installed by Debian's dataset-fashion-mnist, or "" when absent.
std::string fashion_mnist_dir();

// --- processes, from /proc (the kill and stop tests of ranks) --------------------------------------------
// Every live process below `root` (children, grandchildren, ... up to 8 levels; zombies left out).
std::set<long> processes_below(long root);
// The headroom processes below `root` that are MPI ranks (OMPI_COMM_WORLD_RANK in their environment):
// rank -> pid.
std::map<int, long> rank_processes(long root);
// Whether pid is a running process (a zombie is gone).
bool process_alive(long pid);
// CPU seconds (user + system) the process has used so far; -1 when it is gone.
double process_cpu_seconds(long pid);

}  // namespace hrtest

#ifdef QT_CORE_LIB
#include <QString>
namespace hrtest {
// The same as QStrings, for the Qt Test programs: the build's `headroom` is hrtest::qbinary_path("headroom")
// (what the compile-time HR_BINARY_DIR macro gave before; tests/support/convert_paths.py rewrites old code).
inline QString qsource_path(const std::string& rel = {}) { return QString::fromStdString(source_path(rel)); }
inline QString qbinary_path(const std::string& rel = {}) { return QString::fromStdString(binary_path(rel)); }
}  // namespace hrtest
#endif
