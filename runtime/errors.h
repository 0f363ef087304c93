#pragma once

// The error kinds of eager, named and numbered like TensorFlow's tf.errors.
//
// Every failure the library reports is an exception derived from eager::Error.
// Messages name the thing at fault (op, variable, key, file, shape, dtype) and
// what was expected, so that they can be acted on without a debugger:
//
//   InvalidArgumentError  the caller's mistake: shapes, dtypes, axes, arity
//   NotFoundError         a missing file, checkpoint key or tensor name
//   FailedPreconditionError  wrong state: an uninitialized variable, a used tape
//   OutOfRangeError       an index or value outside its valid range
//   DeadlineExceededError a run past its time bound (SessionOptions)
//   DataLossError         a checksum mismatch, a truncated or corrupt file
//   UnimplementedError    a dtype or feature a file uses that we do not support
//   InternalError         a bug in eager itself (EAGER_INTERNAL_CHECK)
//
// Use EAGER_CHECK(cond, parts...) for caller errors and
// EAGER_INTERNAL_CHECK(cond) for invariants; keeping them apart tells users
// whether to fix their code or to file a bug.

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace eager {

// TensorFlow's canonical error codes (tensorflow/core/protobuf/error_codes.proto).
enum class ErrorCode {
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kDataLoss = 15,
};

// "InvalidArgument", "NotFound", ... as TensorFlow prints them.
std::string_view ErrorCodeName(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

#define EAGER_DEFINE_ERROR_KIND(Kind)                                                        \
  class Kind##Error : public Error {                                                         \
   public:                                                                                   \
    explicit Kind##Error(const std::string& message) : Error(ErrorCode::k##Kind, message) {} \
  };
EAGER_DEFINE_ERROR_KIND(InvalidArgument)
EAGER_DEFINE_ERROR_KIND(DeadlineExceeded)
EAGER_DEFINE_ERROR_KIND(NotFound)
EAGER_DEFINE_ERROR_KIND(ResourceExhausted)
EAGER_DEFINE_ERROR_KIND(FailedPrecondition)
EAGER_DEFINE_ERROR_KIND(OutOfRange)
EAGER_DEFINE_ERROR_KIND(Unimplemented)
EAGER_DEFINE_ERROR_KIND(Internal)
EAGER_DEFINE_ERROR_KIND(DataLoss)
#undef EAGER_DEFINE_ERROR_KIND

// Throws the error kind `code` names, with `message`: how an error caught on
// one thread or in one layer is raised again, with more context, as the same
// kind (an asynchronous save's writer, a Session node's kernel).
[[noreturn]] void ThrowError(ErrorCode code, const std::string& message);

// Concatenates anything that has an operator<< (Shape and DType do).
template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

namespace internal {
[[noreturn]] void ThrowInternal(const char* file, int line, const char* condition);
}  // namespace internal

}  // namespace eager

// Throws InvalidArgumentError with the concatenated parts unless `cond` holds.
#define EAGER_CHECK(cond, ...)                                           \
  do {                                                                   \
    if (!(cond)) [[unlikely]] {                                          \
      throw ::eager::InvalidArgumentError(::eager::StrCat(__VA_ARGS__)); \
    }                                                                    \
  } while (false)

// Throws InternalError naming the source location: for eager's own invariants.
#define EAGER_INTERNAL_CHECK(cond)                                 \
  do {                                                             \
    if (!(cond)) [[unlikely]] {                                    \
      ::eager::internal::ThrowInternal(__FILE__, __LINE__, #cond); \
    }                                                              \
  } while (false)
