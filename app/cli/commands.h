#pragma once
// The subcommands of `headroom` (cli.cpp's table points here). Each takes the parsed command line and
// returns the exit code: 0 success, 1 failure, 2 bad input (with one message on stderr).
#include <string>

#include "cli/flags.h"
#include "memory/category.h"

namespace hrapp {

int runTrainCommand(const CliRequest& request);    // train_command.cpp
int runPlanCommand(const CliRequest& request);     // plan_command.cpp
int runEvalCommand(const CliRequest& request);     // eval_command.cpp
int runPresetsCommand(const CliRequest& request);  // info_commands.cpp
int runDevicesCommand(const CliRequest& request);  // info_commands.cpp
int runRunsCommand(const CliRequest& request);     // info_commands.cpp
int runGenerateCommand(const CliRequest& request); // generate_command.cpp
int runExportCommand(const CliRequest& request);   // export_command.cpp

// The per-category table "category  predicted  measured  difference  host" printed after a run and
// by plan (measured, host: null to leave the column out).
QString categoryTable(const hr::CategoryBytes& predicted, const hr::CategoryBytes* measured,
                      const hr::CategoryBytes* host);

}  // namespace hrapp
