#include "gui/MonitorView.h"

#include <QFrame>
#include <QGridLayout>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <ctime>

#include "builder/ModelBuilder.h"
#include "charts/LiveChart.h"
#include "charts/MemoryChart.h"

namespace hrapp {

namespace {
const QColor kBlue(0x1f, 0x77, 0xb4), kOrange(0xff, 0x7f, 0x0e), kGreen(0x2c, 0xa0, 0x2c), kRed(0xd6, 0x27, 0x28);
constexpr int kMaxIntervalMs = 2000;  // however costly the charts, they move at least every 2 s

// CPU time of the calling thread in milliseconds (what a replot costs, however busy the machine is).
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}
}

MonitorView::MonitorView(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    outer->setSpacing(6);
    auto* cards = new QHBoxLayout;
    cards->setSpacing(6);
    cards->addWidget(makeCard(tr("Test accuracy"), &m_testAccuracy));
    cards->addWidget(makeCard(tr("Training loss"), &m_trainLoss));
    cards->addWidget(makeCard(tr("Throughput"), &m_throughputValue));
    cards->addWidget(makeCard(tr("Peak memory"), &m_peakMemory));
    m_testAccuracy->setObjectName(QStringLiteral("testAccuracyValue"));
    m_trainLoss->setObjectName(QStringLiteral("trainLossValue"));
    outer->addLayout(cards);

    auto* grid = new QGridLayout;
    grid->setSpacing(6);
    m_loss = new hrw::LiveChart(this);
    m_loss->setObjectName(QStringLiteral("lossChart"));
    m_loss->setTitle(tr("Loss"));
    m_loss->setAxisLabels(tr("step"), tr("loss"));
    m_loss->addSeries(tr("Training (per step)"), kBlue.lighter(160));
    m_loss->addSeries(tr("Training (smoothed)"), kBlue);
    m_loss->addSeries(tr("Validation"), kOrange, false, true);
    m_accuracy = new hrw::LiveChart(this);
    m_accuracy->setObjectName(QStringLiteral("accuracyChart"));
    m_accuracy->setTitle(tr("Accuracy"));
    m_accuracy->setAxisLabels(tr("step"), tr("accuracy (%)"));
    m_accuracy->addSeries(tr("Training (per step)"), kGreen.lighter(150));
    m_accuracy->addSeries(tr("Validation"), kOrange, false, true);
    m_throughput = new hrw::LiveChart(this);
    m_throughput->setObjectName(QStringLiteral("throughputChart"));
    m_throughput->setTitle(tr("Throughput"));
    m_throughput->setAxisLabels(tr("step"), tr("images/s"));
    m_throughput->addSeries(tr("Images per second"), kRed);
    m_memory = new hrw::MemoryChart(this);
    m_memory->setObjectName(QStringLiteral("memoryChart"));
    m_memory->setTitle(tr("Memory by category"));
    m_memory->setAxisLabels(tr("step"), tr("MiB"));
    grid->addWidget(m_loss, 0, 0);
    grid->addWidget(m_accuracy, 0, 1);
    grid->addWidget(m_throughput, 1, 0);
    {  // the memory chart, with the rank it shows (several ranks) above it
        auto* box = new QWidget(this);
        auto* v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(2);
        auto* row = new QHBoxLayout;
        m_rankBox = new QComboBox(box);
        m_rankBox->setObjectName(QStringLiteral("memoryRankBox"));
        m_rankBox->setToolTip(tr("Each rank has its own memory: pick the one the chart shows"));
        m_rankLabel = new QLabel(tr("Memory of"), box);
        m_rankLabel->setBuddy(m_rankBox);
        row->addWidget(m_rankLabel);
        row->addWidget(m_rankBox);
        row->addStretch(1);
        v->addLayout(row);
        v->addWidget(m_memory, 1);
        grid->addWidget(box, 1, 1);
        connect(m_rankBox, &QComboBox::activated, this, [this](int i) { setMemoryRank(m_rankBox->itemData(i).toInt()); });
    }
    for (int i = 0; i < 2; ++i) {  // four equal charts, whatever their legends ask for
        grid->setColumnStretch(i, 1);
        grid->setRowStretch(i, 1);
    }
    outer->addLayout(grid, 1);
    for (hrw::LiveChart* c : charts()) {
        connect(c, &hrw::LiveChart::saveRequested, this, [this, c] { emit saveChartRequested(c); });
        connect(c, &QCustomPlot::beforeReplot, this, [this] { m_replotStartMs = threadCpuMs(); });
        connect(c, &QCustomPlot::afterReplot, this, [this] { m_drawCpuMs += threadCpuMs() - m_replotStartMs; });
    }
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &MonitorView::redraw);
    clear();
}

