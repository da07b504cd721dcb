#include "data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/hf_tokenizer.h"

namespace hr {

namespace {

// ---- UTF-8 -----------------------------------------------------------------------------------------

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t utf8_len(const std::string& s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
    if (n == 2 && c < 0xC2) return 0;  // overlong
    return n;
}

const char* const kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The characters of a text as UTF-8 strings (invalid bytes become U+FFFD).
std::vector<std::string> characters(const std::string& s) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_len(s, i);
        if (n == 0) {
            out.push_back(kReplacement);
            ++i;
        } else {
            out.push_back(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw InputError(HR_MSG("tokenizer.missing_file",
                                "cannot read the tokenizer file %1; it belongs next to model.safetensors (copy it along "
                                "with the weights)"),
                         {path});
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// ---- byte ------------------------------------------------------------------------------------------

class ByteTokenizer : public Tokenizer {
public:
    std::string kind() const override { return "byte"; }
    std::int64_t vocab_size() const override { return 256; }
    std::vector<std::int32_t> encode(const std::string& text) const override {
        std::vector<std::int32_t> ids(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) ids[i] = static_cast<unsigned char>(text[i]);
        return ids;
    }
    std::string decode(const std::vector<std::int32_t>& ids) const override {
        std::string s;
        s.reserve(ids.size());
        for (auto id : ids) {
            if (id >= 0 && id < 256)
                s.push_back(static_cast<char>(id));
            else
                s += kReplacement;
        }
        return s;
    }
    std::string file_name() const override { return ""; }
    void save(const std::string&) const override {}
};

// ---- char ------------------------------------------------------------------------------------------

class CharTokenizer : public Tokenizer {
public:
    explicit CharTokenizer(std::vector<std::string> vocab) : vocab_(std::move(vocab)) {
        for (std::size_t i = 0; i < vocab_.size(); ++i) ids_[vocab_[i]] = static_cast<std::int32_t>(i);
    }
    static std::unique_ptr<CharTokenizer> learn(const std::string& text) {
        std::vector<std::string> chars = characters(text);
        std::sort(chars.begin(), chars.end());  // UTF-8 byte order is code-point order
        chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
        if (chars.empty())
            throw InputError(HR_MSG("tokenizer.char_empty", "the text is empty, so a character vocabulary cannot be made"));
        return std::make_unique<CharTokenizer>(std::move(chars));
    }
    std::string kind() const override { return "char"; }
    std::int64_t vocab_size() const override { return static_cast<std::int64_t>(vocab_.size()); }
    std::vector<std::int32_t> encode(const std::string& text) const override {
        std::vector<std::int32_t> out;
        for (const auto& ch : characters(text)) {
            auto it = ids_.find(ch);
            if (it == ids_.end())
                throw InputError(HR_MSG("tokenizer.char_unknown",
                                        "the character '%1' is not in the model's character vocabulary (%2 characters "
                                        "seen in its training text); leave it out of the prompt"),
                                 {ch, std::to_string(vocab_.size())});
            out.push_back(it->second);
        }
        return out;
    }
    std::string decode(const std::vector<std::int32_t>& ids) const override {
        std::string s;
        for (auto id : ids) s += id >= 0 && id < vocab_size() ? vocab_[static_cast<std::size_t>(id)] : kReplacement;
        return s;
    }
    std::string file_name() const override { return "tokenizer.json"; }
    void save(const std::string& dir) const override {
        nlohmann::json j = {{"type", "char"}, {"vocab", vocab_}};
        write_file_atomic(dir + "/" + file_name(), j.dump() + "\n");
    }
    static std::unique_ptr<CharTokenizer> load(const std::string& path) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(read_file(path));
        } catch (const nlohmann::json::exception& e) {
            throw InputError(HR_MSG("tokenizer.char_bad", "the tokenizer file %1 is not valid JSON: %2"), {path, e.what()});
        }
        if (!j.is_object() || j.value("type", "") != "char" || !j.contains("vocab") || !j["vocab"].is_array() ||
            j["vocab"].empty())
            throw InputError(HR_MSG("tokenizer.char_format",
                                    "the tokenizer file %1 is not a character vocabulary ({\"type\": \"char\", \"vocab\": "
                                    "[...]})"),
                             {path});
        std::vector<std::string> v;
        for (const auto& e : j["vocab"]) {
            if (!e.is_string())
                throw InputError(HR_MSG("tokenizer.char_format",
                                        "the tokenizer file %1 is not a character vocabulary ({\"type\": \"char\", "
                                        "\"vocab\": [...]})"),
                                 {path});
            v.push_back(e.get<std::string>());
        }
        return std::make_unique<CharTokenizer>(std::move(v));
    }

private:
    std::vector<std::string> vocab_;
    std::map<std::string, std::int32_t> ids_;
};

// ---- bpe:N (SentencePiece) ----------------------------------------------------------------------------

class LinesIterator : public sentencepiece::SentenceIterator {
public:
    explicit LinesIterator(const std::string& text) {
        std::istringstream is(text);
        std::string line;
        while (std::getline(is, line))
            if (!line.empty()) lines_.push_back(line);
    }
    bool done() const override { return i_ >= lines_.size(); }
    void Next() override { ++i_; }
    const std::string& value() const override { return lines_[i_]; }
    sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }
    bool empty() const { return lines_.empty(); }

private:
    std::vector<std::string> lines_;
    std::size_t i_ = 0;
};

class BpeTokenizer : public Tokenizer {
public:
    // loaded: a model's own file (kind "sentencepiece"), not one trained here (kind "bpe:N")
    BpeTokenizer(std::string model, std::int64_t n, const std::string& where, bool loaded = false)
        : model_(std::move(model)), n_(n), loaded_(loaded) {
        const auto st = sp_.LoadFromSerializedProto(model_);
        if (!st.ok())
            throw InputError(HR_MSG("tokenizer.bpe_bad", "%1 is not a SentencePiece model: %2"), {where, st.ToString()});
        n_ = sp_.GetPieceSize();
        if (n_ <= 0) throw InputError(HR_MSG("tokenizer.bpe_bad", "%1 is not a SentencePiece model: %2"), {where, "no pieces"});
    }
    std::int32_t special_id(const std::string& text) const override {
        const int id = sp_.PieceToId(text);
        if (id < 0 || id >= n_ || sp_.IdToPiece(id) != text) return -1;
        return sp_.IsControl(id) || sp_.IsUnused(id) || sp_.IsUnknown(id) ? id : (sp_.IsByte(id) ? -1 : id);
    }
    static std::unique_ptr<BpeTokenizer> train(const std::string& text, std::int64_t n) {
        LinesIterator lines(text);
        if (lines.empty())
            throw InputError(HR_MSG("tokenizer.bpe_empty", "the text is empty, so no BPE vocabulary can be trained"));
        // Newlines separate training sentences; in use they are encoded by byte fallback (<0x0A>), and
        // the identity normalisation keeps every space, so decode(encode(text)) == text.
        const std::unordered_map<std::string, std::string> args = {
            {"model_type", "bpe"},          {"vocab_size", std::to_string(n)},
            {"byte_fallback", "true"},       {"normalization_rule_name", "identity"},
            {"remove_extra_whitespaces", "false"}, {"add_dummy_prefix", "false"},
            {"split_digits", "false"},       {"allow_whitespace_only_pieces", "true"},
            {"character_coverage", "1.0"},   {"bos_id", "-1"},
            {"eos_id", "-1"},                {"pad_id", "-1"},
            {"unk_id", "0"},                 {"num_threads", "2"},
            {"minloglevel", "2"},            {"max_sentence_length", "1000000"},
            {"input_sentence_size", "2000000"}, {"shuffle_input_sentence", "false"}};
        std::string model;
        const auto st = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model);
        if (!st.ok())
            throw InputError(HR_MSG("tokenizer.bpe_train",
                                    "SentencePiece could not train a BPE of %1 tokens on this text: %2; pick a smaller "
                                    "bpe:N (it needs at least 256 byte pieces plus the text's characters)"),
                             {std::to_string(n), st.ToString()});
        return std::make_unique<BpeTokenizer>(std::move(model), n, "the trained tokenizer");
    }
    std::string kind() const override { return loaded_ ? "sentencepiece" : "bpe:" + std::to_string(n_); }
    std::int64_t vocab_size() const override { return n_; }
    std::vector<std::int32_t> encode(const std::string& text) const override {
        std::vector<int> ids;
        const auto st = sp_.Encode(text, &ids);
        if (!st.ok()) throw Error("SentencePiece could not encode the text: " + st.ToString());
        return std::vector<std::int32_t>(ids.begin(), ids.end());
    }
    std::string decode(const std::vector<std::int32_t>& ids) const override {
        std::vector<int> v;
        v.reserve(ids.size());
        for (auto id : ids) v.push_back(id >= 0 && id < n_ ? id : 0);
        std::string out;
        const auto st = sp_.Decode(v, &out);
        if (!st.ok()) throw Error("SentencePiece could not decode: " + st.ToString());
        return out;
    }
    std::string file_name() const override { return "tokenizer.model"; }
    void save(const std::string& dir) const override { write_file_atomic(dir + "/" + file_name(), model_); }

private:
    std::string model_;
    std::int64_t n_;
    bool loaded_ = false;
    sentencepiece::SentencePieceProcessor sp_;
};

