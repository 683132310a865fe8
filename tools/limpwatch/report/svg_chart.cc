#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "html_text.h"

namespace limpwatch::report {
namespace {

// The plot area inside the chart: room on the left for the y labels and
// below for the time labels.
constexpr int kLeft = 42;
constexpr int kRight = 6;
constexpr int kTop = 6;
constexpr int kBottom = 16;
constexpr int kMaxDecades = 6;
constexpr double kCharacterWidth = 6;  // of a label's digit at the page's 10 px

// Pixel coordinates to one decimal, without a trailing ".0": most of a
// chart's bytes are its coordinates.
std::string Coordinate(double value) {
  long tenths = std::lround(value * 10.0);
  std::string text = std::to_string(tenths / 10);
  if (tenths < 0 && tenths > -10) text = "-0";
  if (tenths % 10 != 0) text += "." + std::to_string(std::labs(tenths % 10));
  return text;
}

// The smallest round number (one of `steps` x 10^k) at least `value`.
double RoundUp(double value, std::initializer_list<double> steps) {
  if (value <= 0) return 1;
  double decade = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : steps) {
    if (step * decade >= value * (1 - 1e-12)) return step * decade;
  }
  return 10 * decade;
}

// The top of a linear axis: close above the largest value.
double NiceCeiling(double value) { return RoundUp(value, {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}); }

// The step between a linear axis's labels.
double NiceStep(double value) { return RoundUp(value, {1, 2, 2.5, 5, 10}); }

struct Plot {
  double left, top, width, height;
  double x_from, x_to;
  YAxis axis;

  double X(double x) const {
    double span = x_to - x_from;
    double fraction = span > 0 ? (x - x_from) / span : 0;
    return left + std::clamp(fraction, 0.0, 1.0) * width;
  }
  double Y(double y) const {
    double fraction = 0;
    if (axis.scale == YScale::kLog) {
      fraction = y <= axis.low ? 0 : (std::log10(y) - std::log10(axis.low)) / (std::log10(axis.high) - std::log10(axis.low));
    } else if (axis.high > axis.low) {
      fraction = (y - axis.low) / (axis.high - axis.low);
    }
    return top + height - std::clamp(fraction, 0.0, 1.0) * height;
  }
};

std::vector<double> YTicks(const YAxis& axis) {
  std::vector<double> ticks;
  if (axis.scale == YScale::kLog) {
    int low = int(std::lround(std::log10(axis.low))), high = int(std::lround(std::log10(axis.high)));
    int step = high - low > 4 ? 2 : 1;
    for (int decade = high; decade >= low; decade -= step) ticks.push_back(std::pow(10.0, decade));
    return ticks;
  }
  double step = NiceStep((axis.high - axis.low) / 3.0);
  for (double tick = std::ceil(axis.low / step) * step; tick <= axis.high * (1 + 1e-9); tick += step) {
    ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0 : tick);
  }
  return ticks;
}

// An SVG path through pixel points, short: whole pixels (a line is drawn
// one value a pixel column anyway), a run at one height one H, a column's
// min-max one V.
class PathBuilder {
 public:
  void Add(double x, double y, bool move) {
    std::string px = std::to_string(std::lround(x)), py = std::to_string(std::lround(y));
    if (move || path_.empty()) {
      FlushRun();
      path_ += "M" + px + " " + py;
      last_x_ = px;
      last_y_ = py;
      return;
    }
    if (py == last_y_) {  // extends a horizontal run: only its end is drawn
      run_x_ = px;
      return;
    }
    FlushRun();
    if (px == last_x_) {
      path_ += "V" + py;
    } else {
      path_ += "L" + px + " " + py;
    }
    last_x_ = px;
    last_y_ = py;
  }
  std::string Finish() {
    FlushRun();
    return path_;
  }

 private:
  void FlushRun() {
    if (run_x_.empty()) return;
    if (run_x_ != last_x_) path_ += "H" + run_x_;
    last_x_ = run_x_;
    run_x_.clear();
  }

  std::string path_;
  std::string last_x_, last_y_, run_x_;
};

}  // namespace

int PlotColumns(int width) { return std::max(1, width - kLeft - kRight); }

YAxis ChooseYAxis(const std::vector<ChartLine>& lines) {
  std::vector<double> positive;
  double lowest = 0, highest = 0;
  bool any = false;
  for (const ChartLine& line : lines) {
    for (double y : line.y) {
      if (!std::isfinite(y)) continue;
      lowest = any ? std::min(lowest, y) : y;
      highest = any ? std::max(highest, y) : y;
      any = true;
      if (y > 0) positive.push_back(y);
    }
  }
  YAxis axis;
  if (positive.empty()) return axis;  // nothing above 0: linear 0..1
  std::sort(positive.begin(), positive.end());
  double median = positive[positive.size() / 2];
  if (highest >= 100 * median && lowest >= 0) {
    axis.scale = YScale::kLog;
    axis.high = std::pow(10.0, std::ceil(std::log10(highest)));
    // The bottom: the decade of the smallest tenth of the values, at most
    // kMaxDecades under the top and at least one.
    double low_value = positive[positive.size() / 10];
    int top = int(std::lround(std::log10(axis.high)));
    int bottom = int(std::floor(std::log10(low_value)));
    bottom = std::clamp(bottom, top - kMaxDecades, top - 1);
    axis.low = std::pow(10.0, bottom);
    return axis;
  }
  axis.low = lowest < 0 ? -NiceCeiling(-lowest * 1.05) : 0;
  axis.high = NiceCeiling(highest * 1.05);
  return axis;
}

