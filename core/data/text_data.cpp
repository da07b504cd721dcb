#include "data/text_data.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "memory/ledger.h"
#include "base/splitmix.h"

namespace hr {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> fortune_dirs() {
    std::vector<std::string> d;
    if (const char* env = std::getenv("HEADROOM_DATA_DIR"); env && *env) d.push_back(std::string(env) + "/fortunes");
    d.push_back("/usr/share/games/fortunes");
    return d;
}

// The fortune files of a folder: regular files (not links), not the .dat indexes, sorted by name.
std::vector<std::string> fortune_files(const std::string& dir) {
    std::vector<std::string> files;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_symlink(ec) || !e.is_regular_file(ec)) continue;
        if (name.size() > 4 && (name.ends_with(".dat") || name.ends_with(".u8"))) continue;
        if (name.empty() || name[0] == '.') continue;
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(HR_MSG("text.unreadable", "cannot read %1; check that the file exists and is readable"), {path});
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// "X\bY" (overstriking) -> "Y": a backspace removes the character before it.
std::string strip_overstrike(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\b') {
            // remove a whole UTF-8 character
            while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
            if (!out.empty()) out.pop_back();
        } else {
            out.push_back(c);
        }
    }
    return out;
}

// The fortunes of one file: the texts between lines that hold only "%".
void split_fortunes(const std::string& text, std::vector<std::string>& out) {
    std::istringstream is(text);
    std::string line, cur;
    auto flush = [&] {
        while (!cur.empty() && (cur.back() == '\n' || cur.back() == ' ' || cur.back() == '\t' || cur.back() == '\r'))
            cur.pop_back();
        std::size_t b = 0;
        while (b < cur.size() && cur[b] == '\n') ++b;
        cur.erase(0, b);
        if (!cur.empty()) out.push_back(strip_overstrike(cur) + "\n");
        cur.clear();
    };
    while (std::getline(is, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "%") {
            flush();
        } else {
            cur += line;
            cur += '\n';
        }
    }
    flush();
}

// First byte offset >= i that starts a UTF-8 character.
std::size_t char_boundary(const std::string& s, std::size_t i) {
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    return i;
}

// Offset of the first invalid UTF-8 byte, or npos.
std::size_t invalid_utf8_at(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > s.size()) return i;
        for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return i;
        if (c == 0) return i;  // NUL: a binary file
        i += n;
    }
    return std::string::npos;
}

}  // namespace

bool is_text_data(const std::string& spec) { return spec.rfind("text:", 0) == 0; }
bool is_token_data(const std::string& spec) { return is_text_data(spec) || spec.rfind("jsonl:", 0) == 0; }

TextCorpus load_text_corpus(const std::string& spec) {
    if (!is_text_data(spec))
        throw InputError(HR_MSG("text.not_text", "'%1' is not a text dataset; use text:fortunes or text:FILE"), {spec});
    const std::string what = spec.substr(5);
    TextCorpus c;
    c.spec = spec;
    if (what == "fortunes") {
        std::string searched;
        for (const auto& dir : fortune_dirs()) {
            const auto files = fortune_files(dir);
            if (files.empty()) {
                searched += (searched.empty() ? "" : ", ") + dir;
                continue;
            }
            std::vector<std::string> docs;
            for (const auto& f : files) split_fortunes(read_all(f), docs);
            if (docs.size() < 10) {
                searched += (searched.empty() ? "" : ", ") + dir + " (only " + std::to_string(docs.size()) + " fortunes)";
                continue;
            }
            c.source = dir;
            c.documents = static_cast<std::int64_t>(docs.size());
            for (std::size_t i = 0; i < docs.size(); ++i) (i % 10 == 9 ? c.validation_text : c.train_text) += docs[i] + "\n";
            return c;
        }
        throw InputError(HR_MSG("text.no_fortunes",
                                "the fortunes were not found (searched %1); install them (apt install fortunes), set "
                                "HEADROOM_DATA_DIR to a folder holding fortunes/, or train on text:FILE"),
                         {searched});
    }
    std::error_code ec;
    if (what.empty() || !fs::is_regular_file(what, ec))
        throw InputError(HR_MSG("text.no_file",
                                "text file '%1' not found; pass --data text:FILE with a UTF-8 text file, or "
                                "text:fortunes"),
                         {what});
    std::string text = read_all(what);
    if (text.size() < 16)
        throw InputError(HR_MSG("text.too_short", "%1 holds only %2 bytes of text; a language model needs more"),
                         {what, std::to_string(text.size())});
    if (const std::size_t bad = invalid_utf8_at(text); bad != std::string::npos)
        throw InputError(HR_MSG("text.not_utf8",
                                "%1 is not UTF-8 text (byte %2 is not valid UTF-8); convert it (iconv -t UTF-8) or pick "
                                "a text file"),
                         {what, std::to_string(bad)});
    std::size_t cut = char_boundary(text, text.size() * 9 / 10);
    if (const std::size_t nl = text.find('\n', cut); nl != std::string::npos && nl + 1 < text.size()) cut = nl + 1;
    c.source = what;
    c.train_text = text.substr(0, cut);
    c.validation_text = text.substr(cut);
    return c;
}

