#include "data/instruct_data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/splitmix.h"
#include "data/text_data.h"
#include "memory/ledger.h"

namespace hr {

namespace {

// Where a row is: "line N of FILE" (JSONL) or "element K (line N) of FILE" (a JSON array).
struct RowPlace {
    const std::string& where;
    std::int64_t line = 0, element = 0;
};

[[noreturn]] void bad_row(const RowPlace& at, const std::string& what) {
    if (at.element > 0)
        throw InputError(HR_MSG("jsonl.bad_element",
                                "element %1 (line %2) of %3: %4; each row must be {\"prompt\", \"completion\"}, "
                                "{\"messages\": [{\"role\", \"content\"}, ...]}, Alpaca's {\"instruction\", \"input\", "
                                "\"output\"} or ShareGPT's {\"conversations\": [{\"from\", \"value\"}, ...]}"),
                         {std::to_string(at.element), std::to_string(at.line), at.where, what});
    throw InputError(HR_MSG("jsonl.bad_row",
                            "line %1 of %2: %3; each row must be {\"prompt\", \"completion\"}, {\"messages\": "
                            "[{\"role\", \"content\"}, ...]}, Alpaca's {\"instruction\", \"input\", \"output\"} or "
                            "ShareGPT's {\"conversations\": [{\"from\", \"value\"}, ...]}"),
                     {std::to_string(at.line), at.where, what});
}

const std::int32_t kNoTarget = -100;  // backend.h kIgnoreTarget (data does not include the backend)

bool is_string(const nlohmann::json& j, const char* key) { return j.contains(key) && j[key].is_string(); }

// The layout a row is written in, from its keys (-1: none of them).
int row_layout(const nlohmann::json& j) {
    if (j.contains("messages")) return static_cast<int>(InstructLayout::messages);
    if (j.contains("conversations")) return static_cast<int>(InstructLayout::sharegpt);
    if (j.contains("instruction") || j.contains("output")) return static_cast<int>(InstructLayout::alpaca);
    if (j.contains("prompt") || j.contains("completion")) return static_cast<int>(InstructLayout::prompt_completion);
    return -1;
}

bool native(InstructLayout l) { return l == InstructLayout::prompt_completion || l == InstructLayout::messages; }

// One row in its layout; the file's layout is set by its first row.
InstructRow parse_row(const nlohmann::json& j, const RowPlace& at, bool first, InstructLayout& file_layout) {
    if (!j.is_object()) bad_row(at, "not a JSON object");
    const int found = row_layout(j);
    if (found < 0)
        bad_row(at, "none of \"prompt\"/\"completion\", \"messages\", \"instruction\"/\"output\" or \"conversations\"");
    const auto layout = static_cast<InstructLayout>(found);
    if (first) file_layout = layout;
    else if (layout != file_layout && !(native(layout) && native(file_layout)))
        bad_row(at, std::string("a row in the ") + instruct_layout_name(layout) + " layout in a file of " +
                        instruct_layout_name(file_layout) + " rows (its first row's layout); write every row in one layout");
    InstructRow row;
    row.line = at.line;
    row.element = at.element;
    switch (layout) {
        case InstructLayout::messages: {
            const auto& ms = j["messages"];
            if (!ms.is_array() || ms.empty()) bad_row(at, "\"messages\" is not a non-empty list");
            bool answer = false;
            for (const auto& m : ms) {
                if (!m.is_object() || !is_string(m, "role") || !is_string(m, "content"))
                    bad_row(at, "a message is not {\"role\": \"...\", \"content\": \"...\"}");
                const std::string role = m["role"].get<std::string>();
                if (role != "system" && role != "user" && role != "assistant")
                    bad_row(at, "role '" + role + "' is not system, user or assistant");
                answer = answer || role == "assistant";
                row.messages.push_back({role, m["content"].get<std::string>()});
            }
            if (!answer) bad_row(at, "no assistant message (nothing to learn)");
            break;
        }
        case InstructLayout::prompt_completion:
            if (!is_string(j, "prompt")) bad_row(at, "\"prompt\" is missing or not a string");
            if (!is_string(j, "completion")) bad_row(at, "\"completion\" is missing or not a string");
            if (j["completion"].get<std::string>().empty()) bad_row(at, "\"completion\" is empty");
            row.messages.push_back({"user", j["prompt"].get<std::string>()});
            row.messages.push_back({"assistant", j["completion"].get<std::string>()});
            break;
        case InstructLayout::alpaca: {
            // LLaMA-Factory's reading: the user turn is the instruction, then a line break and the input when
            // there is one; "system" (optional) goes first
            if (!is_string(j, "instruction")) bad_row(at, "\"instruction\" is missing or not a string");
            if (j.contains("input") && !j["input"].is_null() && !j["input"].is_string())
                bad_row(at, "\"input\" is not a string");
            if (!is_string(j, "output")) bad_row(at, "\"output\" is missing or not a string");
            if (j.contains("system") && !j["system"].is_null() && !j["system"].is_string())
                bad_row(at, "\"system\" is not a string");
            const std::string instruction = j["instruction"].get<std::string>();
            const std::string input = is_string(j, "input") ? j["input"].get<std::string>() : std::string();
            if (instruction.empty() && input.empty()) bad_row(at, "\"instruction\" and \"input\" are both empty");
            if (j["output"].get<std::string>().empty()) bad_row(at, "\"output\" is empty");
            if (is_string(j, "system") && !j["system"].get<std::string>().empty())
                row.messages.push_back({"system", j["system"].get<std::string>()});
            row.messages.push_back({"user", instruction.empty() ? input
                                            : input.empty()     ? instruction
                                                                : instruction + "\n" + input});
            row.messages.push_back({"assistant", j["output"].get<std::string>()});
            break;
        }
        case InstructLayout::sharegpt: {
            // FastChat's ShareGPT: turns of {"from": "system" | "human" | "gpt", "value": "..."}; a top-level
            // "system" (optional, as LLaMA-Factory reads it) goes first
            const auto& cs = j["conversations"];
            if (!cs.is_array() || cs.empty()) bad_row(at, "\"conversations\" is not a non-empty list");
            if (j.contains("system") && !j["system"].is_null() && !j["system"].is_string())
                bad_row(at, "\"system\" is not a string");
            if (is_string(j, "system") && !j["system"].get<std::string>().empty())
                row.messages.push_back({"system", j["system"].get<std::string>()});
            bool answer = false;
            for (const auto& m : cs) {
                if (!m.is_object() || !is_string(m, "from") || !is_string(m, "value"))
                    bad_row(at, "a turn is not {\"from\": \"...\", \"value\": \"...\"}");
                const std::string from = m["from"].get<std::string>();
                const char* role = from == "human" ? "user" : from == "gpt" ? "assistant" : from == "system" ? "system" : nullptr;
                if (!role) bad_row(at, "\"from\": '" + from + "' is not system, human or gpt");
                answer = answer || from == "gpt";
                row.messages.push_back({role, m["value"].get<std::string>()});
            }
            if (!answer) bad_row(at, "no gpt turn (nothing to learn)");
            break;
        }
    }
    return row;
}

// Offsets of a valid JSON array's elements (the array opens at `open`).
std::vector<std::size_t> element_starts(const std::string& t, std::size_t open) {
    std::vector<std::size_t> starts;
    int depth = 0;
    bool in_string = false, escaped = false, expect = true;
    for (std::size_t i = open + 1; i < t.size(); ++i) {
        const char c = t[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        if (depth == 0 && c == ']') break;
        if (depth == 0 && c == ',') {
            expect = true;
            continue;
        }
        if (depth == 0 && expect) {
            starts.push_back(i);
            expect = false;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') ++depth;
        else if (c == ']' || c == '}') --depth;
    }
    return starts;
}

}  // namespace

const char* instruct_layout_name(InstructLayout l) {
    switch (l) {
        case InstructLayout::prompt_completion: return "prompt/completion";
        case InstructLayout::messages: return "messages";
        case InstructLayout::alpaca: return "Alpaca";
        case InstructLayout::sharegpt: return "ShareGPT";
    }
    return "?";
}

bool is_jsonl_data(const std::string& spec) { return spec.rfind("jsonl:", 0) == 0; }

void validate_sequence_layout(const std::string& layout) {
    if (layout == "pad" || layout == "pack") return;
    throw InputError(HR_MSG("jsonl.bad_layout", "unknown sequence layout '%1'; use pad or pack (--sequences)"), {layout});
}

std::string InstructRows::all_text() const {
    std::string s;
    for (const auto* v : {&train, &validation})
        for (const auto& r : *v)
            for (const auto& m : r.messages) s += m.content + "\n";
    return s;
}

std::vector<const InstructRow*> InstructRows::file_rows() const {
    std::vector<const InstructRow*> all;
    for (const auto& r : train) all.push_back(&r);
    if (validation_apart)
        for (const auto& r : validation) all.push_back(&r);
    std::sort(all.begin(), all.end(), [](const InstructRow* a, const InstructRow* b) {
        return a->line != b->line ? a->line < b->line : a->element < b->element;
    });
    return all;
}

InstructRows parse_instruct_data(const std::string& text_in, const std::string& where) {
    InstructRows out;
    std::vector<InstructRow> rows;
    InstructLayout layout = InstructLayout::prompt_completion;
    // a UTF-8 byte order mark (as Windows editors write) is not part of the first row
    const std::size_t bom = text_in.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    const std::size_t open = text_in.find_first_not_of(" \t\r\n", bom);
    if (open != std::string::npos && text_in[open] == '[') {
        // a JSON array of rows (a .json file as datasets on the Hub are often written)
        out.json_array = true;
        nlohmann::json all;
        try {
            all = nlohmann::json::parse(text_in.begin() + static_cast<std::ptrdiff_t>(open), text_in.end());
        } catch (const nlohmann::json::parse_error& e) {
            const std::size_t at = std::min(text_in.size(), open + (e.byte > 0 ? e.byte - 1 : 0));
            const auto line = 1 + std::count(text_in.begin(), text_in.begin() + static_cast<std::ptrdiff_t>(at), '\n');
            throw InputError(HR_MSG("jsonl.bad_array",
                                    "%1 starts a JSON list but is not valid JSON (near line %2); a .json file must hold "
                                    "one list of rows [{...}, {...}], a .jsonl file one row a line"),
                             {where, std::to_string(line)});
        } catch (const nlohmann::json::exception&) {
            throw InputError(HR_MSG("jsonl.bad_array_plain",
                                    "%1 starts a JSON list but is not valid JSON; a .json file must hold one list of "
                                    "rows [{...}, {...}], a .jsonl file one row a line"),
                             {where});
        }
        if (!all.is_array())
            throw InputError(HR_MSG("jsonl.bad_array_plain",
                                    "%1 starts a JSON list but is not valid JSON; a .json file must hold one list of "
                                    "rows [{...}, {...}], a .jsonl file one row a line"),
                             {where});
        const std::vector<std::size_t> starts = element_starts(text_in, open);
        std::int64_t line = 1;
        std::size_t counted_to = 0;
        for (std::size_t k = 0; k < all.size(); ++k) {
            const std::size_t s = k < starts.size() ? starts[k] : counted_to;
            line += std::count(text_in.begin() + static_cast<std::ptrdiff_t>(counted_to),
                               text_in.begin() + static_cast<std::ptrdiff_t>(s), '\n');
            counted_to = s;
            rows.push_back(parse_row(all[k], RowPlace{where, line, static_cast<std::int64_t>(k) + 1}, rows.empty(), layout));
        }
    } else {
        std::istringstream is(text_in.substr(bom));
        std::string line;
        std::int64_t n = 0;
        while (std::getline(is, line)) {
            ++n;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.find_first_not_of(" \t") == std::string::npos) continue;
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(line);
            } catch (const nlohmann::json::exception&) {
                bad_row(RowPlace{where, n, 0}, "not valid JSON");
            }
            rows.push_back(parse_row(j, RowPlace{where, n, 0}, rows.empty(), layout));
        }
    }
    if (rows.empty())
        throw InputError(HR_MSG("jsonl.empty", "%1 holds no rows; write one JSON object a line"), {where});
    out.layout = layout;
    for (std::size_t i = 0; i < rows.size(); ++i)
        (rows.size() >= 10 && i % 10 == 9 ? out.validation : out.train).push_back(rows[i]);
    out.validation_apart = !out.validation.empty();
    if (out.validation.empty()) out.validation = out.train;
    return out;
}

InstructRows load_instruct_rows(const std::string& spec) {
    if (!is_jsonl_data(spec))
        throw InputError(HR_MSG("jsonl.not_jsonl", "'%1' is not instruction data; use jsonl:FILE"), {spec});
    const std::string path = spec.substr(6);
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec))
        throw InputError(HR_MSG("jsonl.no_file", "JSONL file '%1' not found; pass --data jsonl:FILE"), {path});
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f && !f.eof())
        throw InputError(HR_MSG("text.unreadable", "cannot read %1; check that the file exists and is readable"), {path});
    InstructRows r = parse_instruct_data(ss.str(), path);
    r.spec = spec;
    r.source = path;
    return r;
}

