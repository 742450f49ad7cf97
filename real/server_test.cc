#include "real/server.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "real/test_support.h"

namespace lockstep::real {
namespace {

bool path_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

bool process_alive(int pid) { return pid > 0 && ::kill(pid, 0) == 0; }

// A standalone server starts, answers srvr with "Mode: standalone", and its destructor stops the
// process and removes the temporary directory: the pid and directory are checked after reset.
TEST(Cluster, StandaloneStartsAndStopsCleanly) {
  const auto t0 = std::chrono::steady_clock::now();
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf("[measure] standalone server ready in %lld ms\n", static_cast<long long>(ms));
  EXPECT_EQ(cluster->mode(1), "standalone");
  EXPECT_EQ(cluster->leader(), 1);
  EXPECT_EQ(four_letter_word(cluster->client_port(1), "ruok"), "imok");
  const int pid = cluster->pid(1);
  const std::string dir = cluster->dir();
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(path_exists(dir + "/server1/zoo.cfg"));
  cluster.reset();
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE(path_exists(dir));
}

// A three-server ensemble starts with exactly one leader and two followers on distinct ports.
TEST(Cluster, EnsembleElectsOneLeader) {
  const auto t0 = std::chrono::steady_clock::now();
  auto cluster = testing::start_cluster(3);
  ASSERT_TRUE(cluster);
  ASSERT_TRUE(cluster->wait_for_leader(10000));
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf("[measure] 3-server ensemble ready in %lld ms\n", static_cast<long long>(ms));
  int leaders = 0, followers = 0;
  for (int i = 1; i <= 3; ++i) {
    const std::string m = cluster->mode(i);
    if (m == "leader") ++leaders;
    if (m == "follower") ++followers;
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(followers, 2);
  EXPECT_NE(cluster->client_port(1), cluster->client_port(2));
  EXPECT_EQ(cluster->connect_string().find("127.0.0.1:"), 0u);
}

// Cluster::start(o) fails, returns no cluster, and its error names every one of `needles`.
void expect_start_fails_naming(const ClusterOptions& o, const std::vector<std::string>& needles) {
  Cluster::StartResult r = Cluster::start(o);
  EXPECT_FALSE(r.cluster);
  for (const std::string& needle : needles) {
    EXPECT_NE(r.error.find(needle), std::string::npos) << "no \"" << needle << "\" in: " << r.error;
  }
}

// A missing server jar is reported with the install hint and nothing is left behind: the
// harness is pointed at a jar that does not exist.
TEST(Cluster, MissingJarGivesAClearError) {
  ClusterOptions o;
  o.classpath = "/nonexistent/zookeeper.jar:/usr/share/java/slf4j-simple.jar";
  expect_start_fails_naming(o, {"/nonexistent/zookeeper.jar", kServerInstallCommand});
}

// A missing java binary is reported with the install hint: the harness is pointed at a java
// that does not exist.
TEST(Cluster, MissingJavaGivesAClearError) {
  ClusterOptions o;
  o.java = "/nonexistent/bin/java";
  expect_start_fails_naming(o, {"/nonexistent/bin/java", kServerInstallCommand});
}

// A server that exits before it is ready is reported with the tail of its log: the JVM is
// given an option it rejects.
TEST(Cluster, ServerThatDiesAtStartIsReportedWithItsLog) {
  ClusterOptions o;
  o.jvm_flags = {"-XX:+ThisOptionDoesNotExist"};
  expect_start_fails_naming(o, {"exited", "ThisOptionDoesNotExist"});
}

// The directory left by a test process that died is removed by the next start, while a live
// owner's directory stays: two fake directories name a reaped child and this process.
TEST(Cluster, StartRemovesDirectoriesOfDeadOwners) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  char dead_tmpl[] = "/tmp/lockstep-zk-XXXXXX";
  char live_tmpl[] = "/tmp/lockstep-zk-XXXXXX";
  ASSERT_NE(::mkdtemp(dead_tmpl), nullptr);
  ASSERT_NE(::mkdtemp(live_tmpl), nullptr);
  std::ofstream(std::string(dead_tmpl) + "/owner.pid") << child << "\n";
  std::ofstream(std::string(live_tmpl) + "/owner.pid") << ::getpid() << "\n";
  ClusterOptions o;
  o.classpath = "/nonexistent/zookeeper.jar";
  EXPECT_FALSE(Cluster::start(o).cluster);
  EXPECT_FALSE(path_exists(dead_tmpl));
  EXPECT_TRUE(path_exists(live_tmpl));
  std::filesystem::remove_all(live_tmpl);
}

}  // namespace
}  // namespace lockstep::real
