#pragma once
// The Sample tab's "Before and after" (issue 57 item 5): the same prompt continued by the model a fine-tuning
// run started from and by the model it trained, side by side, greedy (temperature 0) and sampled (the panel's
// temperature, or 0.8, and seed: the same draws for both), with the validation loss at step 0 and at the end
// (run.json "before" and "final"). What "before" is comes from core (train/before_after.h): a LoRA or QLoRA run's
// own weights with the adapters switched off (one model, a flag, no second copy), or a full run's --init-from
// weights or step-0 checkpoint. The four texts are exactly what `headroom generate --run RUN [--before]` prints
// for the same options. Generation runs on a thread of its own (one CPU thread), never on the GUI thread; the
// result is written to the run's folder as before_after.json, which the run's report shows.
#include <QString>
#include <QWidget>

#include <functional>
#include <memory>

#include "train/generate.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QThread;

namespace hrapp {

class BeforeAfterView : public QWidget {
    Q_OBJECT
public:
    explicit BeforeAfterView(QWidget* parent = nullptr);
    ~BeforeAfterView() override;  // waits for a comparison in flight

    // The run to compare ("" : none; the button is then off). options: the prompt, tokens, temperature, top-k
    // and seed to use, asked when a comparison starts.
    void setRunFolder(const QString& dir);
    QString runFolder() const { return m_dir; }
    void setOptionsSource(std::function<hr::GenerateOptions()> options) { m_options = std::move(options); }
    bool isComparing() const { return m_thread != nullptr; }

    enum Row { Greedy = 0, Sampled = 1 };
    enum Column { Before = 0, After = 1 };
    QString text(Row row, Column column) const;  // the completion shown (without the prompt)
    QString status() const;   // where "before" comes from, or why there is none
    QString losses() const;   // the validation loss before and after ("" when the run has none)
    QPushButton* compareButton() const { return m_compare; }

    // The options of the two rows: greedy, and sampled (temperature > 0) with the same seed
    static hr::GenerateOptions rowOptions(const hr::GenerateOptions& panel, Row row);
    // The file a comparison is written to in a run's folder (the report reads it)
    static QString resultFileName() { return QStringLiteral("before_after.json"); }

public slots:
    void compare();

signals:
    void compared(bool ok);  // the four texts are on screen (ok), or the status says why not

private:
    struct Job;
    void onDone();
    void showLosses();

    QString m_dir;
    std::function<hr::GenerateOptions()> m_options;
    QPushButton* m_compare = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_losses = nullptr;
    QLabel* m_head[2] = {nullptr, nullptr};
    QPlainTextEdit* m_text[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
    QThread* m_thread = nullptr;
    std::shared_ptr<Job> m_job;
};

}  // namespace hrapp
