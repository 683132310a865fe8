// A small line chart drawn as inline SVG: lines over x (time, in the
// caller's units), shaded bands under them and vertical marks over them.
// No script draws it: the page is readable as it is, offline, and every
// band and mark carries its explanation as an SVG <title> (a tooltip).
//
// A line is cut down to the plot's pixel columns, keeping per column the
// smallest and the largest value in the order they came: a line of an hour
// of one-second windows is no bigger than one of five minutes, and a spike
// of one window still reaches its height.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_REPORT_SVG_CHART_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_REPORT_SVG_CHART_H_

#include <string>
#include <vector>

namespace limpwatch::report {

// y over x, x increasing; a NaN y ends a stretch (no data there).
struct ChartLine {
  std::vector<double> x;
  std::vector<double> y;
  std::string css_class;
};

// A shaded stretch of x, drawn under the lines.
struct ChartBand {
  double from = 0;
  double to = 0;
  std::string css_class;
  std::string title;  // plain text: escaped when drawn
};

// A vertical mark, drawn over the lines.
struct ChartMark {
  double at = 0;
  std::string css_class;
  std::string title;  // plain text: escaped when drawn
};

struct ChartTick {
  double at = 0;
  std::string label;
};

enum class YScale { kLinear, kLog };

struct YAxis {
  YScale scale = YScale::kLinear;
  double low = 0;
  double high = 1;
};

struct Chart {
  int width = 360;
  int height = 130;
  double x_from = 0;
  double x_to = 1;
  std::vector<ChartTick> x_ticks;
  std::vector<ChartBand> bands;
  std::vector<ChartLine> lines;
  std::vector<ChartMark> marks;
  std::string description;  // what the chart shows, for screen readers
};

// Linear from 0 unless the values span decades: log when the largest is at
// least 100 times the median of the positive ones (a spike over a quiet
// line, which a linear axis would flatten into the floor). On a log axis
// values at or under its bottom (zeros among them) are drawn on it.
YAxis ChooseYAxis(const std::vector<ChartLine>& lines);

// The pixel columns of a line: per column the smallest and the largest
// value, in the order they came (one point when they are the same).
struct ColumnPoint {
  int column = 0;
  double y = 0;
  bool starts_stretch = false;  // the first point after a gap, or of the line
};
std::vector<ColumnPoint> DownsampleToColumns(const ChartLine& line, double x_from, double x_to, int columns);

// Width of the plot area of a chart `width` pixels wide: one column a pixel.
int PlotColumns(int width);

// The chart as one <svg> element, well-formed XML; its classes are styled
// by the page.
std::string RenderSvgChart(const Chart& chart, const YAxis& axis);

}  // namespace limpwatch::report

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_REPORT_SVG_CHART_H_
