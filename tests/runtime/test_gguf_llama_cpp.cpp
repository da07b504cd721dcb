// GGUF export (issue 56) checked by the real llama.cpp: node-llama-cpp 3.21.1's prebuilt CPU llama.cpp
// (tests/runtimes, installed by scripts/setup) loads each file `headroom export RUN --gguf FILE --type T`
// writes and (tests/support/gguf_llama.mjs):
//   - tokenizes a text with spaces, digits, CJK and emoji: its ids equal Headroom's tokenizer's;
//   - continues a prompt greedily for 32 tokens: equal to the headroom binary's `headroom generate
//     --temperature 0 --as-exported TYPE --ids` on the same rounded weights (f16/bf16: the rounded values
//     widened; q8_0: the blocks dequantized; a LoRA run: merged), where the smallest log-probability margin
//     of llama.cpp's top token over its second is printed for each case;
//   - q8_0: the mean absolute difference of the log-probabilities llama.cpp gives 64 tokens of a text
//     with the q8_0 and the f32 file (docs/export.md states it).
// Cases: llama-tiny (byte tokenizer, untied head; f32, f16, q8_0: greedy and log-probabilities), a Llama-3-shaped Hugging Face config
// (grouped-query attention, Llama 3 rope scaling, a tied head, bf16 weights, a Llama 3 tokenizer.json with
// merges made by tests/support/tokenizer_reference.py; f32 and bf16), a Qwen2-shaped one (q/k/v biases, tied
// head, the Qwen2 tokenizer.json; f16), a LLaMA-2-shaped one with a SentencePiece tokenizer.model made by
// spm_train (f16; also Headroom's bpe:N, tokenizer only) and a LoRA run on llama-tiny (f32). The chat
// templates: the Modelfile's (Go's text/template) and the GGUF's (Jinja) against Headroom's rendering, and a
// folder's tokenizer_config.json template carried over. A GPT preset, a char tokenizer and a unigram
// SentencePiece model are refused with nothing written. Skips without node or tests/runtimes/node_modules.
#include <QFileInfo>
#include <QProcess>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/dtype.h"
#include "io/safetensors.h"
#include "programs.h"
#include "test_support.h"
#include "data/chat_template.h"
#include "data/tokenizer.h"
#include "train/checkpoint.h"

using namespace hr;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const QString kModules = hrtest::qsource_path("tests/runtimes/node_modules");
const QString kNode = QStringLiteral("/usr/bin/node");
// spaces, digits, CJK, emoji, accents (NFC), punctuation, a newline and a tab
const std::string kText = "Hello  world, it's 12345 and 3.14159 \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae"
                          "\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88 na\xc3\xafve caf\xc3\xa9 \xf0\x9f\x99\x82"
                          "\xf0\x9f\x9a\x80!\n\tThe end.";
const std::string kPrompt = "Q: What is the";
constexpr int kGreedy = 32;
// the models from a Hugging Face config (Llama-3-, Qwen2-, LLaMA-2-shaped): AdamW steps and learning rate
constexpr int kFolderSteps = 200;
const char* const kFolderLr = "0.01";
const char* const kQwen2Lr = "0.006";  // (0.01 leaves Qwen2's smallest margin at 0.005, 0.003 at 0.024)
// a model folder's own chat template (tokenizer_config.json), carried into the GGUF file as it is
const std::string kOwnTemplate = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
                                 "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
                                 "{{ '<|im_start|>assistant\n' }}{% endif %}{# own #}";

// The ids after `label` on the last line of `output` that starts with it ("prompt ids: 1 2 3")
std::vector<std::int32_t> ids_line(const QString& output, const char* label) {
    std::vector<std::int32_t> ids;
    const QStringList lines = output.split(QLatin1Char('\n'));
    for (auto it = lines.crbegin(); it != lines.crend(); ++it)
        if (it->startsWith(QLatin1String(label))) {
            for (const QString& w : it->mid(int(std::strlen(label))).split(QLatin1Char(' '), Qt::SkipEmptyParts))
                ids.push_back(w.toInt());
            break;
        }
    return ids;
}

}  // namespace

class GgufLlamaCppTest : public QObject {
    Q_OBJECT

    std::string dir_;
    bool have_tokenizers_ = false;
    QString tokenizer_skip_;

