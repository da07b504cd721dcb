#include "data/hf_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"

namespace hr {

namespace {

// GPT-2's pre-tokenizer pattern (ByteLevel with use_regex true).
const char* const kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// The largest tokenizer.json read (Llama 3's is 9 MB, Qwen2's 7 MB).
constexpr std::size_t kMaxHfTokenizerBytes = std::size_t(256) << 20;

std::string hf_utf8_of(std::uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        s += static_cast<char>(0xE0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

// GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to U+0100 and up, in order.
std::vector<std::string> hf_byte_chars() {
    std::vector<std::string> out(256);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
        const bool keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        out[static_cast<std::size_t>(b)] = hf_utf8_of(keep ? static_cast<std::uint32_t>(b) : 256u + n++);
    }
    return out;
}

std::size_t hf_char_len(const std::string& s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    return std::min(n, s.size() - i);
}

struct PairHash {
    std::size_t operator()(const std::pair<std::string, std::string>& p) const {
        return std::hash<std::string>()(p.first) * 31 + std::hash<std::string>()(p.second);
    }
};

class Pcre2Pattern {
public:
    Pcre2Pattern(const std::string& pattern, const std::string& where) {
        int err = 0;
        PCRE2_SIZE off = 0;
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &err,
                              &off, nullptr);
        if (!code_) {
            PCRE2_UCHAR buf[256];
            pcre2_get_error_message(err, buf, sizeof buf);
            throw InputError(HR_MSG("tokenizer.hf_regex",
                                    "%1: the pre-tokenizer's pattern does not compile (%2 at offset %3); the file is "
                                    "damaged or uses a pattern PCRE2 does not know"),
                             {where, reinterpret_cast<const char*>(buf), std::to_string(off)});
        }
        jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
        // a pattern from a file must not run away on a text (nested quantifiers): PCRE2's own limits
        match_ = pcre2_match_context_create(nullptr);
        pcre2_set_match_limit(match_, 1000000);
        pcre2_set_depth_limit(match_, 10000);
        pcre2_set_heap_limit(match_, 64 * 1024);  // KiB
    }
    ~Pcre2Pattern() {
        if (match_) pcre2_match_context_free(match_);
        if (code_) pcre2_code_free(code_);
    }
    Pcre2Pattern(const Pcre2Pattern&) = delete;
    Pcre2Pattern& operator=(const Pcre2Pattern&) = delete;

    // Behavior "Isolated": every match is a piece, and so is every text between matches. `s` is valid UTF-8.
    void split(const std::string& s, std::vector<std::string>& out) const {
        pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_, nullptr);
        std::size_t pos = 0, gap = 0;
        while (pos <= s.size()) {
            const int rc = jit_ ? pcre2_jit_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos,
                                                  PCRE2_NO_UTF_CHECK, md, match_)
                                : pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos,
                                              PCRE2_NO_UTF_CHECK, md, match_);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
                pcre2_match_data_free(md);
                throw InputError(HR_MSG("tokenizer.hf_regex_limit",
                                        "the tokenizer's pre-tokenizer pattern gave up on this text (PCRE2 error %1, "
                                        "its match limit); the tokenizer.json's pattern is not one a model ships with"),
                                 {std::to_string(rc)});
            }
            if (rc < 0) break;  // no match: the rest is one gap
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
            const std::size_t b = ov[0], e = ov[1];
            if (e == b) {  // an empty match: step over one character
                if (b >= s.size()) break;
                pos = b + hf_char_len(s, b);
                continue;
            }
            if (b > gap) out.push_back(s.substr(gap, b - gap));
            out.push_back(s.substr(b, e - b));
            pos = gap = e;
        }
        if (gap < s.size()) out.push_back(s.substr(gap));
        pcre2_match_data_free(md);
    }

private:
    pcre2_code* code_ = nullptr;
    pcre2_match_context* match_ = nullptr;
    bool jit_ = false;
};

