// lockstep real client (internal): conversions shared by the files that talk to the ZooKeeper
// C client. Includes the C client's header, so only real/*.cc may include it (never a public
// header: users of lockstep_real do not see <zookeeper/zookeeper.h>).
#pragma once

#include <zookeeper/zookeeper.h>

#include "zk/types.h"

namespace lockstep::real::detail {

// The C client's Stat as the contract's zk::Stat, field for field.
zk::Stat stat_from_c(const struct Stat& s);

// A log callback that drops the C client's log lines.
void drop_c_log_line(const char* message);

}  // namespace lockstep::real::detail
