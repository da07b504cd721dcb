#pragma once
// ModelFolderOpener: File > Open model folder… and a folder dropped on the window. Reads a model folder, a
// .safetensors file or a peft adapter folder (train/model_folder.h: config.json, the weights' headers
// memory-mapped, the tokenizer and its chat template) on a worker thread, with a progress dialog that can
// cancel it; the window keeps answering meanwhile. Asks, in a file dialog, for what the files do not say: the
// config.json of a lone .safetensors file, the base model folder of an adapter whose base_model_name_or_path
// is a hub name. A refusal is one message box with the reason (core's text, translated); nothing changes.
// opened() hands the result to the window, which builds the model and starts its runs from the weights
// (TrainConfig::init_from, the path `headroom train --init-from` takes).
#include <QObject>
#include <QPointer>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

#include "train/model_folder.h"

class QProgressDialog;
class QThread;
class QWidget;

namespace hrapp {

class ModelFolderOpener : public QObject {
    Q_OBJECT
public:
    explicit ModelFolderOpener(QWidget* window);
    ~ModelFolderOpener() override;

    // Starts opening `path` (config: a lone .safetensors file's config.json; base: an adapter's base
    // folder). False when an opening is under way.
    bool open(const QString& path, const QString& config = QString(), const QString& base = QString());
    void cancel();
    bool isBusy() const { return m_thread != nullptr; }
    QProgressDialog* progressDialog() const { return m_progress; }
    // How long the last opening took on its worker, in milliseconds (-1 before the first).
    qint64 lastOpenMs() const { return m_lastMs; }
    // The last refusal's text ("" after a success).
    QString lastError() const { return m_lastError; }

    // What the opener asks the person (a file dialog by default; tests answer themselves). An empty
    // answer gives up.
    using Ask = std::function<QString(const QString& about)>;
    void setAskBase(Ask ask) { m_askBase = std::move(ask); }
    void setAskConfig(Ask ask) { m_askConfig = std::move(ask); }
    // When false, refusals are not shown in a message box (only failed() says them).
    void setShowErrors(bool show) { m_showErrors = show; }

    // The paths of a drop that the opener takes (one local folder or .safetensors file), or "".
    static QString droppedPath(const class QMimeData* mime);

signals:
    void opened(const hr::ModelFolder& folder);
    void failed(const QString& path, const QString& message);
    void cancelled();

private:
    void finish();
    QString askBase(const QString& adapter, const QString& baseName);
    QString askConfig(const QString& file);

    QPointer<QWidget> m_window;
    QThread* m_thread = nullptr;
    QProgressDialog* m_progress = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    struct Outcome;
    std::shared_ptr<Outcome> m_outcome;
    QString m_path, m_config, m_base;
    qint64 m_lastMs = -1;
    QString m_lastError;
    Ask m_askBase, m_askConfig;
    bool m_showErrors = true;
};

}  // namespace hrapp
