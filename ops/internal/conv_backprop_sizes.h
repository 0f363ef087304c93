#pragma once

// The sizes inputs of the convolution backprops (Conv2DBackpropInput's
// input_sizes, Conv2DBackpropFilter's filter_sizes and their depthwise twins)
// and the partial output shapes they give in graph mode. Shared by
// ops/conv_ops.cc and ops/depthwise_conv.cc. Private to ops/.

#include <optional>
#include <span>
#include <string_view>

#include "ops/op_def.h"

namespace eager::internal {

// A sizes input: an int32 or int64 vector of 4 sizes, none negative
// (InvalidArgumentError naming `what` otherwise). Its values, or nullopt for
// a graph tensor whose values are not known yet.
std::optional<Shape> ReadSizes(const Tensor& t, std::string_view what);

// out_backprop has the forward output's shape `expected`; InvalidArgumentError
// naming both shapes otherwise.
void CheckBackprop(const Tensor& out_backprop, const Shape& expected);

// (input_sizes, filter, out_backprop): input_sizes' value when known, else
// its partially known value, else [?, ?, ?, filter's in-channels].
OutputSpec PartialBackpropInputShape(std::span<const Tensor> in);
// (input, filter_sizes, out_backprop): filter_sizes' value when known, else
// its partially known value, else [?, ?, input's channels, ?].
OutputSpec PartialBackpropFilterShape(std::span<const Tensor> in);

}  // namespace eager::internal
