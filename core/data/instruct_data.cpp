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

[[noreturn]] void bad_row(const std::string& where, std::int64_t line, const std::string& what) {
    throw InputError(HR_MSG("jsonl.bad_row",
                            "line %1 of %2: %3; each line must be {\"prompt\": ..., \"completion\": ...} or "
                            "{\"messages\": [{\"role\": ..., \"content\": ...}, ...]}"),
                     {std::to_string(line), where, what});
}

const std::int32_t kNoTarget = -100;  // backend.h kIgnoreTarget (data does not include the backend)

}  // namespace

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

InstructRows parse_instruct_jsonl(const std::string& text, const std::string& where) {
    InstructRows out;
    std::vector<InstructRow> rows;
    std::istringstream is(text);
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
            bad_row(where, n, "not valid JSON");
        }
        if (!j.is_object()) bad_row(where, n, "not a JSON object");
        InstructRow row;
        row.line = n;
        if (j.contains("messages")) {
            const auto& ms = j["messages"];
            if (!ms.is_array() || ms.empty()) bad_row(where, n, "\"messages\" is not a non-empty list");
            bool answer = false;
            for (const auto& m : ms) {
                if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
                    !m["content"].is_string())
                    bad_row(where, n, "a message is not {\"role\": \"...\", \"content\": \"...\"}");
                const std::string role = m["role"].get<std::string>();
                if (role != "system" && role != "user" && role != "assistant")
                    bad_row(where, n, "role '" + role + "' is not system, user or assistant");
                answer = answer || role == "assistant";
                row.messages.push_back({role, m["content"].get<std::string>()});
            }
            if (!answer) bad_row(where, n, "no assistant message (nothing to learn)");
        } else if (j.contains("prompt") || j.contains("completion")) {
            if (!j.contains("prompt") || !j["prompt"].is_string()) bad_row(where, n, "\"prompt\" is missing or not a string");
            if (!j.contains("completion") || !j["completion"].is_string())
                bad_row(where, n, "\"completion\" is missing or not a string");
            if (j["completion"].get<std::string>().empty()) bad_row(where, n, "\"completion\" is empty");
            row.messages.push_back({"user", j["prompt"].get<std::string>()});
            row.messages.push_back({"assistant", j["completion"].get<std::string>()});
        } else {
            bad_row(where, n, "neither \"messages\" nor \"prompt\" and \"completion\"");
        }
        rows.push_back(std::move(row));
    }
    if (rows.empty())
        throw InputError(HR_MSG("jsonl.empty", "%1 holds no rows; write one JSON object a line"), {where});
    for (std::size_t i = 0; i < rows.size(); ++i)
        (rows.size() >= 10 && i % 10 == 9 ? out.validation : out.train).push_back(rows[i]);
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
    InstructRows r = parse_instruct_jsonl(ss.str(), path);
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
