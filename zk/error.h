// lockstep contract: error codes and results.
//
// Operating errors are values (STYLE rule 6): every operation completes with a Result whose
// `error` is one of ZooKeeper's codes, numerically identical to the C client's ZOO_ERRORS, plus
// one code of lockstep's own (kCancelled) for a caller that was cancelled at an await point.
// Recipes must handle every code an operation is documented to return; a programmer error
// (awaiting a moved-from task, resuming a finished coroutine) is an assert, not a code.
#pragma once

#include <string>
#include <utility>

namespace zk {

enum class Error : int {
  kOk = 0,
  kSystemError = -1,
  kRuntimeInconsistency = -2,
  kDataInconsistency = -3,
  kConnectionLoss = -4,  // the outcome is unknown: the request may or may not have been applied
  kMarshallingError = -5,
  kUnimplemented = -6,
  kOperationTimeout = -7,
  kBadArguments = -8,
  kInvalidState = -9,  // the session is expired or closed; the handle must be replaced
  kApiError = -100,
  kNoNode = -101,
  kNoAuth = -102,
  kBadVersion = -103,
  kNoChildrenForEphemerals = -108,
  kNodeExists = -110,
  kNotEmpty = -111,
  kSessionExpired = -112,
  kInvalidCallback = -113,
  kInvalidAcl = -114,
  kAuthFailed = -115,
  kClosing = -116,
  kNothing = -117,
  kSessionMoved = -118,
  // lockstep's own: the awaiting task was cancelled (TaskHandle::cancel) while suspended here.
  // The request, if one was sent, may still be applied on the server, exactly like a reply lost
  // to connection loss.
  kCancelled = -1000,
};

// "ZNONODE", "ZCONNECTIONLOSS", ... (the C client's names), "LOCKSTEP_CANCELLED".
const char* error_name(Error e);

// True for the codes after which the request's effect on the server is unknown. kClosing is
// one: the C client fails requests still in flight at close() with it, although the server
// applied them (measured on Debian's 3.8.0 server).
constexpr bool is_ambiguous(Error e) {
  return e == Error::kConnectionLoss || e == Error::kOperationTimeout || e == Error::kCancelled ||
         e == Error::kClosing;
}

// True for the codes after which this session handle is dead.
constexpr bool is_session_fatal(Error e) {
  return e == Error::kSessionExpired || e == Error::kInvalidState || e == Error::kClosing;
}

// An operation's outcome: an error code and, when it is kOk, a value.
template <class T>
struct Result {
  Error error = Error::kOk;
  T value{};

  bool ok() const { return error == Error::kOk; }
  static Result failure(Error e) { return Result{e, T{}}; }
};

// For operations with no value (delete, sync).
struct Unit {
  bool operator==(const Unit&) const = default;
};
using Status = Result<Unit>;

}  // namespace zk
