// lockstep traces: a log-log line plot as one SVG element, for the reports that show how a
// figure grows with a size (the herd page: notifications per release against waiters; the
// scaling plot: time, memory and cost per grant against clients). One labelled line (an SVG
// <polyline> of class "series", with data-series set to its name) per series, a circle per
// point with its tooltip, decade grid lines. Styling comes from CSS classes (grid, axis, series,
// series-label) and from the inline presentation attributes, so the SVG also renders alone.
//
// Deterministic: the same plot gives the same bytes. Pure function; no I/O.
#pragma once

#include <string>
#include <vector>

namespace lockstep::traces {

// Values at or below zero have no place on a log axis: they are drawn at a floor (by default
// this one).
inline constexpr double kLogLogFloor = 0.1;

struct LogLogPoint {
  double x = 0;
  double y = 0;
  std::string title;  // the point's tooltip
  bool hollow = false;  // drawn as an open circle (a point with a caveat, e.g. stopped early)
};

struct LogLogSeries {
  std::string name;
  std::vector<LogLogPoint> points;  // joined in the order given
};

struct LogLogPlot {
  std::string id;          // the <svg> element's id
  std::string aria_label;  // what the plot shows, for a screen reader
  std::string x_label, y_label;
  std::vector<LogLogSeries> series;
  double width = 560, height = 340;  // of the frame; the SVG adds room for labels
  double floor = kLogLogFloor;       // what is drawn for smaller values (a positive number)
};


std::string loglog_svg(const LogLogPlot& plot);

// A coordinate or figure as the plots print it: one decimal ("12.5").
std::string svg_number(double v);

// The width and height of the SVG loglog_svg draws for `plot`.
double loglog_svg_width(const LogLogPlot& plot);
double loglog_svg_height(const LogLogPlot& plot);

}  // namespace lockstep::traces
