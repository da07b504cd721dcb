#pragma once
#include <QStringList>

namespace hrapp {
// The window's entry point (gui/gui_main.h: run_gui), handed in by the program's main(): the command
// line itself includes nothing of the window.
using WindowMain = int (*)(int argc, char** argv);
// Entry point of the `headroom` executable: the CLI subcommands, or the main window (`window`) when no
// subcommand is given; without one, "headroom" alone says to use a subcommand. Returns the process exit
// code (0 ok, 1 failure, 2 bad input).
int run_main(int argc, char** argv, WindowMain window = nullptr);

// One command line (the arguments after "headroom") with a Q(Core)Application already running:
// what run_main does once the application exists, and what tests call in-process.
int runCommand(const QStringList& args);

// Installs hr::log's sink for a command-line process: warnings and errors to stderr (prefixed
// "headroom: "), info and debug only when HEADROOM_LOG=debug|info asks.
void installCliLogSink();
}  // namespace hrapp
