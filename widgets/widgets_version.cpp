#include "widgets_version.h"
namespace hrw {
const char* widgets_library_name() { return "headroom_widgets"; }
}
