#pragma once
// StepTimelineChart: one training step's memory over its phases (memory/step_timeline.h, issue 47), the
// live bytes stacked by ledger category (the plan chart's colours) against the step's events in order:
// the forward ramp, a checkpointed block's recompute, the backward's fall, the update. The peak is marked
// with a line and its sentence; hovering names the phase, the layer and the bytes there. One chart shows
// one timeline (the Memory plan tab puts the predicted one and, after a run, the measured one side by side).
#include <array>
#include <cstddef>
#include <vector>

#include <qcustomplot.h>

#include "memory/step_timeline.h"

namespace hrw {

class StepTimelineChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit StepTimelineChart(QWidget* parent = nullptr);

    // title: "Predicted step" / "Measured step 2" (shown above the plot)
    void setTimeline(const hr::StepTimeline& timeline, const QString& title);
    void clearTimeline();
    const hr::StepTimeline& timeline() const { return m_timeline; }

    // What is drawn, for tests and the tooltip: points (x = 0 the step's start, then one per event, a
    // phase without events one point), the live bytes of category c at point i, the phase of point i
    // (-1: the start), the point of the peak, and the hover text at point i.
    int pointCount() const { return static_cast<int>(m_points.size()); }
    std::size_t pointBytes(int i, hr::MemCategory c) const;
    std::size_t pointTotal(int i) const;
    int pointPhase(int i) const;
    int peakPoint() const { return m_peakPoint; }
    QString hoverText(int i) const;
    QString peakSentence() const;
    // the stacked series (one per category with bytes)
    int seriesCount() const;

    void setDark(bool dark);
    // a kind of phase as the axis names it ("forward", "backward", ...), translated
    static QString kindText(hr::StepPhaseKind kind);

protected:
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    struct Point {
        int phase = -1;
        hr::CategoryBytes live{};
    };
    void rebuild();

    hr::StepTimeline m_timeline;
    QString m_title;
    std::vector<Point> m_points;
    int m_peakPoint = -1;
    std::array<QCPGraph*, hr::kMemCategoryCount> m_graphs{};
    QCPItemStraightLine* m_peakLine = nullptr;
    QCPItemText* m_peakText = nullptr;
    QCPTextElement* m_titleElement = nullptr;
    QSharedPointer<QCPAxisTickerText> m_phaseTicks;
    bool m_dark = false;
};

}  // namespace hrw
