#include "traces/herd_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "traces/timeline.h"

namespace lockstep::traces {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Values at or below zero have no place on a log axis: they are drawn at the floor.
constexpr double kFloor = 0.1;

// A log-log frame: decades from 10^lo to 10^hi on each axis.
struct Frame {
  int x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  double left = 70, top = 20, width = 560, height = 340;
  double x(double v) const {
    return left + (std::log10(std::max(v, kFloor)) - x_lo) / (x_hi - x_lo) * width;
  }
  double y(double v) const {
    return top + height - (std::log10(std::max(v, kFloor)) - y_lo) / (y_hi - y_lo) * height;
  }
};

std::string decade_label(int e) {
  if (e < 0) return e == -1 ? "0.1" : "1e" + std::to_string(e);
  if (e <= 6) return std::to_string(static_cast<long long>(std::llround(std::pow(10.0, e))));
  return "1e" + std::to_string(e);
}

constexpr const char* kColors[] = {"#d1495b", "#2e86ab", "#3b8b3b",
                                   "#8e44ad", "#e08e0b", "#555555"};

constexpr const char* kStyle = R"CSS(
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px; }
.subtitle { font: 12px monospace; color: #555; margin: 4px 0 12px; }
svg text { font: 11px sans-serif; fill: #333; }
.grid { stroke: #e4e4e4; stroke-width: 1; }
.axis { stroke: #333; stroke-width: 1; }
.series { fill: none; stroke-width: 2.5; }
.series-label { font-weight: 600; }
table { border-collapse: collapse; font: 12px monospace; margin-top: 12px; }
td, th { padding: 1px 10px; text-align: right; white-space: nowrap; }
td:first-child, th:first-child { text-align: left; }
.note { color: #555; max-width: 60em; }
)CSS";

}  // namespace

std::string render_herd_html(const std::vector<properties::HerdResult>& results,
                             const std::string& subtitle) {
  // Each recipe's points in order of waiters; recipes in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const properties::HerdResult*>> by_recipe;
  double x_min = 1, x_max = 10, y_min = 1, y_max = 10;
  bool first = true;
  for (const properties::HerdResult& h : results) {
    if (by_recipe.count(h.recipe) == 0) order.push_back(h.recipe);
    by_recipe[h.recipe].push_back(&h);
    const double x = std::max<double>(h.waiters, kFloor);
    const double y = std::max(h.notifications_per_release, kFloor);
    x_min = first ? x : std::min(x_min, x);
    x_max = first ? x : std::max(x_max, x);
    y_min = first ? y : std::min(y_min, y);
    y_max = first ? y : std::max(y_max, y);
    first = false;
  }
  Frame f;
  f.x_lo = static_cast<int>(std::floor(std::log10(x_min)));
  f.x_hi = std::max(f.x_lo + 1, static_cast<int>(std::ceil(std::log10(x_max))));
  // Half a decade of room below the lowest point, so a flat line at 1 is not on the axis.
  f.y_lo = static_cast<int>(std::floor(std::log10(y_min) - 0.3));
  f.y_hi = std::max(f.y_lo + 1, static_cast<int>(std::ceil(std::log10(y_max))));
  const double w = f.left + f.width + 150;
  const double ht = f.top + f.height + 50;

  std::string svg = "<svg id=\"herd-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w) +
                    "\" height=\"" + num(ht) + "\" viewBox=\"0 0 " + num(w) + " " + num(ht) +
                    "\" role=\"img\" aria-label=\"notifications per release against "
                    "waiters, log-log\">\n";
  for (int e = f.x_lo; e <= f.x_hi; ++e) {
    const double x = f.x(std::pow(10.0, e));
    svg += "<line class=\"grid\" x1=\"" + num(x) + "\" y1=\"" + num(f.top) + "\" x2=\"" + num(x) +
           "\" y2=\"" + num(f.top + f.height) + "\"/>\n";
    svg += "<text x=\"" + num(x) + "\" y=\"" + num(f.top + f.height + 16) +
           "\" text-anchor=\"middle\">" + decade_label(e) + "</text>\n";
  }
  for (int e = f.y_lo; e <= f.y_hi; ++e) {
    const double y = f.y(std::pow(10.0, e));
    svg += "<line class=\"grid\" x1=\"" + num(f.left) + "\" y1=\"" + num(y) + "\" x2=\"" +
           num(f.left + f.width) + "\" y2=\"" + num(y) + "\"/>\n";
    svg += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
           decade_label(e) + "</text>\n";
  }
  svg += "<line class=\"axis\" x1=\"" + num(f.left) + "\" y1=\"" + num(f.top + f.height) +
         "\" x2=\"" + num(f.left + f.width) + "\" y2=\"" + num(f.top + f.height) + "\"/>\n";
  svg += "<line class=\"axis\" x1=\"" + num(f.left) + "\" y1=\"" + num(f.top) + "\" x2=\"" +
         num(f.left) + "\" y2=\"" + num(f.top + f.height) + "\"/>\n";
  svg += "<text x=\"" + num(f.left + f.width / 2) + "\" y=\"" + num(f.top + f.height + 38) +
         "\" text-anchor=\"middle\">waiters queued (log)</text>\n";
  svg += "<text x=\"16\" y=\"" + num(f.top + f.height / 2) + "\" text-anchor=\"middle\" " +
         "transform=\"rotate(-90 16 " + num(f.top + f.height / 2) +
         ")\">watch notifications per release (log)</text>\n";
  for (size_t i = 0; i < order.size(); ++i) {
    std::vector<const properties::HerdResult*> pts = by_recipe[order[i]];
    std::stable_sort(pts.begin(), pts.end(),
                     [](const auto* a, const auto* b) { return a->waiters < b->waiters; });
    const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    std::string points;
    for (const properties::HerdResult* h : pts) {
      points += (points.empty() ? "" : " ") + num(f.x(h->waiters)) + "," +
                num(f.y(h->notifications_per_release));
    }
    svg += "<g class=\"recipe\" data-recipe=\"" + html_escape(order[i]) + "\">\n";
    svg += "<polyline class=\"series\" data-recipe=\"" + html_escape(order[i]) + "\" stroke=\"" +
           color + "\" points=\"" + points + "\"/>\n";
    for (const properties::HerdResult* h : pts) {
      svg += "<circle cx=\"" + num(f.x(h->waiters)) + "\" cy=\"" +
             num(f.y(h->notifications_per_release)) + "\" r=\"4\" fill=\"" + color + "\"><title>" +
             html_escape(order[i]) + ": " + std::to_string(h->waiters) + " waiters, " +
             num(h->notifications_per_release) + " notifications per release</title></circle>\n";
    }
    const properties::HerdResult* last = pts.back();
    svg += "<text class=\"series-label\" x=\"" + num(f.x(last->waiters) + 8) + "\" y=\"" +
           num(f.y(last->notifications_per_release) + 4) + "\" fill=\"" + color + "\">" +
           html_escape(order[i]) + "</text>\n";
    svg += "</g>\n";
  }
  svg += "</svg>\n";

  std::string table =
      "<table id=\"herd-table\">\n<tr><th>recipe</th><th>waiters</th><th>releases "
      "measured</th><th>notifications / release</th><th>requests / release</th><th>whole run: "
      "notifications</th><th>whole run: requests</th></tr>\n";
  for (const std::string& name : order) {
    for (const properties::HerdResult* h : by_recipe[name]) {
      const std::string tag = h->total_measured ? " (measured)" : " (projected)";
      table += "<tr><td>" + html_escape(h->recipe) + "</td><td>" + std::to_string(h->waiters) +
               "</td><td>" + std::to_string(h->measured.size()) + " of " +
               std::to_string(h->releases_in_run) + "</td><td>" +
               num(h->notifications_per_release) + "</td><td>" + num(h->requests_per_release) +
               "</td><td>" + std::to_string(h->total_notifications) + tag + "</td><td>" +
               std::to_string(h->total_requests) + tag + "</td></tr>\n";
    }
  }
  table += "</table>\n";

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>lockstep herd report</title>\n<style>" + std::string(kStyle) +
         "</style>\n</head>\n<body>\n";
  out += "<h1>Herd effect: watch notifications per lock release</h1>\n";
  out += "<div class=\"subtitle\">" + html_escape(subtitle) + "</div>\n";
  out += svg + table;
  out +=
      "<p class=\"note\">Each run queues N waiters behind one holder in the simulator (no "
      "faults); each holder then releases in turn. A release's notifications are the watch "
      "events its delete delivered; its requests are those every client sent until all waited "
      "again. A whole run has one release per waiter: measured when every release was, "
      "otherwise projected from the first releases (an upper bound when the cost grows with the "
      "queue). Values of 0 are drawn at " +
      num(kFloor) + ".</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::traces
