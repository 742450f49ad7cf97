#include "traces/herd_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "traces/loglog.h"
#include "traces/timeline.h"

namespace lockstep::traces {
namespace {

std::string num(double v) { return svg_number(v); }

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
  for (const properties::HerdResult& h : results) {
    if (by_recipe.count(h.recipe) == 0) order.push_back(h.recipe);
    by_recipe[h.recipe].push_back(&h);
  }
  LogLogPlot plot;
  plot.id = "herd-plot";
  plot.aria_label = "notifications per release against waiters, log-log";
  plot.x_label = "waiters queued (log)";
  plot.y_label = "watch notifications per release (log)";
  for (const std::string& name : order) {
    std::vector<const properties::HerdResult*> pts = by_recipe[name];
    std::stable_sort(pts.begin(), pts.end(),
                     [](const auto* a, const auto* b) { return a->waiters < b->waiters; });
    LogLogSeries series{name, {}};
    for (const properties::HerdResult* h : pts) {
      series.points.push_back(LogLogPoint{
          static_cast<double>(h->waiters), h->notifications_per_release,
          name + ": " + std::to_string(h->waiters) + " waiters, " +
              num(h->notifications_per_release) + " notifications per release",
          false});
    }
    plot.series.push_back(std::move(series));
  }
  const std::string svg = loglog_svg(plot);

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
      num(kLogLogFloor) + ".</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::traces
