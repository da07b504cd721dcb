// Text data and tokenizers: the fortunes corpus (separators, overstriking, the 90/10 split by fortune),
// text files (UTF-8 check, the cut at a line break), the token batcher's windows, and the byte, char and
// SentencePiece BPE tokenizers (exact round trips, files next to the weights).
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/text_data.h"
#include "data/tokenizer.h"
#include "memory/ledger.h"
#include "test_support.h"

using namespace hr;

namespace {
void write(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
}
std::string sample_text() {
    std::string s;
    for (int i = 0; i < 200; ++i)
        s += "Line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog, naïve café — 日本語.\n";
    return s;
}
}  // namespace

class TextDataTest : public QObject {
    Q_OBJECT

private slots:
    void fortunesFromAFolder() {
        // a folder of our own through HEADROOM_DATA_DIR: 20 fortunes in two files, overstriking, a .dat
        // index and a link that must be skipped
        const std::string root = hrtest::temp_dir("fortunes");
        std::filesystem::create_directories(root + "/fortunes");
        std::string a, b;
        for (int i = 0; i < 12; ++i) a += "Fortune a" + std::to_string(i) + "\nsecond line\n%\n";
        a += "_\bu_\bn_\bd_\be_\br_\bl_\bi_\bn_\be_\bd and B\bBo\bol\bld\bd\n%\n";  // 13th fortune: overstruck
        for (int i = 0; i < 7; ++i) b += "Fortune b" + std::to_string(i) + "\n%\n";
        write(root + "/fortunes/alpha", a);
        write(root + "/fortunes/beta", b);
        write(root + "/fortunes/alpha.dat", "binary index \x01\x02");
        std::filesystem::create_symlink(root + "/fortunes/alpha", root + "/fortunes/alpha.u8");
        qputenv("HEADROOM_DATA_DIR", QByteArray::fromStdString(root));
        TextCorpus c = load_text_corpus("text:fortunes");
        qunsetenv("HEADROOM_DATA_DIR");
        QCOMPARE(c.source, root + "/fortunes");
        QCOMPARE(c.documents, std::int64_t(20));
        // fortunes 9 and 19 (0-based) are the validation split: a9 and b6
        QCOMPARE(c.validation_text, std::string("Fortune a9\nsecond line\n\nFortune b6\n\n"));
        QVERIFY(c.train_text.find("underlined and Bold\n\n") != std::string::npos);
        QVERIFY(c.train_text.find('%') == std::string::npos);
        QVERIFY(c.train_text.find('\b') == std::string::npos);
        QVERIFY(c.train_text.rfind("Fortune a0\nsecond line\n\nFortune a1\n", 0) == 0);
        QVERIFY(c.train_text.find("index") == std::string::npos);  // no .dat
        // the link to alpha is not read twice
        const std::string all = c.all_text();
        QCOMPARE(static_cast<int>(std::count(all.begin(), all.end(), 'F')), 19);
    }

    void debiansFortunes() {
        if (!probe_text_data("text:fortunes").available) QSKIP("Debian's fortunes package is not installed");
        TextCorpus c = load_text_corpus("text:fortunes");
        const double total = double(c.train_text.size() + c.validation_text.size());
        QVERIFY2(total > 2.0e6 && total < 3.5e6, qPrintable(QString::number(total)));  // about 2.5 MB
        const double share = double(c.validation_text.size()) / total;
        QVERIFY2(share > 0.08 && share < 0.12, qPrintable(QString::number(share)));
        QVERIFY(c.documents > 5000);
        QVERIFY(c.train_text.find("\n%\n") == std::string::npos);
        QVERIFY(c.train_text.find('\b') == std::string::npos);
    }

    void textFile() {
        const std::string dir = hrtest::temp_dir("textfile");
        const std::string text = sample_text();
        write(dir + "/t.txt", text);
        TextCorpus c = load_text_corpus("text:" + dir + "/t.txt");
        QCOMPARE(c.train_text + c.validation_text, text);
        QVERIFY(c.train_text.back() == '\n');  // cut after a line break
        const double share = double(c.train_text.size()) / double(text.size());
        QVERIFY(share >= 0.9 && share < 0.92);
        write(dir + "/bin.txt", std::string("text\xff\xfe more text here and more", 28));
        QVERIFY_THROWS_EXCEPTION(InputError, load_text_corpus("text:" + dir + "/bin.txt"));
        QVERIFY_THROWS_EXCEPTION(InputError, load_text_corpus("text:" + dir + "/missing.txt"));
        QVERIFY_THROWS_EXCEPTION(InputError, load_text_corpus("fashion-mnist"));
    }

