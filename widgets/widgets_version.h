#pragma once
namespace hrw {
const char* widgets_library_name();
}
