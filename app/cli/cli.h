#pragma once

namespace hrapp {
// Entry point of the `headroom` executable: the CLI subcommands, or the main window when no
// subcommand is given. Returns the process exit code (0 ok, 1 failure, 2 bad input).
int run_main(int argc, char** argv);
}  // namespace hrapp
