// The HTML pages, loaded in headless Chromium: the trace's swim-lane page (after its script ran,
// the DOM holds one lane per client, the violation marker and the lock directory: a track per
// node, node labels on the lanes, watch arrows) and the herd report's plot (each line, point and
// label laid out with a non-empty box). Chromium is required (Debian package `chromium`,
// installed by ./lockstep): without it this test fails and says so.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "traces/test_util.h"
#include "traces/timeline.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

std::string find_chromium() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::filesystem::path p = std::filesystem::path(dirs.substr(start, end - start)) / name;
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) return p.string();
    }
    start = end + 1;
  }
  return {};
}

// Loads `page` in headless Chromium and returns the DOM after its scripts ran (--dump-dom), or
// fails the test with Chromium's log.
std::string dump_dom(const std::string& page, const testing::TempDir& dir) {
  const std::string chromium = find_chromium();
  EXPECT_FALSE(chromium.empty())
      << "chromium is not installed: install it with `apt-get install -y chromium` "
         "(./lockstep installs it with the project's packages); this test needs a real browser";
  if (chromium.empty()) return {};
  const std::string profile = dir.file("profile");
  const std::string dom_file = dir.file("dom.html");
  const std::string command =
      "timeout 120 '" + chromium +
      "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--user-data-dir='" +
      profile + "' --dump-dom 'file://" + page + "' > '" + dom_file + "' 2> '" +
      dir.file("chromium.log") + "'";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "chromium failed (" << status << "): " << testing::read_file(dir.file("chromium.log"));
  return testing::read_file(dom_file);
}

// Writes the page of `t` and loads it in Chromium: the DOM after its script ran.
std::string rendered_dom(const Trace& t, const testing::TempDir& dir) {
  const std::string page = dir.file("trace.html");
  std::string error;
  EXPECT_TRUE(write_file_atomically(page, render_html(build_timeline(t)), &error)) << error;
  const std::string dom = dump_dom(page, dir);
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos)
      << "the page's script did not finish";
  return dom;
}

// The texts of the elements whose start tag contains `marker` (SVG <text> and the like).
std::vector<std::string> texts_of(const std::string& dom, const std::string& marker) {
  std::vector<std::string> out;
  for (size_t at = dom.find(marker); at != std::string::npos; at = dom.find(marker, at + 1)) {
    const size_t open_end = dom.find('>', at);
    const size_t close = dom.find('<', open_end);
    if (open_end == std::string::npos || close == std::string::npos) break;
    out.push_back(dom.substr(open_end + 1, close - open_end - 1));
  }
  return out;
}

// A real failure's page: the DOM holds one lane per client, the violation marker, and a table
// row per timeline row.
TEST(Browser, ChromiumRendersLanesAndTheViolation) {
  testing::TempDir dir;
  const Trace t = testing::first_trace("broken/ignores-expiry");
  ASSERT_NE(t.violation(), nullptr);
  const std::string dom = rendered_dom(t, dir);
  ASSERT_FALSE(dom.empty());
  EXPECT_EQ(testing::count(dom, "class=\"lane\""), t.scenario.workload.clients)
      << dom.substr(0, 2000);
  EXPECT_EQ(testing::count(dom, "id=\"violation-marker\""), 1u);
  EXPECT_GE(testing::count(dom, "<tr id=\"row-h"), t.history.size());
  EXPECT_EQ(testing::count(dom, "<tr id=\"row-") - testing::count(dom, "<tr id=\"row-h"),
            testing::count(dom, "<tr id=\"row-s"));
  EXPECT_GE(testing::count(dom, "class=\"violation\""), t.violation()->history_indexes.size());
}

// What the herd page's plot occupies once laid out: the test's own probe, added to a copy of the
// page (the page itself has no script), writes each drawn element's bounding box into the DOM.
constexpr const char* kMeasureBoxes = R"JS(<script>
document.querySelectorAll('#herd-plot polyline, #herd-plot circle, #herd-plot .series-label')
  .forEach(function (e) {
    var b = e.getBBox();
    var ok = b.width > 0 && (b.height > 0 || e.tagName === 'polyline');
    e.setAttribute('data-box', ok ? 'non-empty' : 'empty');
  });
document.body.setAttribute('data-measured', 'ok');
</script>
)JS";

// `lockstep herd --html` for two recipes, loaded in Chromium: each recipe's line, its points
// and its label are laid out with a non-empty bounding box (a flat line has height 0, so a line
// needs only width), and the page loads nothing from outside.
TEST(Browser, ChromiumLaysOutTheHerdPlot) {
  testing::TempDir dir;
  const std::string page = dir.file("herd.html");
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(cli::run_command_line({"herd", "--waiters", "4,16", "--html", page}, cli::Io{out, err}),
            0)
      << err.str();
  std::string html = testing::read_file(page);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "the page needs no script";
  const size_t end = html.rfind("</body>");
  ASSERT_NE(end, std::string::npos);
  html.insert(end, kMeasureBoxes);
  const std::string probed = dir.file("herd-probed.html");
  std::string error;
  ASSERT_TRUE(write_file_atomically(probed, html, &error)) << error;
  const std::string dom = dump_dom(probed, dir);
  ASSERT_NE(dom.find("data-measured=\"ok\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(testing::count(dom, "<polyline"), 2u);
  EXPECT_EQ(testing::count(dom, "<circle"), 4u);
  EXPECT_EQ(testing::count(dom, "data-box=\"non-empty\""), 2u + 4u + 2u) << dom.substr(0, 4000);
  EXPECT_EQ(testing::count(dom, "data-box=\"empty\""), 0u);
}

// An ordering bug's page draws the lock directory: a track per node (its sequence and owner),
// node labels on the lanes naming each client's node and what it watches, watch arrows between
// nodes, and a directory column in the table.
TEST(Browser, ChromiumRendersTheLockDirectory) {
  testing::TempDir dir;
  const Trace t = testing::first_trace("broken/sort-by-name");
  ASSERT_NE(t.violation(), nullptr);
  const Timeline tl = build_timeline(t);
  const std::string dom = rendered_dom(t, dir);
  ASSERT_FALSE(dom.empty());
  EXPECT_EQ(testing::count(dom, "id=\"directory-lane\""), 1u);
  size_t tracks = 0;
  for (const DirNode& n : tl.nodes) tracks += n.path != tl.lock_dir ? 1 : 0;
  EXPECT_EQ(testing::count(dom, "class=\"dir-node\""), tracks);
  const std::vector<std::string> names = texts_of(dom, "class=\"dir-node-label\"");
  ASSERT_EQ(names.size(), tracks);
  for (const DirNode& n : tl.nodes) {
    if (n.path == tl.lock_dir) continue;
    const std::string want = n.name + " c" + std::to_string(n.client);
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  const std::vector<std::string> labels = texts_of(dom, "class=\"node-label\"");
  ASSERT_GE(labels.size(), t.scenario.workload.clients);
  size_t watching = 0;
  for (const std::string& label : labels) {
    EXPECT_FALSE(label.empty());
    watching += label.find(" w") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(watching, 1u);
  EXPECT_GE(testing::count(dom, "class=\"watch-arrow\""), 1u);
  EXPECT_GE(testing::count(dom, "<td class=\"directory\">["), 1u);
}

}  // namespace
}  // namespace lockstep::traces
