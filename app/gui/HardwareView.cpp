#include "gui/HardwareView.h"

#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QStyle>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "charts/LiveChart.h"

namespace hrapp {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kWindowSeconds = 300.0;  // the charts follow the last five minutes
constexpr int kMaxPoints = 4000;

QColor deviceColor(int i) {
    static const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                    QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                    QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return colors[qMax(0, i) % 8];
}
const QColor kLedger(0x17, 0xbe, 0xcf), kLedgerReserved(0x7f, 0x7f, 0x7f);

QString num(double v, int decimals) { return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("—"); }
}  // namespace

HardwareView::HardwareView(QWidget* parent) : QWidget(parent) {
    m_refreshTimer = new QTimer(this);
    m_refreshTimer->setSingleShot(true);
    connect(m_refreshTimer, &QTimer::timeout, this, &HardwareView::refreshCharts);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 2, 6, 6);
    outer->setSpacing(4);

    auto* head = new QHBoxLayout;
    m_title = new QLabel(tr("Hardware"), this);
    QFont tf = m_title->font();
    tf.setBold(true);
    m_title->setFont(tf);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("telemetryStatus"));
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    head->addWidget(m_title);
    head->addSpacing(8);
    head->addWidget(m_status, 1);
    outer->addLayout(head);

    // The no-driver state: a clear banner instead of empty GPU charts.
    m_banner = new QFrame(this);
    m_banner->setObjectName(QStringLiteral("noDriverBanner"));
    m_banner->setFrameShape(QFrame::StyledPanel);
    auto* bl = new QHBoxLayout(m_banner);
    bl->setContentsMargins(8, 4, 8, 4);
    auto* icon = new QLabel(m_banner);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxInformation).pixmap(20, 20));
    m_bannerText = new QLabel(m_banner);
    m_bannerText->setWordWrap(true);
    m_bannerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bl->addWidget(icon, 0, Qt::AlignTop);
    bl->addWidget(m_bannerText, 1);
    outer->addWidget(m_banner);

    m_table = new QTableWidget(0, 8, this);
    m_table->setObjectName(QStringLiteral("deviceTable"));
    m_table->setHorizontalHeaderLabels({tr("GPU"), tr("Name"), tr("Memory used / total"), tr("Power / limit"),
                                        tr("Utilisation"), tr("Temperature"), tr("SM clock"), tr("Ranks")});
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    outer->addWidget(m_table);

    auto make = [this](const char* name, const QString& title, const QString& y) {
        auto* c = new hrw::LiveChart(this);
        c->setObjectName(QString::fromLatin1(name));
        c->setTitle(title);
        c->setAxisLabels(tr("time (s)"), y);
        c->setXWindow(kWindowSeconds);
        c->setMaxPointsPerSeries(kMaxPoints);
        c->setMinimumSize(200, 165);  // a legend row in Chinese too at 1366 x 768
        connect(c, &hrw::LiveChart::saveRequested, this, [this, c] { emit saveChartRequested(c); });
        return c;
    };
    m_power = make("powerChart", tr("GPU power"), tr("watts"));
    m_util = make("utilizationChart", tr("GPU utilisation"), tr("percent"));
    m_temp = make("temperatureChart", tr("GPU temperature"), tr("°C"));
    m_gpuMemory = make("gpuMemoryChart", tr("GPU memory"), tr("GiB"));
    m_cpu = make("cpuChart", tr("Host CPU"), tr("percent"));
    m_cpu->addSeries(tr("CPU utilisation"), deviceColor(0));
    m_hostMemory = make("hostMemoryChart", tr("Host memory"), tr("GiB"));
    m_hostMemory->addSeries(tr("RAM used"), deviceColor(4));
    m_hostMemory->addSeries(tr("Headroom resident (RSS)"), deviceColor(1));
    m_rankMemory = make("rankMemoryChart", tr("Memory per rank (ledger)"), tr("MiB"));
    m_rankMemory->hide();
    m_util->setFixedYRange(0, 100);
    m_cpu->setFixedYRange(0, 100);
    for (hrw::LiveChart* c : {m_power, m_gpuMemory, m_hostMemory, m_rankMemory}) c->setIncludeZero(true);
    m_grid = new QGridLayout;
    m_grid->setSpacing(6);
    outer->addLayout(m_grid, 1);
    setGpuState(false, QString());
}

