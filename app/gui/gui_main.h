#pragma once
#include <QString>
#include <functional>

namespace hrapp {

class MainWindow;

struct GuiOptions {
    QString language;  // en | zh_CN | system; "" : $HEADROOM_LANG, else the saved setting
    QString theme;     // light | dark | system; "" : the saved setting
    // Called with the built window before it is shown (tests/support/screenshot.cpp drives a run).
    std::function<void(MainWindow&)> prepare;
};

// Creates the QApplication, installs the translator of the language (HEADROOM_LANG=en|zh_CN overrides
// the saved setting), applies the theme, shows the main window and returns exec(). The caller has
// checked that a display is available.
int run_gui(int argc, char** argv, const GuiOptions& options = {});

}  // namespace hrapp
