#include "gui/SamplePanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QScrollBar>
#include <QTextCursor>
#include <QSpinBox>
#include <QSplitter>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <chrono>
#include <mutex>

#include "base/error.h"
#include "gui/BeforeAfterView.h"
#include "nn/transformer_spec.h"
#include "session/RunController.h"
#include "session/RunText.h"
#include "session/TrainingSession.h"

namespace hrapp {

struct SamplePanel::Job {
    Source source = Source::none;
    std::shared_ptr<const hr::WeightsSnapshot> snapshot;
    std::string weightsPath;
    hr::GenerateOptions options;
    std::atomic<bool> cancel{false};
    std::atomic<bool> stoppedByUser{false};
    QString prompt;  // as the result's text begins (valid UTF-8)
    // streaming: the newest completion, and whether an update for the GUI thread is waiting
    std::mutex mutex;
    QString streamed;
    qint64 streamedTokens = 0;
    std::atomic<bool> posted{false};
    // results (written by the job's thread, read after it finished)
    hr::GenerateResult result;
    QString error;
    qint64 step = -1;
};

SamplePanel::SamplePanel(RunController* controller, QWidget* parent) : QWidget(parent), m_controller(controller) {
    setObjectName(QStringLiteral("samplePanel"));
    m_prompt = new QLineEdit;
    m_prompt->setObjectName(QStringLiteral("samplePrompt"));
    m_prompt->setPlaceholderText(tr("Text to continue (empty: start after a newline)"));
    m_tokens = new QSpinBox;
    m_tokens->setObjectName(QStringLiteral("sampleTokens"));
    m_tokens->setRange(1, 5000);
    m_tokens->setValue(200);
    m_tokens->setToolTip(tr("New tokens to generate"));
    m_temperature = new QDoubleSpinBox;
    m_temperature->setObjectName(QStringLiteral("sampleTemperature"));
    m_temperature->setRange(0, 5);
    m_temperature->setDecimals(2);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(0.8);
    m_temperature->setToolTip(tr("0 picks the most likely token every time (greedy, the same text every time)"));
    m_topK = new QSpinBox;
    m_topK->setObjectName(QStringLiteral("sampleTopK"));
    m_topK->setRange(0, 1 << 20);
    m_topK->setSpecialValueText(tr("all"));
    m_topK->setToolTip(tr("Sample among the K most likely tokens only (0: all)"));
    m_live = new QCheckBox(tr("Sample during the run"));
    m_live->setChecked(true);
    m_live->setToolTip(tr("Every few seconds, generate from a copy of the weights taken between two steps"));
    m_generate = new QPushButton(tr("Generate"));
    m_generate->setObjectName(QStringLiteral("sampleGenerate"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setObjectName(QStringLiteral("sampleStop"));
    m_stop->setToolTip(tr("End this generation now; the text so far stays"));
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("sampleStatus"));
    m_status->setWordWrap(true);
    m_text = new QPlainTextEdit;
    m_text->setObjectName(QStringLiteral("sampleText"));
    m_text->setReadOnly(true);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setPlaceholderText(tr("Generated text appears here during and after a language-model run."));

    // two rows, the prompt and its buttons over the settings: one row was wider than a 1366-pixel screen
    // leaves the tab
    auto* form = new QHBoxLayout;
    form->addWidget(new QLabel(tr("Prompt:")));
    form->addWidget(m_prompt, 1);
    form->addWidget(m_generate);
    form->addWidget(m_stop);
    auto* settings = new QHBoxLayout;
    settings->addWidget(new QLabel(tr("Tokens:")));
    settings->addWidget(m_tokens);
    settings->addSpacing(8);
    settings->addWidget(new QLabel(tr("Temperature:")));
    settings->addWidget(m_temperature);
    settings->addSpacing(8);
    settings->addWidget(new QLabel(tr("Top-k:")));
    settings->addWidget(m_topK);
    settings->addSpacing(8);
    settings->addWidget(m_live);
    settings->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(settings);
    layout->addWidget(m_status);
    // the sample above, the ended run's before and after below
    m_beforeAfter = new BeforeAfterView;
    m_beforeAfter->setOptionsSource([this] { return options(); });
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_text);
    split->addWidget(m_beforeAfter);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    m_refresh = new QTimer(this);
    m_refresh->setInterval(5000);
    connect(m_refresh, &QTimer::timeout, this, [this] {
        if (m_running && m_live->isChecked() && !m_thread && m_controller->session())
            m_controller->session()->requestSnapshot();
    });
    connect(m_generate, &QPushButton::clicked, this, &SamplePanel::generateNow);
    connect(m_stop, &QPushButton::clicked, this, &SamplePanel::stopGeneration);
    connect(m_prompt, &QLineEdit::returnPressed, this, &SamplePanel::generateNow);
    connect(m_controller, &RunController::runStarted, this, [this] { onRunStarted(); });
    connect(m_controller, &RunController::runFinished, this, &SamplePanel::onRunFinished);
    if (TrainingSession* s = m_controller->session())
        connect(s, &TrainingSession::snapshotReady, this, &SamplePanel::onSnapshot, Qt::QueuedConnection);
    setIdleStatus();
    updateEnabled();
}

SamplePanel::~SamplePanel() {
    if (m_thread) {
        m_job->cancel = true;
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
    }
}

QString SamplePanel::text() const { return m_text->toPlainText(); }
QString SamplePanel::status() const { return m_status->text(); }

hr::GenerateOptions SamplePanel::options() const {
    hr::GenerateOptions o;
    o.prompt = m_prompt->text().toStdString();
    o.tokens = m_tokens->value();
    o.temperature = m_temperature->value();
    o.top_k = m_topK->value();
    return o;
}

void SamplePanel::setOptions(const hr::GenerateOptions& o) {
    m_prompt->setText(QString::fromStdString(o.prompt));
    m_tokens->setValue(static_cast<int>(o.tokens));
    m_temperature->setValue(o.temperature);
    m_topK->setValue(o.top_k);
}

void SamplePanel::setRefreshIntervalMs(int ms) { m_refresh->setInterval(qMax(100, ms)); }

void SamplePanel::setIdleStatus() {
    if (m_running)
        m_status->setText(m_languageModel ? tr("Waiting for the first copy of the weights…")
                                          : tr("This run's model is not a language model, so there is no text to sample."));
    else if (!m_weightsPath.isEmpty() || m_finalSnapshot)
        m_status->setText(tr("Press Generate to sample the last run's weights."));
    else
        m_status->setText(tr("Train a language model (gpt-tiny on text:fortunes, for example) to sample its text here."));
}

void SamplePanel::updateEnabled() {
    const bool can = m_languageModel && (m_running || !m_weightsPath.isEmpty() || m_finalSnapshot);
    m_generate->setEnabled(can);
    m_stop->setEnabled(m_thread && m_job && !m_job->cancel);
}

void SamplePanel::showText(const QString& text) {
    if (text == m_shown) return;
    QScrollBar* bar = m_text->verticalScrollBar();
    const bool atEnd = bar->value() >= bar->maximum() - 2;
    if (!m_shown.isEmpty() && text.startsWith(m_shown)) {  // the stream grew: append only the new part
        QTextCursor c(m_text->document());
        c.movePosition(QTextCursor::End);
        c.insertText(text.mid(m_shown.size()));
    } else {
        m_text->setPlainText(text);
    }
    m_shown = text;
    if (atEnd) bar->setValue(bar->maximum());  // follow the text as it grows, unless scrolled back
}

void SamplePanel::stopGeneration() {
    if (!m_thread || !m_job || m_job->cancel) return;
    m_job->stoppedByUser = true;
    m_job->cancel = true;  // the generating thread ends after the token it is computing
    m_pendingRequest = false;
    qint64 tokens = 0;
    {
        std::lock_guard<std::mutex> lock(m_job->mutex);
        tokens = m_job->streamedTokens;
    }
    m_status->setText(tr("Stopped after %n token(s).", nullptr, int(tokens)));
    updateEnabled();
}

void SamplePanel::onStreamed(const std::shared_ptr<Job>& job) {
    job->posted = false;  // from here on, a newer text posts again
    if (job != m_job || job->cancel) return;
    QString completion;
    qint64 tokens = 0;
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        completion = job->streamed;
        tokens = job->streamedTokens;
    }
    showText(job->prompt + completion);
    const qint64 requested = job->options.tokens;
    m_status->setText(job->source == Source::snapshot
                          ? tr("Generating from the weights of step %1: %2 of %3 tokens…").arg(job->step).arg(tokens).arg(requested)
                          : tr("Generating from %1: %2 of %3 tokens…").arg(QString::fromStdString(job->weightsPath)).arg(tokens).arg(requested));
    emit textStreamed(tokens, requested);
}

