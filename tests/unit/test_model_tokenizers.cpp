// A model's own tokenizer files (issue 46): Hugging Face tokenizer.json byte-level BPE (GPT-2, Llama 3 and
// Qwen2 pre-tokenizers, through PCRE2) and SentencePiece tokenizer.model, against an independent Python
// implementation of the published algorithm (python3-regex for the patterns; python3-sentencepiece).
// No real tokenizer can be downloaded here: tests/support/tokenizer_reference.py trains a small byte-level BPE on fortunes and
// writes it as tokenizer.json in each family's layout (its added tokens included), and a SentencePiece BPE
// with spm's trainer; both sides then encode the same texts, special tokens included.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/chat_template.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "test_support.h"

using namespace hr;

namespace {

const std::vector<std::string>& sample_texts() {
    static const std::vector<std::string> t = {
        "Hello world",
        "The quick brown fox jumps over the lazy dog.\n\nIt's 12345 o'clock; we'LL see, DON'T worry!",
        "  leading spaces, trailing spaces   \n\t tabs\r\nand CRLF\n\n\n",
        "naïve café — 日本語のテキスト, über Straße: ‘quotes’ “double” …",
        "emoji 🙂🚀 and combining e\xCC\x81 plus numbers 3.14159 2026-12-07 1000000",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>",
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n",
        "text<|endoftext|>more text<|end_of_text|>",
        "",
        "a",
        "'s's 'S 'Ll --- ... !!! ??? ((()))",
        "Q: What do you get when you cross a mosquito with a rock climber?\nA: Nothing, you can't cross a vector with a scalar.",
    };
    return t;
}

std::string slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

class ModelTokenizersTest : public QObject {
    Q_OBJECT

