#include "cli/cli.h"
#include "gui/gui_main.h"

// The program: the command line, and the window when no subcommand is given.
int main(int argc, char** argv) {
    return hrapp::run_main(argc, argv, [](int c, char** v) { return hrapp::run_gui(c, v); });
}
