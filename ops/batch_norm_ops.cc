#include "ops/batch_norm_ops.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// x seen as [outer, channels, inner]: NHWC / NDHWC have inner 1, NCHW /
// NCDHW outer N and inner the spatial size.
struct Layout {
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
  int64_t PerChannel() const { return outer * inner; }
};

Layout LayoutOf(std::string_view where, const Tensor& x, const std::string& format) {
  const bool channels_last = format == "NHWC" || format == "NDHWC";
  if (!channels_last && format != "NCHW" && format != "NCDHW") {
    throw InvalidArgumentError(
        StrCat(where, ": unknown data_format '", format, "'; expected NHWC, NCHW, NDHWC or NCDHW"));
  }
  const int rank = format.size() == 4 ? 4 : 5;
  if (x.rank() != rank) {
    throw InvalidArgumentError(StrCat(where, ": x must be ", rank, "-dimensional for data_format ",
                                      format, ", got shape ", x.shape()));
  }
  if (x.dtype() != DType::kFloat32) {
    throw InvalidArgumentError(StrCat(where, ": x must be float32, got ", x.dtype()));
  }
  Layout l;
  const int c = channels_last ? rank - 1 : 1;
  l.channels = x.shape().dim(c);
  for (int d = 0; d < rank; ++d) {
    if (d < c) l.outer *= x.shape().dim(d);
    if (d > c) l.inner *= x.shape().dim(d);
  }
  return l;
}

// A float32 vector of `channels` entries named `what`.
void CheckChannels(std::string_view where, const Tensor& t, std::string_view what,
                   int64_t channels) {
  if (t.dtype() != DType::kFloat32 || t.rank() != 1 || t.shape().dim(0) != channels) {
    throw InvalidArgumentError(StrCat(where, ": ", what, " must be a float32 vector of ", channels,
                                      " elements (the channels of x), got a ", t.dtype(),
                                      " tensor of shape ", t.shape()));
  }
}

Tensor Empty() { return Tensor::FromVector<float>({}, Shape{0}); }

// Calls f(channel, flat index) for every element of x.
template <typename F>
void ForEach(const Layout& l, F f) {
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t c = 0; c < l.channels; ++c) {
      const int64_t base = (o * l.channels + c) * l.inner;
      for (int64_t i = 0; i < l.inner; ++i) f(c, base + i);
    }
  }
}