std::vector<ColumnPoint> DownsampleToColumns(const ChartLine& line, double x_from, double x_to, int columns) {
  std::vector<ColumnPoint> points;
  if (columns <= 0) return points;
  double span = x_to - x_from;
  struct Bucket {
    int column = -1;
    double min = 0, max = 0;
    size_t min_at = 0, max_at = 0;
  } bucket;
  bool stretch_starts = true;
  auto flush = [&]() {
    if (bucket.column < 0) return;
    bool min_first = bucket.min_at <= bucket.max_at;
    points.push_back({bucket.column, min_first ? bucket.min : bucket.max, stretch_starts});
    stretch_starts = false;
    if (bucket.min != bucket.max) points.push_back({bucket.column, min_first ? bucket.max : bucket.min, false});
    bucket.column = -1;
  };
  size_t count = std::min(line.x.size(), line.y.size());
  for (size_t index = 0; index < count; ++index) {
    double y = line.y[index];
    if (!std::isfinite(y)) {
      flush();
      stretch_starts = true;
      continue;
    }
    double fraction = span > 0 ? (line.x[index] - x_from) / span : 0;
    int column = std::clamp(int(std::floor(fraction * columns)), 0, columns - 1);
    if (column != bucket.column) {
      flush();
      bucket.column = column;
      bucket.min = bucket.max = y;
      bucket.min_at = bucket.max_at = index;
      continue;
    }
    if (y < bucket.min) {
      bucket.min = y;
      bucket.min_at = index;
    }
    if (y > bucket.max) {
      bucket.max = y;
      bucket.max_at = index;
    }
  }
  flush();
  return points;
}

std::string RenderSvgChart(const Chart& chart, const YAxis& axis) {
  Plot plot{double(kLeft), double(kTop), double(PlotColumns(chart.width)), double(chart.height - kTop - kBottom),
            chart.x_from, chart.x_to, axis};
  std::string width = std::to_string(chart.width), height = std::to_string(chart.height);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + width + "\" height=\"" +
                    height + "\" viewBox=\"0 0 " + width + " " + height + "\" role=\"img\" aria-label=\"" +
                    EscapeHtml(chart.description) + "\">";
  std::string plot_top = Coordinate(plot.top), plot_height = Coordinate(plot.height);
  out += "<rect class=\"plot\" x=\"" + Coordinate(plot.left) + "\" y=\"" + plot_top + "\" width=\"" +
         Coordinate(plot.width) + "\" height=\"" + plot_height + "\"/>";
  for (const ChartBand& band : chart.bands) {
    double from = plot.X(band.from), to = plot.X(band.to);
    if (to <= from) to = from + 1;  // a band of one window stays visible
    out += "<rect class=\"band " + EscapeHtml(band.css_class) + "\" x=\"" + Coordinate(from) + "\" y=\"" + plot_top +
           "\" width=\"" + Coordinate(to - from) + "\" height=\"" + plot_height + "\"><title>" +
           EscapeHtml(band.title) + "</title></rect>";
  }
  std::string left = Coordinate(plot.left), right = Coordinate(plot.left + plot.width);
  for (double tick : YTicks(axis)) {
    std::string y = Coordinate(plot.Y(tick));
    out += "<line class=\"grid\" x1=\"" + left + "\" x2=\"" + right + "\" y1=\"" + y + "\" y2=\"" + y + "\"/>";
    out += "<text class=\"ylabel\" x=\"" + Coordinate(plot.left - 3) + "\" y=\"" + Coordinate(plot.Y(tick) + 3) +
           "\">" + EscapeHtml(ShortNumber(tick)) + "</text>";
  }
  std::string label_y = Coordinate(chart.height - 4.0), axis_y = Coordinate(plot.top + plot.height);
  for (const ChartTick& tick : chart.x_ticks) {
    double at = plot.X(tick.at);
    std::string x = Coordinate(at);
    out += "<line class=\"tick\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + axis_y + "\" y2=\"" +
           Coordinate(plot.top + plot.height + 3) + "\"/>";
    // Centred under its tick, unless that would cut it at the chart's edge.
    double half_width = kCharacterWidth * double(tick.label.size()) / 2;
    const char* align = at + half_width > chart.width ? " end" : at - half_width < 0 ? " start" : "";
    out += "<text class=\"xlabel" + std::string(align) + "\" x=\"" + x + "\" y=\"" + label_y + "\">" +
           EscapeHtml(tick.label) + "</text>";
  }
  int columns = PlotColumns(chart.width);
  for (const ChartLine& line : chart.lines) {
    PathBuilder path;
    for (const ColumnPoint& point : DownsampleToColumns(line, chart.x_from, chart.x_to, columns)) {
      path.Add(plot.left + point.column, plot.Y(point.y), point.starts_stretch);
    }
    std::string d = path.Finish();
    if (d.empty()) continue;
    out += "<path class=\"line " + EscapeHtml(line.css_class) + "\" d=\"" + d + "\"/>";
  }
  for (const ChartMark& mark : chart.marks) {
    // A narrow bar rather than a line: wide enough to hover for its tooltip.
    out += "<rect class=\"mark " + EscapeHtml(mark.css_class) + "\" x=\"" + Coordinate(plot.X(mark.at) - 1.5) +
           "\" y=\"" + plot_top + "\" width=\"3\" height=\"" + plot_height + "\"><title>" + EscapeHtml(mark.title) +
           "</title></rect>";
  }
  return out + "</svg>";
}

}  // namespace limpwatch::report