    hrtest::ProcessResult headroom(const QStringList& args, int timeout_ms = 900000) {
        return hrtest::run_program(hrtest::qbinary_path("headroom"), args, QString(), timeout_ms);
    }

    // Trains `out` with the common language-model settings plus `args`.
    // (quick: one step of batch 1 and 16 tokens, for a run only exported)
    bool train(const QString& out, const QStringList& args, bool quick = false, const char* lr = "0.003") {
        const QStringList common{"train", "--data", "text:fortunes", "--batch", quick ? "1" : "8", "--seq", quick ? "16" : "64",
                                 "--eval-tokens", "256", "--threads", "2", "--no-history", "--optimizer", "adamw", "--lr",
                                 lr, "--out", out};
        const auto r = headroom(common + args);
        if (r.exit_code != 0) qWarning("%s", qPrintable(r.output));
        return r.exit_code == 0;
    }

    json llama(const json& request) {
        const std::string req = dir_ + "/request.json", res = dir_ + "/result.json";
        std::ofstream(req, std::ios::binary) << request.dump();
        fs::remove(res);
        const auto r = hrtest::run_program(kNode, {hrtest::qsource_path("tests/support/gguf_llama.mjs"), kModules,
                                                   QString::fromStdString(req), QString::fromStdString(res)},
                                           QString(), 300000);
        if (r.exit_code != 0) qWarning("%s", qPrintable(r.output));
        return r.exit_code == 0 ? hrtest::read_json(res) : json();
    }

    // Exports `weights` as `type`, and checks llama.cpp's tokens of kText and its 32 greedy tokens after the
    // prompt against Headroom's on the same rounded weights. Returns the GGUF's path ("" on failure).
    std::string check(const std::string& label, const std::string& weights, const std::string& type) {
        const std::string gguf = dir_ + "/" + label + "-" + type + ".gguf";
        const auto e = headroom({"export", QString::fromStdString(weights), "--gguf", QString::fromStdString(gguf),
                                 "--type", QString::fromStdString(type)});
        if (e.exit_code != 0) {
            qWarning("export: %s", qPrintable(e.output));
            return "";
        }
        qInfo("%s", qPrintable(e.output.trimmed()));
        // headroom generate on the same rounded weights: --as-exported TYPE, the ids on stderr (--ids)
        const auto gr = headroom({"generate", "--weights", QString::fromStdString(weights), "--prompt",
                                  QString::fromStdString(kPrompt), "--tokens", QString::number(kGreedy), "--temperature",
                                  "0", "--threads", "2", "--as-exported", QString::fromStdString(type), "--ids"});
        if (gr.exit_code != 0) {
            qWarning("generate: %s", qPrintable(gr.output));
            return "";
        }
        const std::vector<std::int32_t> prompt_ids = ids_line(gr.output, "prompt ids: ");
        const std::vector<std::int32_t> generated = ids_line(gr.output, "generated ids: ");
        if (prompt_ids.empty() || int(generated.size()) != kGreedy) {
            qWarning("generate --ids printed no ids: %s", qPrintable(gr.output));
            return "";
        }
        const json r = llama({{"model", gguf}, {"context", 128}, {"texts", {kText}}, {"prompt", prompt_ids},
                              {"tokens", kGreedy}});
        if (r.is_null()) return "";
        SafeTensorsFile meta = read_safetensors(weights, SafetensorsRead::mapped);
        const auto tk = meta.metadata.find("tokenizer");
        const auto tokenizer = load_tokenizer(tk == meta.metadata.end() ? "byte" : tk->second, fs::path(weights).parent_path().string());
        const std::vector<std::int32_t> mine = tokenizer->encode(kText);
        const auto theirs = r["texts"][0].get<std::vector<std::int32_t>>();
        if (theirs != mine) {
            qWarning("%s %s: llama.cpp tokenizes the text into %d ids, Headroom into %d", label.c_str(), type.c_str(),
                     int(theirs.size()), int(mine.size()));
            return "";
        }
        const auto greedy = r["greedy"].get<std::vector<std::int32_t>>();
        double min_margin = 1e9;
        int first_diff = -1;
        for (int i = 0; i < kGreedy; ++i) {
            const json& top = r["greedy_top"][i];
            const double margin = std::log(top[0][1].get<double>()) - std::log(top[1][1].get<double>());
            min_margin = std::min(min_margin, margin);
            if (first_diff < 0 && (i >= int(greedy.size()) || greedy[i] != generated[i])) {
                first_diff = i;
                qWarning("%s %s: first difference at generated token %d: llama.cpp %d (margin %.4f over %d), Headroom %d",
                         label.c_str(), type.c_str(), i, i < int(greedy.size()) ? greedy[i] : -1, margin,
                         top[1][0].get<int>(), generated[i]);
            }
        }
        qInfo("%s %s: tokenizer %d ids equal; greedy %d/%d tokens equal; smallest top-1 log-probability margin %.4f",
              label.c_str(), type.c_str(), int(mine.size()), first_diff < 0 ? kGreedy : first_diff, kGreedy, min_margin);
        return first_diff < 0 ? gguf : "";
    }

