#include "gui/ExportDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "base/error.h"
#include "session/RunText.h"

namespace hrapp {

struct ExportDialog::Job {
    ExportRequest request;
    ExportOutcome outcome;
    QString error;
};

QString ExportDialog::kindTitle(ExportKind kind) {
    switch (kind) {
    case ExportKind::HfFolder: return tr("Hugging Face folder (merged)");
    case ExportKind::PeftAdapter: return tr("peft adapter");
    case ExportKind::Gguf: return tr("GGUF file");
    case ExportKind::Onnx: return tr("ONNX file");
    }
    return {};
}

namespace {
bool isFolder(ExportKind k) { return k == ExportKind::HfFolder || k == ExportKind::PeftAdapter; }
}  // namespace

ExportDialog::ExportDialog(ExportKind kind, const QString& run, const QString& name, QWidget* parent)
    : QDialog(parent), m_kind(kind), m_run(run) {
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export %1: %2").arg(name, kindTitle(kind)));
    auto* explain = new QLabel;
    explain->setWordWrap(true);
    switch (kind) {
    case ExportKind::HfFolder:
        explain->setText(tr("config.json, the weights (sharded above 5 GB) and the tokenizer, for transformers' "
                            "from_pretrained. A LoRA run's adapters are merged into the weights."));
        break;
    case ExportKind::PeftAdapter:
        explain->setText(tr("adapter_config.json and adapter_model.safetensors of a LoRA run, for peft's "
                            "PeftModel.from_pretrained on the base model."));
        break;
    case ExportKind::Gguf:
        explain->setText(tr("One file for llama.cpp, Ollama and LM Studio, the tokenizer and chat template inside. "
                            "A LoRA run's adapters are merged."));
        break;
    case ExportKind::Onnx:
        explain->setText(tr("One ONNX file (opset 17) of an image or table model, its input's normalisation in the "
                            "graph, for ONNX Runtime."));
        break;
    }
    m_target = new QLineEdit;
    m_target->setObjectName(QStringLiteral("exportTarget"));
    const QString base = QDir(run).filePath(kind == ExportKind::HfFolder      ? QStringLiteral("hf")
                                            : kind == ExportKind::PeftAdapter ? QStringLiteral("peft")
                                            : kind == ExportKind::Gguf        ? QStringLiteral("model.gguf")
                                                                              : QStringLiteral("model.onnx"));
    m_target->setText(QDir::toNativeSeparators(base));
    auto* browseButton = new QPushButton(tr("Browse…"));
    connect(browseButton, &QPushButton::clicked, this, &ExportDialog::browse);
    auto* where = new QHBoxLayout;
    where->addWidget(m_target, 1);
    where->addWidget(browseButton);
    auto* form = new QFormLayout;
    form->addRow(isFolder(kind) ? tr("Folder:") : tr("File:"), where);
    if (kind == ExportKind::Gguf) {
        m_type = new QComboBox;
        m_type->setObjectName(QStringLiteral("exportGgufType"));
        m_type->addItem(tr("f16 (half precision)"), QStringLiteral("f16"));
        m_type->addItem(tr("bf16"), QStringLiteral("bf16"));
        m_type->addItem(tr("f32 (as trained)"), QStringLiteral("f32"));
        m_type->addItem(tr("q8_0 (8-bit blocks, about half of f16)"), QStringLiteral("q8_0"));
        form->addRow(tr("Weight type:"), m_type);
    }
    m_bar = new QProgressBar;
    m_bar->setObjectName(QStringLiteral("exportProgress"));
    m_bar->setRange(0, 1);
    m_bar->setValue(0);
    m_bar->setTextVisible(false);
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("exportMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_list = new QTreeWidget;
    m_list->setObjectName(QStringLiteral("exportFiles"));
    m_list->setHeaderLabels({tr("Written"), tr("Size")});
    m_list->setRootIsDecorated(false);
    m_list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_list->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_list->setMinimumHeight(110);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    m_buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));  // (Qt's own catalogue may not be installed)
    m_export = m_buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    m_export->setObjectName(QStringLiteral("exportStart"));
    m_export->setDefault(true);
    connect(m_export, &QPushButton::clicked, this, &ExportDialog::start);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(explain);
    layout->addLayout(form);
    layout->addWidget(m_bar);
    layout->addWidget(m_message);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_buttons);
    resize(640, 380);
}

ExportDialog::~ExportDialog() {
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

QString ExportDialog::target() const { return QDir::fromNativeSeparators(m_target->text().trimmed()); }
void ExportDialog::setTarget(const QString& path) { m_target->setText(QDir::toNativeSeparators(path)); }
void ExportDialog::setGgufType(const QString& type) {
    if (m_type) m_type->setCurrentIndex(std::max(0, m_type->findData(type)));
}
QString ExportDialog::message() const { return m_message->text(); }

void ExportDialog::browse() {
    const QString start = target();
    const QString chosen = isFolder(m_kind)
                               ? QFileDialog::getExistingDirectory(this, tr("Export into folder"), start)
                               : QFileDialog::getSaveFileName(this, tr("Export as"), start,
                                                              m_kind == ExportKind::Gguf ? tr("GGUF files (*.gguf)")
                                                                                         : tr("ONNX files (*.onnx)"));
    if (!chosen.isEmpty()) setTarget(chosen);
}

void ExportDialog::start() {
    if (m_thread) return;
    if (target().isEmpty()) {
        m_message->setText(tr("Say where to write the export"));
        return;
    }
    m_job = std::make_shared<Job>();
    m_job->request.kind = m_kind;
    m_job->request.run = m_run;
    m_job->request.target = target();
    if (m_type) m_job->request.ggufType = m_type->currentData().toString();
    m_files.clear();
    m_list->clear();
    m_bar->setRange(0, 0);  // busy: the exporters report no fraction
    m_message->setText(tr("Writing %1…").arg(QDir::toNativeSeparators(target())));
    m_export->setEnabled(false);
    std::shared_ptr<Job> job = m_job;
    m_thread = QThread::create([job] {
        try {
            job->outcome = exportRun(job->request);
        } catch (const hr::Error& e) {
            job->error = messageText(e.message());
        } catch (const std::exception& e) {
            job->error = QString::fromUtf8(e.what());
        }
    });
    connect(m_thread, &QThread::finished, this, &ExportDialog::onDone);
    m_thread->start();
}

void ExportDialog::onDone() {
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    const std::shared_ptr<Job> job = std::move(m_job);
    m_bar->setRange(0, 1);
    m_export->setEnabled(true);
    if (!job->error.isEmpty()) {
        m_bar->setValue(0);
        m_message->setText(job->error);
        emit exported(false);
        return;
    }
    m_bar->setValue(1);
    m_files = job->outcome.files;
    const QLocale locale;
    for (const ExportedFile& f : m_files)
        m_list->addTopLevelItem(new QTreeWidgetItem({QDir::toNativeSeparators(f.path), locale.formattedDataSize(f.bytes)}));
    const QString total = locale.formattedDataSize(job->outcome.totalBytes());
    m_message->setText(m_files.size() == 1 ? tr("Wrote 1 file, %1.").arg(total)
                                           : tr("Wrote %1 files, %2 in all.").arg(m_files.size()).arg(total));
    emit exported(true);
}

}  // namespace hrapp
