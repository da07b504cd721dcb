#include "gui/BeforeAfterView.h"

#include <QDir>
#include <QFile>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QThread>
#include <QVBoxLayout>

#include <cmath>

#include "base/error.h"
#include "session/RunText.h"
#include "train/before_after.h"

namespace hrapp {

struct BeforeAfterView::Job {
    std::string dir;
    hr::GenerateOptions options;  // the panel's
    // results (written by the job's thread, read after it finished)
    QString text[2][2];
    QString error;
    hr::StartWeights start;
};

BeforeAfterView::BeforeAfterView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("beforeAfterView"));
    m_compare = new QPushButton(tr("Compare before and after"));
    m_compare->setObjectName(QStringLiteral("beforeAfterCompare"));
    m_compare->setToolTip(tr("Continue the prompt with the model the run started from and with the trained one, "
                             "greedy and sampled with the same seed"));
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("beforeAfterStatus"));
    m_status->setWordWrap(true);
    m_losses = new QLabel;
    m_losses->setObjectName(QStringLiteral("beforeAfterLosses"));
    auto* top = new QHBoxLayout;
    top->addWidget(m_compare);
    top->addWidget(m_status, 1);
    auto* grid = new QGridLayout;
    m_head[Before] = new QLabel(tr("<b>Before</b> (the starting model)"));
    m_head[After] = new QLabel(tr("<b>After</b> (the trained model)"));
    grid->addWidget(m_head[Before], 0, 1);
    grid->addWidget(m_head[After], 0, 2);
    const QString rowNames[2] = {tr("Greedy"), tr("Sampled")};
    for (int r = 0; r < 2; ++r) {
        auto* name = new QLabel(rowNames[r]);
        name->setAlignment(Qt::AlignTop | Qt::AlignLeft);
        grid->addWidget(name, r + 1, 0);
        for (int c = 0; c < 2; ++c) {
            auto* t = new QPlainTextEdit;
            t->setObjectName(QStringLiteral("beforeAfterText%1%2").arg(r).arg(c));
            t->setReadOnly(true);
            t->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
            t->setMinimumHeight(60);
            m_text[r][c] = t;
            grid->addWidget(t, r + 1, c + 1);
        }
    }
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(2, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_losses);
    layout->addLayout(grid, 1);
    connect(m_compare, &QPushButton::clicked, this, &BeforeAfterView::compare);
    setRunFolder(QString());
}

