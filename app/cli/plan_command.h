#pragma once
#include <string>
#include <vector>

#include "plan/planner.h"

namespace hrapp {
// `headroom plan ...`: the predicted memory of a run by category and layer, or with --budget the
// ranking of strategy sets that fit. Returns the exit code.
int run_plan_command(const std::vector<std::string>& args);
// The per-category table "category  predicted  measured" printed after a run and by plan.
std::string categoryTable(const hr::CategoryBytes& predicted, const hr::CategoryBytes* measured,
                          const hr::CategoryBytes* host);
}  // namespace hrapp
