#include "runtime/shape.h"

#include <limits>

#include "runtime/errors.h"

namespace eager {

Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    throw InvalidArgumentError(
        StrCat("Shape: rank ", dims.size(), " exceeds the maximum supported rank ", kMaxRank));
  }
  rank_ = static_cast<int>(dims.size());
  for (int i = 0; i < rank_; ++i) {
    if (dims[i] < 0) {
      throw InvalidArgumentError(
          StrCat("Shape: dimension ", i, " is ", dims[i], "; dimensions must be >= 0"));
    }
    dims_[i] = dims[i];
  }
  // Overflow would make every later size check meaningless, so refuse it.
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] != 0 && num_elements_ > std::numeric_limits<int64_t>::max() / dims_[i]) {
      throw InvalidArgumentError(StrCat("Shape ", ToString(), " has too many elements"));
    }
    num_elements_ *= dims_[i];
  }
}

Shape Shape::Partial(std::span<const int64_t> dims) {
  std::array<int64_t, kMaxRank> known{};
  bool fully_defined = true;
  if (dims.size() > static_cast<size_t>(kMaxRank)) return Shape(dims);  // throws
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == kUnknownDim) {
      fully_defined = false;
    } else {
      known[i] = dims[i];
      if (dims[i] < 0) {
        throw InvalidArgumentError(StrCat("Shape: dimension ", i, " is ", dims[i],
                                          "; dimensions must be >= 0 or -1 (unknown)"));
      }
    }
  }
  Shape shape(std::span<const int64_t>(known.data(), dims.size()));
  if (!fully_defined) {
    for (size_t i = 0; i < dims.size(); ++i) shape.dims_[i] = dims[i];
    shape.num_elements_ = -1;
  }
  return shape;
}

Shape Shape::UnknownRank() {
  Shape shape;
  shape.num_elements_ = -1;
  shape.unknown_rank_ = true;
  return shape;
}

bool Shape::IsCompatibleWith(const Shape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] != kUnknownDim && other.dims_[i] != kUnknownDim && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

int Shape::NormalizeAxis(int axis) const {
  const int normalized = axis < 0 ? axis + rank_ : axis;
  if (normalized < 0 || normalized >= rank_) {
    throw InvalidArgumentError(StrCat("axis ", axis, " is out of range for a tensor of rank ",
                                      rank_, " (shape ", ToString(), "); expected axis in [",
                                      -rank_, ", ", rank_, ")"));
  }
  return normalized;
}

int64_t Shape::dim_at(int axis) const { return dims_[NormalizeAxis(axis)]; }

std::vector<int64_t> Shape::Strides() const {
  std::vector<int64_t> strides(rank_);
  int64_t stride = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims_[i];
  }
  return strides;
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

std::string Shape::ToString() const {
  if (unknown_rank_) return "<unknown>";
  std::string out = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) out += ",";
    out += dims_[i] == kUnknownDim ? std::string("?") : std::to_string(dims_[i]);
  }
  return out + "]";
}

std::ostream& operator<<(std::ostream& out, const Shape& shape) { return out << shape.ToString(); }

}  // namespace eager
