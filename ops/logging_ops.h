#pragma once

// Logging ops of TF1 graphs (tf.debugging / tf.compat.v1.Assert). Graph-only:
// a Session runs them as nodes (OpDef::run).
//
//   Assert   condition: bool scalar, data: T (a list) -> nothing
//            attrs T (the data dtypes), summarize (int, TF's default 3).
//            True: nothing happens. False: InvalidArgumentError
//            "assertion failed: [<data 0>] [<data 1>] ...", each data tensor
//            as TF's Tensor::SummarizeValue prints it (its first `summarize`
//            elements, space-separated, "..." when there are more; strings
//            C-escaped), so a graph's tf.debugging checks fail with TF's text.

#include <string>

#include "ops/op_def.h"

namespace eager {

// `t` as TF's Tensor::SummarizeValue(max_entries) prints it (legacy, not
// print_v2): what Assert's message holds per data tensor.
std::string SummarizeValue(const Tensor& t, int64_t max_entries);

extern const OpDef kAssertOp;

}  // namespace eager