QList<hrw::LiveChart*> HardwareView::charts() const {
    return {m_power, m_util, m_temp, m_gpuMemory, m_cpu, m_hostMemory, m_rankMemory};
}

void HardwareView::layoutCharts() {
    for (hrw::LiveChart* c : charts()) m_grid->removeWidget(c);
    for (int i = 0; i < 3; ++i) {
        m_grid->setColumnStretch(i, 0);
        m_grid->setRowStretch(i, 0);
    }
    const bool ranks = !m_cpuRankLedger.isEmpty();  // CPU ranks' ledgers: the per-rank chart joins the host ones
    m_rankMemory->setVisible(ranks);
    if (m_gpuAvailable || m_relayedCharts) {
        QList<hrw::LiveChart*> order{m_power, m_util, m_temp, m_gpuMemory, m_cpu, m_hostMemory};
        if (ranks) order << m_rankMemory;
        for (int i = 0; i < order.size(); ++i) {
            order[i]->show();
            m_grid->addWidget(order[i], i / 3, i % 3);
        }
        for (int i = 0; i < 3; ++i) m_grid->setColumnStretch(i, 1);
        for (int i = 0; i <= (order.size() - 1) / 3; ++i) m_grid->setRowStretch(i, 1);
    } else {
        for (hrw::LiveChart* c : {m_power, m_util, m_temp, m_gpuMemory}) c->hide();
        QList<hrw::LiveChart*> order{m_cpu, m_hostMemory};
        if (ranks) order << m_rankMemory;
        for (int i = 0; i < order.size(); ++i) {
            order[i]->show();
            m_grid->addWidget(order[i], 0, i);
            m_grid->setColumnStretch(i, 1);
        }
        m_grid->setRowStretch(0, 1);
    }
}

void HardwareView::setGpuState(bool available, const QString& status) {
    m_gpuAvailable = available;
    m_gpuStatus = status;
    applyGpuState();
}

void HardwareView::applyGpuState() {
    const bool gpus = m_gpuAvailable || m_relayedCharts;
    m_banner->setVisible(!m_gpuAvailable);
    m_table->setVisible(gpus);
    if (m_gpuAvailable) {
        m_status->setText(m_gpuStatus);
    } else {
        m_status->setText(m_relayedCharts ? tr("host only; GPUs as the ranks report them") : tr("host only"));
        m_bannerText->setText(
            m_relayedCharts
                ? tr("<b>No NVIDIA driver found</b> on this machine: the GPUs shown are those of the run's ranks, as "
                     "they report them. The host charts are this machine's, with each rank's resident memory.")
                : tr("<b>No NVIDIA driver found</b>: GPU power, utilisation, temperature and memory "
                     "cannot be read on this machine. The host's CPU and memory are shown instead."));
        m_banner->setToolTip(m_gpuStatus);  // the loader's own words (which library, why): a detail, also in the Log
    }
    layoutCharts();
}

QString HardwareView::statusText() const {
    return m_gpuAvailable ? m_status->text() : m_bannerText->text();
}

bool HardwareView::showsNoDriverState() const { return !m_gpuAvailable && !m_banner->isHidden(); }

int HardwareView::gpuSeries(hrw::LiveChart* chart, const QString& key, const QString& name, int color) {
    const QString k = chart->objectName() + QLatin1Char('/') + key;
    auto it = m_series.constFind(k);
    if (it != m_series.constEnd()) return *it;
    const int s = chart->addSeries(name, deviceColor(color));
    chart->setDark(chart->isDark());  // legend colours of the new series
    m_series.insert(k, s);
    return s;
}

