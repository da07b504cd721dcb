// The window's runs from a model's weights (issue 57 item 2): File > Open model folder…, a folder or
// .safetensors file dropped on the window, and the Runs tab's Fine-tune from this run. The model folder is
// read on a worker (ModelFolderOpener); its model goes into the builder, and the next run starts from its
// weights through TrainConfig::init_from, the path `headroom train --init-from` takes (train/run_folder.cpp),
// recorded in the run as the command line records it.
#include <QAction>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>

#include <filesystem>

#include "builder/ModelBuilder.h"
#include "gui/MainWindow.h"
#include "gui/ModelFolderOpener.h"
#include "gui/RunsView.h"
#include "gui/TrainingSetupPanel.h"
#include "io/hf_folder.h"
#include "store/run_store.h"
#include "train/preset_training.h"

namespace hrapp {

void MainWindow::buildModelFolderActions() {
    m_opener = new ModelFolderOpener(this);
    connect(m_opener, &ModelFolderOpener::opened, this, &MainWindow::applyModelFolder);
    connect(m_opener, &ModelFolderOpener::failed, this, [this](const QString& path, const QString&) {
        statusBar()->showMessage(tr("Could not open %1").arg(QDir::toNativeSeparators(path)), 5000);
    });
    m_openFolderAction = new QAction(tr("Open model &folder…"), this);
    m_openFolderAction->setObjectName(QStringLiteral("openModelFolderAction"));
    m_openFolderAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_openFolderAction->setStatusTip(tr("Start from a model's weights: a Hugging Face model folder, a .safetensors file "
                                        "or a peft adapter folder (or drop one on the window)"));
    connect(m_openFolderAction, &QAction::triggered, this, [this] {
        if (!maybeSave()) return;
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open model folder"), QString());
        if (!dir.isEmpty()) openModelFolder(dir);
    });
    setAcceptDrops(true);
}

bool MainWindow::openModelFolder(const QString& path) {
    if (m_runs->isRunning()) {
        statusBar()->showMessage(tr("Stop the run in progress first."), 5000);
        return false;
    }
    return m_opener->open(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!m_runs->isRunning() && !m_opener->isBusy() && !ModelFolderOpener::droppedPath(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = ModelFolderOpener::droppedPath(event->mimeData());
    if (path.isEmpty()) return;
    event->acceptProposedAction();
    if (maybeSave()) openModelFolder(path);
}

void MainWindow::applyModelFolder(const hr::ModelFolder& f) {
    // a language model's training settings (text data, AdamW, ...), as `headroom train --init-from DIR` starts
    // from gpt-tiny's; the folder's tokenizer for the text; an adapter's LoRA settings to train it on
    hr::TrainConfig c = trainConfig();
    const hr::TrainConfig before = c;
    hr::apply_preset_training("gpt-tiny", c);
    // text or instruction data chosen already (the person's file, a corpus): it stays
    if (before.data.rfind("text:", 0) == 0 || before.data.rfind("jsonl:", 0) == 0) {
        c.data = before.data;
        c.chat_template = before.chat_template;
        c.sequences = before.sequences;
    }
    c.init_from = f.init_from;
    c.init_base = f.init_base;
    if (!f.tokenizer.empty()) c.tokenizer = f.tokenizer;
    if (f.kind == hr::ModelFolder::Kind::peft_adapter) {
        c.strategy.lora_rank = f.lora_rank;
        c.strategy.lora_alpha = f.lora_alpha;
        c.strategy.lora_dropout = f.lora_dropout;
        c.strategy.lora_targets = f.lora_targets;
    }
    m_applyingPreset = true;
    // the Data panel only when its fields change (it reads its data's preview again when set)
    if (c.data == before.data && c.tokenizer == before.tokenizer && c.chat_template == before.chat_template &&
        c.sequences == before.sequences && c.target == before.target && c.train_limit == before.train_limit &&
        c.test_limit == before.test_limit) {
        m_config = c;
        m_setup->setFrom(c);
    } else {
        setTrainConfig(c);
    }
    m_applyingPreset = false;
    m_builder->resetSpec(f.model);
    followSequenceLength();
    m_builder->undoStack()->setClean();
    m_file.clear();
    // the model's config.json, as the command line records it (model_source "hf:PATH")
    const std::string configDir =
        f.kind == hr::ModelFolder::Kind::hf_folder ? f.path
        : f.kind == hr::ModelFolder::Kind::peft_adapter ? f.base_dir
                                                         : f.config_file;
    m_modelSource = QStringLiteral("hf:") + QString::fromStdString(configDir);
    m_modelChosen = true;
    m_folder = f;
    updateWeightsNote();
    updateTitle();
    m_builderDock->raise();
    statusBar()->showMessage(tr("Opened %1: the next run starts from its weights").arg(QString::fromStdString(f.path)), 8000);
}

void MainWindow::forgetInitialWeights() {
    m_config.init_from.clear();
    m_config.init_base.clear();
    m_folder.reset();
    updateWeightsNote();
}

void MainWindow::updateWeightsNote() {
    if (!m_builder) return;
    const QLocale locale;
    if (m_folder && m_folder->init_from == m_config.init_from) {
        const hr::ModelFolder& f = *m_folder;
        QStringList lines;
        lines << tr("Initial weights: %1").arg(QDir::toNativeSeparators(QString::fromStdString(f.path)));
        const QString count = locale.toString(qlonglong(f.stored_params));
        const QString dtype = QString::fromStdString(f.dtype_text());
        const QString size = hrw::ModelBuilder::formatBytes(double(f.stored_bytes));
        lines << (f.weight_files.size() == 1
                      ? tr("%1 parameters stored as %2 in one file, %3").arg(count, dtype, size)
                      : tr("%1 parameters stored as %2 in %3 files, %4")
                            .arg(count, dtype, QString::number(f.weight_files.size()), size));
        if (f.kind == hr::ModelFolder::Kind::peft_adapter)
            lines << tr("LoRA adapter (rank %1, alpha %2) on %3")
                         .arg(f.lora_rank)
                         .arg(f.lora_alpha)
                         .arg(QDir::toNativeSeparators(QString::fromStdString(f.base_dir)));
        if (f.tokenizer.empty()) {
            lines << tr("No tokenizer beside the weights: choose one in the Data panel");
        } else {
            QString templ = QString::fromStdString(f.tokenizer_template);
            if (f.config_template == "other") templ += tr(" (tokenizer_config.json has a template Headroom does not write)");
            else if (!f.config_template.empty() && f.config_template != f.tokenizer_template)
                templ += tr(" (tokenizer_config.json: %1)").arg(QString::fromStdString(f.config_template));
            lines << tr("Tokenizer: %1, %2 tokens; chat template %3")
                         .arg(QFileInfo(QString::fromStdString(f.tokenizer)).fileName())
                         .arg(locale.toString(qlonglong(f.tokenizer_vocab)))
                         .arg(templ);
        }
        m_builder->setWeightsNote(lines.join(QLatin1Char('\n')));
    } else if (!m_config.init_from.empty()) {
        m_builder->setWeightsNote(
            tr("Initial weights: %1").arg(QDir::toNativeSeparators(QString::fromStdString(m_config.init_from))));
    } else {
        m_builder->setWeightsNote(QString());
    }
}

bool MainWindow::fineTuneFromRun(qint64 runId) {
    const auto info = m_store->run(runId);
    if (!info) return false;
    namespace fs = std::filesystem;
    const std::string dir = info->outDir.toStdString();
    std::error_code ec;
    const fs::path weights = fs::path(dir) / "model.safetensors";
    if (dir.empty() || !fs::is_regular_file(weights, ec)) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Fine-tune from this run"),
                                    tr("The run \"%1\" wrote no weights (%2 is not there); pick a run that finished or "
                                       "saved a checkpoint")
                                        .arg(info->name, QDir::toNativeSeparators(QString::fromStdString(weights.string()))),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    if (!loadRun(runId)) return false;
    // as `headroom train --init-from FOLDER` takes a run folder: its model.safetensors, or a LoRA run's
    // adapters on their base model (the folder is a peft adapter folder); the weights file when that base is
    // not a model folder here (a LoRA run on a preset: its model.safetensors holds the base and the adapters)
    std::string from = weights.string();
    if (hr::is_peft_adapter_folder(dir)) {
        try {
            if (hr::is_hf_model_folder(hr::read_peft_adapter(dir).base_dir)) from = dir;
        } catch (const std::exception&) {
        }
    }
    m_folder.reset();
    hr::TrainConfig c = trainConfig();
    c.init_from = from;
    c.init_base.clear();
    m_applyingPreset = true;
    setTrainConfig(c);
    m_applyingPreset = false;
    updateWeightsNote();
    statusBar()->showMessage(tr("The next run starts from the weights of run \"%1\"").arg(info->name), 8000);
    return true;
}

}  // namespace hrapp
