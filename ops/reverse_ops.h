#pragma once

// ReverseV2 (tf.reverse): x with the order of its elements along `axes`
// reversed. Keras RNN layers with go_backwards=True write it for their
// inputs (and, with return_sequences, their outputs). Its gradient is the
// same reversal of the output's gradient (TF's _ReverseV2Grad).
//
//   eager::Tensor y = eager::Reverse(x, {1});   // [[1,2,3]] -> [[3,2,1]]
//
// Negative axes count from the end; an axis out of range or listed twice is
// InvalidArgumentError naming it and x's shape, as TF's.

#include <cstdint>
#include <vector>

#include "ops/op_def.h"

namespace eager {

Tensor Reverse(const Tensor& x, const std::vector<int64_t>& axes);  // "ReverseV2"

extern const OpDef kReverseV2Op;

}  // namespace eager