    void batcherWindows() {
        std::vector<std::int32_t> tokens(1000);
        for (int i = 0; i < 1000; ++i) tokens[i] = i;
        auto ledger = std::make_shared<MemoryLedger>();
        {
            TokenBatcher b(tokens, 4, 16, 7, ledger.get(), "training");
            QCOMPARE(at(ledger->snapshot().live, MemCategory::data), text_batch_bytes(4, 16));
            QCOMPARE(text_batch_bytes(4, 16), std::size_t(2 * 4 * 16 * 8));
            QCOMPARE(b.steps_per_epoch(), std::int64_t(1000 / 64));
            b.random_batch(3);
            const auto x = b.x(), y = b.y();
            for (int r = 0; r < 4; ++r)
                for (int t = 0; t < 16; ++t) {
                    QCOMPARE(x[r * 16 + t], x[r * 16] + t);  // consecutive tokens
                    QCOMPARE(y[r * 16 + t], x[r * 16 + t] + 1);  // the next one
                    QVERIFY(y[r * 16 + t] < 1000);
                }
            b.random_batch(4);
            QVERIFY(b.x() != x);
            b.random_batch(3);
            QVERIFY(b.x() == x);  // deterministic per step
            // evaluation: consecutive windows
            QCOMPARE(b.eval_windows(0), std::int64_t(999 / 16));
            QCOMPARE(b.eval_windows(64), std::int64_t(4));
            QCOMPARE(b.eval_batch(2, 4), std::int64_t(4));
            QCOMPARE(b.x()[0], std::int64_t(32));
            QCOMPARE(b.y()[3 * 16 + 15], std::int64_t(6 * 16));  // window 5 ends at 95; its last target is 96
        }
        QCOMPARE(at(ledger->snapshot().live, MemCategory::data), std::size_t(0));
        std::vector<std::int32_t> few(10);
        QVERIFY_THROWS_EXCEPTION(InputError, TokenBatcher(few, 2, 16, 1, nullptr, "validation"));
    }

    // Several ranks: the batchers of 3 ranks (rows 2 + 3 + 2 of a global batch of 7), each holding only its
    // rows, draw together exactly the windows of one process's batcher, step by step; the epoch is the
    // global batch's, and each records only its own rows as data.
    void rankBatchersShareOneProcessWindows() {
        std::vector<std::int32_t> tokens(5000);
        for (int i = 0; i < 5000; ++i) tokens[i] = (i * 7919) % 4099;
        auto ledger = std::make_shared<MemoryLedger>();
        TokenBatcher one(tokens, 7, 12, 5, nullptr, "training");
        const std::int64_t rows[3] = {2, 3, 2}, first[3] = {0, 2, 5};
        for (int r = 0; r < 3; ++r) {
            TokenBatcher part(tokens, rows[r], 12, 5, ledger.get(), "training", first[r], 7);
            QCOMPARE(at(ledger->snapshot().live, MemCategory::data), text_batch_bytes(rows[r], 12));
            QCOMPARE(part.steps_per_epoch(), one.steps_per_epoch());
            for (std::int64_t step : {0, 1, 17}) {
                one.random_batch(step);
                QCOMPARE(part.random_batch(step), rows[r]);
                const std::vector<std::int64_t> want_x(one.x().begin() + first[r] * 12,
                                                       one.x().begin() + (first[r] + rows[r]) * 12);
                const std::vector<std::int64_t> want_y(one.y().begin() + first[r] * 12,
                                                       one.y().begin() + (first[r] + rows[r]) * 12);
                QVERIFY(part.x() == want_x);
                QVERIFY(part.y() == want_y);
            }
        }
    }

    void tokenizersRoundTrip_data() {
        QTest::addColumn<QString>("spec");
        QTest::newRow("byte") << "byte";
        QTest::newRow("char") << "char";
        QTest::newRow("bpe:400") << "bpe:400";
    }
    void tokenizersRoundTrip() {
        QFETCH(QString, spec);
        const std::string text = sample_text() + "  two spaces,\ttab\n\n\nblank lines\n";
        auto tok = make_tokenizer(spec.toStdString(), text);
        QCOMPARE(tok->kind(), spec.toStdString());
        const auto ids = tok->encode(text);
        for (auto id : ids) QVERIFY(id >= 0 && id < tok->vocab_size());
        QCOMPARE(tok->decode(ids), text);  // exact, spaces and newlines included
        if (spec == "byte") QCOMPARE(static_cast<std::size_t>(ids.size()), text.size());
        if (spec == "bpe:400") {
            QCOMPARE(tok->vocab_size(), std::int64_t(400));
            QVERIFY(ids.size() < text.size() / 2);  // merges: fewer tokens than bytes
            // text it never saw still encodes (byte fallback)
            const std::string other = "Zebras x 42 \xF0\x9F\x98\x80\n";
            QCOMPARE(tok->decode(tok->encode(other)), other);
        }
        if (spec == "char") {
            QVERIFY(tok->vocab_size() < 60);
            QVERIFY_THROWS_EXCEPTION(InputError, tok->encode("Zebra"));  // 'Z' was never seen
        }
        // stored next to the weights and read back
        const std::string dir = hrtest::temp_dir("tok");
        tok->save(dir);
        if (!tok->file_name().empty()) QVERIFY(std::filesystem::exists(dir + "/" + tok->file_name()));
        auto back = load_tokenizer(tok->kind(), dir);
        QCOMPARE(back->vocab_size(), tok->vocab_size());
        QVERIFY(back->encode(text) == ids);
    }

    void tokenizerErrors() {
        for (const char* bad : {"words", "bpe:", "bpe:10", "bpe:x", "bpe:2000000"})
            QVERIFY_THROWS_EXCEPTION(InputError, validate_tokenizer_spec(bad));
        QVERIFY_THROWS_EXCEPTION(InputError, load_tokenizer("char", hrtest::temp_dir("empty")));
        QCOMPARE(valid_utf8(std::string("ok\xC3", 3)), std::string("ok\xEF\xBF\xBD"));
        QCOMPARE(valid_utf8("caf\xC3\xA9"), std::string("caf\xC3\xA9"));
    }
};

QTEST_APPLESS_MAIN(TextDataTest)
#include "test_text_data.moc"