DatasetInfo probe_text_data(const std::string& spec) {
    DatasetInfo info;
    info.spec = spec;
    info.description_message = spec == "text:fortunes"
                                   ? Message(HR_MSG("text.fortunes_description",
                                                    "Debian's fortunes: about 2.5 MB of English text, every tenth "
                                                    "fortune for validation"))
                                   : Message(HR_MSG("text.file_description",
                                                    "a UTF-8 text file: the first 90% for training, the rest for validation"));
    info.description = info.description_message.english();
    auto detail = [&](Message m) {
        info.detail = m.english();
        info.detail_message = std::move(m);
    };
    if (spec == "text:fortunes") {
        for (const auto& dir : fortune_dirs()) {
            const auto files = fortune_files(dir);
            if (files.empty()) continue;
            std::uintmax_t bytes = 0;
            std::error_code ec;
            for (const auto& f : files) bytes += fs::file_size(f, ec);
            info.available = true;
            info.location = dir;
            detail(Message(HR_MSG("text.probe_fortunes", "%1 files, %2 KiB"),
                           {std::to_string(files.size()), std::to_string(bytes / 1024)}));
            return info;
        }
        detail(Message(HR_MSG("text.probe_no_fortunes", "not found; install it with apt install fortunes")));
        return info;
    }
    const std::string path = is_text_data(spec) ? spec.substr(5) : spec;
    std::error_code ec;
    if (path.empty()) {
        detail(Message(HR_MSG("text.probe_no_path", "choose a text file")));
    } else if (fs::is_regular_file(path, ec)) {
        info.available = true;
        info.location = path;
        detail(Message(HR_MSG("text.probe_file", "%1 KiB"), {std::to_string(fs::file_size(path, ec) / 1024)}));
    } else {
        detail(Message(HR_MSG("text.probe_no_file", "file '%1' not found"), {path}));
    }
    return info;
}

std::size_t text_batch_bytes(std::int64_t rows, std::int64_t seq) {
    return static_cast<std::size_t>(2 * rows * seq) * sizeof(std::int64_t);
}

TokenBatcher::TokenBatcher(const std::vector<std::int32_t>& tokens, std::int64_t rows, std::int64_t seq,
                           std::uint64_t seed, MemoryLedger* ledger, const std::string& what,
                           std::int64_t first_row, std::int64_t global_rows)
    : tokens_(tokens), rows_(rows), seq_(seq), seed_(seed), first_row_(first_row),
      global_rows_(global_rows > 0 ? global_rows : rows), ledger_(ledger) {
    if (static_cast<std::int64_t>(tokens.size()) < seq + 1)
        throw InputError(HR_MSG("text.too_few_tokens",
                                "the %1 text has %2 tokens but a sequence of %3 needs at least %4; use a shorter --seq "
                                "or more text"),
                         {what, std::to_string(tokens.size()), std::to_string(seq), std::to_string(seq + 1)});
    x_.assign(static_cast<std::size_t>(rows * seq), 0);
    y_.assign(x_.size(), 0);
    if (ledger_) ledger_id_ = ledger_->on_alloc(text_batch_bytes(rows, seq), MemCategory::data);
}

TokenBatcher::~TokenBatcher() {
    if (ledger_) ledger_->on_free(ledger_id_);
}

std::int64_t TokenBatcher::steps_per_epoch() const {
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(tokens_.size()) / (global_rows_ * seq_));
}

std::int64_t TokenBatcher::random_batch(std::int64_t step) {
    const std::uint64_t starts = tokens_.size() - static_cast<std::size_t>(seq_);  // windows of seq + 1 tokens
    for (std::int64_t r = 0; r < rows_; ++r) {
        const std::uint64_t window = static_cast<std::uint64_t>(first_row_ + r);  // its row of the global batch
        const std::uint64_t h =
            splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(step) * 0x100000001B3ull + window));
        const std::size_t s0 = static_cast<std::size_t>(h % starts);
        for (std::int64_t t = 0; t < seq_; ++t) {
            x_[r * seq_ + t] = tokens_[s0 + t];
            y_[r * seq_ + t] = tokens_[s0 + t + 1];
        }
    }
    return rows_;
}

std::unique_ptr<Tokenizer> corpus_tokenizer(const std::string& spec, const TextCorpus& corpus) {
    return make_tokenizer(spec, spec == "char" ? corpus.all_text() : corpus.train_text);
}

std::int64_t TokenBatcher::eval_windows(std::int64_t max_tokens) const {
    std::int64_t all = (static_cast<std::int64_t>(tokens_.size()) - 1) / seq_;
    if (max_tokens > 0) all = std::min(all, std::max<std::int64_t>(1, max_tokens / seq_));
    return all;
}

std::int64_t TokenBatcher::eval_batch(std::int64_t first, std::int64_t windows) {
    const std::int64_t n = std::min(windows, rows_);
    for (std::int64_t r = 0; r < n; ++r) {
        const std::size_t s0 = static_cast<std::size_t>((first + r) * seq_);
        for (std::int64_t t = 0; t < seq_; ++t) {
            x_[r * seq_ + t] = tokens_[s0 + t];
            y_[r * seq_ + t] = tokens_[s0 + t + 1];
        }
    }
    return n;
}

}  // namespace hr
