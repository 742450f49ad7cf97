// The conformance suite's fixture; the test bodies are in suite_*.cc.
#include "conformance/suite.h"

#include <cctype>

#include "conformance/suite_util.h"

namespace lockstep::conformance {

const char* to_string(Feature f) {
  switch (f) {
    case Feature::kSetSequenceCounter: return "set_sequence_counter";
    case Feature::kWatchEventZxid: return "watch_event_zxid";
  }
  return "?";
}

void ConformanceTest::SetUp() {
  backend_ = GetParam().make();
  ASSERT_NE(backend_, nullptr) << "factory " << GetParam().name << " made no backend";
}

void ConformanceTest::TearDown() { backend_.reset(); }

zk::Session& ConformanceTest::open() { return open(kSessionTimeout); }

zk::Session& ConformanceTest::open(zk::Duration session_timeout) {
  zk::Session& s = backend_->open(session_timeout);
  sessions_.push_back(&s);
  return s;
}

namespace {
// Every open session's server has applied the fresh root's creation (catch_up's write barrier,
// sent again when a loaded machine drops the connection, as everywhere else in the suite).
zk::Task<void> catch_up_body(std::vector<zk::Session*> sessions, std::string root) {
  for (zk::Session* s : sessions) {
    EXPECT_TRUE(co_await catch_up(s)) << "catching up with the fresh root " << root;
  }
}
}  // namespace

std::string ConformanceTest::fresh_root() {
  std::string root = backend_->fresh_root();
  if (!sessions_.empty()) run(*sessions_.front(), catch_up_body(sessions_, root));
  return root;
}

void ConformanceTest::run(zk::Session& on, zk::Task<void> body, zk::Duration limit) {
  const bool finished = backend_->run(on, std::move(body), limit);
  EXPECT_TRUE(finished) << "the test body did not finish within " << zk::to_string(limit)
                        << " on backend " << backend_->name();
}

std::string factory_test_name(const ::testing::TestParamInfo<BackendFactory>& info) {
  std::string out;
  for (char c : info.param.name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace lockstep::conformance

namespace lockstep::conformance {
// Each suite_*.cc defines one of these; calling them pulls its TEST_P registrations in.
void link_suite_tree();
void link_suite_watch();
void link_suite_session();
void link_suite_limits();
void link_suite_timeouts();
void link_suite_reaping();
void link_conformance_suite() {
  link_suite_limits();
  link_suite_tree();
  link_suite_watch();
  link_suite_session();
  link_suite_timeouts();
  link_suite_reaping();
}
}  // namespace lockstep::conformance
