#include "gui/ModelFolderOpener.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QThread>
#include <QUrl>

#include <exception>
#include <optional>

#include "i18n/CoreText.h"

namespace hrapp {

struct ModelFolderOpener::Outcome {
    std::optional<hr::ModelFolder> folder;
    std::exception_ptr error;
    bool cancelled = false;
    qint64 ms = 0;
};

ModelFolderOpener::ModelFolderOpener(QWidget* window) : QObject(window), m_window(window) {}

ModelFolderOpener::~ModelFolderOpener() {
    if (m_thread) {
        if (m_cancel) m_cancel->store(true);
        m_thread->wait();
        delete m_thread;
    }
}

QString ModelFolderOpener::droppedPath(const QMimeData* mime) {
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1) return {};
    const QUrl url = mime->urls().first();
    if (!url.isLocalFile()) return {};
    const QFileInfo info(url.toLocalFile());
    if (info.isDir() || (info.isFile() && info.suffix().compare(QLatin1String("safetensors"), Qt::CaseInsensitive) == 0))
        return info.absoluteFilePath();
    return {};
}

bool ModelFolderOpener::open(const QString& path, const QString& config, const QString& base) {
    if (m_thread) return false;
    m_path = path;
    m_config = config;
    m_base = base;
    m_lastError.clear();
    // a lone .safetensors file with no config.json beside it: ask for one first
    const QFileInfo info(path);
    if (info.isFile() && config.isEmpty() && !QFileInfo::exists(info.dir().filePath(QStringLiteral("config.json")))) {
        m_config = askConfig(path);
        if (m_config.isEmpty()) {
            emit cancelled();
            return false;
        }
    }
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_outcome = std::make_shared<Outcome>();
    if (!m_progress) {
        m_progress = new QProgressDialog(m_window);
        m_progress->setObjectName(QStringLiteral("openModelProgress"));
        m_progress->setWindowTitle(tr("Open model folder"));
        m_progress->setWindowModality(Qt::WindowModal);
        m_progress->setAutoClose(false);
        m_progress->setAutoReset(false);
        m_progress->setMinimumWidth(460);
        connect(m_progress, &QProgressDialog::canceled, this, &ModelFolderOpener::cancel);
    }
    m_progress->setCancelButtonText(tr("Cancel"));
    m_progress->setLabelText(tr("Reading %1…").arg(QDir::toNativeSeparators(path)));
    m_progress->setRange(0, 0);
    m_progress->setValue(0);
    m_progress->setMinimumDuration(300);  // a small folder opens before the dialog shows

    const std::string p = path.toStdString(), c = m_config.toStdString(), b = m_base.toStdString();
    auto cancelFlag = m_cancel;
    auto outcome = m_outcome;
    QPointer<QProgressDialog> dialog = m_progress;
    m_thread = QThread::create([p, c, b, cancelFlag, outcome, dialog] {
        QElapsedTimer clock;
        clock.start();
        try {
            outcome->folder = hr::open_model_folder(p, c, b, [&](int done, int total, const std::string& what) {
                if (cancelFlag->load()) throw hr::Cancelled();
                const QString file = QFileInfo(QString::fromStdString(what)).fileName();
                QMetaObject::invokeMethod(
                    dialog,
                    [dialog, done, total, file] {
                        if (!dialog) return;
                        dialog->setRange(0, total);
                        dialog->setValue(done);
                        if (!file.isEmpty()) dialog->setLabelText(ModelFolderOpener::tr("Reading %1…").arg(file));
                    },
                    Qt::QueuedConnection);
            });
            if (cancelFlag->load()) throw hr::Cancelled();
        } catch (const hr::Cancelled&) {
            outcome->cancelled = true;
        } catch (...) {
            outcome->error = std::current_exception();
        }
        outcome->ms = clock.elapsed();
    });
    m_thread->setObjectName(QStringLiteral("open model folder"));
    connect(m_thread, &QThread::finished, this, &ModelFolderOpener::finish);
    m_thread->start();
    return true;
}

void ModelFolderOpener::cancel() {
    if (m_cancel) m_cancel->store(true);
}

void ModelFolderOpener::finish() {
    m_thread->deleteLater();
    m_thread = nullptr;
    const std::shared_ptr<Outcome> o = std::move(m_outcome);
    m_progress->reset();
    m_progress->hide();
    m_lastMs = o->ms;
    if (o->cancelled || (m_cancel && m_cancel->load())) {
        emit cancelled();
        return;
    }
    if (o->folder) {
        emit opened(*o->folder);
        return;
    }
    QString message;
    try {
        std::rethrow_exception(o->error);
    } catch (const hr::PeftBaseMissing& e) {
        // the adapter's base is a hub name (or a path not here): ask for its folder, then open again
        const QString base = askBase(QString::fromStdString(e.adapter_dir), QString::fromStdString(e.base_model_name));
        if (base.isEmpty()) {
            emit cancelled();
            return;
        }
        open(m_path, m_config, base);
        return;
    } catch (const std::exception& e) {
        message = coreText(e);
    } catch (...) {
        message = tr("the folder could not be read");
    }
    m_lastError = message;
    emit failed(m_path, message);
    if (m_showErrors && m_window) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Open model folder"),
                                    tr("Could not open %1:\n%2").arg(QDir::toNativeSeparators(m_path), message),
                                    QMessageBox::Ok, m_window);
        box->setObjectName(QStringLiteral("openModelError"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
}

QString ModelFolderOpener::askBase(const QString& adapter, const QString& baseName) {
    if (m_askBase) return m_askBase(baseName);
    return QFileDialog::getExistingDirectory(
        m_window, tr("The base model of %1 (%2)").arg(QFileInfo(adapter).fileName(), baseName), QString());
}

QString ModelFolderOpener::askConfig(const QString& file) {
    if (m_askConfig) return m_askConfig(file);
    return QFileDialog::getOpenFileName(m_window, tr("The config.json of %1").arg(QFileInfo(file).fileName()),
                                        QFileInfo(file).absolutePath(),
                                        tr("Hugging Face config (config.json *.json);;All files (*)"));
}

}  // namespace hrapp
