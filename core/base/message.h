#pragma once
// Text that core/ writes for a person, in a form app/ can translate (docs/design.md: an error carries a
// message fit for a person; many of our users read Chinese).
//
// A message has a stable id, an English template with %1, %2, ... placeholders, and its arguments:
//
//     throw InputError(HR_MSG("spec.unknown_layer", "unknown layer type '%1'; pick one from the catalog"),
//                      {type});
//
// HR_MSG(id, template) makes a MessageText. app/ runs lupdate over core/ with
// `-tr-function-alias QT_TRANSLATE_NOOP+=HR_MSG`, so every template lands in translations/*.ts under
// the context named by its id, and app/ shows QCoreApplication::translate(id, template) with the
// arguments filled in (app/i18n/CoreText.h). core/ itself only ever formats the English.
// Arguments are data (names, numbers, paths) and are not translated.
#include <string>
#include <vector>

namespace hr {

struct MessageText {
    const char* id = "";        // "spec.unknown_layer"; "" for text without a translation
    const char* text = "";      // English template with %1..%9
};

#define HR_MSG(id, text) (::hr::MessageText{id, text})

// Text held in a core table for a person (the layer catalog's help lines): written
// HR_MSG("layer.conv2d", "...") it is translated by app/, a plain literal is shown as is.
struct TableText {
    const char* id = "";
    const char* text = "";

    TableText() = default;
    TableText(MessageText t) : id(t.id), text(t.text) {}  // NOLINT: implicit on purpose
    TableText(const char* plain) : text(plain) {}         // NOLINT
    bool empty() const { return !text || !*text; }
    std::string english() const { return text; }
};

struct Message {
    std::string id;                 // empty: plain English text in `text`, shown as is
    std::string text;               // the English template (or the plain text)
    std::vector<std::string> args;  // %1, %2, ...

    Message() = default;
    Message(MessageText t, std::vector<std::string> a = {}) : id(t.id), text(t.text), args(std::move(a)) {}
    static Message plain(std::string english) {
        Message m;
        m.text = std::move(english);
        return m;
    }
    bool translatable() const { return !id.empty(); }
    std::string english() const { return format_message(text, args); }

    // Fills %1..%9 (as QString::arg numbers them); "%%" is a literal percent sign.
    static std::string format_message(const std::string& templ, const std::vector<std::string>& args);
};

}  // namespace hr
