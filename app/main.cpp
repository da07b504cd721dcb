#include "cli/cli.h"

int main(int argc, char** argv) { return hrapp::run_main(argc, argv); }
