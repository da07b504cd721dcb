#include "charts/LiveChart.h"

#include <QContextMenuEvent>
#include <QMenu>

namespace hrw {

LiveChart::LiveChart(QWidget* parent) : QCustomPlot(parent) {
    setNoAntialiasingOnDrag(true);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectLegend);
    plotLayout()->insertRow(0);
    m_title = new QCPTextElement(this, QString(), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
    plotLayout()->addElement(0, 0, m_title);
    legend->setVisible(true);
    legend->setIconSize(14, 8);
    QFont lf = font();
    lf.setPointSizeF(qMax(7.0, lf.pointSizeF() - 1));
    legend->setFont(lf);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    xAxis->setRange(0, 10);
    yAxis->setRange(0, 1);
    setMinimumSize(260, 180);

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
    return graphCount() - 1;
}

void LiveChart::setSeriesName(int series, const QString& name) {
    if (series >= 0 && series < graphCount()) graph(series)->setName(name);
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
    bool any = false;
    for (int i = 0; i < graphCount(); ++i)
        if (graph(i)->visible() && !graph(i)->data()->isEmpty()) any = true;
    if (!any) return;
    rescaleAxes(/*onlyVisiblePlottables=*/true);
    if (m_xWindow > 0 && xAxis->range().size() > m_xWindow) {
        const QCPRange keys(xAxis->range().upper - m_xWindow, xAxis->range().upper);
        xAxis->setRange(keys);
        QCPRange values;
        bool found = false;
        for (int i = 0; i < graphCount(); ++i) {
            if (!graph(i)->visible()) continue;
            bool ok = false;
            const QCPRange r = graph(i)->getValueRange(ok, QCP::sdBoth, keys);
            if (!ok) continue;
            values = found ? QCPRange(qMin(values.lower, r.lower), qMax(values.upper, r.upper)) : r;
            found = true;
        }
        if (found) yAxis->setRange(values.lower, values.upper > values.lower ? values.upper : values.lower + 1);
    }
    QCPRange y = yAxis->range();
    if (m_fixedY.upper > m_fixedY.lower) {
        const double pad = m_fixedY.size() * 0.03;
        yAxis->setRange(m_fixedY.lower - pad, m_fixedY.upper + pad);
    } else if (m_includeZero && y.lower >= 0) {
        const double top = y.upper > 0 ? y.upper * 1.08 : 1.0;
        yAxis->setRange(0, top);
    } else {
        const double pad = qMax(1e-9, y.size() * 0.06);
        yAxis->setRange(y.lower - pad, y.upper + pad);
    }
    if (xAxis->range().size() <= 0) xAxis->setRange(xAxis->range().lower - 1, xAxis->range().upper + 1);
}

void LiveChart::refresh() {
    if (m_autoView) rescaleForAutoView();
    replot(rpQueuedReplot);
}

void LiveChart::setDark(bool dark) {
    m_dark = dark;
    const QColor bg = dark ? QColor(0x2b, 0x2d, 0x31) : QColor(Qt::white);
    const QColor fg = dark ? QColor(0xdd, 0xdd, 0xdd) : QColor(0x30, 0x30, 0x30);
    const QColor grid = dark ? QColor(0x45, 0x48, 0x4e) : QColor(0xe3, 0xe3, 0xe3);
    setBackground(bg);
    axisRect()->setBackground(bg);
    for (QCPAxis* a : {xAxis, yAxis}) {
        a->setBasePen(QPen(fg));
        a->setTickPen(QPen(fg));
        a->setSubTickPen(QPen(fg));
        a->setTickLabelColor(fg);
        a->setLabelColor(fg);
        a->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
    m_title->setTextColor(fg);
    legend->setBrush(dark ? QColor(0x2b, 0x2d, 0x31, 220) : QColor(255, 255, 255, 220));
    legend->setBorderPen(QPen(grid));
    legend->setTextColor(fg);
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* pli = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
            pli->setTextColor(pli->plottable()->visible() ? fg : QColor(150, 150, 150));
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
