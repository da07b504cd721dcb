#include "base/message.h"

namespace hr {

std::string Message::format_message(const std::string& templ, const std::vector<std::string>& args) {
    std::string out;
    out.reserve(templ.size() + 16 * args.size());
    for (std::size_t i = 0; i < templ.size(); ++i) {
        const char c = templ[i];
        if (c == '%' && i + 1 < templ.size()) {
            const char d = templ[i + 1];
            if (d >= '1' && d <= '9') {
                const std::size_t k = static_cast<std::size_t>(d - '1');
                out += k < args.size() ? args[k] : std::string("%") + d;
                ++i;
                continue;
            }
        }
        out += c;
    }
    return out;
}

}  // namespace hr
