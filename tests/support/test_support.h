#pragma once
// Small helpers shared by the tests (no Qt in the core helpers).
#include <map>
#include <set>
#include <string>

namespace hrtest {

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
