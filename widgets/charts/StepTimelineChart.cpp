#include "charts/StepTimelineChart.h"

#include <QToolTip>

#include <algorithm>

#include "charts/ChartStyle.h"
#include "charts/PlanBarChart.h"
#include "text/CoreText.h"

namespace hrw {

QString StepTimelineChart::kindText(hr::StepPhaseKind k) {
    switch (k) {
        case hr::StepPhaseKind::forward: return tr("forward");
        case hr::StepPhaseKind::recompute: return tr("recompute");
        case hr::StepPhaseKind::loss: return tr("loss");
        case hr::StepPhaseKind::backward: return tr("backward");
        case hr::StepPhaseKind::reduce: return tr("reduce");
        case hr::StepPhaseKind::offload: return tr("offload");
        case hr::StepPhaseKind::update: return tr("update");
        case hr::StepPhaseKind::send: return tr("send");
        case hr::StepPhaseKind::receive: return tr("receive");
        case hr::StepPhaseKind::gather: return tr("gather");
    }
    return {};
}

StepTimelineChart::StepTimelineChart(QWidget* parent) : QCustomPlot(parent) {
    setMinimumHeight(200);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    setMouseTracking(true);
    plotLayout()->insertRow(0);
    m_titleElement = new QCPTextElement(this, QString(), QFont(font().family(), font().pointSize(), QFont::Bold));
    plotLayout()->addElement(0, 0, m_titleElement);
    // the stack: graph k is the sum of categories 0..k, filled down to graph k-1 (the first to the axis)
    QCPGraph* below = nullptr;
    for (hr::MemCategory c : hr::all_categories()) {
        QCPGraph* g = addGraph();
        g->setName(PlanBarChart::categoryName(c));
        const QColor color = PlanBarChart::categoryColor(c);
        g->setPen(QPen(color.darker(125), 1));
        g->setBrush(color);
        g->setLineStyle(QCPGraph::lsStepLeft);
        if (below) g->setChannelFillGraph(below);
        below = g;
        m_graphs[static_cast<std::size_t>(c)] = g;
    }
    m_phaseTicks.reset(new QCPAxisTickerText);
    xAxis->setTicker(m_phaseTicks);
    xAxis->setSubTicks(false);
    m_peakLine = new QCPItemStraightLine(this);
    m_peakLine->setPen(QPen(QColor(0xd6, 0x27, 0x28), 2, Qt::DashLine));
    m_peakText = new QCPItemText(this);
    m_peakText->setColor(QColor(0xd6, 0x27, 0x28));
    m_peakText->setClipToAxisRect(false);
    m_peakText->position->setType(QCPItemPosition::ptPlotCoords);
    // no legend: the plan's bar chart above has the same colours and names; the hover lists them
    legend->setVisible(false);
    plotLayout()->setRowStretchFactor(0, 0.001);  // the title's row as tall as the title
    setDark(false);
    clearTimeline();
}

void StepTimelineChart::clearTimeline() {
    m_timeline = hr::StepTimeline{};
    m_title.clear();
    rebuild();
}

void StepTimelineChart::setTimeline(const hr::StepTimeline& timeline, const QString& title) {
    m_timeline = timeline;
    m_title = title;
    rebuild();
}

std::size_t StepTimelineChart::pointBytes(int i, hr::MemCategory c) const {
    if (i < 0 || i >= pointCount()) return 0;
    return hr::at(m_points[static_cast<std::size_t>(i)].live, c);
}

std::size_t StepTimelineChart::pointTotal(int i) const {
    if (i < 0 || i >= pointCount()) return 0;
    return hr::total(m_points[static_cast<std::size_t>(i)].live);
}

int StepTimelineChart::pointPhase(int i) const {
    if (i < 0 || i >= pointCount()) return -1;
    return m_points[static_cast<std::size_t>(i)].phase;
}

int StepTimelineChart::seriesCount() const {
    int n = 0;
    for (QCPGraph* g : m_graphs) n += g->visible() ? 1 : 0;
    return n;
}

QString StepTimelineChart::peakSentence() const { return m_timeline.empty() ? QString() : peakText(m_timeline); }

QString StepTimelineChart::hoverText(int i) const {
    if (i < 0 || i >= pointCount()) return {};
    const Point& p = m_points[static_cast<std::size_t>(i)];
    QString where = p.phase < 0 ? tr("the start of the step") : phaseText(m_timeline.phases[static_cast<std::size_t>(p.phase)]);
    if (p.phase >= 0 && !m_timeline.phases.empty() && m_timeline.phases.back().micro > 0)
        where = tr("%1, micro-batch %2").arg(where).arg(m_timeline.phases[static_cast<std::size_t>(p.phase)].micro + 1);
    QStringList lines;
    lines << tr("%1: %2 live").arg(where, coreBytesText(hr::total(p.live)));
    for (hr::MemCategory c : hr::all_categories())
        if (hr::at(p.live, c) > 0) lines << QStringLiteral("  %1 %2").arg(PlanBarChart::categoryName(c), coreBytesText(hr::at(p.live, c)));
    return lines.join(QLatin1Char('\n'));
}

void StepTimelineChart::rebuild() {
    m_points.clear();
    m_peakPoint = -1;
    m_phaseTicks->clear();
    const hr::StepTimeline& t = m_timeline;
    m_titleElement->setText(m_title);
    if (!t.empty()) {
        m_points.push_back({-1, t.base});
        std::size_t ev = 0;
        hr::CategoryBytes live = t.base;
        for (std::size_t p = 0; p < t.phases.size(); ++p) {
            std::size_t in = 0;
            for (; ev < t.events.size() && t.events[ev].phase == static_cast<int>(p); ++ev, ++in) {
                live = t.events[ev].live;
                m_points.push_back({static_cast<int>(p), live});
                if (t.events[ev].phase == t.peak_phase && static_cast<int>(ev) == t.peak_event)
                    m_peakPoint = static_cast<int>(m_points.size()) - 1;
            }
            if (in == 0) m_points.push_back({static_cast<int>(p), live});
        }
        if (m_peakPoint < 0) m_peakPoint = 0;
        // ticks where the kind of phase changes (forward, backward, recompute, update; the one-point loss
        // and reduction phases unlabelled), none closer than a tenth of the axis to the one before
        int last = -1000000;
        hr::StepPhaseKind lastKind = hr::StepPhaseKind::loss;
        const int gap = std::max(1, static_cast<int>(m_points.size()) / 10);
        for (std::size_t i = 1; i < m_points.size(); ++i) {
            const hr::StepPhaseKind k = t.phases[static_cast<std::size_t>(m_points[i].phase)].kind;
            if (k == lastKind) continue;
            lastKind = k;
            if (k == hr::StepPhaseKind::loss || k == hr::StepPhaseKind::reduce || k == hr::StepPhaseKind::offload ||
                k == hr::StepPhaseKind::send || k == hr::StepPhaseKind::receive || k == hr::StepPhaseKind::gather)
                continue;
            if (static_cast<int>(i) - last < gap) continue;
            last = static_cast<int>(i);
            m_phaseTicks->addTick(static_cast<double>(i), kindText(k));
        }
    }
    // stacked values, one graph per category (hidden when it has no bytes)
    std::size_t most = 0;
    for (const Point& p : m_points) most = std::max(most, hr::total(p.live));
    QString unit;
    const double div = PlanBarChart::unitFor(std::max<double>(double(most), 1024.0), &unit);
    QVector<double> keys(static_cast<int>(m_points.size()));
    for (int i = 0; i < keys.size(); ++i) keys[i] = i;
    std::vector<double> running(m_points.size(), 0.0);
    for (hr::MemCategory c : hr::all_categories()) {
        QCPGraph* g = m_graphs[static_cast<std::size_t>(c)];
        QVector<double> values(keys.size());
        bool any = false;
        for (std::size_t i = 0; i < m_points.size(); ++i) {
            const double b = double(hr::at(m_points[i].live, c));
            any = any || b > 0;
            running[i] += b;
            values[static_cast<int>(i)] = running[i] / div;
        }
        g->setData(keys, values, true);
        g->setVisible(any);
    }
    // a hidden graph must not be the fill's lower edge: fill to the nearest visible one below
    QCPGraph* below = nullptr;
    for (QCPGraph* g : m_graphs) {
        if (!g->visible()) continue;
        g->setChannelFillGraph(below);
        below = g;
    }
    yAxis->setLabel(unit);
    yAxis->setRange(0, std::max(1.0, double(most) * 1.12 / div));
    xAxis->setRange(-0.5, std::max(1.0, double(m_points.size()) - 0.5));
    xAxis->setLabel(t.empty() ? tr("no timeline") : tr("events of the step, in order"));
    const bool peak = !t.empty();
    m_peakLine->setVisible(peak);
    m_peakText->setVisible(peak);
    if (peak) {
        m_peakLine->point1->setCoords(m_peakPoint, 0);
        m_peakLine->point2->setCoords(m_peakPoint, 1);
        m_peakText->position->setCoords(m_peakPoint, double(most) * 1.1 / div);
        m_peakText->setPositionAlignment((m_peakPoint > int(m_points.size()) * 6 / 10 ? Qt::AlignRight : Qt::AlignLeft) |
                                         Qt::AlignVCenter);
        m_peakText->setText(tr("peak %1").arg(coreBytesText(t.peak_total)));
    }
    setToolTip(peak ? peakSentence() : QString());
    replot(rpQueuedReplot);
}

void StepTimelineChart::mouseMoveEvent(QMouseEvent* event) {
    QCustomPlot::mouseMoveEvent(event);
    if (m_points.empty()) return;
    const int i = static_cast<int>(std::lround(xAxis->pixelToCoord(event->position().x())));
    if (i < 0 || i >= pointCount()) return;
    QToolTip::showText(event->globalPosition().toPoint(), hoverText(i), this);
}

void StepTimelineChart::setDark(bool dark) {
    m_dark = dark;
    styleChart(this, dark);
    m_titleElement->setTextColor(chartColors(dark).foreground);
    replot(rpQueuedReplot);
}

}  // namespace hrw
