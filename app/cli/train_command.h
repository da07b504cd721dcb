#pragma once
#include <string>
#include <vector>

namespace hrapp {
// `headroom train ...`, `headroom presets`, `headroom devices`. Return the exit code.
int run_train_command(const std::vector<std::string>& args);
int run_presets_command(const std::vector<std::string>& args);
int run_devices_command(const std::vector<std::string>& args);
}  // namespace hrapp