// One GPU's figures on the four GPU charts, as the series `key` (its index, or "host:index").
void HardwareView::addGpuPoints(double t, const hr::GpuStats& g, const QString& key, const QString& label, int color) {
    if (std::isfinite(g.power_watts)) m_power->appendPoint(gpuSeries(m_power, key, label, color), t, g.power_watts);
    if (std::isfinite(g.gpu_utilization)) m_util->appendPoint(gpuSeries(m_util, key, label, color), t, g.gpu_utilization);
    if (std::isfinite(g.temperature_c)) m_temp->appendPoint(gpuSeries(m_temp, key, label, color), t, g.temperature_c);
    if (g.memory_used >= 0)
        m_gpuMemory->appendPoint(gpuSeries(m_gpuMemory, key, tr("%1 used (NVML)").arg(label), color), t,
                                 double(g.memory_used) / kGiB);
}

void HardwareView::addSample(const hr::TelemetrySample& s) {
    const double t = s.t_seconds;
    if (std::isfinite(s.host.cpu_utilization)) m_cpu->appendPoint(0, t, s.host.cpu_utilization);
    if (s.host.ram_used >= 0) m_hostMemory->appendPoint(0, t, double(s.host.ram_used) / kGiB);
    if (s.host.process_rss >= 0) m_hostMemory->appendPoint(1, t, double(s.host.process_rss) / kGiB);
    for (const hr::GpuStats& g : s.gpus) {
        const QString label = s.gpus.size() > 1 ? tr("GPU %1").arg(g.index) : tr("GPU %1 (%2)").arg(g.index).arg(QString::fromStdString(g.name));
        addGpuPoints(t, g, QString::number(g.index), label, g.index);
    }
    if (!s.gpus.empty() || !m_localGpus.empty()) {
        m_localGpus = s.gpus;
        updateTable();
    }
    scheduleRefresh();
}

void HardwareView::scheduleRefresh() {
    const qint64 since = m_sinceRefresh.isValid() ? m_sinceRefresh.elapsed() : m_refreshMs;
    if (since >= m_refreshMs) {
        refreshCharts();
    } else if (!m_refreshTimer->isActive()) {
        m_refreshTimer->start(int(m_refreshMs - since));
    }
}

void HardwareView::addRankTelemetry(double t, const RankTelemetry& e, const QString& localHost) {
    const QString host = QString::fromStdString(e.host);
    const bool local = host == localHost;
    m_ranks[e.rank] = Place{host, e.gpu, local};
    const hr::HostStats& h = e.sample.host;
    if (h.process_rss >= 0) {
        const QString name = local ? tr("rank %1 resident (RSS)").arg(e.rank) : tr("rank %1 resident (RSS, %2)").arg(e.rank).arg(host);
        m_hostMemory->appendPoint(gpuSeries(m_hostMemory, QStringLiteral("rss/%1").arg(e.rank), name, 2 + e.rank), t,
                                  double(h.process_rss) / kGiB);
    }
    if (e.machine && !local) {  // another machine's CPU and RAM; this one's are the own monitor's
        const int color = 5 + int(m_ranks.size());
        if (std::isfinite(h.cpu_utilization))
            m_cpu->appendPoint(gpuSeries(m_cpu, QStringLiteral("cpu/") + host, tr("%1 CPU").arg(host), color), t, h.cpu_utilization);
        if (h.ram_used >= 0)
            m_hostMemory->appendPoint(gpuSeries(m_hostMemory, QStringLiteral("ram/") + host, tr("%1 RAM used").arg(host), color),
                                      t, double(h.ram_used) / kGiB);
    }
    // the GPUs the own monitor does not sample: another machine's, or this one's when it has no driver here
    if (e.machine && !(local && m_gpuAvailable)) {
        for (const hr::GpuStats& g : e.sample.gpus) {
            const QString key = local ? QString::number(g.index) : QStringLiteral("%1:%2").arg(host).arg(g.index);
            auto it = m_relayed.find(key);
            const int color = it != m_relayed.end() ? it->second.color : int(m_localGpus.size() + m_relayed.size());
            m_relayed[key] = Relayed{host, g, color, local};
            addGpuPoints(t, g, key, local ? tr("GPU %1").arg(g.index) : tr("%1 GPU %2").arg(host).arg(g.index), color);
        }
        if (!m_relayed.empty() && !m_relayedCharts) {
            m_relayedCharts = true;
            applyGpuState();
        }
    }
    updateTable();
    scheduleRefresh();
}

