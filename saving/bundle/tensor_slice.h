#pragma once

// TensorSlice: which part of a partitioned variable one saved slice holds
// (TensorFlow's TensorSlice / TensorSliceProto, FORMAT.md 2.8).
//
// A partitioned variable W of full shape [10, 4] saved in two pieces along
// dimension 0 has the slices {[0, 5), whole} and {[5, 10), whole}, which
// TensorFlow writes as "0,5:-" and "5,5:-": per dimension "start,length",
// or "-" for a dimension taken whole.

#include <cstdint>
#include <string>
#include <vector>

namespace eager {

struct SliceExtent {
  static constexpr int64_t kWhole = -1;  // TF's "length absent": the whole dimension
  int64_t start = 0;
  int64_t length = kWhole;
  bool whole() const { return length == kWhole; }
  friend bool operator==(const SliceExtent&, const SliceExtent&) = default;
};

// One extent per dimension. TF allows fewer extents than dimensions (the
// rest are whole); an empty slice is the whole tensor.
using TensorSlice = std::vector<SliceExtent>;

// TensorFlow's TensorSlice::DebugString: "0,5:-", "-" for whole dimensions,
// "" for a slice with no extents.
std::string SliceToString(const TensorSlice& slice);

}  // namespace eager