FusedBatchNormOutputs Forward(std::string_view where, const Tensor& x, const Tensor& scale,
                              const Tensor& offset, const Tensor& mean, const Tensor& variance,
                              const FusedBatchNormOptions& o) {
  const Layout l = LayoutOf(where, x, o.data_format);
  const auto c = static_cast<size_t>(l.channels);
  CheckChannels(where, scale, "scale", l.channels);
  CheckChannels(where, offset, "offset", l.channels);
  // Training with factor 1 ignores mean and variance (Keras passes empty ones).
  const bool uses_inputs = !o.is_training || o.exponential_avg_factor != 1.0;
  if (uses_inputs) {
    CheckChannels(where, mean, "mean", l.channels);
    CheckChannels(where, variance, "variance", l.channels);
  }
  const auto xs = x.data<float>();
  std::vector<double> m(c, 0.0), v(c, 0.0);
  if (o.is_training) {
    const double n = static_cast<double>(std::max<int64_t>(l.PerChannel(), 1));
    ForEach(l, [&](int64_t ch, int64_t i) { m[static_cast<size_t>(ch)] += xs[i]; });
    for (double& mc : m) mc /= n;
    ForEach(l, [&](int64_t ch, int64_t i) {
      const double d = xs[i] - m[static_cast<size_t>(ch)];
      v[static_cast<size_t>(ch)] += d * d;
    });
    for (double& vc : v) vc /= n;
  } else {
    for (size_t i = 0; i < c; ++i) {
      m[i] = mean.data<float>()[i];
      v[i] = variance.data<float>()[i];
    }
  }
  Tensor y = internal::NewTensor(x.shape(), DType::kFloat32);
  float* ys = internal::MutableData<float>(y);
  std::vector<double> mul(c);
  for (size_t i = 0; i < c; ++i) mul[i] = scale.data<float>()[i] / std::sqrt(v[i] + o.epsilon);
  ForEach(l, [&](int64_t ch, int64_t i) {
    const auto k = static_cast<size_t>(ch);
    ys[i] = static_cast<float>((xs[i] - m[k]) * mul[k] + offset.data<float>()[k]);
  });
  const auto vec = [c](const std::vector<double>& d) {
    std::vector<float> f(c);
    for (size_t i = 0; i < c; ++i) f[i] = static_cast<float>(d[i]);
    return Tensor::FromVector<float>(std::move(f), Shape{static_cast<int64_t>(c)});
  };
  FusedBatchNormOutputs out;
  out.y = y;
  out.reserve_space_1 = vec(m);
  out.reserve_space_2 = vec(v);
  out.reserve_space_3 = Empty();
  if (!o.is_training) {
    out.batch_mean = mean;
    out.batch_variance = variance;
    return out;
  }
  const int64_t n = l.PerChannel();
  const double bessel = static_cast<double>(n) / static_cast<double>(std::max<int64_t>(n - 1, 1));
  std::vector<double> running_m(m), running_v(v);
  for (size_t i = 0; i < c; ++i) {
    running_v[i] = v[i] * bessel;
    if (uses_inputs) {
      const double f = o.exponential_avg_factor;
      running_m[i] = (1 - f) * mean.data<float>()[i] + f * m[i];
      running_v[i] = (1 - f) * variance.data<float>()[i] + f * running_v[i];
    }
  }
  out.batch_mean = vec(running_m);
  out.batch_variance = vec(running_v);
  return out;
}

FusedBatchNormGradOutputs Backward(std::string_view where, const Tensor& dy, const Tensor& x,
                                   const Tensor& scale, const Tensor& saved_mean,
                                   const Tensor& saved_variance, const FusedBatchNormOptions& o) {
  const Layout l = LayoutOf(where, x, o.data_format);
  if (dy.dtype() != DType::kFloat32 || dy.shape() != x.shape()) {
    throw InvalidArgumentError(StrCat(where, ": y_backprop must be float32 of x's shape ",
                                      x.shape(), ", got a ", dy.dtype(), " tensor of shape ",
                                      dy.shape()));
  }
  CheckChannels(where, scale, "scale", l.channels);
  CheckChannels(where, saved_mean, "reserve_space_1 (the mean)", l.channels);
  CheckChannels(where, saved_variance, "reserve_space_2 (the variance)", l.channels);
  const auto c = static_cast<size_t>(l.channels);
  const auto xs = x.data<float>();
  const auto gs = dy.data<float>();
  const auto m = saved_mean.data<float>();
  std::vector<double> inv(c), sum_dy(c, 0.0), sum_dy_xc(c, 0.0);
  for (size_t i = 0; i < c; ++i) {
    inv[i] = 1.0 / std::sqrt(static_cast<double>(saved_variance.data<float>()[i]) + o.epsilon);
  }
  ForEach(l, [&](int64_t ch, int64_t i) {
    const auto k = static_cast<size_t>(ch);
    sum_dy[k] += gs[i];
    sum_dy_xc[k] += gs[i] * (static_cast<double>(xs[i]) - m[k]);
  });
  Tensor dx = internal::NewTensor(x.shape(), DType::kFloat32);
  float* dxs = internal::MutableData<float>(dx);
  const double n = static_cast<double>(std::max<int64_t>(l.PerChannel(), 1));
  ForEach(l, [&](int64_t ch, int64_t i) {
    const auto k = static_cast<size_t>(ch);
    const double s = scale.data<float>()[k] * inv[k];
    if (!o.is_training) {
      dxs[i] = static_cast<float>(gs[i] * s);
      return;
    }
    const double xc = static_cast<double>(xs[i]) - m[k];
    dxs[i] =
        static_cast<float>(s * (gs[i] - sum_dy[k] / n - xc * inv[k] * inv[k] * sum_dy_xc[k] / n));
  });
  std::vector<float> dscale(c), doffset(c);
  for (size_t i = 0; i < c; ++i) {
    dscale[i] = static_cast<float>(sum_dy_xc[i] * inv[i]);
    doffset[i] = static_cast<float>(sum_dy[i]);
  }
  const Shape vs{static_cast<int64_t>(c)};
  return {.x_backprop = dx,
          .scale_backprop = Tensor::FromVector<float>(std::move(dscale), vs),
          .offset_backprop = Tensor::FromVector<float>(std::move(doffset), vs),
          .reserve_space_4 = Empty(),
          .reserve_space_5 = Empty()};
}

