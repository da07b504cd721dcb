// The command line's Hugging Face parts: --model-config builds the LLaMA spec of a config.json for plan and
// train (and refuses a bad one with exit 2, naming the field), --init-from a model folder takes its model from
// its config.json, `headroom plan --budget` of such a model prints the fine-tuning table (full / LoRA / QLoRA
// ordered as their memory must be: QLoRA's frozen base in 4 bits below LoRA's below full fine-tuning's
// optimizer state), and `headroom export --hf` writes a folder transformers reads, refusing other layouts
// with nothing written.
#include <QtTest/QtTest>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>

#include <filesystem>
#include <fstream>

#include "backend/cpu/cpu_backend.h"
#include "builder/ModelBuilder.h"
#include "cli/commands.h"
#include "gui/MainWindow.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "memory/ledger.h"
#include "nn/hf_config.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "plan/planner.h"
#include "train/checkpoint.h"
#include "io/safetensors.h"

using namespace hrapp;
namespace fs = std::filesystem;

namespace {

// A tiny Llama: 2 blocks of width 128, 4 query heads on 2 key/value heads.
const char* const kTinyLlama = R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 256, "hidden_size": 128,
  "intermediate_size": 384, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
  "max_position_embeddings": 128, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false})";
const char* const kUnknownArch = R"({"architectures": ["FalconForCausalLM"], "vocab_size": 256})";

CliRequest hfcli_parse(const char* command, const QStringList& args) {
    const Subcommand* c = findSubcommand(QLatin1String(command));
    if (!c) qFatal("no subcommand %s", command);
    return parseCommandLine(*c, args);
}

void hfcli_write(const QString& path, const char* text) {
    std::ofstream(path.toStdString()) << text;
}

// "1.50 MiB" -> bytes
std::size_t hfcli_bytes(QString cell) { return hr::parse_bytes(cell.remove(QLatin1Char(' ')).toStdString()); }

}  // namespace