void HardwareView::clearRanks(bool keepCharts) {
    m_ranks.clear();
    m_relayed.clear();
    if (!keepCharts) {
        m_layoutRanks = m_layoutPipeline = 1;
        const bool had = !m_cpuRankLedger.isEmpty();
        m_cpuRankLedger.clear();  // the next run's ranks may run other stages: new lines, new names
        m_rankMemory->removeAllSeries();
        if (m_relayedCharts || had) {
            m_relayedCharts = false;
            applyGpuState();
        }
    }
    updateTable();
}

void HardwareView::setRunLayout(int ranks, int pipeline) {
    m_layoutRanks = qMax(1, ranks);
    m_layoutPipeline = qMax(1, pipeline);
}

QString HardwareView::rankName(int rank) const {
    if (m_layoutPipeline <= 1 || m_layoutRanks % m_layoutPipeline != 0) return tr("rank %1").arg(rank);
    const int replicas = m_layoutRanks / m_layoutPipeline;
    if (replicas == 1) return tr("rank %1: stage %2").arg(rank).arg(rank);
    return tr("rank %1: stage %2 of replica %3").arg(rank).arg(rank / replicas).arg(rank % replicas);
}

void HardwareView::refreshCharts() {
    m_refreshTimer->stop();
    m_sinceRefresh.start();
    for (hrw::LiveChart* c : charts())
        if (!c->isHidden()) c->refresh();
}

void HardwareView::setRefreshIntervalMs(int ms) { m_refreshMs = qMax(0, ms); }

void HardwareView::addLedger(double t, const hr::MemoryEvent& m, int gpu) {
    const double alloc = double(m.ledger.live_total) / kGiB;
    const double reserved = double(m.ledger.live_total + m.ledger.reserved_free) / kGiB;
    if (m.rank > 0 || !m_ranks.empty()) {  // a multi-rank run: each rank on a GPU, on its own line
        const auto place = m_ranks.find(m.rank);
        if (place == m_ranks.end()) return;  // not placed yet
        if (place->second.gpu < 0) {         // a CPU rank: its ledger on the per-rank chart, in MiB
            auto s = m_cpuRankLedger.constFind(m.rank);
            if (s == m_cpuRankLedger.constEnd()) {
                s = m_cpuRankLedger.insert(m.rank, m_rankMemory->addSeries(rankName(m.rank), deviceColor(m.rank)));
                m_rankMemory->setDark(m_rankMemory->isDark());
                if (m_cpuRankLedger.size() == 1) layoutCharts();
            }
            m_rankMemory->appendPoint(*s, t, double(m.ledger.live_total) / (1024.0 * 1024.0));
            scheduleRefresh();
            return;
        }
        auto series = m_rankLedger.constFind(m.rank);
        if (series == m_rankLedger.constEnd()) {
            const int a = m_gpuMemory->addSeries(tr("%1 ledger allocated").arg(rankName(m.rank)), deviceColor(2 + m.rank));
            const int r = m_gpuMemory->addSeries(tr("%1 ledger reserved").arg(rankName(m.rank)), deviceColor(2 + m.rank), true);
            m_gpuMemory->setDark(m_gpuMemory->isDark());
            series = m_rankLedger.insert(m.rank, qMakePair(a, r));
        }
        m_gpuMemory->appendPoint(series->first, t, alloc);
        m_gpuMemory->appendPoint(series->second, t, reserved);
        return;
    }
    if (gpu >= 0) {
        if (m_ledgerAllocGpu < 0) {
            m_ledgerAllocGpu = m_gpuMemory->addSeries(tr("ledger allocated"), kLedger);
            m_ledgerReservedGpu = m_gpuMemory->addSeries(tr("ledger reserved"), kLedgerReserved, true);
            m_gpuMemory->setDark(m_gpuMemory->isDark());
        }
        m_gpuMemory->appendPoint(m_ledgerAllocGpu, t, alloc);
        m_gpuMemory->appendPoint(m_ledgerReservedGpu, t, reserved);
        m_gpuMemory->refresh();
    }
    // A CPU run's ledger is megabytes against gigabytes of RAM: the Memory by category chart shows it.
}