    // A Hugging Face config folder with the reference script's tokenizer.json of `family`.
    std::string config_folder(const std::string& name, json config, const std::string& family) {
        const std::string d = dir_ + "/" + name;
        fs::create_directories(d);
        std::ofstream(d + "/config.json") << config.dump(2);
        fs::copy_file(dir_ + "/tok/" + family + "/tokenizer.json", d + "/tokenizer.json");
        return d;
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kNode)) QSKIP("no node (/usr/bin/node) to run llama.cpp");
        if (!QFileInfo::exists(kModules + "/node-llama-cpp/package.json"))
            QSKIP("no tests/runtimes/node_modules/node-llama-cpp (scripts/setup installs the pinned runtimes)");
        QVERIFY(QFileInfo::exists(hrtest::qbinary_path("headroom")));
        dir_ = hrtest::temp_dir("gguf_llama_cpp");
        // the tokenizer.json files of the families (tests/unit/test_model_tokenizers.cpp makes them the same way)
        fs::create_directories(dir_ + "/tok");
        std::ofstream(dir_ + "/tok/texts.json") << json(std::vector<std::string>{kText}).dump();
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"), {hrtest::qsource_path("tests/support/tokenizer_reference.py"),
                                                      QString::fromStdString(dir_ + "/tok")});
        py.waitForFinished(300000);
        have_tokenizers_ = py.exitStatus() == QProcess::NormalExit && py.exitCode() == 0;
        tokenizer_skip_ = QString::fromUtf8(py.readAllStandardError()).trimmed().split('\n').last();
    }

    // llama-tiny with the byte tokenizer: f32 and f16 greedy; q8_0's log-probabilities against f32's.
    void llamaTinyByteTokenizer() {
        const QString run = QString::fromStdString(dir_ + "/tiny");
        QVERIFY(train(run, {"--preset", "llama-tiny", "--steps", "300"}));
        const std::string w = run.toStdString() + "/model.safetensors";
        const std::string f32 = check("llama-tiny", w, "f32");
        QVERIFY(!f32.empty());
        QVERIFY(!check("llama-tiny", w, "f16").empty());
        // q8_0: greedy against generate --as-exported q8_0 (the blocks dequantized; llama.cpp also rounds the
        // activations to q8_0 in its products), and the log-probabilities against f32's
        const std::string q8 = check("llama-tiny", w, "q8_0");
        QVERIFY(!q8.empty());
        // 65 tokens of a text: the log-probability of each of the last 64 after those before it
        const std::string text = "A journey of a thousand miles begins with a single step, they say; so walk.";
        std::vector<std::int32_t> ids(text.begin(), text.begin() + 65);
        const json a = llama({{"model", f32}, {"context", 128}, {"scored", ids}});
        const json b = llama({{"model", q8}, {"context", 128}, {"scored", ids}});
        QVERIFY(!a.is_null() && !b.is_null());
        double sum = 0;
        for (int i = 0; i < 64; ++i) sum += std::abs(a["scored"][i].get<double>() - b["scored"][i].get<double>());
        qInfo("llama-tiny q8_0: mean |log p(q8_0) - log p(f32)| over 64 positions = %.5f", sum / 64);
        QVERIFY(sum / 64 < 0.05);
        QVERIFY(fs::file_size(q8) < fs::file_size(f32) / 3);
    }

    // A LoRA run on llama-tiny: merged in f32, then written.
    void loraRunMerged() {
        const QString base = QString::fromStdString(dir_ + "/tiny/model.safetensors");
        if (!QFileInfo::exists(base)) QSKIP("llamaTinyByteTokenizer's run is missing");
        const QString run = QString::fromStdString(dir_ + "/lora");
        QVERIFY(train(run, {"--preset", "llama-tiny", "--init-from", base, "--lora", "4", "--lora-alpha", "8", "--steps", "60"}));
        QVERIFY(read_safetensors(run.toStdString() + "/model.safetensors").find("model.layers.0.self_attn.q_proj.lora_A"));
        QVERIFY(!check("lora", run.toStdString() + "/model.safetensors", "f32").empty());
    }

    // A Llama-3-shaped model from a config: GQA, Llama 3 rope scaling, tied head; its weights stored in bf16.
    void llama3ShapedFolder() {
        if (!have_tokenizers_) QSKIP(qPrintable("the reference tokenizers could not be made: " + tokenizer_skip_));
        const std::string folder = config_folder(
            "llama3-config",
            {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"vocab_size", 576}, {"hidden_size", 128},
             {"intermediate_size", 256}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
             {"rms_norm_eps", 1e-5}, {"rope_theta", 500000.0},
             {"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                               {"original_max_position_embeddings", 8192}}},
             {"tie_word_embeddings", true}, {"max_position_embeddings", 131072}, {"torch_dtype", "bfloat16"}},
            "llama3");
        const QString run = QString::fromStdString(dir_ + "/llama3");
        QVERIFY(train(run, {"--model-config", QString::fromStdString(folder), "--tokenizer",
                            QString::fromStdString(folder + "/tokenizer.json"), "--steps", QString::number(kFolderSteps)},
                      false, kFolderLr));
        // the weights in bf16, as a Llama 3 checkpoint stores them (the run's metadata and tokenizer kept)
        const std::string w = run.toStdString() + "/model.safetensors";
        SafeTensorsFile f = read_safetensors(w);
        for (auto& t : f.tensors) {
            std::vector<std::uint8_t> b(t.data.size() / 2);
            for (std::size_t k = 0; k < b.size() / 2; ++k) {
                float v;
                std::memcpy(&v, t.data.data() + 4 * k, 4);
                const std::uint16_t h = f32_to_bf16(v);
                std::memcpy(b.data() + 2 * k, &h, 2);
            }
            t.data = std::move(b);
            t.dtype = DType::bf16;
        }
        const std::string bf = run.toStdString() + "/model-bf16.safetensors";
        write_safetensors(bf, f);
        QVERIFY(!check("llama3", bf, "f32").empty());
        QVERIFY(!check("llama3", bf, "bf16").empty());
    }

    // A Qwen2-shaped model: q/k/v biases, tied head, the Qwen2 tokenizer.json (pre-tokenizer qwen2).
    void qwen2ShapedFolder() {
        if (!have_tokenizers_) QSKIP(qPrintable("the reference tokenizers could not be made: " + tokenizer_skip_));
        const std::string folder = config_folder(
            "qwen2-config",
            {{"architectures", {"Qwen2ForCausalLM"}}, {"model_type", "qwen2"}, {"vocab_size", 576}, {"hidden_size", 128},
             {"intermediate_size", 256}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
             {"rms_norm_eps", 1e-6}, {"rope_theta", 1000000.0}, {"tie_word_embeddings", true},
             {"max_position_embeddings", 32768}, {"torch_dtype", "float32"}},
            "qwen2");
        std::ofstream(folder + "/tokenizer_config.json") << json{{"chat_template", kOwnTemplate}}.dump();
        const QString run = QString::fromStdString(dir_ + "/qwen2");
        QVERIFY(train(run, {"--model-config", QString::fromStdString(folder), "--tokenizer",
                            QString::fromStdString(folder + "/tokenizer.json"), "--steps", QString::number(kFolderSteps)},
                      false, kQwen2Lr));
        QVERIFY(!check("qwen2", run.toStdString() + "/model.safetensors", "f16").empty());
    }

    // A LLaMA-2-shaped model (multi-head attention, untied head, rope theta 10000) with a SentencePiece BPE
    // tokenizer.model trained here by spm_train (Debian's sentencepiece) as LLaMA 2's is: <unk> <s> </s>,
    // byte fallback, digits split, identity normalization, repeated spaces kept, a dummy prefix. Written as
    // tokenizer.ggml.model "llama" (pieces, scores, types; <s> added at the start). Also: Headroom's own
    // bpe:N (a SentencePiece BPE without a dummy prefix) tokenizes as llama.cpp does, and a unigram model is
    // refused with nothing written.
    void llama2SentencePieceFolder() {
        const QString spm = QStringLiteral("/usr/bin/spm_train");
        if (!QFileInfo::exists(spm)) QSKIP("no spm_train (Debian's sentencepiece) to make a tokenizer.model");
        const std::string folder = dir_ + "/llama2-config";
        fs::create_directories(folder);
        {  // the training text: fortunes and the test's text
            std::ofstream t(dir_ + "/spm-text.txt", std::ios::binary);
            for (const char* f : {"/usr/share/games/fortunes/computers", "/usr/share/games/fortunes/science"}) t << std::ifstream(f).rdbuf();
            t << kText << "\n";
        }
        auto spm_train = [&](const std::string& prefix, const QString& type) {
            const auto r = hrtest::run_program(spm, {"--input=" + QString::fromStdString(dir_ + "/spm-text.txt"),
                                                     "--model_prefix=" + QString::fromStdString(prefix), "--vocab_size=600",
                                                     "--model_type=" + type, "--character_coverage=1.0", "--byte_fallback=true",
                                                     "--split_digits=true", "--normalization_rule_name=identity",
                                                     "--remove_extra_whitespaces=false", "--add_dummy_prefix=true",
                                                     "--allow_whitespace_only_pieces=true", "--unk_id=0", "--bos_id=1",
                                                     "--eos_id=2", "--minloglevel=2", "--num_threads=2"},
                                               QString(), 300000);
            if (r.exit_code != 0) qWarning("%s", qPrintable(r.output));
            return r.exit_code == 0;
        };
        QVERIFY(spm_train(folder + "/tokenizer", "bpe"));
        std::ofstream(folder + "/config.json")
            << json{{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"vocab_size", 600},
                    {"hidden_size", 128}, {"intermediate_size", 256}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                    {"num_key_value_heads", 4}, {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0},
                    {"tie_word_embeddings", false}, {"max_position_embeddings", 4096}, {"torch_dtype", "float32"}}
                   .dump(2);
        const QString run = QString::fromStdString(dir_ + "/llama2");
        QVERIFY(train(run, {"--model-config", QString::fromStdString(folder), "--tokenizer",
                            QString::fromStdString(folder + "/tokenizer.model"), "--steps", QString::number(kFolderSteps)},
                      false, kFolderLr));
        QVERIFY(!check("llama2-spm", run.toStdString() + "/model.safetensors", "f16").empty());

        // Headroom's bpe:N: the tokenizer only (one step)
        const QString bpe = QString::fromStdString(dir_ + "/bpe");
        QVERIFY(train(bpe, {"--model-config", QString::fromStdString(folder), "--tokenizer", "bpe:400", "--steps", "1"}, true));
        const std::string bpe_gguf = dir_ + "/bpe.gguf";
        const auto e = headroom({"export", bpe, "--gguf", QString::fromStdString(bpe_gguf), "--type", "f32"});
        QVERIFY2(e.exit_code == 0, qPrintable(e.output));
        const json r = llama({{"model", bpe_gguf}, {"context", 64}, {"texts", {kText}}});
        QVERIFY(!r.is_null());
        const auto mine = load_tokenizer("bpe:400", bpe.toStdString())->encode(kText);
        QCOMPARE(r["texts"][0].get<std::vector<std::int32_t>>(), mine);
        qInfo("bpe:400 (SentencePiece, no dummy prefix) f32: tokenizer %d ids equal", int(mine.size()));

        // a unigram model: refused, nothing written
        const std::string uni = dir_ + "/unigram";
        fs::create_directories(uni);
        QVERIFY(spm_train(uni + "/tokenizer", "unigram"));
        const QString urun = QString::fromStdString(dir_ + "/unigram-run");
        QVERIFY(train(urun, {"--model-config", QString::fromStdString(folder), "--tokenizer",
                             QString::fromStdString(uni + "/tokenizer.model"), "--steps", "1"}, true));
        const QString out = QString::fromStdString(dir_ + "/unigram.gguf");
        const auto u = headroom({"export", urun, "--gguf", out});
        QCOMPARE(u.exit_code, 2);
        QVERIFY2(u.output.contains("unigram"), qPrintable(u.output));
        QVERIFY(!QFileInfo::exists(out));
    }

    // The chat template. --ollama: the Modelfile's TEMPLATE, rendered by Go's text/template as Ollama renders it,
    // gives Headroom's own rendering of two conversations (--chat-template llama3 / chatml / mistral / plain)
    // up to the assistant's turn (<|begin_of_text|> and <s> are llama.cpp's to add: add_bos_token). The GGUF's
    // tokenizer.chat_template, as llama.cpp's loader reads it, rendered by Jinja (python3-jinja2, as
    // transformers' apply_chat_template) with add_generation_prompt gives the same text with the BOS. A
    // tokenizer_config.json with its own chat_template in the model folder is carried over as it is.
    void chatTemplates() {
        const QString go = QStringLiteral("/usr/bin/go");
        if (!QFileInfo::exists(go)) QSKIP("no Go (Debian's golang) to render the Modelfile's template");
        const std::vector<std::vector<ChatMessage>> conversations = {
            {{"system", "You are terse."}, {"user", "What is 2+2?"}, {"assistant", "4"}, {"user", "And 3+3?"}},
            {{"user", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x99\x82 hello  world\nsecond line"}}};
        struct Case {
            std::string run, name, stop, bos, eos;
        };
        int checked = 0, jinja = 0;
        for (const Case& c : {Case{"llama3", "llama3", "<|eot_id|>", "<|begin_of_text|>", "<|eot_id|>"},
                              Case{"qwen2-named", "chatml", "<|im_end|>", "", "<|im_end|>\n"},
                              Case{"llama2", "mistral", "</s>", "<s>", "</s>"}, Case{"tiny", "plain", "", "", ""}}) {
            std::string weights = dir_ + "/" + c.run + "/model.safetensors";
            if (c.run == "qwen2-named") {  // the Qwen2 run without its folder's tokenizer_config.json: the named ChatML
                if (!fs::exists(dir_ + "/qwen2/model.safetensors")) continue;
                fs::create_directories(dir_ + "/qwen2-named");
                for (const char* f : {"model.safetensors", "tokenizer.json"})
                    fs::copy_file(dir_ + "/qwen2/" + f, dir_ + "/qwen2-named/" + f, fs::copy_options::overwrite_existing);
            }
            if (!fs::exists(weights)) continue;  // its case skipped or failed above
            const std::string out = dir_ + "/ollama-" + c.run;
            fs::create_directories(out);
            const auto e = headroom({"export", QString::fromStdString(weights), "--gguf", QString::fromStdString(out + "/m.gguf"),
                                     "--type", "q8_0", "--ollama"});
            QVERIFY2(e.exit_code == 0, qPrintable(e.output));
            std::stringstream mf;
            mf << std::ifstream(out + "/Modelfile").rdbuf();
            QVERIFY2(mf.str().rfind("FROM ./m.gguf\n", 0) == 0, mf.str().c_str());
            QCOMPARE(mf.str().find("PARAMETER stop \"" + c.stop + "\"") != std::string::npos, !c.stop.empty());
            const json meta = llama({{"model", out + "/m.gguf"}, {"context", 64}});
            QVERIFY(!meta.is_null());
            QCOMPARE(meta["chat_template"].is_string(), c.name != "plain");
            for (const auto& conv : conversations) {
                std::ofstream(out + "/conversation.json") << [&] {
                    json j = json::array();
                    for (const auto& m : conv) j.push_back({{"role", m.role}, {"content", m.content}});
                    return j.dump();
                }();
                QProcess p;
                QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
                env.insert("GOCACHE", QString::fromStdString(dir_ + "/gocache"));
                env.insert("HOME", QString::fromStdString(dir_));
                p.setProcessEnvironment(env);
                p.start(go, {"run", hrtest::qsource_path("tests/support/ollama_template.go"),
                             QString::fromStdString(out + "/Modelfile"), QString::fromStdString(out + "/conversation.json")});
                QVERIFY(p.waitForFinished(300000));
                QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
                const std::string theirs = p.readAllStandardOutput().toStdString();
                // Headroom's rendering with an empty assistant turn, cut before the token that ends it
                auto with_turn = conv;
                with_turn.push_back({"assistant", ""});
                std::string mine = chat_text(render_chat(c.name, with_turn));
                QVERIFY(mine.size() > c.eos.size() && mine.substr(mine.size() - c.eos.size()) == c.eos);
                mine.resize(mine.size() - c.eos.size());
                if (meta["chat_template"].is_string()) {  // Jinja, BOS included
                    std::ofstream(out + "/template.jinja", std::ios::binary) << meta["chat_template"].get<std::string>();
                    QProcess py;
                    py.start(QStringLiteral("/usr/bin/python3"),
                             {"-c", "import sys, json, jinja2\n"
                                    "env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)\n"
                                    "t = env.from_string(open(sys.argv[1], encoding='utf-8').read())\n"
                                    "sys.stdout.buffer.write(t.render(messages=json.load(open(sys.argv[2], encoding='utf-8')), "
                                    "add_generation_prompt=True, bos_token=sys.argv[3], eos_token=sys.argv[4]).encode())\n",
                              QString::fromStdString(out + "/template.jinja"), QString::fromStdString(out + "/conversation.json"),
                              QString::fromStdString(c.bos), QString::fromStdString(c.stop)});
                    QVERIFY(py.waitForFinished(60000));
                    if (py.exitCode() != 0 && py.readAllStandardError().contains("No module named 'jinja2'"))
                        QSKIP("no python3-jinja2 to render the chat template");
                    QCOMPARE(QString::fromUtf8(py.readAllStandardOutput()), QString::fromStdString(mine));
                    ++jinja;
                }
                QVERIFY(mine.rfind(c.bos, 0) == 0);
                mine = mine.substr(c.bos.size());
                QCOMPARE(QString::fromStdString(theirs), QString::fromStdString(mine));
                ++checked;
            }
        }
        qInfo("Modelfile templates rendered by Go equal Headroom's rendering: %d conversations; the GGUF's Jinja "
              "templates: %d", checked, jinja);
        if (checked == 0) QSKIP("no run to export (the cases above skipped)");
        // the model folder's tokenizer_config.json: its chat_template goes into the file as it is
        if (fs::exists(dir_ + "/qwen2/model.safetensors")) {
            QVERIFY(fs::exists(dir_ + "/qwen2/tokenizer_config.json"));  // copied by the training run
            const auto e = headroom({"export", QString::fromStdString(dir_ + "/qwen2"), "--gguf",
                                     QString::fromStdString(dir_ + "/qwen2-own.gguf"), "--type", "q8_0"});
            QVERIFY2(e.exit_code == 0, qPrintable(e.output));
            const json meta = llama({{"model", dir_ + "/qwen2-own.gguf"}, {"context", 64}});
            QCOMPARE(QString::fromStdString(meta["chat_template"].get<std::string>()), QString::fromStdString(kOwnTemplate));
        }
    }

    // What GGUF cannot hold is refused in one message, and no file is left.
    void refusesWhatItCannotExpress() {
        const QString gpt = QString::fromStdString(dir_ + "/gpt"), chr = QString::fromStdString(dir_ + "/char");
        QVERIFY(train(gpt, {"--preset", "gpt-tiny", "--steps", "1"}, true));
        QVERIFY(train(chr, {"--preset", "llama-tiny", "--tokenizer", "char", "--steps", "1"}, true));
        const QString out = QString::fromStdString(dir_ + "/refused.gguf");
        auto r = headroom({"export", gpt, "--gguf", out});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.output.contains("not in the LLaMA layout"), qPrintable(r.output));
        r = headroom({"export", chr, "--gguf", out});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.output.contains("char"), qPrintable(r.output));
        QVERIFY(!QFileInfo::exists(out));
        for (const auto& e : fs::directory_iterator(dir_)) QVERIFY(!is_atomic_temp_name(e.path().filename().string()));
    }
};

QTEST_GUILESS_MAIN(GgufLlamaCppTest)
#include "test_gguf_llama_cpp.moc"