BeforeAfterView::~BeforeAfterView() {
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

void BeforeAfterView::setRunFolder(const QString& dir) {
    m_dir = dir;
    m_compare->setEnabled(!dir.isEmpty() && !m_thread);
    m_status->setText(dir.isEmpty() ? tr("After a language-model run: its starting model beside the trained one.")
                                    : tr("Run %1: press Compare to continue the prompt with both models.")
                                          .arg(QDir::toNativeSeparators(dir)));
    for (auto& row : m_text)
        for (QPlainTextEdit* t : row) t->clear();
    showLosses();
}

QString BeforeAfterView::text(Row row, Column column) const { return m_text[row][column]->toPlainText(); }
QString BeforeAfterView::status() const { return m_status->text(); }
QString BeforeAfterView::losses() const { return m_losses->text(); }

hr::GenerateOptions BeforeAfterView::rowOptions(const hr::GenerateOptions& panel, Row row) {
    hr::GenerateOptions o = panel;
    if (row == Greedy) o.temperature = 0;
    else if (o.temperature <= 0) o.temperature = 0.8;
    return o;
}

// run.json's validation loss at step 0 ("before") and at the end
void BeforeAfterView::showLosses() {
    m_losses->clear();
    if (m_dir.isEmpty()) return;
    QFile f(m_dir + QStringLiteral("/run.json"));
    if (!f.open(QIODevice::ReadOnly)) return;
    const QJsonObject fin = QJsonDocument::fromJson(f.read(64 << 20)).object().value(QStringLiteral("final")).toObject();
    const double before = fin.value(QStringLiteral("before")).toObject().value(QStringLiteral("test_loss")).toDouble(qQNaN());
    const double after = fin.value(QStringLiteral("test_loss")).toDouble(qQNaN());
    if (std::isfinite(before) && std::isfinite(after))
        m_losses->setText(tr("Validation loss %1 at step 0, %2 after training").arg(before, 0, 'f', 4).arg(after, 0, 'f', 4));
}

void BeforeAfterView::compare() {
    if (m_dir.isEmpty() || m_thread) return;
    m_job = std::make_shared<Job>();
    m_job->dir = QDir(m_dir).path().toStdString();
    m_job->options = m_options ? m_options() : hr::GenerateOptions();
    for (auto& row : m_text)
        for (QPlainTextEdit* t : row) t->clear();
    m_status->setText(tr("Generating with both models…"));
    m_compare->setEnabled(false);
    std::shared_ptr<Job> job = m_job;
    m_thread = QThread::create([job] {
        try {
            job->start = hr::run_start_weights(job->dir);
            std::unique_ptr<hr::Generator> after = hr::Generator::from_run(job->dir, 1), before;
            const bool adapters = job->start.kind == hr::StartWeights::Kind::adapters_off;
            if (!adapters) before = hr::start_generator(job->dir, 1);
            for (int r = 0; r < 2; ++r) {
                const hr::GenerateOptions o = rowOptions(job->options, Row(r));
                if (adapters) after->set_adapters_enabled(false);  // the same model, its adapters off
                job->text[r][Before] = QString::fromStdString((adapters ? *after : *before).generate(o).completion);
                after->set_adapters_enabled(true);
                job->text[r][After] = QString::fromStdString(after->generate(o).completion);
            }
        } catch (const hr::Error& e) {
            job->error = messageText(e.message());
        } catch (const std::exception& e) {
            job->error = QString::fromUtf8(e.what());
        }
    });
    connect(m_thread, &QThread::finished, this, &BeforeAfterView::onDone);
    m_thread->start();
}

void BeforeAfterView::onDone() {
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    const std::shared_ptr<Job> job = std::move(m_job);
    m_compare->setEnabled(!m_dir.isEmpty());
    if (!job->error.isEmpty()) {
        m_status->setText(job->error);
        emit compared(false);
        return;
    }
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) m_text[r][c]->setPlainText(job->text[r][c]);
    const QString from = QDir::toNativeSeparators(QString::fromStdString(job->start.path));
    QString kind;
    switch (job->start.kind) {
    case hr::StartWeights::Kind::adapters_off:
        m_status->setText(tr("Before: this LoRA run's model with its adapters switched off (the base it started "
                             "from); after: with them on."));
        kind = QStringLiteral("adapters_off");
        break;
    case hr::StartWeights::Kind::init_from:
        m_status->setText(tr("Before: the weights the run started from (%1); after: the trained weights.").arg(from));
        kind = QStringLiteral("init_from");
        break;
    case hr::StartWeights::Kind::step0_checkpoint:
        m_status->setText(tr("Before: the run's checkpoint at step 0 (%1); after: the trained weights.").arg(from));
        kind = QStringLiteral("step0_checkpoint");
        break;
    }
    const hr::GenerateOptions sampled = rowOptions(job->options, Sampled);
    QJsonObject j{{QStringLiteral("prompt"), QString::fromStdString(job->options.prompt)},
                  {QStringLiteral("tokens"), qint64(job->options.tokens)},
                  {QStringLiteral("temperature"), sampled.temperature},
                  {QStringLiteral("top_k"), sampled.top_k},
                  {QStringLiteral("seed"), qint64(sampled.seed)},
                  {QStringLiteral("before"), kind},
                  {QStringLiteral("before_source"), QString::fromStdString(job->start.path)},
                  {QStringLiteral("greedy"), QJsonObject{{QStringLiteral("before"), job->text[Greedy][Before]},
                                                         {QStringLiteral("after"), job->text[Greedy][After]}}},
                  {QStringLiteral("sampled"), QJsonObject{{QStringLiteral("before"), job->text[Sampled][Before]},
                                                          {QStringLiteral("after"), job->text[Sampled][After]}}}};
    QSaveFile f(m_dir + QLatin1Char('/') + resultFileName());
    if (f.open(QIODevice::WriteOnly)) {
        f.write(QJsonDocument(j).toJson());
        f.commit();
    }
    showLosses();
    emit compared(true);
}

}  // namespace hrapp