std::int64_t bpe_size(const std::string& spec) {
    if (spec.rfind("bpe:", 0) != 0) return 0;
    try {
        std::size_t pos = 0;
        const long long n = std::stoll(spec.substr(4), &pos);
        if (pos == spec.size() - 4) return n;
    } catch (...) {
    }
    return -1;
}

}  // namespace

std::string tokenizer_spec_file(const std::string& spec) {
    if (spec.empty() || spec == "byte" || spec == "char" || bpe_size(spec) != 0) return "";
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(spec, ec)) {
        for (const char* name : {"tokenizer.json", "tokenizer.model"}) {
            const fs::path p = fs::path(spec) / name;
            if (fs::is_regular_file(p, ec)) return p.string();
        }
        return "";
    }
    return fs::is_regular_file(spec, ec) ? spec : "";
}

std::string tokenizer_spec_kind(const std::string& spec) {
    const std::string file = tokenizer_spec_file(spec);
    if (file.empty()) return spec;
    return file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0 ? "hf-bpe" : "sentencepiece";
}

std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path) {
    const std::string bytes = read_file(path);
    if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return parse_hf_tokenizer(bytes, path);
    return std::make_unique<BpeTokenizer>(bytes, 0, path, true);
}

void validate_tokenizer_spec(const std::string& spec) {
    if (spec == "byte" || spec == "char") return;
    const std::int64_t n = bpe_size(spec);
    if (n >= 260 && n <= 1000000) return;
    if (n == 0 && !tokenizer_spec_file(spec).empty()) return;
    throw InputError(HR_MSG("tokenizer.unknown",
                            "unknown tokenizer '%1'; use byte (the default), char, bpe:N with N from 260 to 1000000, "
                            "or a tokenizer.json / tokenizer.model file (or the model folder holding it) (--tokenizer)"),
                     {spec});
}

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec, const std::string& training_text) {
    validate_tokenizer_spec(spec);
    if (spec == "byte") return std::make_unique<ByteTokenizer>();
    if (spec == "char") return CharTokenizer::learn(training_text);
    if (const std::string file = tokenizer_spec_file(spec); !file.empty()) return load_tokenizer_file(file);
    return BpeTokenizer::train(training_text, bpe_size(spec));
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& kind, const std::string& dir) {
    if (kind == "byte" || kind.empty()) return std::make_unique<ByteTokenizer>();
    if (kind == "char") return CharTokenizer::load(dir + "/tokenizer.json");
    if (kind == "hf-bpe") return load_tokenizer_file(dir + "/tokenizer.json");
    if (kind == "sentencepiece") return load_tokenizer_file(dir + "/tokenizer.model");
    if (bpe_size(kind) > 0) {
        const std::string path = dir + "/tokenizer.model";
        return std::make_unique<BpeTokenizer>(read_file(path), bpe_size(kind), path);
    }
    throw InputError(HR_MSG("tokenizer.unknown_kind",
                            "the weights name an unknown tokenizer '%1'; they were written by a newer Headroom"),
                     {kind});
}

std::string valid_utf8(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_len(s, i);
        if (n == 0) {
            out += kReplacement;
            ++i;
        } else {
            out.append(s, i, n);
            i += n;
        }
    }
    return out;
}

}  // namespace hr