class TestHfCli : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
    }

    void windowFromHfConfig() {
        // Model > From a Hugging Face config…, beside the presets: the same spec as --model-config
        const QString cfg = m_dir.filePath(QStringLiteral("config.json"));
        hfcli_write(cfg, kTinyLlama);
        MainWindow w;
        w.setPersistState(false);
        w.resize(1366, 768);
        w.show();
        QAction* action = nullptr;
        for (QAction* menu : w.menuBar()->actions())
            if (menu->menu())
                for (QAction* a : menu->menu()->actions())
                    if (a->text() == MainWindow::tr("From a Hugging Face &config…")) action = a;
        QVERIFY(action);
        QVERIFY(w.openHfConfig(cfg));
        QVERIFY(hr::is_llama_layout(w.builder()->spec()));
        QCOMPARE(w.builder()->spec(), hr::hf_model_spec(hr::load_hf_config(cfg.toStdString())));
        QVERIFY(w.trainConfig().model_source.rfind("hf:", 0) == 0);
        if (const QByteArray shot = qgetenv("HEADROOM_HF_SHOT"); !shot.isEmpty()) w.grab().save(QString::fromLocal8Bit(shot));
        const QString bad = m_dir.filePath(QStringLiteral("bad.json"));
        hfcli_write(bad, kUnknownArch);
        QVERIFY(!w.openHfConfig(bad));
        QVERIFY(hr::is_llama_layout(w.builder()->spec()));  // unchanged
    }

    void modelConfigBuildsTheSpec() {
        const QString cfg = m_dir.filePath(QStringLiteral("config.json"));
        hfcli_write(cfg, kTinyLlama);
        CliRequest r = hfcli_parse("plan", {QStringLiteral("--model-config"), cfg});
        resolveModel(r);
        QVERIFY(hr::is_llama_layout(r.config.model));
        QCOMPARE(r.config.model.layers.size(), std::size_t{5});
        QCOMPARE(hr::layer_attr(r.config.model.layers[1], "kv_heads"), 2.0);
        QCOMPARE(r.config.model_source, "hf:" + cfg.toStdString());
        QVERIFY(hr::is_token_model(r.config.model));
        QCOMPARE(r.config.data, std::string("text:fortunes"));  // a language model's settings
        // the folder works as well, and --preset with it is refused
        CliRequest f = hfcli_parse("train", {QStringLiteral("--model-config"), m_dir.path()});
        resolveModel(f);
        QCOMPARE(f.config.model.layers.size(), std::size_t{5});
        try {
            hfcli_parse("plan", {QStringLiteral("--model-config"), cfg, QStringLiteral("--preset"), QStringLiteral("gpt-tiny")});
            QFAIL("--preset and --model-config were both taken");
        } catch (const BadFlag& e) {
            QVERIFY(e.message.contains(QLatin1String("--model-config")));
        }
    }

    void badConfigIsExitTwo() {
        const QString cfg = m_dir.filePath(QStringLiteral("falcon.json"));
        hfcli_write(cfg, kUnknownArch);
        OutputCapture out;
        QCOMPARE(runPlanCommand(hfcli_parse("plan", {QStringLiteral("--model-config"), cfg})), 2);
        QVERIFY2(out.err().contains(QLatin1String("'FalconForCausalLM' is not an architecture Headroom builds")), qPrintable(out.err()));
    }

    void fineTuningTable() {
        const QString cfg = m_dir.filePath(QStringLiteral("config.json"));
        hfcli_write(cfg, kTinyLlama);
        OutputCapture out;
        const int rc = runPlanCommand(hfcli_parse("plan", {QStringLiteral("--model-config"), cfg, QStringLiteral("--seq"), QStringLiteral("64"),
                                                          QStringLiteral("--batch"), QStringLiteral("4"),
                                                          QStringLiteral("--optimizer"), QStringLiteral("adamw"),
                                                          QStringLiteral("--device"), QStringLiteral("cpu"),
                                                          QStringLiteral("--budget"), QStringLiteral("1GiB")}));
        QVERIFY2(rc == 0, qPrintable(out.err() + out.out()));
        const QString text = out.out();
        QVERIFY2(text.contains(QLatin1String("Largest batch that fits at sequence 64")), qPrintable(text));
        // every cell: the asked configuration with only method, checkpointing and ZeRO-3 changed
        std::map<QString, std::vector<std::size_t>> cells;  // "method|checkpointing|zero3" -> 1, 2, 4, 8 cards
        for (const QString& line : text.split(QLatin1Char('\n'))) {
            const QStringList cols = line.split(QStringLiteral("  "), Qt::SkipEmptyParts);
            if (cols.size() != 7 || !cols[1].trimmed().contains(QRegularExpression(QStringLiteral("^(none|on)$")))) continue;
            std::vector<std::size_t> v;
            for (int k = 3; k < 7; ++k) v.push_back(cols[k].trimmed() == QLatin1String("-") ? 0 : hfcli_bytes(cols[k].trimmed()));
            cells[cols[0].trimmed() + QLatin1Char('|') + cols[1].trimmed() + QLatin1Char('|') + cols[2].trimmed()] = v;
        }
        QVERIFY2(cells.size() == 12, qPrintable(text));
        // the asked configuration itself (full fine-tuning, no checkpointing, one card) is the "As asked" total
        const QRegularExpressionMatch asked =
            QRegularExpression(QStringLiteral("As asked \\(batch 4, fp32\\): ([0-9.]+ [KMG]?i?B) of")).match(text);
        QVERIFY2(asked.hasMatch(), qPrintable(text));
        QCOMPARE(cells[QStringLiteral("full fine-tuning|none|no")][0], hfcli_bytes(asked.captured(1)));
        // a one-card budget the model fits in fits on 8 cards too, each holding less with ZeRO-3
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("full fine-tuning +none +yes( +[0-9.]+ [KMG]?i?B){4}"))), qPrintable(text));
        if (cells[QStringLiteral("LoRA r=16|none|no")][0] == 0)
            QSKIP("LoRA on llama_block is not in this build: its rows are '-'");
        // like for like: on every card count, LoRA needs less than full fine-tuning and QLoRA less than LoRA
        // (the same batch, sequence and precision), and checkpointing less than none
        for (const QString ck : {QStringLiteral("none"), QStringLiteral("on")})
            for (std::size_t k = 0; k < 4; ++k) {
                const std::size_t full = cells[QStringLiteral("full fine-tuning|") + ck + QStringLiteral("|no")][k],
                                  lora = cells[QStringLiteral("LoRA r=16|") + ck + QStringLiteral("|no")][k],
                                  qlora = cells[QStringLiteral("QLoRA nf4 r=16|") + ck + QStringLiteral("|no")][k];
                QVERIFY2(full > lora && lora > qlora && qlora > 0, qPrintable(text));
            }
        for (const QString m : {QStringLiteral("full fine-tuning"), QStringLiteral("LoRA r=16"), QStringLiteral("QLoRA nf4 r=16")})
            for (std::size_t k = 0; k < 4; ++k)
                QVERIFY2(cells[m + QStringLiteral("|on|no")][k] < cells[m + QStringLiteral("|none|no")][k], qPrintable(text));
        // a budget between the sizes: the cells keep their bytes and the larger ones are marked over it
        OutputCapture out2;
        QCOMPARE(runPlanCommand(hfcli_parse("plan", {QStringLiteral("--model-config"), cfg, QStringLiteral("--seq"), QStringLiteral("64"),
                                                      QStringLiteral("--batch"), QStringLiteral("4"), QStringLiteral("--optimizer"),
                                                      QStringLiteral("adamw"), QStringLiteral("--device"), QStringLiteral("cpu"),
                                                      QStringLiteral("--budget"), QString::number(cells[QStringLiteral("LoRA r=16|none|no")][0])})),
                 0);
        QVERIFY2(out2.out().contains(QRegularExpression(QStringLiteral("full fine-tuning +none +no +[0-9.]+ [KMG]?i?B \\(over\\)"))),
                 qPrintable(out2.out()));
        QVERIFY2(out2.out().contains(QRegularExpression(QStringLiteral("QLoRA nf4 r=16 +none +no +[0-9.]+ [KMG]?i?B  "))),
                 qPrintable(out2.out()));
    }

    void exportsAFolder() {
        const QString cfg = m_dir.filePath(QStringLiteral("config.json"));
        hfcli_write(cfg, kTinyLlama);
        const hr::ModelSpec spec = hr::hf_model_spec(hr::load_hf_config(cfg.toStdString()), 16);
        auto be = hr::make_cpu_backend(1, std::make_shared<hr::MemoryLedger>());
        hr::ModelOptions o;
        o.batch = 1;
        hr::Model m(spec, *be, o);
        const fs::path run = fs::path(m_dir.path().toStdString()) / "run";
        fs::create_directories(run);
        hr::write_safetensors((run / "model.safetensors").string(), hr::model_state_file(m));
        const QString out = m_dir.filePath(QStringLiteral("exported"));
        OutputCapture cap;
        QCOMPARE(runExportCommand(hfcli_parse("export", {QString::fromStdString(run.string()), QStringLiteral("--hf"), out})), 0);
        QVERIFY2(cap.out().contains(QLatin1String("config.json, model.safetensors")), qPrintable(cap.out()));
        const hr::HfConfig back = hr::load_hf_config(out.toStdString());
        QCOMPARE(back.num_key_value_heads, 2);
        QCOMPARE(back.intermediate_size, 384);
        // the export reads back as the model it was, through --init-from's own path
        CliRequest r = hfcli_parse("train", {QStringLiteral("--init-from"), out});
        resolveModel(r);
        QCOMPARE(r.config.model_source, "hf:" + out.toStdString());
        QVERIFY(hr::is_llama_layout(r.config.model));
        // nothing to export: exit 2, no folder
        const QString none = m_dir.filePath(QStringLiteral("none"));
        QCOMPARE(runExportCommand(hfcli_parse("export", {m_dir.filePath(QStringLiteral("missing")), QStringLiteral("--hf"), none})), 2);
        QVERIFY(!QFileInfo::exists(none));
    }
};

QTEST_MAIN(TestHfCli)
#include "test_hf_cli.moc"