void MonitorView::setRefreshIntervalMs(int ms) {
    m_baseIntervalMs = qBound(10, ms, kMaxIntervalMs);
    const int before = m_intervalMs;
    m_intervalMs = qMax(m_intervalMs, m_baseIntervalMs);
    if (m_costEmaMs < 0) m_intervalMs = m_baseIntervalMs;
    if (m_intervalMs != before) emit refreshIntervalChanged(m_intervalMs);
}

bool MonitorView::refreshPending() const { return m_timer->isActive() || !m_dirty.isEmpty() || m_cardsDirty; }

void MonitorView::markDirty(hrw::LiveChart* chart) {
    if (chart && !m_dirty.contains(chart)) m_dirty.push_back(chart);
    if (m_timer->isActive()) return;
    // at once when the last redraw is an interval old (step batches arrive at that interval), else
    // when it will be
    const qint64 since = m_sinceRedraw.isValid() ? m_sinceRedraw.elapsed() : m_intervalMs;
    m_timer->start(int(qMax<qint64>(0, m_intervalMs - since)));
}

void MonitorView::flush() {
    m_timer->stop();
    redraw();
}

void MonitorView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (!m_dirty.isEmpty() || m_cardsDirty) flush();  // what arrived while the tab was hidden
}

void MonitorView::redraw() {
    // The replots the previous redraw queued have run by now: their CPU time sets the next interval,
    // so that redrawing takes at most drawBudget() of this thread's time (never less often than every
    // kMaxIntervalMs, never more often than the settings allow).
    if (m_drawCpuMs > 0) {
        m_costEmaMs = m_costEmaMs < 0 ? m_drawCpuMs : 0.7 * m_costEmaMs + 0.3 * m_drawCpuMs;
        const int wanted = qBound(m_baseIntervalMs, int(std::lround(m_costEmaMs / drawBudget())), kMaxIntervalMs);
        if (std::abs(wanted - m_intervalMs) > m_intervalMs / 10) {
            m_intervalMs = wanted;
            emit refreshIntervalChanged(m_intervalMs);
        }
        m_drawCpuMs = 0;
    }
    if (m_cardsDirty) {
        m_trainLoss->setText(m_lossText);
        m_throughputValue->setText(m_throughputText);
        m_cardsDirty = false;
    }
    // a chart that cannot be seen only rescales here and is drawn when shown (LiveChart::refresh)
    for (hrw::LiveChart* c : std::as_const(m_dirty)) c->refresh();
    m_dirty.clear();
    ++m_redraws;
    m_sinceRedraw.start();
}

QWidget* MonitorView::makeCard(const QString& title, QLabel** value) {
    auto* f = new QFrame(this);
    f->setFrameShape(QFrame::StyledPanel);
    auto* l = new QVBoxLayout(f);
    l->setContentsMargins(10, 4, 10, 4);
    l->setSpacing(0);
    auto* t = new QLabel(title, f);
    QFont tf = t->font();
    tf.setPointSizeF(tf.pointSizeF() * 0.9);
    t->setFont(tf);
    t->setForegroundRole(QPalette::PlaceholderText);
    *value = new QLabel(QStringLiteral("—"), f);
    QFont vf = (*value)->font();
    vf.setPointSizeF(vf.pointSizeF() * 1.5);
    vf.setBold(true);
    (*value)->setFont(vf);
    l->addWidget(t);
    l->addWidget(*value);
    return f;
}

void MonitorView::setMemoryRank(int rank) {
    if (!m_rankX.contains(rank)) return;
    m_shownRank = rank;
    m_rankBox->setCurrentIndex(m_rankBox->findData(rank));
    m_memory->clearData();
    m_memory->appendSnapshots(m_rankX.value(rank), m_rankBytes.value(rank));
    m_memory->refresh();
}

QList<hrw::LiveChart*> MonitorView::charts() const { return {m_loss, m_accuracy, m_throughput, m_memory}; }

QString MonitorView::formatAccuracy(double fraction) {
    if (std::isnan(fraction)) return QStringLiteral("—");
    return QStringLiteral("%1 %").arg(fraction * 100.0, 0, 'f', 2);
}

QString MonitorView::testAccuracyText() const { return m_testAccuracy->text(); }

void MonitorView::clear() {
    m_timer->stop();
    m_dirty.clear();
    m_cardsDirty = false;
    for (hrw::LiveChart* c : charts()) c->clearData();
    m_emaInit = false;
    m_lastEvalStep = -1;
    m_peakBytes = 0;
    m_rankX.clear();
    m_rankBytes.clear();
    m_shownRank = 0;
    m_rankBox->clear();
    m_rankBox->setVisible(false);
    m_rankLabel->setVisible(false);
    for (QLabel* l : {m_testAccuracy, m_trainLoss, m_throughputValue, m_peakMemory}) l->setText(QStringLiteral("—"));
}

