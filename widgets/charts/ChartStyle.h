#pragma once
// The look every chart shares (LiveChart and its kinds, PlanBarChart, MemoryCompareChart, the
// report's charts): colours for a light or a dark window, a legend that sits outside the data (in a
// row of its own under the plot, wrapped to the width, or in a column beside it when the plot is short,
// whichever leaves the data more room), and axis ranges that fit the data (a lone point or a flat line
// gets a range around it instead of QCustomPlot's -4..6).
#include <QColor>

#include <qcustomplot.h>

namespace hrw {

struct ChartColors {
    QColor background, foreground, grid;
};
ChartColors chartColors(bool dark);

// Background, axes, tick labels, grid and legend colours; legendFrame: a thin frame around it.
void styleChart(QCustomPlot* plot, bool dark, bool legendFrame = false);
// The legend's font: one point smaller than the plot's; icons 14 x 8.
void styleLegend(QCustomPlot* plot);
// Takes the legend out of the axis rect into a new bottom row of the plot layout. Returns the grid
// that holds it there (between two spacers; its margins hold the legend off the edges).
QCPLayoutGrid* moveLegendBelow(QCustomPlot* plot);
// Where the legend of moveLegendBelow sits: in a row under the axis rect, or in a column to its right.
enum class LegendPlace { Below, Beside };
LegendPlace legendPlace(const QCustomPlot* plot);
// Places that legend, with all its entries, under the plot (as many columns as the width takes) or
// beside it (one column, or two when one is taller than the plot), whichever leaves the axis rect the
// larger area at the plot's present size; under it on a tie. Call after adding, renaming or removing
// series and on resize (a chart 1366 x 768 screens give keeps its data area instead of a legend of
// eight rows).
LegendPlace wrapLegend(QCustomPlot* plot);

// A value range that shows [lower, upper] with `margin` (a fraction of the span) on both sides.
// A span of zero (one point, a flat line) becomes +-5 % of the value (or +-0.5 around zero);
// includeZero stretches it to 0 when all values are positive.
QCPRange fitRange(double lower, double upper, double margin = 0.06, bool includeZero = false);
// x range for keys: a lone key x gets [x - 0.5, x + 0.5]; otherwise margin as fitRange, which keeps
// markers at the ends inside the axis rect.
QCPRange fitKeyRange(double lower, double upper, double margin = 0.02);

}  // namespace hrw
