#include "runtime/errors.h"

namespace eager {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kDeadlineExceeded:
      return "DeadlineExceeded";
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

void ThrowError(ErrorCode code, const std::string& message) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      throw InvalidArgumentError(message);
    case ErrorCode::kDeadlineExceeded:
      throw DeadlineExceededError(message);
    case ErrorCode::kNotFound:
      throw NotFoundError(message);
    case ErrorCode::kResourceExhausted:
      throw ResourceExhaustedError(message);
    case ErrorCode::kFailedPrecondition:
      throw FailedPreconditionError(message);
    case ErrorCode::kOutOfRange:
      throw OutOfRangeError(message);
    case ErrorCode::kUnimplemented:
      throw UnimplementedError(message);
    case ErrorCode::kInternal:
      throw InternalError(message);
    case ErrorCode::kDataLoss:
      throw DataLossError(message);
  }
  throw InternalError(message);
}

namespace internal {
void ThrowInternal(const char* file, int line, const char* condition) {
  throw InternalError(StrCat("Internal error in eager at ", file, ":", line, ": check failed: ",
                             condition, " (this is a bug in eager, please report it)"));
}
}  // namespace internal

}  // namespace eager
