// Presentation zoom: every text and chart of the window at one factor (View > Zoom in / out /
// Actual size, Ctrl++ / Ctrl+- / Ctrl+0, remembered between sessions). Widgets follow the
// application font; charts (QtCharts keeps its own fonts) follow through followZoom. UI thread
// only.
#pragma once

#include <vector>

class QChart;
class QFont;
class QWidget;

namespace fitbench {

// The zoom steps, smallest to largest (1 is actual size).
const std::vector<double>& zoomSteps();
// The factor in effect (1 until setZoom).
double zoomFactor();
// Sets the application font to the font the program started with times `factor` (one of
// zoomSteps(); another value is taken as the nearest step).
void setZoom(double factor);

// Gives `widget` a font of its own (a fixed font) that follows the zoom: `font` at factor 1.
void setZoomedFont(QWidget* widget, const QFont& font);

// Keeps `chart`'s fonts (title, legend, axes, axes added later included) at their size at
// factor 1 times zoomFactor(): now, and whenever `owner` hears the application font change.
void followZoom(QChart* chart, QWidget* owner);
// Sets `chart`'s fonts for zoomFactor() once (after adding an axis to a followed chart).
void zoomChart(QChart* chart);

}  // namespace fitbench