[[noreturn]] void hf_bad(const std::string& where, const std::string& what) {
    throw InputError(HR_MSG("tokenizer.hf_format",
                            "%1 is not a byte-level BPE tokenizer.json Headroom can read: %2; use the tokenizer.json "
                            "of a GPT-2, Llama 3 or Qwen2 model (or a tokenizer.model)"),
                     {where, what});
}

class HfBpeTokenizer : public Tokenizer {
public:
    HfBpeTokenizer(const std::string& text, const std::string& where) : json_(text), byte_chars_(hf_byte_chars()) {
        if (text.size() > kMaxHfTokenizerBytes) hf_bad(where, "the file is larger than 256 MiB");
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception& e) {
            throw InputError(HR_MSG("tokenizer.hf_json", "%1 is not valid JSON: %2"), {where, e.what()});
        }
        if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) hf_bad(where, "it has no \"model\" object");
        const auto& m = j["model"];
        if (m.contains("type") && m["type"] != "BPE") hf_bad(where, "model.type is not \"BPE\"");
        if (!m.contains("vocab") || !m["vocab"].is_object()) hf_bad(where, "model.vocab is not an object");
        if (!m.contains("merges") || !m["merges"].is_array()) hf_bad(where, "model.merges is not a list");
        for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
            if (m.contains(k) && m[k].is_string() && !m[k].get<std::string>().empty())
                hf_bad(where, std::string("model.") + k + " is set (not a byte-level BPE)");
        ignore_merges_ = m.value("ignore_merges", false) == true;
        const auto& added = j.contains("added_tokens") && j["added_tokens"].is_array() ? j["added_tokens"]
                                                                                       : nlohmann::json::array();
        const std::size_t entries = m["vocab"].size() + added.size();
        auto check_id = [&](const nlohmann::json& v, const std::string& name) {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
                v.get<std::int64_t>() >= static_cast<std::int64_t>(entries))
                hf_bad(where, "the id of '" + name + "' is not a whole number from 0 to " + std::to_string(entries - 1));
            return static_cast<std::int32_t>(v.get<std::int64_t>());
        };
        std::int32_t max_id = -1;
        for (auto it = m["vocab"].begin(); it != m["vocab"].end(); ++it) {
            const std::int32_t id = check_id(it.value(), it.key());
            vocab_[it.key()] = id;
            max_id = std::max(max_id, id);
        }
        for (const auto& a : added) {
            if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id"))
                hf_bad(where, "an entry of added_tokens has no content or id");
            const std::string content = a["content"].get<std::string>();
            if (content.empty()) hf_bad(where, "an entry of added_tokens is empty");
            const std::int32_t id = check_id(a["id"], content);
            added_[content] = id;
            max_id = std::max(max_id, id);
        }
        n_ = max_id + 1;
        if (n_ <= 0) hf_bad(where, "the vocabulary is empty");
        id_to_piece_.assign(static_cast<std::size_t>(n_), std::string());
        for (const auto& [piece, id] : vocab_) id_to_piece_[static_cast<std::size_t>(id)] = piece;
        for (const auto& [piece, id] : added_) {
            id_to_piece_[static_cast<std::size_t>(id)] = piece;
            added_ids_[id] = true;
            by_first_[static_cast<unsigned char>(piece[0])].push_back(piece);
        }
        for (auto& [c, list] : by_first_)
            std::stable_sort(list.begin(), list.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
        for (int b = 0; b < 256; ++b)
            if (!vocab_.count(byte_chars_[static_cast<std::size_t>(b)]))
                hf_bad(where, "byte " + std::to_string(b) + " ('" + byte_chars_[static_cast<std::size_t>(b)] +
                                  "') has no entry in model.vocab");
        int rank = 0;
        for (const auto& e : m["merges"]) {
            std::string a, b;
            if (e.is_string()) {
                const std::string s = e.get<std::string>();
                const std::size_t sp = s.find(' ');
                if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
                    hf_bad(where, "merge " + std::to_string(rank) + " ('" + s + "') is not two pieces separated by a space");
                a = s.substr(0, sp);
                b = s.substr(sp + 1);
            } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
                a = e[0].get<std::string>();
                b = e[1].get<std::string>();
            } else {
                hf_bad(where, "merge " + std::to_string(rank) + " is neither \"a b\" nor [\"a\", \"b\"]");
            }
            if (!vocab_.count(a) || !vocab_.count(b) || !vocab_.count(a + b))
                hf_bad(where, "merge " + std::to_string(rank) + " ('" + a + "' + '" + b +
                                  "') names a piece or a result that is not in model.vocab");
            ranks_.emplace(std::make_pair(a, b), rank);
            ++rank;
        }
        if (j.contains("normalizer") && !j["normalizer"].is_null()) {
            const auto& nz = j["normalizer"];
            if (!nz.is_object() || nz.value("type", "") != "NFC")
                hf_bad(where, "its normalizer is not null or NFC");
        }
        // pre-tokenizer: Split (Regex, Isolated) and/or ByteLevel, alone or in a Sequence
        const nlohmann::json pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : nlohmann::json();
        std::vector<nlohmann::json> steps;
        if (pre.is_object() && pre.value("type", "") == "Sequence" && pre.contains("pretokenizers") &&
            pre["pretokenizers"].is_array())
            for (const auto& p : pre["pretokenizers"]) steps.push_back(p);
        else if (pre.is_object())
            steps.push_back(pre);
        else if (!pre.is_null())
            hf_bad(where, "pre_tokenizer is not an object");
        bool byte_level = false;
        for (const auto& p : steps) {
            const std::string type = p.is_object() ? p.value("type", "") : "";
            if (type == "Split") {
                if (!p.contains("pattern") || !p["pattern"].is_object() || !p["pattern"].contains("Regex") ||
                    !p["pattern"]["Regex"].is_string())
                    hf_bad(where, "a Split pre-tokenizer has no pattern.Regex");
                if (p.value("behavior", "") != "Isolated" || p.value("invert", false) != false)
                    hf_bad(where, "a Split pre-tokenizer's behavior is not \"Isolated\" (or it is inverted)");
                if (byte_level) hf_bad(where, "a Split pre-tokenizer follows the ByteLevel one");
                patterns_.push_back(std::make_unique<Pcre2Pattern>(p["pattern"]["Regex"].get<std::string>(), where));
            } else if (type == "ByteLevel") {
                byte_level = true;
                add_prefix_space_ = p.value("add_prefix_space", false) == true;
                if (p.value("use_regex", true) == true) patterns_.push_back(std::make_unique<Pcre2Pattern>(kGpt2Pattern, where));
            } else {
                hf_bad(where, "pre-tokenizer '" + type + "' is not Split or ByteLevel");
            }
        }
        if (!byte_level) hf_bad(where, "it has no ByteLevel pre-tokenizer");
        for (std::size_t b = 0; b < 256; ++b) char_byte_[byte_chars_[b]] = static_cast<unsigned char>(b);
    }

    std::string kind() const override { return "hf-bpe"; }
    std::int64_t vocab_size() const override { return n_; }
    std::int32_t special_id(const std::string& text) const override {
        auto it = added_.find(text);
        return it == added_.end() ? -1 : it->second;
    }

    std::vector<std::int32_t> encode(const std::string& raw) const override {
        const std::string text = valid_utf8(raw);
        std::vector<std::int32_t> out;
        std::unordered_map<std::string, std::vector<std::int32_t>> cache;
        std::size_t seg = 0;
        auto flush = [&](std::size_t end) {
            if (end > seg) encode_segment(text.substr(seg, end - seg), out, cache);
        };
        for (std::size_t i = 0; i < text.size();) {
            const std::string* hit = nullptr;
            if (auto it = by_first_.find(static_cast<unsigned char>(text[i])); it != by_first_.end())
                for (const auto& t : it->second)
                    if (text.compare(i, t.size(), t) == 0) {
                        hit = &t;
                        break;
                    }
            if (!hit) {
                ++i;
                continue;
            }
            flush(i);
            out.push_back(added_.at(*hit));
            i += hit->size();
            seg = i;
        }
        flush(text.size());
        return out;
    }

    std::string decode(const std::vector<std::int32_t>& ids) const override {
        std::string s;
        for (auto id : ids) {
            if (id < 0 || id >= n_) {
                s += "\xEF\xBF\xBD";
                continue;
            }
            const std::string& p = id_to_piece_[static_cast<std::size_t>(id)];
            if (added_ids_.count(id)) {
                s += p;
                continue;
            }
            for (std::size_t i = 0; i < p.size();) {
                const std::size_t n = hf_char_len(p, i);
                auto it = char_byte_.find(p.substr(i, n));
                if (it != char_byte_.end()) s += static_cast<char>(it->second);
                else s += p.substr(i, n);
                i += n;
            }
        }
        return s;
    }
    std::string file_name() const override { return "tokenizer.json"; }
    void save(const std::string& dir) const override { write_file_atomic(dir + "/" + file_name(), json_); }

