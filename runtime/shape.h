#pragma once

// Shape: the dimensions of a dense row-major tensor, outermost first.
//
// A value type stored inline (no heap allocation), so creating and copying
// shapes on the per-op hot path is free. Ranks up to kMaxRank are supported;
// every dimension is >= 0 (zero-size dimensions are allowed: an empty tensor).
//
// Graph mode adds partially known shapes (TensorFlow's TensorShape with None
// dimensions): Shape::Partial({-1, 784}) is a placeholder's "[?,784]". Only
// symbolic tensors and graph node records carry them; num_elements() is -1
// then, and every concrete Tensor's shape is fully defined. A shape may also
// have an unknown rank (Shape::UnknownRank(), TF's TensorShape(None), e.g. an
// imported node without "_output_shapes"): rank() is 0 and unknown_rank() true.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace eager {

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  // A scalar: rank 0, one element.
  Shape() = default;
  // Throws InvalidArgumentError for a negative dimension or rank > kMaxRank.
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims)
      : Shape(std::span<const int64_t>(dims.data(), dims.size())) {}

  // The dimension value meaning "unknown" in a partial shape.
  static constexpr int64_t kUnknownDim = -1;
  // A shape whose dimensions may be kUnknownDim (other negative values throw
  // InvalidArgumentError, as do ranks above kMaxRank).
  static Shape Partial(std::span<const int64_t> dims);
  static Shape Partial(std::initializer_list<int64_t> dims) {
    return Partial(std::span<const int64_t>(dims.begin(), dims.size()));
  }

  // A shape of unknown rank (printed "<unknown>").
  static Shape UnknownRank();
  bool unknown_rank() const { return unknown_rank_; }

  // Whether the rank and every dimension are known.
  bool IsFullyDefined() const { return num_elements_ >= 0; }
  // Either rank unknown, or the same rank and equal dimensions where both
  // are known.
  bool IsCompatibleWith(const Shape& other) const;

  int rank() const { return rank_; }
  // REQUIRES: 0 <= i < rank().
  int64_t dim(int i) const { return dims_[i]; }
  // Accepts negative axes as Python does: dim_at(-1) is the last dimension.
  // Throws InvalidArgumentError when out of range.
  int64_t dim_at(int axis) const;
  // -1 when some dimension is unknown.
  int64_t num_elements() const { return num_elements_; }
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  std::vector<int64_t> ToVector() const { return {dims_.begin(), dims_.begin() + rank_}; }

  // Row-major strides in elements: strides()[rank-1] == 1.
  std::vector<int64_t> Strides() const;

  // Maps a possibly negative axis to [0, rank); throws InvalidArgumentError
  // ("axis 3 is out of range for a tensor of rank 2 (shape [2,3])").
  int NormalizeAxis(int axis) const;

  // "[]", "[2,3]" as TensorFlow prints shapes; unknown dimensions as "?".
  std::string ToString() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_ || a.unknown_rank_ != b.unknown_rank_) return false;
    for (int i = 0; i < a.rank_; ++i) {
      if (a.dims_[i] != b.dims_[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  // In this order the record is 80 bytes, not 88 (no padding after rank_).
  std::array<int64_t, kMaxRank> dims_{};
  int64_t num_elements_ = 1;
  int rank_ = 0;
  bool unknown_rank_ = false;
};
static_assert(sizeof(Shape) <= 80);

std::ostream& operator<<(std::ostream& out, const Shape& shape);

// Plain dimensions as "[2,3]" ("[]" for none), as Shape::ToString prints a
// known shape: the text errors and tools use for dims read from files or
// attributes (any rank, no unknown dims).
std::string DimsToString(std::span<const int64_t> dims);

}  // namespace eager
