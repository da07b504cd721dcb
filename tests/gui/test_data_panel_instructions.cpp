// The Data panel with instruction rows (issue 46): choosing jsonl:FILE shows the chat template and the
// sequence layout, counts the rows, previews the first ones as the template writes them with the part the
// loss is taken on marked; the choices reach the run's configuration and come back from it; a model's
// tokenizer file is a tokenizer choice; each row's tokens against the sequence length (issue 57). Rendered offscreen to a PNG (HEADROOM_SHOT_DIR, else a temporary
// folder) for a person to look at.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTemporaryDir>

#include "gui/AppSettings.h"
#include "gui/DataPanel.h"
#include "train/config.h"

class DataPanelInstructionsTest : public QObject {
    Q_OBJECT

private slots:
    void instructionRowsInThePanel() {
        QTemporaryDir dir;
        const QString rows = dir.filePath(QStringLiteral("rows.jsonl"));
        {
            QFile f(rows);
            QVERIFY(f.open(QIODevice::WriteOnly));
            for (int i = 0; i < 12; ++i)
                f.write(QStringLiteral("{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": "
                                       "\"user\", \"content\": \"What is %1 + %1?\"}, {\"role\": \"assistant\", "
                                       "\"content\": \"%2.\"}]}\n")
                            .arg(i)
                            .arg(2 * i)
                            .toUtf8());
        }
        hrapp::DataPanel panel;
        panel.resize(640, 560);
        panel.setDataSpec(QStringLiteral("jsonl:") + rows);
        auto* tmpl = panel.findChild<QComboBox*>(QStringLiteral("chatTemplateCombo"));
        auto* seqs = panel.findChild<QComboBox*>(QStringLiteral("sequencesCombo"));
        QVERIFY(tmpl && seqs);
        tmpl->setCurrentIndex(tmpl->findData(QStringLiteral("llama3")));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(tmpl->isVisible() && seqs->isVisible());
        QVERIFY(panel.isText() && panel.isInstructions() && panel.isAvailable());
        const QString status = panel.findChild<QLabel*>(QStringLiteral("dataStatus"))->text();
        QVERIFY2(status.contains(QStringLiteral("11 training and 1 validation rows")), qPrintable(status));
        QString preview;
        for (auto* e : panel.findChildren<QPlainTextEdit*>()) preview += e->toPlainText();
        QVERIFY2(preview.contains(QStringLiteral("<|start_header_id|>assistant<|end_header_id|>\n\n⟦0.⟧⟦<|eot_id|>⟧")),
                 qPrintable(preview));
        seqs->setCurrentIndex(seqs->findData(QStringLiteral("pack")));
        hr::TrainConfig c;
        panel.applyTo(c);
        QCOMPARE(c.data, ("jsonl:" + rows).toStdString());
        QCOMPARE(c.chat_template, std::string("llama3"));
        QCOMPARE(c.sequences, std::string("pack"));
        // back from a configuration, a tokenizer file included
        c.tokenizer = dir.filePath(QStringLiteral("tokenizer.json")).toStdString();
        c.chat_template = "chatml";
        hrapp::DataPanel other;
        other.setFrom(c);
        QCOMPARE(other.tokenizerSpec(), QString::fromStdString(c.tokenizer));
        QCOMPARE(other.findChild<QComboBox*>(QStringLiteral("chatTemplateCombo"))->currentData().toString(),
                 QStringLiteral("chatml"));
        QCOMPARE(other.findChild<QLineEdit*>(QStringLiteral("tokenizerFile"))->text(),
                 QString::fromStdString(c.tokenizer));
        // text data hides what only instruction rows have
        panel.setDataSpec(QStringLiteral("text:fortunes"));
        QVERIFY(!tmpl->isVisible() && !seqs->isVisible());
        panel.setDataSpec(QStringLiteral("jsonl:") + rows);
        const QString shots = qEnvironmentVariableIsSet("HEADROOM_SHOT_DIR") ? qEnvironmentVariable("HEADROOM_SHOT_DIR")
                                                                             : dir.path();
        QVERIFY(panel.grab().save(shots + QStringLiteral("/data-panel-jsonl.png")));
    }

