// The HTML swim-lane page, loaded in headless Chromium: after its script ran, the DOM holds one
// lane per client, the violation marker and the lock directory (a track per node, node labels
// on the lanes, watch arrows). Chromium is required (Debian package `chromium`,
// installed by ./lockstep): without it this test fails and says so.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// Writes the page of `t` and lets Chromium run its script (--dump-dom prints the DOM after
// scripts); the DOM, or "" after a failure it reports.
std::string rendered_dom(const Trace& t, const testing::TempDir& dir) {
  const std::string chromium = find_chromium();
  EXPECT_FALSE(chromium.empty())
      << "chromium is not installed: install it with `apt-get install -y chromium` "
         "(./lockstep installs it with the project's packages); this test needs a real browser";
  if (chromium.empty()) return {};
  const std::string page = dir.file("trace.html");
  std::string error;
  EXPECT_TRUE(write_file_atomically(page, render_html(build_timeline(t)), &error)) << error;
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
  const std::string dom = testing::read_file(dom_file);
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
  EXPECT_EQ(count(dom, "class=\"lane\""), t.scenario.workload.clients) << dom.substr(0, 2000);
  EXPECT_EQ(count(dom, "id=\"violation-marker\""), 1u);
  EXPECT_GE(count(dom, "<tr id=\"row-h"), t.history.size());
  EXPECT_EQ(count(dom, "<tr id=\"row-") - count(dom, "<tr id=\"row-h"),
            count(dom, "<tr id=\"row-s"));
  EXPECT_GE(count(dom, "class=\"violation\""), t.violation()->history_indexes.size());
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
  EXPECT_EQ(count(dom, "id=\"directory-lane\""), 1u);
  size_t tracks = 0;
  for (const DirNode& n : tl.nodes) tracks += n.path != tl.lock_dir ? 1 : 0;
  EXPECT_EQ(count(dom, "class=\"dir-node\""), tracks);
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
  EXPECT_GE(count(dom, "class=\"watch-arrow\""), 1u);
  EXPECT_GE(count(dom, "<td class=\"directory\">["), 1u);
}

}  // namespace
}  // namespace lockstep::traces
