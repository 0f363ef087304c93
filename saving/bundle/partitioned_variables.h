#pragma once

// Partitioned (sliced) variables in a TensorBundle (FORMAT.md 2.8): the key
// each slice is saved under, and the full tensor assembled from the slices.
//
// A partitioned variable W has one entry under "W" with the full shape and
// its slices (no bytes of its own) and one ordinary entry per slice, under
// EncodeTensorNameSlice(W, slice), holding that slice's elements. For the
// bundle reader and eager-ckpt; not installed (cmake/package.cmake): not user API.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"
#include "saving/bundle/tensor_slice.h"

namespace eager::internal {

// TensorFlow's checkpoint::EncodeTensorNameSlice, in OrderedCode:
// NumIncreasing(0), String(name), NumIncreasing(rank), then per extent
// SignedNumIncreasing(start), SignedNumIncreasing(length or -1). The key
// starts with byte 0x00, so slice entries sort right after the header.
std::string EncodeTensorNameSlice(std::string_view name, const TensorSlice& slice);

// The inverse: false unless `key` is exactly a well-formed slice key.
bool DecodeTensorNameSlice(std::string_view key, std::string* name, TensorSlice* slice);

// One slice of a partitioned variable: the extent the full entry lists,
// and what the slice's own entry (under EncodeTensorNameSlice) records.
struct StoredSlice {
  TensorSlice slice;
  int tf_dtype = 0;           // TensorFlow's DataType value of the slice's entry
  std::vector<int64_t> dims;  // the shape of the slice's entry
};

// The full tensor of a partitioned variable. `read_slice(i)` returns the
// stored tensor of slices[i]. Every error is a DataLossError naming `key`,
// `where` (the checkpoint) and the slice (in TF's "0,5:-" text): a slice with
// more extents than the full rank, or outside the full shape (negative, or
// start + length beyond a dimension); a slice entry whose dtype or shape is
// not the slice's; two slices that overlap; elements no slice covers. All of
// that but the exact overlap/hole is checked from the index alone, before
// anything is allocated or read: the full tensor is allocated only when the
// slices' element counts add up to it. Memory: the full tensor, one slice at
// a time, and one bit per element.
Tensor AssembleSlices(std::string_view key, std::string_view where, DType dtype,
                      const Shape& full_shape, const std::vector<StoredSlice>& slices,
                      const std::function<Tensor(size_t)>& read_slice);

}  // namespace eager::internal
