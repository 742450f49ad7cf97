// Tests of `lockstep herd` (cli/cmd_herd.cc over properties/herd.h): the naive lock's herd
// grows with the queue while the fair lock's stays at one notification per release, usage
// errors, the HTML page's plot, and that the same arguments give the same bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "traces/test_util.h"

namespace lockstep::cli {
namespace {

// Runs `lockstep herd ARGS` in this process with its own streams.
int run_herd(std::vector<std::string> args, std::string* out_text, std::string* err_text) {
  args.insert(args.begin(), "herd");
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_command_line(args, Io{out, err});
  *out_text = out.str();
  *err_text = err.str();
  return code;
}

// With 5, 20 and 60 waiters queued, every naive-mutex release notifies every waiter (so the
// mean per release grows with N, and a whole run grows ~N^2/2), while every fair-mutex release
// notifies one; each release's requests are its delete plus the woken waiters' re-reads.
TEST(HerdCommand, NaiveGrowsWithTheQueueFairStaysFlat) {
  std::string out;
  std::string err;
  ASSERT_EQ(run_herd({"--waiters", "5,20,60", "--json"}, &out, &err), 0) << err;
  const nlohmann::json doc = nlohmann::json::parse(out);
  ASSERT_EQ(doc["results"].size(), 6u) << out;
  std::vector<double> naive;
  for (const nlohmann::json& r : doc["results"]) {
    const uint64_t n = r["waiters"];
    EXPECT_EQ(r["releases_measured"], n) << "every release measured up to 100 waiters";
    EXPECT_TRUE(r["run_total_measured"]);
    const double per_release = r["notifications_per_release"];
    if (r["recipe"] == "naive-mutex") {
      naive.push_back(per_release);
      EXPECT_GE(static_cast<uint64_t>(r["run_notifications"]), n * (n + 1) / 2) << r.dump();
      // Release i finds n - i + 1 waiters queued; each is notified.
      for (const nlohmann::json& c : r["releases"]) {
        EXPECT_GE(c["notifications"], c["waiting"]) << c.dump();
      }
    } else {
      ASSERT_EQ(r["recipe"], "fair-mutex");
      EXPECT_LE(per_release, 1.0) << r.dump();
      for (const nlohmann::json& c : r["releases"]) {
        EXPECT_LE(c["notifications"], 1) << c.dump();
        EXPECT_LE(c["requests"], 3) << c.dump();
      }
    }
  }
  ASSERT_EQ(naive.size(), 3u);
  EXPECT_LT(naive[0] * 3, naive[1]);
  EXPECT_LT(naive[1] * 2, naive[2]);
}

// A bounded number of releases measures only the first ones and projects the whole run, and
// says which it did; the projection of a line (notifications ~ waiting) lands near the sum.
TEST(HerdCommand, BoundedReleasesProjectTheRun) {
  std::string out;
  std::string err;
  ASSERT_EQ(run_herd({"--recipe", "naive-mutex", "--waiters", "40", "--releases", "8", "--json"},
                     &out, &err),
            0)
      << err;
  const nlohmann::json r = nlohmann::json::parse(out)["results"][0];
  EXPECT_EQ(r["releases_measured"], 8);
  EXPECT_EQ(r["releases_in_run"], 40);
  EXPECT_FALSE(r["run_total_measured"]);
  const double total = r["run_notifications"];
  EXPECT_GT(total, 40.0 * 41 / 2 * 0.9);
  EXPECT_LT(total, 40.0 * 41 / 2 * 1.2);
  ASSERT_EQ(run_herd({"--recipe", "naive-mutex", "--waiters", "40", "--releases", "8"}, &out, &err),
            0);
  EXPECT_NE(out.find("8 of 40"), std::string::npos) << out;
  EXPECT_NE(out.find("(projected)"), std::string::npos) << out;
}

// Bad input is a usage error (exit 2) that says what was wrong: an unknown recipe lists the
// names, a bad waiter list says what it wants.
TEST(HerdCommand, UsageErrors) {
  std::string out;
  std::string err;
  EXPECT_EQ(run_herd({"--recipe", "no-such"}, &out, &err), 2);
  EXPECT_NE(err.find("unknown recipe 'no-such' (known: "), std::string::npos) << err;
  EXPECT_NE(err.find("naive-mutex"), std::string::npos) << err;
  for (const std::string bad : {"10,x", "0", "10,,-3", "20000", ","}) {
    EXPECT_EQ(run_herd({"--waiters", bad}, &out, &err), 2) << bad;
    EXPECT_NE(err.find("--waiters wants"), std::string::npos) << bad << ": " << err;
  }
  EXPECT_EQ(run_herd({"--releases", "0"}, &out, &err), 2);
  EXPECT_NE(err.find("--releases"), std::string::npos) << err;
  EXPECT_EQ(run_herd({"--html"}, &out, &err), 2);
  EXPECT_EQ(run_herd({"--frobnicate"}, &out, &err), 2);
  EXPECT_EQ(run_herd({"--help"}, &out, &err), 0);
  EXPECT_NE(out.find("usage: lockstep herd"), std::string::npos) << out;
}

// --html writes a self-contained page: one <svg>, one polyline per recipe asked (labelled with
// the recipe), no external script; the same arguments write the same bytes.
TEST(HerdCommand, HtmlPagePlotsOneLinePerRecipeAndIsDeterministic) {
  traces::testing::TempDir dir;
  const std::string page = dir.file("herd.html");
  const std::string again = dir.file("again.html");
  std::string out;
  std::string err;
  const std::vector<std::string> args = {"--recipe", "naive-mutex", "--recipe",  "fair-mutex",
                                         "--recipe", "exclusive",   "--waiters", "3,12"};
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--html", page});
  ASSERT_EQ(run_herd(a, &out, &err), 0) << err;
  EXPECT_NE(out.find("page: " + page), std::string::npos) << out;
  const std::string html = traces::testing::read_file(page);
  EXPECT_EQ(traces::testing::count(html, "<svg"), 1u);
  EXPECT_EQ(traces::testing::count(html, "<polyline class=\"series\""), 3u);
  for (const std::string name : {"naive-mutex", "fair-mutex", "exclusive"}) {
    EXPECT_EQ(
        traces::testing::count(html, "<polyline class=\"series\" data-recipe=\"" + name + "\""), 1u)
        << name;
    EXPECT_NE(html.find(">" + name + "</text>"), std::string::npos) << name;
  }
  EXPECT_EQ(html.find("<script src="), std::string::npos);
  EXPECT_EQ(traces::testing::count(html, "http"),
            traces::testing::count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  std::vector<std::string> b = args;
  b.insert(b.end(), {"--html", again});
  ASSERT_EQ(run_herd(b, &out, &err), 0) << err;
  EXPECT_EQ(traces::testing::read_file(again), html);
}

}  // namespace
}  // namespace lockstep::cli
