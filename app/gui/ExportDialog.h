#pragma once
// The Runs tab's Export menu (issue 57 item 6): one run's model written as a Hugging Face folder (a LoRA run's
// adapters merged), a peft adapter folder, a GGUF file (its type chosen here) or an ONNX file. The export is
// session/RunExport's exportRun, the code `headroom export` runs, on a thread of its own while the dialog shows
// a busy bar; at the end it lists the files written and their sizes, or the one message why nothing was written
// (core's refusal, translated). The window stays responsive meanwhile.
#include <QDialog>

#include "session/RunExport.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QThread;
class QTreeWidget;

namespace hrapp {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    // run: the run's folder; name: its name in the history (the title)
    ExportDialog(ExportKind kind, const QString& run, const QString& name, QWidget* parent = nullptr);
    ~ExportDialog() override;  // waits for an export in flight

    ExportKind kind() const { return m_kind; }
    QString target() const;
    void setTarget(const QString& path);
    void setGgufType(const QString& type);  // f32, f16, bf16, q8_0
    bool isExporting() const { return m_thread != nullptr; }
    QString message() const;                // the line under the bar: the outcome, or why nothing was written
    QList<ExportedFile> files() const { return m_files; }  // written by the last export
    QComboBox* ggufTypeBox() const { return m_type; }
    QPushButton* exportButton() const { return m_export; }
    static QString kindTitle(ExportKind kind);

public slots:
    void start();  // exports to target() on a worker thread

signals:
    void exported(bool ok);

private:
    void browse();
    void onDone();
    struct Job;

    ExportKind m_kind;
    QString m_run;
    QLineEdit* m_target = nullptr;
    QComboBox* m_type = nullptr;
    QProgressBar* m_bar = nullptr;
    QLabel* m_message = nullptr;
    QTreeWidget* m_list = nullptr;
    QPushButton* m_export = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QThread* m_thread = nullptr;
    std::shared_ptr<Job> m_job;
    QList<ExportedFile> m_files;
};

}  // namespace hrapp