void SamplePanel::onRunStarted() {
    m_running = true;
    m_languageModel = hr::is_token_model(m_controller->config().model);
    m_weightsPath.clear();
    m_finalSnapshot.reset();
    if (m_languageModel) {
        showText(QString());
        if (m_live->isChecked() && m_controller->session()) m_controller->session()->requestSnapshot();
        m_refresh->start();
    }
    setIdleStatus();
    updateEnabled();
}

void SamplePanel::onSnapshot(qint64) {
    if (!m_running || !m_languageModel || !m_controller->session()) return;
    if (m_thread) {  // one at a time; the newest copy is taken when this one ends
        m_pendingRequest = true;
        return;
    }
    startGeneration(Source::snapshot, m_controller->session()->latestSnapshot());
}

void SamplePanel::onRunFinished(const RunOutcome& outcome) {
    m_running = false;
    m_refresh->stop();
    m_languageModel = hr::is_token_model(outcome.config.model);
    m_weightsPath.clear();
    m_finalSnapshot.reset();
    if (m_languageModel) {
        for (const std::string& f : outcome.ended.written)
            if (QFileInfo(QString::fromStdString(f)).fileName() == QLatin1String("model.safetensors"))
                m_weightsPath = QString::fromStdString(f);
        if (m_weightsPath.isEmpty() && m_controller->session()) m_finalSnapshot = m_controller->session()->latestSnapshot();
    }
    m_beforeAfter->setRunFolder(m_weightsPath.isEmpty() ? QString() : QFileInfo(m_weightsPath).absolutePath());
    setIdleStatus();
    updateEnabled();
    if (!m_languageModel) return;
    if (m_thread) {
        m_job->cancel = true;  // a sample of older weights: replaced by the final one
        m_pendingRequest = true;
        return;
    }
    generateNow();
}

