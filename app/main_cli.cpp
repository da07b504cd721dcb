#include "cli/cli.h"

// headroom-cli: the command line alone (train, plan, report, runs, ...), for servers without a desktop; it
// links no widgets (app/CMakeLists.txt). Asked for the window, it says to use a subcommand.
int main(int argc, char** argv) { return hrapp::run_main(argc, argv); }
