#include "cli/cli.h"

#include <cstdio>

namespace hrapp {
int run_main(int, char**) {
    std::puts("headroom: under construction");
    return 0;
}
}  // namespace hrapp
