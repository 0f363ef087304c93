#include "ops/internal/dynamic_shape.h"

#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/internal/graph_builder.h"
#include "ops/internal/scalar_like.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/graph.h"

namespace eager::internal {
namespace {

// A node `type` on x and a shape tensor, with TF's type attrs T and
// `index_attr` (the shape's dtype).
Tensor AddShapedNode(std::string_view type, std::string_view index_attr, const Tensor& x,
                     const Tensor& shape, const Shape& static_shape, const Attrs& extra = {}) {
  Graph* graph = Graph::Current();
  EAGER_INTERNAL_CHECK(graph != nullptr);
  Node node{.name = graph->UniqueName(type), .op = std::string(type)};
  node.inputs = {GraphInput(*graph, x), GraphInput(*graph, shape)};
  node.attrs = {{"T", x.dtype()}, {std::string(index_attr), shape.dtype()}};
  for (const auto& [name, value] : extra.items()) node.attrs.Set(name, value);
  node.output_specs = {{static_shape, x.dtype()}};
  return graph->Output(graph->AddNode(std::move(node)), 0);
}

}  // namespace

Tensor ReshapeToTensor(const Tensor& x, const Tensor& shape, const Shape& static_shape) {
  return AddShapedNode("Reshape", "Tshape", x, shape, static_shape);
}

Tensor BroadcastToTensor(const Tensor& x, const Tensor& shape, const Shape& static_shape) {
  return AddShapedNode("BroadcastTo", "Tidx", x, shape, static_shape);
}

Tensor SumOverTensor(const Tensor& x, const Tensor& axes) {
  return AddShapedNode("Sum", "Tidx", x, axes, Shape::UnknownRank(), Attrs{{"keep_dims", false}});
}

Tensor KeptDimsShape(const Tensor& x, std::span<const bool> reduced) {
  std::vector<int32_t> keep, ones;
  for (const bool r : reduced) {
    keep.push_back(r ? 0 : 1);
    ones.push_back(r ? 1 : 0);
  }
  // shape * keep + ones: each reduced dimension becomes 1.
  return Add(Mul(ShapeOf(x), Tensor::FromVector<int32_t>(std::move(keep))),
             Tensor::FromVector<int32_t>(std::move(ones)));
}

Tensor KeptDimsShape(const Tensor& x, const Tensor& axes) {
  const int64_t rank = x.rank();
  Tensor a = Reshape(axes.dtype() == DType::kInt32 ? axes : Cast(axes, DType::kInt32), {-1});
  const Tensor zero = Tensor::FromVector<int32_t>({0}, Shape{});
  a = SelectV2(GreaterEqual(a, zero), a,
               Add(a, Tensor::FromVector<int32_t>({static_cast<int32_t>(rank)}, Shape{})));
  // 1 at each listed axis (once, however often it is listed), else 0.
  const Tensor one = Tensor::FromVector<int32_t>({1}, Shape{});
  const Tensor reduced =
      Minimum(ReduceSum(OneHot(a, rank, 1.0, 0.0, DType::kInt32), {0}, /*keepdims=*/false), one);
  return Add(Mul(ShapeOf(x), Sub(one, reduced)), reduced);
}

Tensor ReducedCount(const Tensor& x, std::span<const bool> reduced, DType dtype) {
  const Shape& shape = x.shape();
  int64_t known = 1;
  std::vector<int64_t> unknown;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (!reduced[i]) continue;
    const int64_t d = shape.dim(static_cast<int>(i));
    if (d == Shape::kUnknownDim) {
      unknown.push_back(static_cast<int64_t>(i));
    } else {
      known *= d;
    }
  }
  if (unknown.empty()) return ScalarLike(static_cast<double>(known), dtype);
  const Tensor dims = ShapeOf(x, DType::kInt64);
  Tensor count = Slice(dims, {unknown[0]}, {1});
  for (size_t i = 1; i < unknown.size(); ++i) count = Mul(count, Slice(dims, {unknown[i]}, {1}));
  if (known != 1) count = Mul(count, Tensor::Vector<int64_t>({known}));
  return Reshape(Cast(count, dtype), {});
}

std::optional<Shape> PartialShapeValue(const Tensor& sizes) {
  if (!sizes.is_symbolic()) {
    std::vector<int64_t> dims;
    for (int32_t v : sizes.data<int32_t>()) dims.push_back(v);
    return Shape(dims);
  }
  const Graph* graph = Graph::Current();
  if (graph == nullptr) return std::nullopt;
  const Node* node = graph->FindNode(ParseNodeInput(sizes.name()).node);
  if (node == nullptr || node->op != "Shape" || node->inputs.empty()) return std::nullopt;
  const NodeInput source = ParseNodeInput(node->inputs[0]);
  const Node* input = graph->FindNode(source.node);
  if (input == nullptr || source.index < 0 ||
      static_cast<size_t>(source.index) >= input->output_specs.size()) {
    return std::nullopt;
  }
  const Shape& shape = input->output_specs[static_cast<size_t>(source.index)].shape;
  if (shape.unknown_rank()) return std::nullopt;
  return shape;
}

std::optional<Tensor> KnownValue(const Tensor& t) {
  if (!t.is_symbolic()) return t;
  Graph* graph = Graph::Current();
  if (graph == nullptr) return std::nullopt;
  const Node& node = graph->node(graph->OperationOf(t).index());
  if (node.op != "Const") return std::nullopt;
  const Tensor* value = AttrAs<Tensor>(node.FindAttr("value"));
  if (value == nullptr) return std::nullopt;
  return *value;
}

std::optional<std::vector<int64_t>> KnownInts(const Tensor& t) {
  std::optional<Tensor> value = KnownValue(t);
  if (!value) return std::nullopt;
  if (value->dtype() == DType::kInt64) return value->ToVector<int64_t>();
  if (value->dtype() != DType::kInt32) return std::nullopt;
  auto d = value->data<int32_t>();
  return std::vector<int64_t>(d.begin(), d.end());
}

}  // namespace eager::internal