    std::string dir_;
    nlohmann::json ids_;

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) QSKIP("no /usr/bin/python3 for the reference");
        if (!QFileInfo::exists(QStringLiteral("/usr/share/games/fortunes"))) QSKIP("no fortunes (apt install fortunes)");
        dir_ = hrtest::temp_dir("model_tokenizers");
        {
            std::ofstream f(dir_ + "/texts.json", std::ios::binary);
            f << nlohmann::json(sample_texts()).dump();
        }
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"), {hrtest::qsource_path("tests/support/tokenizer_reference.py"),
                                                      QString::fromStdString(dir_)});
        QVERIFY(py.waitForFinished(300000));
        const QByteArray err = py.readAllStandardError();
        if (py.exitCode() != 0 && (err.contains("No module named 'regex'") || err.contains("No module named 'sentencepiece'")))
            QSKIP("no python3-regex / python3-sentencepiece for the reference (scripts/setup installs them)");
        QVERIFY2(py.exitCode() == 0, err.constData());
        ids_ = nlohmann::json::parse(slurp(dir_ + "/ids.json"));
    }

    // Each family's tokenizer.json, through --tokenizer FILE's loader, gives the reference's ids for every
    // text (added tokens as single ids), decodes them back to the text, and saves the same file.
    void byteLevelBpeEqualsTheReference_data() {
        QTest::addColumn<QString>("family");
        QTest::newRow("gpt2") << "gpt2";
        QTest::newRow("llama3") << "llama3";
        QTest::newRow("qwen2") << "qwen2";
    }
    void byteLevelBpeEqualsTheReference() {
        QFETCH(QString, family);
        const std::string fam = family.toStdString();
        const std::string file = dir_ + "/" + fam + "/tokenizer.json";
        QCOMPARE(tokenizer_spec_file(dir_ + "/" + fam), file);  // the model folder finds its file
        QCOMPARE(tokenizer_spec_kind(file), std::string("hf-bpe"));
        auto tok = make_tokenizer(file, "");
        QCOMPARE(tok->kind(), std::string("hf-bpe"));
        QCOMPARE(tok->vocab_size(), ids_[fam + "_size"].get<std::int64_t>());
        const auto& texts = sample_texts();
        std::size_t total = 0;
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto got = tok->encode(texts[i]);
            const auto want = ids_[fam][i].get<std::vector<std::int32_t>>();
            QVERIFY2(got == want, qPrintable(QString("%1, text %2: %3 ids, reference %4")
                                                  .arg(family).arg(i).arg(got.size()).arg(want.size())));
            QCOMPARE(tok->decode(got), texts[i]);
            total += got.size();
        }
        QVERIFY(total > 100);
        // merges did something: fewer ids than bytes
        QVERIFY(tok->encode(texts[11]).size() < texts[11].size() * 3 / 4);
        // saved into a run folder and loaded back by kind, as generation does
        const std::string run = hrtest::temp_dir("hf_saved_" + fam);
        tok->save(run);
        QCOMPARE(slurp(run + "/tokenizer.json"), slurp(file));
        auto back = load_tokenizer("hf-bpe", run);
        QVERIFY(back->encode(texts[1]) == tok->encode(texts[1]));
    }

    // The family's chat template is found from its special tokens.
    void specialTokensChooseTheTemplate() {
        QCOMPARE(resolve_chat_template("auto", *make_tokenizer(dir_ + "/llama3/tokenizer.json", "")), std::string("llama3"));
        QCOMPARE(resolve_chat_template("auto", *make_tokenizer(dir_ + "/qwen2/tokenizer.json", "")), std::string("chatml"));
        QCOMPARE(resolve_chat_template("auto", *make_tokenizer(dir_ + "/gpt2/tokenizer.json", "")), std::string("plain"));
        QCOMPARE(resolve_chat_template("auto", *make_tokenizer(dir_ + "/spm/tokenizer.model", "")), std::string("mistral"));
        QCOMPARE(resolve_chat_template("auto", *make_tokenizer("byte", "")), std::string("plain"));
    }

    // A SentencePiece tokenizer.model (a Llama 2 / Mistral family file) gives sentencepiece's own ids, and
    // its control tokens are found for the templates.
    void sentencePieceModelEqualsTheLibrary() {
        const std::string file = dir_ + "/spm/tokenizer.model";
        QCOMPARE(tokenizer_spec_kind(file), std::string("sentencepiece"));
        auto tok = make_tokenizer(file, "");
        QCOMPARE(tok->kind(), std::string("sentencepiece"));
        QCOMPARE(tok->vocab_size(), ids_["spm_size"].get<std::int64_t>());
        QCOMPARE(tok->special_id("<s>"), ids_["spm_bos"].get<std::int32_t>());
        QCOMPARE(tok->special_id("</s>"), ids_["spm_eos"].get<std::int32_t>());
        QCOMPARE(tok->special_id("hello"), -1);
        const auto& texts = sample_texts();
        for (std::size_t i = 0; i < texts.size(); ++i)
            QVERIFY2(tok->encode(texts[i]) == ids_["spm"][i].get<std::vector<std::int32_t>>(), qPrintable(QString::number(i)));
        const std::string run = hrtest::temp_dir("spm_saved");
        tok->save(run);
        QCOMPARE(slurp(run + "/tokenizer.model"), slurp(file));
        QVERIFY(load_tokenizer("sentencepiece", run)->encode(texts[1]) == tok->encode(texts[1]));
    }

    // Damaged files: one message naming the file and what is wrong, never a crash.
    void damagedTokenizerJsonIsRefused() {
        const std::string good = slurp(dir_ + "/llama3/tokenizer.json");
        auto refused = [&](const std::string& text, const char* needle) {
            try {
                parse_hf_tokenizer(text, "t.json");
            } catch (const InputError& e) {
                const std::string m = e.what();
                if (m.find("t.json") == std::string::npos || m.find(needle) == std::string::npos) {
                    qWarning("%s", m.c_str());
                    return false;
                }
                return true;
            }
            return false;
        };
        QVERIFY(refused("{", "not valid JSON"));
        QVERIFY(refused("[]", "no \"model\""));
        nlohmann::json j = nlohmann::json::parse(good);
        auto with = [&](auto edit) {
            nlohmann::json k = j;
            edit(k);
            return k.dump();
        };
        QVERIFY(refused(with([](auto& k) { k["model"]["type"] = "WordPiece"; }), "BPE"));
        QVERIFY(refused(with([](auto& k) {
                            const auto id = k["model"]["vocab"]["!"];
                            k["model"]["vocab"].erase("!");
                            k["model"]["vocab"]["not a byte"] = id;
                        }),
                        "byte 33"));
        QVERIFY(refused(with([](auto& k) { k["model"]["vocab"]["zz"] = 99999999; }), "id of 'zz'"));
        QVERIFY(refused(with([](auto& k) { k["model"]["merges"].push_back(nlohmann::json::array({"q", "qqq"})); }), "merge 300"));
        QVERIFY(refused(with([](auto& k) { k["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(["; }), "does not compile"));
        QVERIFY(refused(with([](auto& k) { k["pre_tokenizer"] = {{"type", "Whitespace"}}; }), "Whitespace"));
        QVERIFY(refused(with([](auto& k) { k["normalizer"] = {{"type", "Lowercase"}}; }), "normalizer"));
        QVERIFY_THROWS_EXCEPTION(InputError, make_tokenizer(dir_ + "/nothing/tokenizer.json", ""));
        QVERIFY_THROWS_EXCEPTION(InputError, validate_tokenizer_spec(dir_ + "/nothing"));
    }
};

QTEST_GUILESS_MAIN(ModelTokenizersTest)
#include "test_model_tokenizers.moc"
