#include "ops/internal/dispatch.h"

namespace eager::internal {

std::string_view DTypeSetName(DTypeSet set) {
  switch (set) {
    case DTypeSet::kFloat:
      return "float32 or float64";
    case DTypeSet::kNumeric:
      return "float32, float64, int32 or int64";
    case DTypeSet::kNumericOrBool:
      return "float32, float64, int32, int64 or bool";
    case DTypeSet::kIndex:
      return "int32 or int64";
    case DTypeSet::kBool:
      return "bool";
  }
  return "?";
}

void ThrowDTypeNotIn(const Tensor& t, std::string_view what, DTypeSet set) {
  throw InvalidArgumentError(StrCat(what, " has dtype ", t.dtype(), " (shape ", t.shape(),
                                    "); expected ", DTypeSetName(set)));
}

void ThrowDTypesDiffer(const Tensor& x, const Tensor& y, std::string_view x_name,
                       std::string_view y_name) {
  throw InvalidArgumentError(StrCat("expected ", x_name, " and ", y_name,
                                    " to have the same dtype, got ", x_name, ": ", x.dtype(), " ",
                                    x.shape(), " and ", y_name, ": ", y.dtype(), " ", y.shape()));
}

}  // namespace eager::internal
