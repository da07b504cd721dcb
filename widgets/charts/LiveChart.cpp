#include "charts/LiveChart.h"

#include "charts/ChartStyle.h"

#include <QContextMenuEvent>
#include <QResizeEvent>
#include <QMenu>

namespace hrw {

LiveChart::LiveChart(QWidget* parent) : QCustomPlot(parent) {
    setNoAntialiasingOnDrag(true);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectLegend);
    plotLayout()->insertRow(0);
    m_title = new QCPTextElement(this, QString(), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
    plotLayout()->addElement(0, 0, m_title);
    // The legend under the plot, never on the curves.
    legend->setVisible(true);
    styleLegend(this);
    moveLegendBelow(this);
    xAxis->setRange(0, 10);
    yAxis->setRange(0, 1);
    for (QCPAxis* a : {xAxis, yAxis}) {  // tight around the labels: a short chart's height is the data's
        a->setPadding(2);
        a->setLabelPadding(2);
        a->setTickLabelPadding(3);
    }
    m_title->setMargins(QMargins(2, 2, 2, 0));
    setMinimumSize(240, 150);  // the Monitor's four and the hardware's row fit a 1366 x 768 screen

    // Any user zoom or pan leaves the automatic view until resetView().
    connect(this, &QCustomPlot::mouseWheel, this, [this] { m_autoView = false; });
    connect(this, &QCustomPlot::mousePress, this, [this] { m_autoView = false; });
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this] { resetView(); });
    connect(this, &QCustomPlot::legendClick, this,
            [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
                if (auto* pli = qobject_cast<QCPPlottableLegendItem*>(item)) {
                    QCPAbstractPlottable* p = pli->plottable();
                    p->setVisible(!p->visible());
                    pli->setTextColor(p->visible() ? legend->textColor() : QColor(150, 150, 150));
                    refresh();
                }
            });
    setDark(false);
}

void LiveChart::setTitle(const QString& title) {
    m_titleText = title;
    m_title->setText(title);
}

QString LiveChart::title() const { return m_titleText; }

void LiveChart::setAxisLabels(const QString& x, const QString& y) {
    m_xLabel = x;
    m_yLabel = y;
    xAxis->setLabel(x);
    yAxis->setLabel(y);
}

void LiveChart::resizeEvent(QResizeEvent* event) {
    placeLegend();  // at the new size, before the replot the resize queues
    QCustomPlot::resizeEvent(event);
}

void LiveChart::placeLegend(bool force) {
    // again when what it was weighed at changed: the size, a row (the memory chart's note), the room the
    // tick labels take (their widths follow the data)
    auto key = [this] {
        const QMargins m = axisRect()->margins();
        return std::array<int, 7>{width(), height(), plotLayout()->rowCount(), m.left(), m.top(), m.right(), m.bottom()};
    };
    if (!force && key() == m_legendKey) return;
    wrapLegend(this);
    m_legendKey = key();
}

int LiveChart::addSeries(const QString& name, const QColor& color, bool dashed, bool scatter) {
    QCPGraph* g = addGraph();
    g->setName(name);
    // 1 px: a wider antialiased pen made a replot of 100,000 points take ~210 ms instead of ~3 ms
    // (scripts/bench gui)
    QPen pen(color, 1.0);
    if (dashed) pen.setStyle(Qt::DashLine);
    g->setPen(pen);
    g->setAdaptiveSampling(true);
    if (scatter) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 6));
    placeLegend(true);
    return graphCount() - 1;
}

void LiveChart::setSeriesName(int series, const QString& name) {
    if (series >= 0 && series < graphCount()) graph(series)->setName(name);
    placeLegend(true);
}

void LiveChart::appendPoints(int series, const QVector<double>& x, const QVector<double>& y) {
    if (series < 0 || series >= graphCount() || x.isEmpty()) return;
    QCPGraph* g = graph(series);
    g->addData(x, y, /*alreadySorted=*/true);
    if (g->data()->size() > m_maxPoints) decimate(g);
}

int LiveChart::pointCount(int series) const {
    if (series < 0 || series >= graphCount()) return 0;
    return graph(series)->data()->size();
}

void LiveChart::decimate(QCPGraph* graph) {
    // Keep the newer half as it is, thin the older half 2:1: recent detail stays, memory is bounded.
    auto data = graph->data();
    const int n = data->size();
    const int half = n / 2;
    QVector<QCPGraphData> kept;
    kept.reserve(n - half / 2 + 1);
    int i = 0;
    for (auto it = data->constBegin(); it != data->constEnd(); ++it, ++i) {
        if (i >= half || (i % 2) == 0) kept.push_back(*it);
    }
    data->set(kept, true);
}

