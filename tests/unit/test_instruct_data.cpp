// Instruction data (issue 46): the chat templates against the families' published formats written out
// here, the JSONL reader's one message per malformed row, the windows' loss mask (pad and pack) against a
// hand computation, and the masked cross-entropy against PyTorch's cross_entropy(ignore_index=-100)
// (tests/support/masked_cross_entropy.py).
#include <QtTest>

#include <cmath>
#include <fstream>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "data/chat_template.h"
#include "data/instruct_data.h"
#include "memory/ledger.h"
#include "tensor/tensor.h"
#include "nn/transformer_spec.h"
#include "test_support.h"
#include "train/trainer.h"

using namespace hr;

namespace {

// Bytes as ids 0..255, and the templates' special tokens as 256, 257, ... (as a family's tokenizer has them).
class SpecialByteTokenizer : public Tokenizer {
public:
    std::string kind() const override { return "test"; }
    std::int64_t vocab_size() const override { return 256 + static_cast<std::int64_t>(specials().size()); }
    std::int32_t special_id(const std::string& t) const override {
        for (std::size_t i = 0; i < specials().size(); ++i)
            if (specials()[i] == t) return 256 + static_cast<std::int32_t>(i);
        return -1;
    }
    std::vector<std::int32_t> encode(const std::string& text) const override {
        std::vector<std::int32_t> v;
        for (unsigned char c : text) v.push_back(c);
        return v;
    }
    std::string decode(const std::vector<std::int32_t>& ids) const override {
        std::string s;
        for (auto i : ids) s += i < 256 ? std::string(1, static_cast<char>(i)) : specials()[static_cast<std::size_t>(i - 256)];
        return s;
    }
    std::string file_name() const override { return ""; }
    void save(const std::string&) const override {}
    static const std::vector<std::string>& specials() {
        static const std::vector<std::string> s = {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                                                   "<|eot_id|>", "<|im_start|>", "<|im_end|>", "<s>", "</s>"};
        return s;
    }
};

const std::vector<ChatMessage> kConversation = {
    {"system", "Be brief."}, {"user", "  What is 2+2? "}, {"assistant", "4"}, {"user", "And 3+3?"}, {"assistant", "6."}};


std::string write_jsonl(const std::string& name, const std::string& text) {
    const std::string p = hrtest::temp_dir("jsonl") + "/" + name;
    std::ofstream f(p, std::ios::binary);
    f << text;
    return p;
}

LayerSpec layer(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

// Rows to learn: "kN:" and the word for N (a lookup the model picks up within a hundred steps); 60 rows,
// every tenth for validation (each of its prompts is also a training row).
std::string lookup_rows(std::int64_t* completion_bytes) {
    static const char* const words[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"};
    std::string text;
    std::int64_t bytes = 0;
    for (int i = 0; i < 60; ++i) {
        const std::string answer = std::string(words[i % 6]) + ".";
        text += "{\"prompt\": \"k" + std::to_string(i % 6) + ":\", \"completion\": \"" + answer + "\"}\n";
        if (i % 10 != 9) bytes += static_cast<std::int64_t>(answer.size());
    }
    *completion_bytes = bytes;
    return write_jsonl("lookup.jsonl", text);
}

TrainConfig instruct_config(const std::string& path) {
    TrainConfig c;
    c.model.name = "gpt-test";
    c.model.input_shape = {16};
    c.model.num_classes = 256;
    c.model.layers = {layer("token_embedding", {{"vocab_size", 256}, {"dim", 32}}),
                      layer("position_embedding", {{"max_positions", 16}, {"dim", 32}}),
                      layer("transformer_block", {{"dim", 32}, {"heads", 2}}),
                      layer("layernorm", {{"dim", 32}}), layer("lm_head", {{"dim", 32}, {"vocab_size", 256}})};
    c.data = "jsonl:" + path;
    c.steps = 120;
    c.batch = 8;
    c.threads = 2;
    c.seed = 5;
    c.optimizer.kind = "adamw";
    c.optimizer.lr = 1e-2;
    c.seq = 12;
    c.eval_every = 0;
    c.eval_tokens = 0;
    return c;
}

}  // namespace

class InstructDataTest : public QObject {
    Q_OBJECT

private slots:
    // The published formats, written out by hand: Meta's Llama 3 prompt format, ChatML as Qwen2 writes it,
    // Mistral's [INST] (its v0.1 chat_template, a system message before the first user turn as v0.3 does).
    void templatesWriteThePublishedFormats() {
        QCOMPARE(chat_text(render_chat("llama3", kConversation)),
                 std::string("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                             "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
                             "<|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>"
                             "<|start_header_id|>user<|end_header_id|>\n\nAnd 3+3?<|eot_id|>"
                             "<|start_header_id|>assistant<|end_header_id|>\n\n6.<|eot_id|>"));
        QCOMPARE(chat_text(render_chat("chatml", kConversation)),
                 std::string("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n  What is 2+2? <|im_end|>\n"
                             "<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n"
                             "<|im_start|>assistant\n6.<|im_end|>\n"));
        QCOMPARE(chat_text(render_chat("mistral", kConversation)),
                 std::string("<s>[INST] Be brief.\n\n  What is 2+2?  [/INST]4</s>[INST] And 3+3? [/INST]6.</s>"));
        QCOMPARE(chat_text(render_chat("plain", kConversation)), std::string("Be brief.  What is 2+2? 4And 3+3?6."));
    }

    // The loss is on the assistant's tokens and the token ending its turn, nothing else; special tokens are
    // single ids.
    void maskCoversTheAnswersOnly() {
        SpecialByteTokenizer tok;
        for (const char* t : {"llama3", "chatml", "mistral"}) {
            std::vector<std::int32_t> ids;
            std::vector<unsigned char> tr;
            encode_chat(render_chat(t, kConversation), tok, ids, tr);
            QCOMPARE(ids.size(), tr.size());
            std::vector<std::int32_t> trained;
            for (std::size_t i = 0; i < ids.size(); ++i)
                if (tr[i]) trained.push_back(ids[i]);
            const std::string end = std::string(t) == "llama3" ? "<|eot_id|>" : std::string(t) == "chatml" ? "<|im_end|>" : "</s>";
            QCOMPARE(tok.decode(trained), "4" + end + "6." + end);
            QCOMPARE(tok.decode(ids), chat_text(render_chat(t, kConversation)));  // specials as one id each
            QVERIFY(std::count_if(ids.begin(), ids.end(), [](std::int32_t i) { return i >= 256; }) >= 3);
        }
    }

    // Windows: x is the row's tokens, y the next token where it is trained, -100 elsewhere and in the padding.
    void windowsPadAndPack() {
        SpecialByteTokenizer tok;
        const std::vector<InstructRow> rows = {{1, {{"user", "ab"}, {"assistant", "cd"}}},
                                               {2, {{"user", "x"}, {"assistant", "yz!"}}}};
        const TokenWindows pad = make_token_windows(rows, "plain", tok, 6, "pad");
        QCOMPARE(pad.windows(), std::int64_t(2));
        const std::vector<std::int32_t> x0 = {'a', 'b', 'c', 'd', 0, 0}, y0 = {-100, 'c', 'd', -100, -100, -100};
        const std::vector<std::int32_t> x1 = {'x', 'y', 'z', '!', 0, 0}, y1 = {'y', 'z', '!', -100, -100, -100};
        QVERIFY(std::vector<std::int32_t>(pad.x.begin(), pad.x.begin() + 6) == x0);
        QVERIFY(std::vector<std::int32_t>(pad.y.begin(), pad.y.begin() + 6) == y0);
        QVERIFY(std::vector<std::int32_t>(pad.x.begin() + 6, pad.x.end()) == x1);
        QVERIFY(std::vector<std::int32_t>(pad.y.begin() + 6, pad.y.end()) == y1);
        QCOMPARE(pad.counted, (std::vector<std::int32_t>{2, 3}));
        QCOMPARE(pad.trained_tokens, std::int64_t(5));
        QCOMPARE(pad.tokens, std::int64_t(8));
        QCOMPARE(pad.truncated, std::int64_t(0));
        // a window of 3: the first row (4 tokens) fits x + the last target; the second (4) too; none cut
        const TokenWindows cut = make_token_windows(rows, "plain", tok, 2, "pad");
        QCOMPARE(cut.truncated, std::int64_t(2));
        QVERIFY(cut.y == (std::vector<std::int32_t>{-100, 'c', 'y', 'z'}));
        // packed: "abcdxyz!" in windows of 3 (x = 3 tokens, y the next 3): abc|dxy, targets from bcd|xyz
        const TokenWindows pack = make_token_windows(rows, "plain", tok, 3, "pack");
        QCOMPARE(pack.windows(), std::int64_t(2));
        QVERIFY(pack.x == (std::vector<std::int32_t>{'a', 'b', 'c', 'd', 'x', 'y'}));
        QVERIFY(pack.y == (std::vector<std::int32_t>{-100, 'c', 'd', -100, 'y', 'z'}));
        // the batcher: a step's counted targets are those of the global batch's windows
        MemoryLedger ledger;
        WindowBatcher b(pad, 3, 7, &ledger, "training");
        QCOMPARE(ledger.snapshot().live[static_cast<int>(MemCategory::data)], std::size_t(2 * 3 * 6 * 8));
        b.random_batch(5);
        std::int64_t c = 0;
        for (std::int64_t r = 0; r < 3; ++r) c += pad.counted[static_cast<std::size_t>(b.window_of(5, r))];
        QCOMPARE(b.step_counted(), c);
        for (std::int64_t r = 0; r < 3; ++r)
            QCOMPARE(b.y()[static_cast<std::size_t>(r * 6 + 1)], std::int64_t(b.window_of(5, r) == 0 ? 'c' : 'z'));
    }

    // One message naming the line and what is wrong, for each kind of malformed row.
    void malformedRowsNameTheirLine_data() {
        QTest::addColumn<QString>("row");
        QTest::addColumn<QString>("says");
        QTest::newRow("not json") << "{\"prompt\": " << "not valid JSON";
        QTest::newRow("array") << "[1, 2]" << "not a JSON object";
        QTest::newRow("no completion") << "{\"prompt\": \"hi\"}" << "\"completion\" is missing";
        QTest::newRow("empty completion") << "{\"prompt\": \"hi\", \"completion\": \"\"}" << "\"completion\" is empty";
        QTest::newRow("number") << "{\"prompt\": \"hi\", \"completion\": 4}" << "\"completion\" is missing or not a string";
        QTest::newRow("other keys") << "{\"text\": \"hi\"}" << "none of \"prompt\"/\"completion\", \"messages\"";
        QTest::newRow("no assistant") << "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}" << "no assistant";
        QTest::newRow("bad role") << "{\"messages\": [{\"role\": \"bot\", \"content\": \"hi\"}]}" << "role 'bot'";
        QTest::newRow("bad message") << "{\"messages\": [{\"role\": \"user\"}]}" << "a message is not";
        QTest::newRow("empty messages") << "{\"messages\": []}" << "non-empty list";
    }
    void malformedRowsNameTheirLine() {
        QFETCH(QString, row);
        QFETCH(QString, says);
        const std::string good = "{\"prompt\": \"2+2=\", \"completion\": \"4\"}\n";
        const std::string text = good + "\n" + good + row.toStdString() + "\n" + good;
        try {
            parse_instruct_data(text, "rows.jsonl");
            QFAIL("accepted");
        } catch (const InputError& e) {
            const std::string m = e.what();
            QVERIFY2(m.rfind("line 4 of rows.jsonl: ", 0) == 0, m.c_str());
            QVERIFY2(m.find(says.toStdString()) != std::string::npos, m.c_str());
        }
    }

    // Alpaca and ShareGPT rows, a row a line and as one JSON array: the same conversation as the Llama 3
    // template writes it, written out here by hand from the layouts' definitions (Alpaca: the user turn is
    // the instruction, a line break and the input; ShareGPT: human -> user, gpt -> assistant), the loss on
    // the answer and <|eot_id|> only. The layout is the first row's.
    void alpacaAndShareGptLayouts() {
        SpecialByteTokenizer tok;
        const std::string hdr = "<|start_header_id|>", end_hdr = "<|end_header_id|>\n\n", eot = "<|eot_id|>";
        const std::string want_alpaca = "<|begin_of_text|>" + hdr + "system" + end_hdr + "Be brief." + eot + hdr +
                                        "user" + end_hdr + "Add the numbers.\n2 and 3" + eot + hdr + "assistant" +
                                        end_hdr + "5" + eot;
        const std::string want_share = "<|begin_of_text|>" + hdr + "system" + end_hdr + "Be brief." + eot + hdr +
                                       "user" + end_hdr + "Hi" + eot + hdr + "assistant" + end_hdr + "Hello." + eot +
                                       hdr + "user" + end_hdr + "2+2?" + eot + hdr + "assistant" + end_hdr + "4" + eot;
        const std::string alpaca_row =
            R"({"system": "Be brief.", "instruction": "Add the numbers.", "input": "2 and 3", "output": "5"})";
        const std::string alpaca_no_input = R"({"instruction": "Say hi", "input": "", "output": "hi"})";
        const std::string share_row =
            R"({"conversations": [{"from": "system", "value": "Be brief."}, {"from": "human", "value": "Hi"}, )"
            R"({"from": "gpt", "value": "Hello."}, {"from": "human", "value": "2+2?"}, {"from": "gpt", "value": "4"}]})";
        struct Case {
            std::string text, first, trained;
            InstructLayout layout;
            bool array;
        };
        const std::vector<Case> cases = {
            {alpaca_row + "\n" + alpaca_no_input + "\n", want_alpaca, "5" + eot, InstructLayout::alpaca, false},
            {"[\n  " + alpaca_row + ",\n  " + alpaca_no_input + "\n]\n", want_alpaca, "5" + eot, InstructLayout::alpaca, true},
            {"\xEF\xBB\xBF" + share_row + "\n\n" + share_row + "\n", want_share, "Hello." + eot + "4" + eot,
             InstructLayout::sharegpt, false},
            {"[" + share_row + ", " + share_row + "]", want_share, "Hello." + eot + "4" + eot, InstructLayout::sharegpt, true},
        };
        for (const Case& c : cases) {
            const InstructRows r = parse_instruct_data(c.text, "rows");
            QCOMPARE(r.layout, c.layout);
            QCOMPARE(r.json_array, c.array);
            QCOMPARE(r.train.size(), std::size_t(2));
            const auto parts = render_chat("llama3", r.train[0].messages);
            QCOMPARE(chat_text(parts), c.first);
            std::vector<std::int32_t> ids;
            std::vector<unsigned char> tr;
            encode_chat(parts, tok, ids, tr);
            std::vector<std::int32_t> trained;
            for (std::size_t i = 0; i < ids.size(); ++i)
                if (tr[i]) trained.push_back(ids[i]);
            QCOMPARE(tok.decode(trained), c.trained);
        }
        // Alpaca without an input: the instruction alone is the user turn
        const InstructRows r = parse_instruct_data(alpaca_row + "\n" + alpaca_no_input + "\n", "rows");
        QCOMPARE(r.train[1].messages.size(), std::size_t(2));
        QCOMPARE(r.train[1].messages[0].content, std::string("Say hi"));
        QCOMPARE(r.train[1].line, std::int64_t(2));
        // a JSON array's rows know their element and line
        const InstructRows a = parse_instruct_data("[\n  " + alpaca_row + ",\n\n  " + alpaca_no_input + "\n]\n", "rows");
        QCOMPARE(a.train[1].element, std::int64_t(2));
        QCOMPARE(a.train[1].line, std::int64_t(4));
        QCOMPARE(std::string(instruct_layout_name(InstructLayout::sharegpt)), std::string("ShareGPT"));
    }

    // A bad row of the new layouts, in JSONL (its line) and in a JSON array (its element and line), and a
    // row in another layout than the first row's.
    void badRowsOfTheNewLayouts_data() {
        QTest::addColumn<QString>("row");
        QTest::addColumn<QString>("says");
        QTest::newRow("no output") << R"({"instruction": "a", "input": "b"})" << "\"output\" is missing";
        QTest::newRow("empty output") << R"({"instruction": "a", "output": ""})" << "\"output\" is empty";
        QTest::newRow("empty instruction") << R"({"instruction": "", "input": "", "output": "x"})" << "both empty";
        QTest::newRow("input number") << R"({"instruction": "a", "input": 3, "output": "x"})" << "\"input\" is not a string";
        QTest::newRow("bad from") << R"({"conversations": [{"from": "bot", "value": "x"}]})" << "'bot' is not system, human or gpt";
        QTest::newRow("no gpt") << R"({"conversations": [{"from": "human", "value": "x"}]})" << "no gpt turn";
        QTest::newRow("bad turn") << R"({"conversations": [{"from": "human"}]})" << "a turn is not";
        QTest::newRow("other layout") << R"({"prompt": "a", "completion": "b"})" << "prompt/completion layout in a file of";
        QTest::newRow("unknown") << R"({"text": "a"})" << "none of";
    }
    void badRowsOfTheNewLayouts() {
        QFETCH(QString, row);
        QFETCH(QString, says);
        const bool share = row.contains(QStringLiteral("conversations"));
        const std::string good = share ? R"({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]})"
                                       : R"({"instruction": "2+2", "output": "4"})";
        // the first row sets the layout: a ShareGPT file for the ShareGPT rows, else Alpaca
        for (bool array : {false, true}) {
            const std::string text = array ? "[\n" + good + ",\n\n" + good + ",\n" + row.toStdString() + ",\n" + good + "\n]"
                                           : good + "\n\n" + good + "\n" + row.toStdString() + "\n" + good + "\n";
            try {
                parse_instruct_data(text, "rows.json");
                QFAIL("accepted");
            } catch (const InputError& e) {
                const std::string m = e.what();
                const std::string at = array ? "element 3 (line 5) of rows.json: " : "line 4 of rows.json: ";
                QVERIFY2(m.rfind(at, 0) == 0, m.c_str());
                QVERIFY2(m.find(says.toStdString()) != std::string::npos, m.c_str());
            }
        }
    }

    // A .json file that is not a valid array names the line near the fault; nothing is read.
    void brokenJsonArray() {
        try {
            parse_instruct_data("[\n{\"instruction\": \"a\", \"output\": \"b\"},\n{\"instruction\": \"a\" \"output\": \"b\"}\n]", "rows.json");
            QFAIL("accepted");
        } catch (const InputError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("rows.json starts a JSON list but is not valid JSON (near line 3)") != std::string::npos, m.c_str());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, parse_instruct_data("[]", "rows.json"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_instruct_data("[1, 2]", "rows.json"));
    }

    // A run reads a .json array of Alpaca rows through jsonl:FILE and names the layout in its log.
    void trainsOnAnAlpacaArray() {
        std::string text = "[\n";
        for (int i = 0; i < 12; ++i)
            text += std::string(i ? ",\n" : "") + "{\"instruction\": \"k" + std::to_string(i % 3) +
                    "\", \"input\": \"\", \"output\": \"v" + std::to_string(i % 3) + "\"}";
        text += "\n]\n";
        const std::string path = write_jsonl("alpaca.json", text);
        TrainConfig c = instruct_config(path);
        c.steps = 3;
        std::vector<std::string> lines;
        c.chat_template = "plain";
        TrainCallbacks cb;
        cb.on_log = [&](const LogEvent& e) { lines.push_back(e.message); };
        TrainResult r = Trainer(c, cb).run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        // plain template, byte tokenizer: the answers' bytes of the 11 training rows ("vN" each)
        QCOMPARE(r.trained_tokens, std::int64_t(11 * 2));
        bool named = false;
        for (const auto& l : lines) named = named || l == path + ": a JSON array of rows in the Alpaca layout (detected from the first row)";
        QVERIFY(named);
    }

    void rowsAndSplit() {
        std::string text;
        for (int i = 0; i < 25; ++i)
            text += i % 2 ? "{\"prompt\": \"p" + std::to_string(i) + "\", \"completion\": \"c\"}\n"
                          : "{\"messages\": [{\"role\": \"user\", \"content\": \"u" + std::to_string(i) +
                                "\"}, {\"role\": \"assistant\", \"content\": \"a\"}]}\r\n";
        const std::string path = write_jsonl("rows.jsonl", text);
        const InstructRows r = load_instruct_rows("jsonl:" + path);
        QCOMPARE(r.train.size(), std::size_t(23));
        QCOMPARE(r.validation.size(), std::size_t(2));
        QCOMPARE(r.validation[0].line, std::int64_t(10));
        QCOMPARE(r.validation[1].messages[0].content, std::string("p19"));
        QCOMPARE(r.train[1].messages[1].role, std::string("assistant"));
        QVERIFY_THROWS_EXCEPTION(InputError, load_instruct_rows("jsonl:" + path + ".missing"));
        // Mistral needs alternating turns
        InstructRow bad{7, {{"user", "a"}, {"user", "b"}, {"assistant", "c"}}};
        QVERIFY_THROWS_EXCEPTION(InputError, check_chat_roles("mistral", bad, "f"));
        check_chat_roles("chatml", bad, "f");
        QVERIFY_THROWS_EXCEPTION(InputError, validate_chat_template("jinja"));
        QVERIFY_THROWS_EXCEPTION(InputError, validate_sequence_layout("stack"));
    }

    // A run on instruction rows: it learns the answers (the validation loss, on the answers only, falls),
    // run.json says what was chosen, and the loss of a step is the mean over the global batch's counted
    // targets: the same with micro-batches of 2 as with the whole batch at once.
    void trainsOnTheAnswers() {
        std::int64_t completion_bytes = 0;
        const std::string path = lookup_rows(&completion_bytes);
        TrainConfig c = instruct_config(path);
        c.chat_template = "auto";
        c.eval_every = 5;
        TrainResult r = Trainer(c).run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QCOMPARE(r.chat_template, std::string("plain"));  // the byte tokenizer has no special tokens
        QCOMPARE(r.sequences, std::string("pad"));
        QCOMPARE(r.trained_tokens, completion_bytes);      // the answers' bytes, nothing else
        QCOMPARE(r.truncated_rows, std::int64_t(0));
        QVERIFY(r.evals.size() >= 2);
        // from about ln 256 (5.5 nats, any byte) at the start to the answers nearly known
        QVERIFY2(r.evals.front().loss > 1.0 && r.evals.back().loss < 0.2,
                 qPrintable(QString("%1 -> %2").arg(r.evals.front().loss).arg(r.evals.back().loss)));
        // micro-batches: the first steps' losses equal the whole batch's
        auto losses = [&](std::int64_t micro) {
            TrainConfig k = instruct_config(path);
            k.steps = 3;
            k.sequences = "pack";
            k.strategy.micro_batch = micro;
            std::vector<double> l;
            TrainCallbacks cb;
            cb.on_step = [&](const StepEvent& e) { l.push_back(e.loss); };
            Trainer t(k, cb);
            const TrainResult res = t.run();
            if (res.status != "finished") qWarning("%s", res.error.c_str());
            return l;
        };
        const auto whole = losses(0), micro = losses(2);
        QCOMPARE(whole.size(), std::size_t(3));
        QCOMPARE(micro.size(), std::size_t(3));
        for (std::size_t i = 0; i < 3; ++i)
            QVERIFY2(std::fabs(whole[i] - micro[i]) < 1e-5 * std::fabs(whole[i]),
                     qPrintable(QString("step %1: %2 vs %3").arg(i).arg(whole[i], 0, 'g', 10).arg(micro[i], 0, 'g', 10)));
        // a malformed row: one message naming its line, nothing trained
        const std::string bad = write_jsonl("bad.jsonl", "{\"prompt\": \"1+1=\", \"completion\": \"2\"}\n{\"prompt\": \"x\"}\n");
        TrainConfig b = instruct_config(bad);
        try {
            Trainer(b).run();
            QFAIL("accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("line 2 of") != std::string::npos, e.what());
        }
    }

    // The masked loss as the token workload takes it (the op's sum over N rows, times N / counted) equals
    // PyTorch's cross_entropy(ignore_index=-100), the loss and every gradient value.
    void maskedLossEqualsPyTorch() {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) QSKIP("no /usr/bin/python3 for the reference");
        const std::int64_t N = 37, V = 50;
        std::mt19937 gen(3);
        std::normal_distribution<float> nd(0.0f, 2.0f);
        std::vector<float> z(static_cast<std::size_t>(N * V));
        for (float& v : z) v = nd(gen);
        std::vector<std::int64_t> y(static_cast<std::size_t>(N));
        std::int64_t counted = 0;
        for (std::int64_t i = 0; i < N; ++i) {
            y[static_cast<std::size_t>(i)] = i % 3 == 0 || i > 30 ? -100 : static_cast<std::int64_t>(gen() % V);
            counted += y[static_cast<std::size_t>(i)] != -100;
        }
        const std::string dir = hrtest::temp_dir("masked_loss");
        {
            std::ofstream(dir + "/z.f32", std::ios::binary).write(reinterpret_cast<const char*>(z.data()), static_cast<std::streamsize>(z.size() * 4));
            std::ofstream(dir + "/y.i64", std::ios::binary).write(reinterpret_cast<const char*>(y.data()), static_cast<std::streamsize>(y.size() * 8));
        }
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"),
                 {hrtest::qsource_path("tests/support/masked_cross_entropy.py"), QString::fromStdString(dir + "/z.f32"),
                  QString::fromStdString(dir + "/y.i64"), QString::number(N), QString::number(V)});
        QVERIFY(py.waitForFinished(120000));
        if (py.exitCode() != 0 && py.readAllStandardError().contains("No module named 'torch'"))
            QSKIP("no PyTorch (python3-torch) for the reference");
        QCOMPARE(py.exitCode(), 0);
        const QList<QByteArray> lines = py.readAllStandardOutput().split('\n');
        QCOMPARE(lines.size(), 2);
        const double want_loss = lines[0].toDouble();
        const QByteArray want_grad = QByteArray::fromHex(lines[1]);
        QCOMPARE(want_grad.size(), qsizetype(N * V * 4));

        auto ledger = std::make_shared<MemoryLedger>();
        CpuBackend be(2, ledger);
        Tensor lz = Tensor::empty(be.allocator(), {N, V}, DType::f32, MemCategory::other);
        Tensor ly = Tensor::empty(be.allocator(), {N}, DType::i64, MemCategory::other);
        be.copy_from_host(z.data(), lz);
        be.copy_from_host(y.data(), ly);
        const double k = double(N) / double(counted);
        const LossResult r = be.cross_entropy_inplace(lz, ly, true, static_cast<float>(k));
        QVERIFY2(std::fabs(r.loss * k - want_loss) < 1e-5, qPrintable(QString("%1 vs %2").arg(r.loss * k).arg(want_loss)));
        std::vector<float> g(z.size());
        be.copy_to_host(lz, g.data());
        const float* wg = reinterpret_cast<const float*>(want_grad.constData());
        for (std::size_t i = 0; i < g.size(); ++i) {
            QVERIFY2(std::fabs(g[i] - wg[i]) <= 1e-6f, qPrintable(QString("grad %1: %2 vs %3").arg(i).arg(g[i]).arg(wg[i])));
            if (y[i / V] == -100) QCOMPARE(g[i], 0.0f);
        }
        // targets outside [0, V) that are not -100 are still refused
        y[0] = -1;
        be.copy_from_host(y.data(), ly);
        QVERIFY_THROWS_EXCEPTION(Error, be.cross_entropy_inplace(lz, ly, false, 1.0f));
    }
};

QTEST_GUILESS_MAIN(InstructDataTest)
#include "test_instruct_data.moc"
