// The Data panel with instruction rows (issue 46): choosing jsonl:FILE shows the chat template and the
// sequence layout, counts the rows, previews the first ones as the template writes them with the part the
// loss is taken on marked; the choices reach the run's configuration and come back from it; a model's
// tokenizer file is a tokenizer choice. Rendered offscreen to a PNG (HEADROOM_SHOT_DIR, else a temporary
// folder) for a person to look at.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTemporaryDir>

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
};

QTEST_MAIN(DataPanelInstructionsTest)
#include "test_data_panel_instructions.moc"