    // What the model reads (issue 57): each previewed row's tokens against the sequence length, how many
    // rows are cut (padded) or how many sequences they pack into, and the longest row, for a JSON array of
    // Alpaca rows. Counted here independently: the byte tokenizer and the plain template make a row's tokens
    // its texts' UTF-8 bytes (the instruction, "\n" and the input when there is one, then the output).
    void tokenCountsAgainstTheSequence() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("alpaca.json"));
        std::vector<qint64> tokens;  // per row, in the file's order
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("[\n");
            for (int i = 0; i < 12; ++i) {
                const QString instruction = QStringLiteral("Repeat %1 times:").arg(i);
                const QString input = i % 3 ? QString(i * 2, QLatin1Char('x')) : QString();
                const QString output = QStringLiteral("é").repeated(i + 1);  // two bytes each
                f.write(QStringLiteral("%1{\"instruction\": \"%2\", \"input\": \"%3\", \"output\": \"%4\"}\n")
                            .arg(i ? QStringLiteral(",") : QString(), instruction, input, output)
                            .toUtf8());
                tokens.push_back(instruction.toUtf8().size() + (input.isEmpty() ? 0 : 1 + input.toUtf8().size()) +
                                 output.toUtf8().size());
            }
            f.write("]\n");
        }
        const qint64 seq = 24;
        qint64 cut = 0, longest = 0, longestAt = 0, trainTokens = 0, validationTokens = 0;
        for (int i = 0; i < 12; ++i) {
            cut += tokens[size_t(i)] > seq + 1;  // a padded sequence reads seq tokens and one target past them
            if (tokens[size_t(i)] > longest) {
                longest = tokens[size_t(i)];
                longestAt = i;
            }
            (i == 9 ? validationTokens : trainTokens) += tokens[size_t(i)];  // every tenth row validates
        }
        QVERIFY(cut > 0 && cut < 12);

        hrapp::DataPanel panel;
        panel.resize(640, 700);
        panel.setSequenceLength(seq);
        panel.setDataSpec(QStringLiteral("jsonl:") + path);
        panel.setTokenizerSpec(QStringLiteral("byte"));
        auto* tmpl = panel.findChild<QComboBox*>(QStringLiteral("chatTemplateCombo"));
        auto* seqs = panel.findChild<QComboBox*>(QStringLiteral("sequencesCombo"));
        tmpl->setCurrentIndex(tmpl->findData(QStringLiteral("plain")));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(panel.isAvailable());
        const QString status = panel.findChild<QLabel*>(QStringLiteral("dataStatus"))->text();
        QVERIFY2(status.contains(QStringLiteral("a JSON array, Alpaca layout")), qPrintable(status));
        auto* stats = panel.findChild<QLabel*>(QStringLiteral("instructionTokens"));
        QVERIFY(stats && stats->isVisible());
        QString text = stats->text();
        QVERIFY2(text.contains(QStringLiteral("Padded: %1 of the file's 12 rows are longer than a sequence of 24 tokens")
                                   .arg(cut)),
                 qPrintable(text));
        // the longest row: its element, the line it starts on (the array's "[" is line 1), its tokens
        QVERIFY2(text.contains(QStringLiteral("The longest row: element %1 (line %2), %3 tokens (byte tokenizer)")
                                   .arg(longestAt + 1)
                                   .arg(longestAt + 2)
                                   .arg(longest)),
                 qPrintable(text));
        QString preview;
        for (auto* e : panel.findChildren<QPlainTextEdit*>()) preview += e->toPlainText();
        QVERIFY2(preview.contains(QStringLiteral("── element 1 (line 2): %1 tokens of 24 ──").arg(tokens[0])), qPrintable(preview));
        // row 3 (index 2) is past the sequence: cut, its last tokens not read
        QVERIFY(tokens[2] <= seq + 1 || preview.contains(QStringLiteral("── element 3 (line 4): %1 tokens of 24: cut, the last %2 not read ──")
                                                              .arg(tokens[2])
                                                              .arg(tokens[2] - seq - 1)));
        const QString shots = qEnvironmentVariableIsSet("HEADROOM_SHOT_DIR") ? qEnvironmentVariable("HEADROOM_SHOT_DIR")
                                                                             : dir.path();
        QVERIFY(panel.grab().save(shots + QStringLiteral("/data-panel-token-counts.png")));
        // packed: each split's tokens in consecutive sequences of seq (a sequence needs one token past it)
        seqs->setCurrentIndex(seqs->findData(QStringLiteral("pack")));
        text = stats->text();
        QVERIFY2(text.contains(QStringLiteral("Packed: the file's 12 rows make %1 training and %2 validation sequences of 24 tokens")
                                   .arg((trainTokens - 1) / seq)
                                   .arg((validationTokens - 1) / seq)),
                 qPrintable(text));
        // a longer sequence: nothing cut
        panel.setSequenceLength(1000);
        seqs->setCurrentIndex(seqs->findData(QStringLiteral("pad")));
        QVERIFY2(stats->text().contains(QStringLiteral("Padded: 0 of the file's 12 rows")), qPrintable(stats->text()));
        // text data hides the figures
        panel.setDataSpec(QStringLiteral("text:fortunes"));
        QVERIFY(!stats->isVisible());
    }

    // The same panel in Chinese: the figures' sentences are translated (rendered for a person to look at).
    void chinesePanel() {
        QCOMPARE(hrapp::installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        {
            QTemporaryDir dir;
            const QString path = dir.filePath(QStringLiteral("share.jsonl"));
            {
                QFile f(path);
                QVERIFY(f.open(QIODevice::WriteOnly));
                for (int i = 0; i < 12; ++i)
                    f.write(QStringLiteral("{\"conversations\": [{\"from\": \"system\", \"value\": \"Be brief.\"}, "
                                           "{\"from\": \"human\", \"value\": \"What is %1 + %1?\"}, {\"from\": \"gpt\", "
                                           "\"value\": \"%2.\"}]}\n")
                                .arg(i)
                                .arg(2 * i)
                                .toUtf8());
            }
            hrapp::DataPanel panel;
            panel.resize(640, 700);
            panel.setSequenceLength(40);
            panel.setDataSpec(QStringLiteral("jsonl:") + path);
            panel.setTokenizerSpec(QStringLiteral("byte"));
            auto* tmpl = panel.findChild<QComboBox*>(QStringLiteral("chatTemplateCombo"));
            tmpl->setCurrentIndex(tmpl->findData(QStringLiteral("chatml")));
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            const QString stats = panel.findChild<QLabel*>(QStringLiteral("instructionTokens"))->text();
            QVERIFY2(stats.contains(QStringLiteral("填充")) && !stats.contains(QStringLiteral("Padded")), qPrintable(stats));
            const QString shots = qEnvironmentVariableIsSet("HEADROOM_SHOT_DIR") ? qEnvironmentVariable("HEADROOM_SHOT_DIR")
                                                                                 : dir.path();
            QVERIFY(panel.grab().save(shots + QStringLiteral("/data-panel-token-counts-zh_CN.png")));
        }
        hrapp::installTranslators(QStringLiteral("en"));
    }
};

QTEST_MAIN(DataPanelInstructionsTest)
#include "test_data_panel_instructions.moc"