void MonitorView::addSteps(const QVector<hr::StepEvent>& steps) {
    if (steps.isEmpty()) return;
    QVector<double> x, loss, ema, acc, ips;
    x.reserve(steps.size());
    for (const hr::StepEvent& e : steps) {
        if (e.skipped) continue;
        const double s = double(e.step);
        x << s;
        loss << e.loss;
        m_ema = m_emaInit ? 0.95 * m_ema + 0.05 * e.loss : e.loss;
        m_emaInit = true;
        ema << m_ema;
        acc << e.accuracy * 100.0;
        ips << e.images_per_second;
    }
    m_loss->appendPoints(0, x, loss);
    m_loss->appendPoints(1, x, ema);
    m_accuracy->appendPoints(0, x, acc);
    m_throughput->appendPoints(0, x, ips);
    m_lossText = QString::number(m_ema, 'f', 4);
    m_throughputText = tr("%1 img/s").arg(steps.last().images_per_second, 0, 'f', 0);
    m_cardsDirty = true;
    markDirty(m_loss);
    markDirty(m_accuracy);
    markDirty(m_throughput);
}

void MonitorView::addEval(const hr::EvalEvent& e) {
    m_lastEvalStep = e.step;
    if (!std::isnan(e.loss)) m_loss->appendPoint(2, double(e.step), e.loss);
    if (!std::isnan(e.accuracy)) {
        m_accuracy->appendPoint(1, double(e.step), e.accuracy * 100.0);
        m_testAccuracy->setText(formatAccuracy(e.accuracy));
    }
    markDirty(m_loss);
    markDirty(m_accuracy);
}

void MonitorView::addEpoch(const hr::EpochEvent& e) {
    if (e.step == m_lastEvalStep) return;  // drawn as its evaluation
    if (!std::isnan(e.test_loss)) m_loss->appendPoint(2, double(e.step), e.test_loss);
    if (!std::isnan(e.test_accuracy)) {
        m_accuracy->appendPoint(1, double(e.step), e.test_accuracy * 100.0);
        m_testAccuracy->setText(formatAccuracy(e.test_accuracy));
    }
    markDirty(m_loss);
    markDirty(m_accuracy);
}

void MonitorView::addMemory(const hr::MemoryEvent& m) {
    const double x = double(qMax<std::int64_t>(0, m.step));
    const hrw::MemoryChart::GroupBytes bytes = hrw::MemoryChart::groupBytes(m.ledger.live);
    const bool newRank = !m_rankX.contains(m.rank);
    QVector<double>& xs = m_rankX[m.rank];
    QVector<hrw::MemoryChart::GroupBytes>& bs = m_rankBytes[m.rank];
    if (xs.size() >= 20000) {  // bounded, like the charts' own history
        xs.remove(0, xs.size() / 2);
        bs.remove(0, bs.size() / 2);
    }
    xs.push_back(x);
    bs.push_back(bytes);
    if (newRank) {
        m_rankBox->clear();
        for (int r : m_rankX.keys()) m_rankBox->addItem(tr("rank %1").arg(r), r);
        m_rankBox->setCurrentIndex(m_rankBox->findData(m_shownRank));
        const bool several = m_rankX.size() > 1;
        m_rankBox->setVisible(several);
        m_rankLabel->setVisible(several);
    }
    if (m.rank == m_shownRank) {
        m_memory->setCapacity(m.device_capacity);
        m_memory->appendSnapshots({x}, {bytes});
        markDirty(m_memory);
    }
    m_peakBytes = std::max(m_peakBytes, m.ledger.peak_total);
    m_peakMemory->setText(hrw::ModelBuilder::formatBytes(double(m_peakBytes)));
}

void MonitorView::setResult(const hr::TrainResult& r) {
    flush();  // the run's last points and cards now, not a refresh interval later
    if (r.status == "failed") return;
    if (r.epochs_completed > 0 || r.test_accuracy > 0) m_testAccuracy->setText(formatAccuracy(r.test_accuracy));
    m_trainLoss->setText(QString::number(r.train_loss, 'f', 4));
    m_throughputValue->setText(tr("%1 img/s").arg(r.images_per_second, 0, 'f', 0));
    m_peakBytes = std::max(m_peakBytes, r.ledger.peak_total);
    m_peakMemory->setText(hrw::ModelBuilder::formatBytes(double(m_peakBytes)));
}

void MonitorView::setDark(bool dark) {
    for (hrw::LiveChart* c : charts()) c->setDark(dark);
}

void MonitorView::resetViews() {
    for (hrw::LiveChart* c : charts()) c->resetView();
}

}  // namespace hrapp
