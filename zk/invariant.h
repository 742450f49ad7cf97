// lockstep invariants: the project's own assert, which stays on in every build.
//
// LOCKSTEP_ASSERT(cond) and LOCKSTEP_ASSERT_MSG(cond, text) check an invariant of the simulator,
// the contract or the checkers (a programmer error, never an operating error: ZooKeeper error
// codes are values, STYLE rule 6). NDEBUG does not remove them (STYLE rule 11): a violated
// invariant in a long seed sweep is exactly what a release build must not hide. When one fires
// it prints, on stderr, the condition, the file and line, the text, and every line of the
// current InvariantContext stack (innermost last): the runner that owns the run pushes the seed
// and the command that reproduces it, so the failure can be rerun at once. Then it aborts.
//
// Cost: one predictable branch per check; the text of LOCKSTEP_ASSERT_MSG is only evaluated
// when the check fails.
//
// The context stack is per thread (a diagnostic, not simulation state: nothing reads it but the
// failure report). Owned by the scopes that push it; InvariantContext is not movable.
#pragma once

#include <functional>
#include <string>

namespace lockstep {

// Prints the report described above and aborts. Never returns.
[[noreturn]] void invariant_failed(const char* condition, const char* file, int line,
                                   const std::string& text);

// While alive, adds `describe()` (evaluated only when an invariant fails) to every report of
// this thread. Scopes nest: the innermost is printed last.
class InvariantContext {
 public:
  explicit InvariantContext(std::function<std::string()> describe);
  ~InvariantContext();
  InvariantContext(const InvariantContext&) = delete;
  InvariantContext& operator=(const InvariantContext&) = delete;

 private:
  friend std::string invariant_context();
  std::function<std::string()> describe_;
  InvariantContext* outer_;
};

// The lines the current context stack would print, outermost first ("" when none).
std::string invariant_context();

}  // namespace lockstep

#define LOCKSTEP_ASSERT(cond)                   \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::lockstep::invariant_failed(#cond, __FILE__, __LINE__, std::string()))

#define LOCKSTEP_ASSERT_MSG(cond, text)         \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::lockstep::invariant_failed(#cond, __FILE__, __LINE__, (text)))