void HardwareView::updateTable() {
    struct Row {
        QString gpu;   // "0", or "host:0" for another machine's
        QString host;  // "" : this machine
        const hr::GpuStats* g;
    };
    std::vector<Row> rows;
    for (const hr::GpuStats& g : m_localGpus) rows.push_back({QString::number(g.index), QString(), &g});
    for (const auto& [key, r] : m_relayed) rows.push_back({key, r.local ? QString() : r.host, &r.stats});
    if (m_table->rowCount() != int(rows.size())) m_table->setRowCount(int(rows.size()));
    auto set = [this](int row, int col, const QString& text) {
        QTableWidgetItem* it = m_table->item(row, col);
        if (!it) {
            it = new QTableWidgetItem;
            if (col != 1) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, col, it);
        }
        if (it->text() != text) it->setText(text);
    };
    for (int r = 0; r < int(rows.size()); ++r) {
        const hr::GpuStats& g = *rows[size_t(r)].g;
        set(r, 0, rows[size_t(r)].gpu);
        set(r, 1, QString::fromStdString(g.name));
        set(r, 2, g.memory_used >= 0 && g.memory_total > 0
                      ? tr("%1 / %2 GiB").arg(double(g.memory_used) / kGiB, 0, 'f', 1).arg(double(g.memory_total) / kGiB, 0, 'f', 1)
                      : QStringLiteral("—"));
        set(r, 3, tr("%1 / %2 W").arg(num(g.power_watts, 0), num(g.power_limit_watts, 0)));
        set(r, 4, std::isfinite(g.gpu_utilization) ? tr("%1 %").arg(g.gpu_utilization, 0, 'f', 0) : QStringLiteral("—"));
        set(r, 5, std::isfinite(g.temperature_c) ? tr("%1 °C").arg(g.temperature_c, 0, 'f', 0) : QStringLiteral("—"));
        set(r, 6, std::isfinite(g.sm_clock_mhz) ? tr("%1 MHz").arg(g.sm_clock_mhz, 0, 'f', 0) : QStringLiteral("—"));
        QStringList ranks;  // the ranks that train on this GPU
        for (const auto& [rank, p] : m_ranks)
            if (p.gpu == g.index && (rows[size_t(r)].host.isEmpty() ? p.local : p.host == rows[size_t(r)].host))
                ranks << QString::number(rank);
        set(r, 7, ranks.join(QStringLiteral(", ")));
    }
    const int h = m_table->horizontalHeader()->height() + 2 * m_table->frameWidth() +
                  m_table->verticalHeader()->defaultSectionSize() * qMax(1, m_table->rowCount());
    m_table->setFixedHeight(h);
}

void HardwareView::setDark(bool dark) {
    for (hrw::LiveChart* c : charts()) c->setDark(dark);
}

void HardwareView::resetViews() {
    for (hrw::LiveChart* c : charts()) c->resetView();
}

}  // namespace hrapp
