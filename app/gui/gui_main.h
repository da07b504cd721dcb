#pragma once

namespace hrapp {
// Creates the QApplication, installs the translator chosen in the settings, applies the theme, shows
// the main window and returns exec(). The caller has checked that a display is available.
//
// Screenshot mode (scripts/screenshot): HEADROOM_SCREENSHOT=out.png renders the window during a
// short run and exits; HEADROOM_LANG=en|zh_CN overrides the language (also outside screenshot mode).
int run_gui(int argc, char** argv);
}  // namespace hrapp