FusedBatchNormOptions OptionsOf(const Attrs& attrs) {
  FusedBatchNormOptions o;
  o.epsilon = attrs.GetFloat("epsilon");
  o.data_format = attrs.GetString("data_format");
  o.is_training = attrs.GetBool("is_training");
  if (attrs.Has("exponential_avg_factor")) {
    o.exponential_avg_factor = attrs.GetFloat("exponential_avg_factor");
  }
  return o;
}

std::string NodeWhere(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

void CheckArity(const NodeContext& c, size_t n) {
  if (!c.refs.empty() || c.inputs.size() != n) {
    throw InvalidArgumentError(
        StrCat(NodeWhere(c), " takes ", n, " inputs, has ", c.refs.size() + c.inputs.size()));
  }
}

NodeOutputs RunFusedBatchNormV3(const NodeContext& c) {
  CheckArity(c, 5);
  const auto& in = c.inputs;
  FusedBatchNormOutputs r =
      Forward(NodeWhere(c), in[0], in[1], in[2], in[3], in[4], OptionsOf(c.attrs));
  return {{r.y, r.batch_mean, r.batch_variance, r.reserve_space_1, r.reserve_space_2,
           r.reserve_space_3}};
}

NodeOutputs RunFusedBatchNormGradV3(const NodeContext& c) {
  CheckArity(c, 6);
  const auto& in = c.inputs;
  FusedBatchNormGradOutputs r =
      Backward(NodeWhere(c), in[0], in[1], in[2], in[3], in[4], OptionsOf(c.attrs));
  return {
      {r.x_backprop, r.scale_backprop, r.offset_backprop, r.reserve_space_4, r.reserve_space_5}};
}

// TF1's FusedBatchNorm / FusedBatchNormGrad (v1): V3's without
// reserve_space_3, every input and output of the one float dtype T.
NodeOutputs RunFusedBatchNormV1(const NodeContext& c) {
  CheckArity(c, 5);
  const auto& in = c.inputs;
  FusedBatchNormOutputs r =
      Forward(NodeWhere(c), in[0], in[1], in[2], in[3], in[4], OptionsOf(c.attrs));
  return {{r.y, r.batch_mean, r.batch_variance, r.reserve_space_1, r.reserve_space_2}};
}

NodeOutputs RunFusedBatchNormGradV1(const NodeContext& c) {
  CheckArity(c, 5);
  const auto& in = c.inputs;
  FusedBatchNormGradOutputs r =
      Backward(NodeWhere(c), in[0], in[1], in[2], in[3], in[4], OptionsOf(c.attrs));
  return {
      {r.x_backprop, r.scale_backprop, r.offset_backprop, r.reserve_space_4, r.reserve_space_5}};
}

Attrs NodeAttrs(const FusedBatchNormOptions& o) {
  return Attrs{{"T", DType::kFloat32},
               {"U", DType::kFloat32},
               {"epsilon", o.epsilon},
               {"data_format", o.data_format},
               {"is_training", o.is_training}};
}

// Adds node `op` with `inputs` and `specs` to `graph`; its outputs.
std::vector<Tensor> AddNode(Graph& graph, std::string_view op, const std::vector<Tensor>& inputs,
                            Attrs attrs, std::vector<OutputSpec> specs) {
  Node node{.name = graph.UniqueName(op), .op = std::string(op)};
  for (const Tensor& t : inputs) node.inputs.push_back(internal::GraphInput(graph, t));
  node.attrs = std::move(attrs);
  node.output_specs = std::move(specs);
  const size_t n = node.output_specs.size();
  const int index = graph.AddNode(std::move(node));
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) out.push_back(graph.Output(index, static_cast<int>(i)));
  return out;
}

