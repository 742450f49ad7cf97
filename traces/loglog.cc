#include "traces/loglog.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "traces/timeline.h"

namespace lockstep::traces {
namespace {

std::string num(double v) { return svg_number(v); }


// A log-log frame: decades from 10^lo to 10^hi on each axis.
struct Frame {
  int x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  double floor = kLogLogFloor;
  double left = 70, top = 20, width = 560, height = 340;
  double x(double v) const {
    return left + (std::log10(std::max(v, floor)) - x_lo) / (x_hi - x_lo) * width;
  }
  double y(double v) const {
    return top + height - (std::log10(std::max(v, floor)) - y_lo) / (y_hi - y_lo) * height;
  }
};

std::string decade_label(int e) {
  if (e < 0) return e >= -3 ? "0." + std::string(static_cast<size_t>(-e - 1), '0') + "1"
                            : "1e" + std::to_string(e);
  if (e <= 6) return std::to_string(static_cast<long long>(std::llround(std::pow(10.0, e))));
  return "1e" + std::to_string(e);
}

constexpr const char* kColors[] = {"#d1495b", "#2e86ab", "#3b8b3b",
                                   "#8e44ad", "#e08e0b", "#555555"};

constexpr double kLeft = 70, kTop = 20, kRightRoom = 150, kBottomRoom = 50;

}  // namespace

std::string svg_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

double loglog_svg_width(const LogLogPlot& plot) { return kLeft + plot.width + kRightRoom; }
double loglog_svg_height(const LogLogPlot& plot) { return kTop + plot.height + kBottomRoom; }

std::string loglog_svg(const LogLogPlot& plot) {
  double x_min = 1, x_max = 10, y_min = 1, y_max = 10;
  bool first = true;
  for (const LogLogSeries& s : plot.series) {
    for (const LogLogPoint& p : s.points) {
      const double x = std::max(p.x, plot.floor), y = std::max(p.y, plot.floor);
      x_min = first ? x : std::min(x_min, x);
      x_max = first ? x : std::max(x_max, x);
      y_min = first ? y : std::min(y_min, y);
      y_max = first ? y : std::max(y_max, y);
      first = false;
    }
  }
  Frame f;
  f.floor = plot.floor;
  f.left = kLeft;
  f.top = kTop;
  f.width = plot.width;
  f.height = plot.height;
  f.x_lo = static_cast<int>(std::floor(std::log10(x_min)));
  f.x_hi = std::max(f.x_lo + 1, static_cast<int>(std::ceil(std::log10(x_max))));
  // Half a decade of room below the lowest point, so a flat line at 1 is not on the axis.
  f.y_lo = static_cast<int>(std::floor(std::log10(y_min) - 0.3));
  f.y_hi = std::max(f.y_lo + 1, static_cast<int>(std::ceil(std::log10(y_max))));
  const double w = loglog_svg_width(plot);
  const double ht = loglog_svg_height(plot);

  std::string svg = "<svg id=\"" + html_escape(plot.id) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w) +
                    "\" height=\"" + num(ht) + "\" viewBox=\"0 0 " + num(w) + " " + num(ht) +
                    "\" role=\"img\" aria-label=\"" + html_escape(plot.aria_label) + "\">\n";
  for (int e = f.x_lo; e <= f.x_hi; ++e) {
    const double x = f.x(std::pow(10.0, e));
    svg += "<line class=\"grid\" stroke=\"#e4e4e4\" x1=\"" + num(x) + "\" y1=\"" + num(f.top) +
           "\" x2=\"" + num(x) + "\" y2=\"" + num(f.top + f.height) + "\"/>\n";
    svg += "<text x=\"" + num(x) + "\" y=\"" + num(f.top + f.height + 16) +
           "\" text-anchor=\"middle\">" + decade_label(e) + "</text>\n";
  }
  for (int e = f.y_lo; e <= f.y_hi; ++e) {
    const double y = f.y(std::pow(10.0, e));
    svg += "<line class=\"grid\" stroke=\"#e4e4e4\" x1=\"" + num(f.left) + "\" y1=\"" + num(y) +
           "\" x2=\"" + num(f.left + f.width) + "\" y2=\"" + num(y) + "\"/>\n";
    svg += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
           decade_label(e) + "</text>\n";
  }
  svg += "<line class=\"axis\" stroke=\"#333\" x1=\"" + num(f.left) + "\" y1=\"" +
         num(f.top + f.height) + "\" x2=\"" + num(f.left + f.width) + "\" y2=\"" +
         num(f.top + f.height) + "\"/>\n";
  svg += "<line class=\"axis\" stroke=\"#333\" x1=\"" + num(f.left) + "\" y1=\"" + num(f.top) +
         "\" x2=\"" + num(f.left) + "\" y2=\"" + num(f.top + f.height) + "\"/>\n";
  svg += "<text x=\"" + num(f.left + f.width / 2) + "\" y=\"" + num(f.top + f.height + 38) +
         "\" text-anchor=\"middle\">" + html_escape(plot.x_label) + "</text>\n";
  svg += "<text x=\"16\" y=\"" + num(f.top + f.height / 2) + "\" text-anchor=\"middle\" " +
         "transform=\"rotate(-90 16 " + num(f.top + f.height / 2) + ")\">" +
         html_escape(plot.y_label) + "</text>\n";
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const LogLogSeries& s = plot.series[i];
    if (s.points.empty()) continue;
    const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    const std::string name = html_escape(s.name);
    std::string points;
    for (const LogLogPoint& p : s.points) {
      points += (points.empty() ? "" : " ") + num(f.x(p.x)) + "," + num(f.y(p.y));
    }
    svg += "<g class=\"recipe\" data-recipe=\"" + name + "\">\n";
    svg += "<polyline class=\"series\" data-recipe=\"" + name + "\" fill=\"none\" stroke-width=\"2.5\" stroke=\"" +
           color + "\" points=\"" + points + "\"/>\n";
    for (const LogLogPoint& p : s.points) {
      svg += "<circle cx=\"" + num(f.x(p.x)) + "\" cy=\"" + num(f.y(p.y)) + "\" r=\"4\" " +
             (p.hollow ? "fill=\"white\" stroke=\"" + color + "\" stroke-width=\"2\""
                       : "fill=\"" + color + "\"") +
             "><title>" + html_escape(p.title) + "</title></circle>\n";
    }
    const LogLogPoint& last = s.points.back();
    svg += "<text class=\"series-label\" font-weight=\"600\" x=\"" + num(f.x(last.x) + 8) +
           "\" y=\"" + num(f.y(last.y) + 4) + "\" fill=\"" + color + "\">" + name + "</text>\n";
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace lockstep::traces
