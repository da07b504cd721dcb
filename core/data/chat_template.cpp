#include "data/chat_template.h"

#include "base/error.h"

namespace hr {

namespace {

std::string chat_trimmed(const std::string& s) {
    const char* ws = " \t\n\r\f\v";
    const std::size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

void validate_chat_template(const std::string& name) {
    for (const char* n : {"auto", "plain", "llama3", "chatml", "mistral"})
        if (name == n) return;
    throw InputError(HR_MSG("chat.unknown_template",
                            "unknown chat template '%1'; use auto (the tokenizer's family), plain, llama3, chatml or "
                            "mistral (--chat-template)"),
                     {name});
}

std::string resolve_chat_template(const std::string& name, const Tokenizer& tok) {
    if (name != "auto") return name;
    if (tok.special_id("<|start_header_id|>") >= 0 && tok.special_id("<|eot_id|>") >= 0) return "llama3";
    if (tok.special_id("<|im_start|>") >= 0 && tok.special_id("<|im_end|>") >= 0) return "chatml";
    if (tok.kind() == "sentencepiece" && tok.special_id("<s>") >= 0 && tok.special_id("</s>") >= 0) return "mistral";
    return "plain";
}

std::vector<ChatPart> render_chat(const std::string& name, const std::vector<ChatMessage>& messages) {
    std::vector<ChatPart> p;
    auto add = [&](std::string text, bool special, bool trained) {
        if (!text.empty()) p.push_back(ChatPart{std::move(text), special, trained});
    };
    if (name == "llama3") {
        add("<|begin_of_text|>", true, false);
        for (const auto& m : messages) {
            const bool a = m.role == "assistant";
            add("<|start_header_id|>", true, false);
            add(m.role, false, false);
            add("<|end_header_id|>", true, false);
            add("\n\n", false, false);
            add(chat_trimmed(m.content), false, a);
            add("<|eot_id|>", true, a);
        }
    } else if (name == "chatml") {
        for (const auto& m : messages) {
            const bool a = m.role == "assistant";
            add("<|im_start|>", true, false);
            add(m.role + "\n", false, false);
            add(m.content, false, a);
            add("<|im_end|>", true, a);
            add("\n", false, false);
        }
    } else if (name == "mistral") {
        add("<s>", true, false);
        std::string system;
        for (const auto& m : messages) {
            if (m.role == "system") {
                system += (system.empty() ? "" : "\n\n") + m.content;
            } else if (m.role == "user") {
                add("[INST] " + (system.empty() ? "" : system + "\n\n") + m.content + " [/INST]", false, false);
                system.clear();
            } else {
                add(m.content, false, true);
                add("</s>", true, true);
            }
        }
    } else {  // plain
        for (const auto& m : messages) add(m.content, false, m.role == "assistant");
    }
    return p;
}

std::string chat_text(const std::vector<ChatPart>& parts) {
    std::string s;
    for (const auto& p : parts) s += p.text;
    return s;
}

void encode_chat(const std::vector<ChatPart>& parts, const Tokenizer& tok, std::vector<std::int32_t>& ids,
                 std::vector<unsigned char>& trained) {
    for (const auto& p : parts) {
        const std::int32_t sid = p.special ? tok.special_id(p.text) : -1;
        if (sid >= 0) {
            ids.push_back(sid);
            trained.push_back(p.trained ? 1 : 0);
            continue;
        }
        const auto t = tok.encode(p.text);
        ids.insert(ids.end(), t.begin(), t.end());
        trained.insert(trained.end(), t.size(), p.trained ? 1 : 0);
    }
}

}  // namespace hr