void check_chat_roles(const std::string& chat_template, const InstructRow& row, const std::string& where) {
    if (chat_template != "mistral") return;
    std::size_t i = 0;
    while (i < row.messages.size() && row.messages[i].role == "system") ++i;
    for (std::size_t k = i; k < row.messages.size(); ++k) {
        const char* want = (k - i) % 2 == 0 ? "user" : "assistant";
        if (row.messages[k].role != want)
            throw InputError(HR_MSG("jsonl.mistral_roles",
                                    "line %1 of %2: message %3 is '%4' but Mistral's template needs user and assistant "
                                    "turns to alternate, starting with user (a system message only first); fix the "
                                    "row or pick another --chat-template"),
                             {std::to_string(row.line), where, std::to_string(k + 1), row.messages[k].role});
    }
}

TokenWindows make_token_windows(const std::vector<InstructRow>& rows, const std::string& chat_template,
                                const Tokenizer& tok, std::int64_t seq, const std::string& layout) {
    validate_sequence_layout(layout);
    TokenWindows w;
    w.seq = seq;
    std::vector<std::int32_t> stream;
    std::vector<unsigned char> stream_trained;
    auto add_window = [&](const std::int32_t* ids, const unsigned char* tr, std::int64_t len) {
        // x = ids[0, min(len, seq)), y[t] = ids[t + 1] where trained, else -100
        std::int32_t counted = 0;
        for (std::int64_t t = 0; t < seq; ++t) {
            w.x.push_back(t < len ? ids[t] : 0);
            const bool has = t + 1 < len && tr[t + 1];
            w.y.push_back(has ? ids[t + 1] : kNoTarget);
            counted += has ? 1 : 0;
        }
        w.counted.push_back(counted);
    };
    for (const auto& row : rows) {
        std::vector<std::int32_t> ids;
        std::vector<unsigned char> tr;
        encode_chat(render_chat(chat_template, row.messages), tok, ids, tr);
        w.tokens += static_cast<std::int64_t>(ids.size());
        for (unsigned char t : tr) w.trained_tokens += t;
        if (layout == "pad") {
            if (static_cast<std::int64_t>(ids.size()) > seq + 1) ++w.truncated;
            if (ids.size() >= 2)
                add_window(ids.data(), tr.data(), std::min<std::int64_t>(static_cast<std::int64_t>(ids.size()), seq + 1));
        } else {
            stream.insert(stream.end(), ids.begin(), ids.end());
            stream_trained.insert(stream_trained.end(), tr.begin(), tr.end());
        }
    }
    if (layout == "pack")
        for (std::int64_t s0 = 0; s0 + seq < static_cast<std::int64_t>(stream.size()); s0 += seq)
            add_window(stream.data() + s0, stream_trained.data() + s0, seq + 1);
    return w;
}

