#include "ops/broadcast_gradient_args.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

std::vector<int64_t> Dims(const Tensor& s, const char* name) {
  if (s.dtype() != DType::kInt32 && s.dtype() != DType::kInt64) {
    throw InvalidArgumentError(StrCat("BroadcastGradientArgs: ", name,
                                      " must be an int32 or int64 vector, got ", s.dtype()));
  }
  if (s.rank() != 1) {
    throw InvalidArgumentError(
        StrCat("BroadcastGradientArgs: ", name, " must be a vector, got shape ", s.shape()));
  }
  std::vector<int64_t> dims;
  if (s.dtype() == DType::kInt32) {
    const auto d = s.data<int32_t>();
    dims.assign(d.begin(), d.end());
  } else {
    dims = s.ToVector<int64_t>();
  }
  // A negative "dimension" is compared like any other number, as TF's BCast
  // does: -1 matches -1 and broadcasts against 1, and is refused against 5.
  return dims;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += StrCat(i == 0 ? "" : ",", dims[i]);
  return text + "]";
}

Tensor IndexVector(const std::vector<int64_t>& values, DType dtype) {
  if (dtype == DType::kInt64) return Tensor::FromVector<int64_t>(values);
  return Tensor::FromVector<int32_t>(std::vector<int32_t>(values.begin(), values.end()));
}

std::pair<Tensor, Tensor> Compute(const Tensor& s0, const Tensor& s1) {
  if (s0.dtype() != s1.dtype()) {
    throw InvalidArgumentError(StrCat("BroadcastGradientArgs: s0 and s1 must have one dtype, got ",
                                      s0.dtype(), " and ", s1.dtype()));
  }
  const std::vector<int64_t> a = Dims(s0, "s0");
  const std::vector<int64_t> b = Dims(s1, "s1");
  std::vector<int64_t> r0, r1;
  if (a != b) {  // equal shapes reduce nothing, even their 1s (TF's BCast)
    const size_t rank = std::max(a.size(), b.size());
    for (size_t i = 0; i < rank; ++i) {
      const int64_t ad = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
      const int64_t bd = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
      if (ad != bd && ad != 1 && bd != 1) {
        throw InvalidArgumentError(
            StrCat("Incompatible shapes: ", ShapeText(a), " vs. ", ShapeText(b)));
      }
      if (ad == 1) r0.push_back(static_cast<int64_t>(i));
      if (bd == 1) r1.push_back(static_cast<int64_t>(i));
    }
  }
  return {IndexVector(r0, s0.dtype()), IndexVector(r1, s0.dtype())};
}

NodeOutputs RunNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.empty() && c.inputs.size() == 2, "node '", c.node.name, "' (", c.node.op,
              ") needs 2 inputs, has ", c.refs.size() + c.inputs.size());
  auto [r0, r1] = Compute(c.inputs[0], c.inputs[1]);
  return {{std::move(r0), std::move(r1)}};
}

}  // namespace

const OpDef kBroadcastGradientArgsOp = {
    .type = "BroadcastGradientArgs", .num_inputs = 2, .run = RunNode, .num_outputs = 2};

std::pair<Tensor, Tensor> BroadcastGradientArgs(const Tensor& s0, const Tensor& s1) {
  Graph* graph = Graph::Current();
  if (graph == nullptr) return Compute(s0, s1);
  for (const auto& [s, name] : {std::pair{&s0, "s0"}, std::pair{&s1, "s1"}}) {
    const bool index = s->dtype() == DType::kInt32 || s->dtype() == DType::kInt64;
    if (!index || (!s->shape().unknown_rank() && s->rank() != 1) || s->dtype() != s0.dtype()) {
      throw InvalidArgumentError(StrCat("BroadcastGradientArgs: ", name,
                                        " must be an int32 or int64 vector of s0's dtype, got a ",
                                        s->dtype(), " tensor of shape ", s->shape()));
    }
  }
  Node node{.name = graph->UniqueName("BroadcastGradientArgs"), .op = "BroadcastGradientArgs"};
  node.inputs = {internal::GraphInput(*graph, s0), internal::GraphInput(*graph, s1)};
  node.attrs = {{"T", s0.dtype()}};
  node.output_specs = {{Shape::Partial({Shape::kUnknownDim}), s0.dtype()},
                       {Shape::Partial({Shape::kUnknownDim}), s0.dtype()}};
  const int index = graph->AddNode(std::move(node));
  return {graph->Output(index, 0), graph->Output(index, 1)};
}

}  // namespace eager
