#pragma once
// Chat templates: a conversation (role, content) -> the text a model of a family was trained on, written
// from each family's published format (no Jinja), as parts that say which tokens the loss is taken on.
//
//   llama3   <|begin_of_text|> then per message <|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|>
//            (the content trimmed of surrounding whitespace, as Meta's template does; Llama 3.0's format:
//            3.1's default "Cutting Knowledge Date" system text is not added)
//   chatml   per message <|im_start|>ROLE\nCONTENT<|im_end|>\n (Qwen2 / Qwen2.5; no default system message)
//   mistral  <s>[INST] USER [/INST]ASSISTANT</s>[INST] ... (Mistral-7B-Instruct v0.1/v0.2; a system message
//            is put before the first user message with a blank line, as v0.3's template does; the roles
//            must alternate user, assistant, user, ...)
//   plain    the contents one after the other, nothing added (for byte, char and bpe:N tokenizers)
//
// The loss is taken on the assistant's content and the token that ends its turn (<|eot_id|>, <|im_end|>,
// </s>): the model learns to answer and to stop. Everything else (system, user, headers) gets the target
// -100 (backend.h kIgnoreTarget). Special tokens become single ids when the tokenizer has them
// (Tokenizer::special_id), else their text is encoded. Each part is encoded on its own (as TRL encodes a
// prompt and its completion), so a SentencePiece tokenizer adds its word-start mark to each.
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace hr {

struct ChatMessage {
    std::string role;     // system | user | assistant
    std::string content;
};

struct ChatPart {
    std::string text;
    bool special = false;  // one token when the tokenizer has it (special_id), else text
    bool trained = false;  // the loss is taken on its tokens
};

// "auto", "plain", "llama3", "chatml", "mistral". InputError otherwise.
void validate_chat_template(const std::string& name);
// auto: the template the tokenizer's special tokens name (<|start_header_id|>: llama3, <|im_start|>: chatml,
// a SentencePiece model with <s>: mistral), else plain. Other names are returned as they are.
std::string resolve_chat_template(const std::string& name, const Tokenizer& tok);
// The parts of a conversation. Roles are not checked here (the JSONL reader does).
std::vector<ChatPart> render_chat(const std::string& name, const std::vector<ChatMessage>& messages);
// The parts' text joined (what a published template writes out).
std::string chat_text(const std::vector<ChatPart>& parts);
// Encodes the parts: ids, and per id whether the loss is taken on it (1) or not (0).
void encode_chat(const std::vector<ChatPart>& parts, const Tokenizer& tok, std::vector<std::int32_t>& ids,
                 std::vector<unsigned char>& trained);

}  // namespace hr
