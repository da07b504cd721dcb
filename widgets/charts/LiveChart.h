#pragma once
// LiveChart: a QCustomPlot for live training curves. Points arrive in batches (appendPoints), each
// series keeps a bounded history (the older half is decimated 2:1 when a series grows past
// maxPointsPerSeries), replots are queued (rpQueuedReplot); a chart that is not visible (a hidden tab,
// a minimised window) is not drawn at all: refresh() rescales it and marks it stale, and it is drawn
// once, with all its data, when it is next painted. Wheel zooms, drag pans, a legend click
// toggles a series, double click or "Reset view" returns to the automatic view. The legend sits in a
// row under the plot or in a column beside it, whichever leaves the data more room (charts/ChartStyle.h);
// the automatic view fits the data (a lone point gets a
// range around it). The chart does not export: it emits saveRequested() and the application writes
// the file.
#include <QColor>
#include <array>
#include <QString>
#include <QVector>

#include <qcustomplot.h>

namespace hrw {

class LiveChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit LiveChart(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    QString title() const;
    void setAxisLabels(const QString& x, const QString& y);
    // Adds a line series; returns its index.
    int addSeries(const QString& name, const QColor& color, bool dashed = false, bool scatter = false);
    int seriesCount() const { return graphCount(); }
    void setSeriesName(int series, const QString& name);
    void appendPoints(int series, const QVector<double>& x, const QVector<double>& y);
    void appendPoint(int series, double x, double y) { appendPoints(series, {x}, {y}); }
    int pointCount(int series) const;
    void clearData();
    void setMaxPointsPerSeries(int n) { m_maxPoints = qMax(64, n); }
    int maxPointsPerSeries() const { return m_maxPoints; }
    // > 0: the automatic view shows only the newest `width` of x (a rolling window, e.g. the last
    // five minutes of a monitor); 0: all of it.
    void setXWindow(double width) { m_xWindow = qMax(0.0, width); }
    double xWindow() const { return m_xWindow; }
    // The automatic view's y range: fixed (e.g. 0..100 for percentages; lower >= upper: automatic),
    // or automatic but always including zero (bytes, watts, images/s).
    void setFixedYRange(double lower, double upper) { m_fixedY = QCPRange(lower, upper); }
    void setIncludeZero(bool on) { m_includeZero = on; }
    // Integer ticks on x (epochs).
    void setIntegerX(bool on);
    // Removes every series (e.g. before showing other runs).
    void removeAllSeries();
    // Colours for light or dark windows.
    virtual void setDark(bool dark);
    bool isDark() const { return m_dark; }
    bool autoView() const { return m_autoView; }
    // Data arrived while the chart was not visible: it is drawn when next painted.
    bool isStale() const { return m_stale; }

public slots:
    void resetView();
    // Rescales (when the view is automatic) and queues a replot.
    void refresh();

signals:
    void saveRequested();

protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    virtual void rescaleForAutoView();
    void decimate(QCPGraph* graph);
    // The legend below or beside the plot (charts/ChartStyle.h wrapLegend), weighed again when the size,
    // the layout's rows or the axis margins changed since it last was (or always: force).
    void placeLegend(bool force = false);

    QCPTextElement* m_title = nullptr;
    QString m_titleText;
    QString m_xLabel;
    QString m_yLabel;
    int m_maxPoints = 20000;
    double m_xWindow = 0;
    QCPRange m_fixedY{0, 0};
    bool m_includeZero = false;
    bool m_autoView = true;
    bool m_dark = false;
    bool m_stale = false;
    std::array<int, 7> m_legendKey{};
};

}  // namespace hrw
