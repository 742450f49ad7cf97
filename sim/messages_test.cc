// MsgText: a message's string field that moves like std::string, except that moving an empty
// one copies nothing (the point of it), whatever the destination held.
#include "sim/messages.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace lockstep::sim {
namespace {

TEST(MsgText, MovesLikeAStringForEveryLengthAndDestination) {
  // Empty, in place (libstdc++ keeps up to 15 characters in the object), at the limit, on the
  // heap; moved into an empty, a short and a long destination, by construction and assignment.
  const std::string texts[] = {"", "a", "fifteen-chars!!", "sixteen-chars!!!",
                               std::string(100, 'z')};
  for (const std::string& from : texts) {
    for (const std::string& before : texts) {
      SCOPED_TRACE("'" + from + "' over '" + before + "'");
      MsgText src(from);
      MsgText built(std::move(src));
      EXPECT_EQ(built, from);
      EXPECT_TRUE(src.empty());  // a moved-from text is empty
      MsgText dst(before);
      MsgText again(from);
      dst = std::move(again);
      EXPECT_EQ(dst, from);
      EXPECT_TRUE(again.empty());
    }
  }
}

TEST(MsgText, ConvertsBothWaysWithStdString) {
  std::string s = "/lock/_c_1-lock-0000000001";
  MsgText t = s;  // copy from a string
  EXPECT_EQ(t, s);
  MsgText u = std::move(s);  // steals a string's buffer
  EXPECT_EQ(u, "/lock/_c_1-lock-0000000001");
  std::string back = std::move(u);  // and gives it back as one
  EXPECT_EQ(back, "/lock/_c_1-lock-0000000001");
  t = "data";  // std::string's assignments stay available
  EXPECT_EQ(t, "data");
  Request r;
  r.data = std::string("x");
  Request moved = std::move(r);
  EXPECT_EQ(moved.data, "x");
}

}  // namespace
}  // namespace lockstep::sim