// The vectors' spec: [channels] when x's shape tells it.
OutputSpec ChannelSpec(const Tensor& x, const std::string& format) {
  const Shape& s = x.shape();
  if (s.unknown_rank()) return {Shape::Partial({Shape::kUnknownDim}), DType::kFloat32};
  const bool last = format == "NHWC" || format == "NDHWC";
  const int64_t ch = s.rank() >= 2 ? s.dim(last ? s.rank() - 1 : 1) : Shape::kUnknownDim;
  return {Shape::Partial({ch}), DType::kFloat32};
}

}  // namespace

const OpDef kFusedBatchNormV3Op = {
    .type = "FusedBatchNormV3", .num_inputs = 5, .run = RunFusedBatchNormV3, .num_outputs = 6};
const OpDef kFusedBatchNormV1Op = {
    .type = "FusedBatchNorm", .num_inputs = 5, .run = RunFusedBatchNormV1, .num_outputs = 5};
const OpDef kFusedBatchNormGradV1Op = {.type = "FusedBatchNormGrad",
                                       .num_inputs = 5,
                                       .run = RunFusedBatchNormGradV1,
                                       .num_outputs = 5};
const OpDef kFusedBatchNormGradV3Op = {.type = "FusedBatchNormGradV3",
                                       .num_inputs = 6,
                                       .run = RunFusedBatchNormGradV3,
                                       .num_outputs = 5};

FusedBatchNormOutputs FusedBatchNorm(const Tensor& x, const Tensor& scale, const Tensor& offset,
                                     const Tensor& mean, const Tensor& variance,
                                     const FusedBatchNormOptions& options) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    return Forward("FusedBatchNormV3", x, scale, offset, mean, variance, options);
  }
  Attrs attrs = NodeAttrs(options);
  attrs.Set("exponential_avg_factor", options.exponential_avg_factor);
  const OutputSpec vec = ChannelSpec(x, options.data_format);
  const OutputSpec empty{Shape{0}, DType::kFloat32};
  std::vector<Tensor> out =
      AddNode(*graph, "FusedBatchNormV3", {x, scale, offset, mean, variance}, std::move(attrs),
              {{x.shape(), DType::kFloat32}, vec, vec, vec, vec, empty});
  return {out[0], out[1], out[2], out[3], out[4], out[5]};
}

FusedBatchNormGradOutputs FusedBatchNormGrad(const Tensor& y_backprop, const Tensor& x,
                                             const Tensor& scale, const Tensor& reserve_space_1,
                                             const Tensor& reserve_space_2,
                                             const Tensor& reserve_space_3,
                                             const FusedBatchNormOptions& options) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) {
    return Backward("FusedBatchNormGradV3", y_backprop, x, scale, reserve_space_1, reserve_space_2,
                    options);
  }
  const OutputSpec vec = ChannelSpec(x, options.data_format);
  const OutputSpec empty{Shape{0}, DType::kFloat32};
  std::vector<Tensor> out =
      AddNode(*graph, "FusedBatchNormGradV3",
              {y_backprop, x, scale, reserve_space_1, reserve_space_2, reserve_space_3},
              NodeAttrs(options), {{x.shape(), DType::kFloat32}, vec, vec, empty, empty});
  return {out[0], out[1], out[2], out[3], out[4]};
}

}  // namespace eager
