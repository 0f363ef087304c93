#include "runtime/errors.h"

namespace eager {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kResourceExhausted:
      return "ResourceExhausted";
    case ErrorCode::kFailedPrecondition:
      return "FailedPrecondition";
    case ErrorCode::kOutOfRange:
      return "OutOfRange";
    case ErrorCode::kUnimplemented:
      return "Unimplemented";
    case ErrorCode::kInternal:
      return "Internal";
    case ErrorCode::kDataLoss:
      return "DataLoss";
  }
  return "Unknown";
}

namespace internal {
void ThrowInternal(const char* file, int line, const char* condition) {
  throw InternalError(StrCat("Internal error in eager at ", file, ":", line, ": check failed: ",
                             condition, " (this is a bug in eager, please report it)"));
}
}  // namespace internal

}  // namespace eager