void LiveChart::setIntegerX(bool on) {
    if (on) {
        QSharedPointer<QCPAxisTickerFixed> t(new QCPAxisTickerFixed);
        t->setTickStep(1.0);
        t->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        xAxis->setTicker(t);
    } else {
        xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
}

void LiveChart::removeAllSeries() {
    clearGraphs();
    resetView();
}

void LiveChart::clearData() {
    for (int i = 0; i < graphCount(); ++i) graph(i)->data()->clear();
    resetView();
}

void LiveChart::resetView() {
    m_autoView = true;
    refresh();
}

void LiveChart::rescaleForAutoView() {
    // keys of every visible series with data
    bool any = false;
    QCPRange keys;
    for (int i = 0; i < graphCount(); ++i) {
        QCPGraph* g = graph(i);
        if (!g->visible() || g->data()->isEmpty()) continue;
        bool ok = false;
        const QCPRange k = g->getKeyRange(ok);
        if (!ok) continue;
        keys = any ? QCPRange(qMin(keys.lower, k.lower), qMax(keys.upper, k.upper)) : k;
        any = true;
    }
    if (!any) return;
    const bool windowed = m_xWindow > 0 && keys.size() > m_xWindow;
    if (windowed) keys.lower = keys.upper - m_xWindow;
    // values within those keys
    QCPRange values;
    bool found = false;
    for (int i = 0; i < graphCount(); ++i) {
        QCPGraph* g = graph(i);
        if (!g->visible() || g->data()->isEmpty()) continue;
        bool ok = false;
        const QCPRange v = g->getValueRange(ok, QCP::sdBoth, windowed ? keys : QCPRange());
        if (!ok) continue;
        values = found ? QCPRange(qMin(values.lower, v.lower), qMax(values.upper, v.upper)) : v;
        found = true;
    }
    // margins of at least 8 px, so a marker at either end stays whole inside the axis rect
    const double xMargin = qMax(0.03, 8.0 / qMax(1, axisRect()->width()));
    const double yMargin = qMax(m_includeZero ? 0.08 : 0.06, 8.0 / qMax(1, axisRect()->height()));
    xAxis->setRange(windowed ? keys : fitKeyRange(keys.lower, keys.upper, xMargin));
    if (m_fixedY.upper > m_fixedY.lower) {
        const double pad = m_fixedY.size() * 0.03;
        yAxis->setRange(m_fixedY.lower - pad, m_fixedY.upper + pad);
    } else if (found) {
        yAxis->setRange(fitRange(values.lower, values.upper, yMargin, m_includeZero));
    }
}

void LiveChart::refresh() {
    if (m_autoView) rescaleForAutoView();
    if (!isVisible()) {  // nobody can see it: drawn when it is next painted (paintEvent)
        m_stale = true;
        return;
    }
    m_stale = false;
    placeLegend();
    replot(rpQueuedReplot);
}

void LiveChart::paintEvent(QPaintEvent* event) {
    if (m_stale) {  // shown again (a tab switch, grab()): draw what arrived while hidden, then paint it
        m_stale = false;
        if (m_autoView) rescaleForAutoView();
        placeLegend();
        replot(rpQueuedRefresh);
    }
    QCustomPlot::paintEvent(event);
}

void LiveChart::setDark(bool dark) {
    m_dark = dark;
    styleChart(this, dark);
    const ChartColors c = chartColors(dark);
    m_title->setTextColor(c.foreground);
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* pli = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
            pli->setTextColor(pli->plottable()->visible() ? c.foreground : QColor(150, 150, 150));
    replot(rpQueuedReplot);
}

void LiveChart::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    menu.addAction(tr("Reset view"), this, &LiveChart::resetView);
    QAction* legendAction = menu.addAction(tr("Show legend"));
    legendAction->setCheckable(true);
    legendAction->setChecked(legend->visible());
    connect(legendAction, &QAction::toggled, this, [this](bool on) {
        legend->setVisible(on);
        replot(rpQueuedReplot);
    });
    menu.addSeparator();
    menu.addAction(tr("Save chart as…"), this, &LiveChart::saveRequested);
    menu.exec(event->globalPos());
}

}  // namespace hrw
