// The HTML swim-lane page, loaded in headless Chromium: after its script ran, the DOM holds one
// lane per client and the violation marker. Chromium is required (Debian package `chromium`,
// installed by ./lockstep): without it this test fails and says so.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

// Renders a real failure's page, lets Chromium run its script (--dump-dom prints the DOM after
// scripts) and counts the lanes and the violation marker the script drew.
TEST(Browser, ChromiumRendersLanesAndTheViolation) {
  const std::string chromium = find_chromium();
  ASSERT_FALSE(chromium.empty())
      << "chromium is not installed: install it with `apt-get install -y chromium` "
         "(./lockstep installs it with the project's packages); this test needs a real browser";
  testing::TempDir dir;
  const Trace t = testing::first_trace("broken/ignores-expiry");
  ASSERT_NE(t.violation(), nullptr);
  const std::string page = dir.file("trace.html");
  std::string error;
  ASSERT_TRUE(write_file_atomically(page, render_html(build_timeline(t)), &error)) << error;
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
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "chromium failed (" << status << "): " << testing::read_file(dir.file("chromium.log"));
  const std::string dom = testing::read_file(dom_file);
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos)
      << "the page's script did not finish";
  EXPECT_EQ(count(dom, "class=\"lane\""), t.scenario.workload.clients) << dom.substr(0, 2000);
  EXPECT_EQ(count(dom, "id=\"violation-marker\""), 1u);
  EXPECT_GE(count(dom, "<tr id=\"row-h"), t.history.size());
  EXPECT_EQ(count(dom, "<tr id=\"row-") - count(dom, "<tr id=\"row-h"),
            count(dom, "<tr id=\"row-s"));
  EXPECT_GE(count(dom, "class=\"violation\""), t.violation()->history_indexes.size());
}

}  // namespace
}  // namespace lockstep::traces