void SamplePanel::generateNow() {
    if (!m_languageModel) return;
    if (m_thread) {
        m_pendingRequest = true;
        return;
    }
    if (m_running) {
        if (TrainingSession* s = m_controller->session()) s->requestSnapshot();  // onSnapshot generates
        return;
    }
    if (!m_weightsPath.isEmpty()) startGeneration(Source::weights, nullptr);
    else if (m_finalSnapshot) startGeneration(Source::snapshot, m_finalSnapshot);
}

void SamplePanel::startGeneration(Source source, std::shared_ptr<const hr::WeightsSnapshot> snapshot) {
    if (source == Source::snapshot && !snapshot) return;
    auto job = std::make_shared<Job>();
    job->source = source;
    job->snapshot = std::move(snapshot);
    job->weightsPath = m_weightsPath.toStdString();
    job->options = options();
    job->step = source == Source::snapshot ? job->snapshot->step : -1;
    job->prompt = QString::fromStdString(hr::valid_utf8(job->options.prompt));
    m_job = job;
    showText(job->prompt);  // the new sample streams in after its prompt
    m_status->setText(source == Source::snapshot ? tr("Generating from the weights of step %1…").arg(job->step)
                                                 : tr("Generating from %1…").arg(m_weightsPath));
    QPointer<SamplePanel> self(this);
    m_thread = QThread::create([job, self] {
        try {
            // one CPU thread: the run in progress keeps the others
            std::unique_ptr<hr::Generator> g = job->source == Source::snapshot
                                                   ? hr::Generator::from_snapshot(*job->snapshot, 1)
                                                   : hr::Generator::from_weights(job->weightsPath, 1);
            using Clock = std::chrono::steady_clock;
            Clock::time_point last{};  // the first token shows at once
            job->result = g->generate_streaming(job->options, [&](const hr::GeneratedToken& t) {
                if (job->cancel) return false;
                const Clock::time_point now = Clock::now();
                if (now - last < std::chrono::milliseconds(streamIntervalMs())) return true;  // throttled
                last = now;
                {
                    std::lock_guard<std::mutex> lock(job->mutex);
                    job->streamed = QString::fromStdString(*t.completion);
                    job->streamedTokens = t.index + 1;
                }
                // at most one update waits in the GUI thread's queue; it reads the newest text
                if (!job->posted.exchange(true) && self)
                    QMetaObject::invokeMethod(self.data(), [self, job] { if (self) self->onStreamed(job); }, Qt::QueuedConnection);
                return !job->cancel.load();
            });
        } catch (const hr::Error& e) {
            job->error = messageText(e.message());
        } catch (const std::exception& e) {
            job->error = QString::fromUtf8(e.what());
        }
    });
    m_thread->setObjectName(QStringLiteral("hr-sample"));
    connect(m_thread, &QThread::finished, this, &SamplePanel::onGenerationDone);
    m_thread->start(QThread::LowPriority);
    updateEnabled();
}

void SamplePanel::onGenerationDone() {
    std::shared_ptr<Job> job = std::move(m_job);
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    if (job && job->stoppedByUser) {
        if (job->error.isEmpty()) {
            showText(QString::fromStdString(job->result.text));  // the tokens made before Stop
            m_status->setText(tr("Stopped after %n token(s).", nullptr, int(job->result.ids.size())));
        }
        emit generationStopped(qint64(job->result.ids.size()));
    } else if (job && !job->cancel) {
        if (!job->error.isEmpty()) {
            m_status->setText(tr("Could not generate: %1").arg(job->error));
        } else {
            showText(QString::fromStdString(job->result.text));
            const QString speed = tr("%1 tokens in %2 s").arg(job->result.ids.size()).arg(job->result.seconds, 0, 'f', 2);
            m_status->setText(job->source == Source::snapshot
                                  ? (m_running ? tr("The weights of step %1, during the run (%2).").arg(job->step).arg(speed)
                                               : tr("The final weights of the run, step %1 (%2).").arg(job->step).arg(speed))
                                  : tr("The saved weights %1 (%2).").arg(QString::fromStdString(job->weightsPath), speed));
            emit sampleShown(job->source == Source::snapshot ? job->step : -1);
        }
    }
    updateEnabled();
    if (m_pendingRequest) {
        m_pendingRequest = false;
        generateNow();
    }
}

}  // namespace hrapp