private:
    void encode_segment(std::string s, std::vector<std::int32_t>& out,
                        std::unordered_map<std::string, std::vector<std::int32_t>>& cache) const {
        if (add_prefix_space_ && s[0] != ' ') s.insert(s.begin(), ' ');
        std::vector<std::string> pieces{s};
        for (const auto& p : patterns_) {
            std::vector<std::string> next;
            for (const auto& x : pieces) p->split(x, next);
            pieces.swap(next);
        }
        for (const auto& piece : pieces) {
            auto c = cache.find(piece);
            if (c == cache.end()) c = cache.emplace(piece, bpe(piece)).first;
            out.insert(out.end(), c->second.begin(), c->second.end());
        }
    }

    std::vector<std::int32_t> bpe(const std::string& piece) const {
        std::string mapped;
        std::vector<std::string> word;
        for (unsigned char b : piece) {
            word.push_back(byte_chars_[b]);
            mapped += byte_chars_[b];
        }
        if (ignore_merges_)
            if (auto it = vocab_.find(mapped); it != vocab_.end()) return {it->second};
        while (word.size() > 1) {
            int best = std::numeric_limits<int>::max();
            std::size_t at = 0;
            for (std::size_t i = 0; i + 1 < word.size(); ++i) {
                auto it = ranks_.find({word[i], word[i + 1]});
                if (it != ranks_.end() && it->second < best) {
                    best = it->second;
                    at = i;
                }
            }
            if (best == std::numeric_limits<int>::max()) break;
            const std::string a = word[at], b = word[at + 1];
            std::vector<std::string> merged;
            for (std::size_t i = 0; i < word.size();) {
                if (i + 1 < word.size() && word[i] == a && word[i + 1] == b) {
                    merged.push_back(a + b);
                    i += 2;
                } else {
                    merged.push_back(word[i++]);
                }
            }
            word.swap(merged);
        }
        std::vector<std::int32_t> ids;
        for (const auto& w : word) ids.push_back(vocab_.at(w));  // loading checked every merge's result
        return ids;
    }

    std::string json_;
    std::vector<std::string> byte_chars_;
    std::unordered_map<std::string, unsigned char> char_byte_;
    std::unordered_map<std::string, std::int32_t> vocab_;
    std::map<std::string, std::int32_t> added_;
    std::unordered_map<std::int32_t, bool> added_ids_;
    std::unordered_map<unsigned char, std::vector<std::string>> by_first_;
    std::unordered_map<std::pair<std::string, std::string>, int, PairHash> ranks_;
    std::vector<std::string> id_to_piece_;
    std::vector<std::unique_ptr<Pcre2Pattern>> patterns_;
    bool ignore_merges_ = false, add_prefix_space_ = false;
    std::int32_t n_ = 0;
};

}  // namespace

std::unique_ptr<Tokenizer> parse_hf_tokenizer(const std::string& json_text, const std::string& where) {
    return std::make_unique<HfBpeTokenizer>(json_text, where);
}

}  // namespace hr