WindowBatcher::WindowBatcher(const TokenWindows& w, std::int64_t rows, std::uint64_t seed, MemoryLedger* ledger,
                             const std::string& what, std::int64_t first_row, std::int64_t global_rows)
    : w_(w), rows_(rows), seq_(w.seq), seed_(seed), first_row_(first_row),
      global_rows_(global_rows > 0 ? global_rows : rows), ledger_(ledger) {
    if (w.windows() == 0)
        throw InputError(HR_MSG("jsonl.no_windows",
                                "the %1 rows give no window of %2 tokens (%3 tokens in all); use --sequences pad, a "
                                "shorter --seq, or more rows"),
                         {what, std::to_string(seq_), std::to_string(w.tokens)});
    x_.assign(static_cast<std::size_t>(rows * seq_), 0);
    y_.assign(x_.size(), 0);
    if (ledger_) ledger_id_ = ledger_->on_alloc(text_batch_bytes(rows, seq_), MemCategory::data);
}

WindowBatcher::~WindowBatcher() {
    if (ledger_) ledger_->on_free(ledger_id_);
}

std::int64_t WindowBatcher::steps_per_epoch() const { return std::max<std::int64_t>(1, w_.windows() / global_rows_); }

std::int64_t WindowBatcher::window_of(std::int64_t step, std::int64_t row) const {
    const std::uint64_t h = splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(step) * 0x100000001B3ull +
                                                          static_cast<std::uint64_t>(row)));
    return static_cast<std::int64_t>(h % static_cast<std::uint64_t>(w_.windows()));
}

