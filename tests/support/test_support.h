#pragma once
// Small helpers shared by the tests (no Qt in the core helpers).
#include <string>

namespace hrtest {

// A fresh empty directory under the system temp folder, removed at process exit.
std::string temp_dir(const std::string& prefix);
// Path of the Fashion-MNIST folder installed by Debian's dataset-fashion-mnist, or "" when absent.
std::string fashion_mnist_dir();

}  // namespace hrtest