void WindowBatcher::fill(std::int64_t r, std::int64_t window) {
    for (std::int64_t t = 0; t < seq_; ++t) {
        x_[static_cast<std::size_t>(r * seq_ + t)] = w_.x[static_cast<std::size_t>(window * seq_ + t)];
        y_[static_cast<std::size_t>(r * seq_ + t)] = w_.y[static_cast<std::size_t>(window * seq_ + t)];
    }
}

std::int64_t WindowBatcher::random_batch(std::int64_t step) {
    step_counted_ = 0;
    for (std::int64_t g = 0; g < global_rows_; ++g) step_counted_ += w_.counted[static_cast<std::size_t>(window_of(step, g))];
    for (std::int64_t r = 0; r < rows_; ++r) fill(r, window_of(step, first_row_ + r));
    return rows_;
}

std::int64_t WindowBatcher::eval_windows(std::int64_t max_tokens) const {
    std::int64_t all = w_.windows();
    if (max_tokens > 0) all = std::min(all, std::max<std::int64_t>(1, max_tokens / seq_));
    return all;
}

std::int64_t WindowBatcher::eval_batch(std::int64_t first, std::int64_t windows) {
    const std::int64_t n = std::min(windows, rows_);
    for (std::int64_t r = 0; r < n; ++r) fill(r, first + r);
    return n;
}

std::int64_t WindowBatcher::counted_in_first(std::int64_t n) const {
    std::int64_t c = 0;
    for (std::int64_t i = 0; i < n && i < w_.windows(); ++i) c += w_.counted[static_cast<std::size_t>(i)];
    return c;
}

}  // namespace hr
