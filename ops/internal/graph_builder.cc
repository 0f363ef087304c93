#include "ops/internal/graph_builder.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "ops/internal/scalar_like.h"
#include "ops/operators.h"
#include "runtime/names.h"
#include "runtime/op_signature.h"

namespace eager::internal {
namespace {

constexpr TypeAttr kDefaultTypeAttrs[] = {{"T", 0}};

std::span<const TypeAttr> TypeAttrsOf(const OpDef& op) {
  return op.type_attrs.empty() ? std::span<const TypeAttr>(kDefaultTypeAttrs) : op.type_attrs;
}

bool IsInputAttr(const OpDef& op, std::string_view name) {
  for (const InputAttr& a : op.input_attrs) {
    if (a.attr == name) return true;
  }
  return false;
}

int32_t ToInt32(int64_t v, const OpDef& op, std::string_view attr) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgumentError(StrCat(op.type, ": attribute '", attr, "' value ", v,
                                      " does not fit the int32 input a TF graph passes it as"));
  }
  return static_cast<int32_t>(v);
}

Tensor Int32Vector(std::span<const int64_t> values, const OpDef& op, std::string_view attr) {
  std::vector<int32_t> out;
  out.reserve(values.size());
  for (int64_t v : values) out.push_back(ToInt32(v, op, attr));
  return Tensor::FromVector<int32_t>(std::move(out));
}

// The value of input attr `a` as TF's graph passes it.
Tensor InputAttrValue(const OpDef& op, const InputAttr& a, const Attrs& attrs,
                      const OutputSpec& spec) {
  switch (a.kind) {
    case InputAttr::Kind::kInts:
      return Int32Vector(attrs.GetInts(a.attr), op, a.attr);
    case InputAttr::Kind::kInt:
      return Tensor::Scalar<int32_t>(ToInt32(attrs.GetInt(a.attr), op, a.attr));
    case InputAttr::Kind::kShape:
      return Int32Vector(attrs.GetShape(a.attr).dims(), op, a.attr);
    case InputAttr::Kind::kOutputScalar:
      return ScalarLike(attrs.GetFloat(a.attr), spec.dtype);
  }
  throw InternalError("unknown InputAttr kind");
}

// A symbolic stand-in for `t` whose unknown dimensions are `fill`.
Tensor StandIn(const Tensor& t, int64_t fill) {
  std::vector<int64_t> dims = t.shape().ToVector();
  for (int64_t& d : dims) {
    if (d == Shape::kUnknownDim) d = fill;
  }
  return Tensor(t.symbolic(), Shape(dims), t.dtype(), t.id());
}

std::vector<Tensor> StandIns(std::span<const Tensor> inputs, int64_t fill) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (const Tensor& t : inputs) out.push_back(t.shape().IsFullyDefined() ? t : StandIn(t, fill));
  return out;
}

std::optional<OutputSpec> TryInfer(const OpDef& op, std::span<const Tensor> inputs,
                                   const Attrs& attrs, int64_t fill) {
  try {
    return op.infer(StandIns(inputs, fill), attrs);
  } catch (const InvalidArgumentError&) {
    return std::nullopt;
  }
}

// TF's names of the inputs a plain value may be given for (convert_to_tensor
// in the op's name scope: `v + 1.0` makes "add/y").
std::string_view TfInputName(std::string_view type, size_t i) {
  static constexpr std::string_view kXY[] = {"x", "y"};
  static constexpr std::string_view kMatMul[] = {"a", "b"};
  static constexpr std::string_view kBiasAdd[] = {"value", "bias"};
  static constexpr std::string_view kConv2D[] = {"input", "filter"};
  std::span<const std::string_view> names;
  if (type == "AddV2" || type == "Sub" || type == "Mul" || type == "RealDiv" || type == "Pow" ||
      type == "Maximum" || type == "Minimum" || type == "Equal") {
    names = kXY;
  } else if (type == "MatMul") {
    names = kMatMul;
  } else if (type == "BiasAdd") {
    names = kBiasAdd;
  } else if (type == "Conv2D") {
    names = kConv2D;
  }
  return i < names.size() ? names[i] : std::string_view();
}

// The name for a Const made from a plain value given as input `i` of node
// `node_name`: "<node>/<TF input name>" (relative to the current name scope,
// which the node's name starts with), else TF's default "Const".
std::string ConstInputName(const OpDef& op, size_t i, const std::string& node_name) {
  const std::string_view input = TfInputName(op.type, i);
  if (input.empty()) return "Const";
  std::string_view relative = node_name;
  const std::string& scope = NameScope::Current();
  if (relative.starts_with(scope)) relative.remove_prefix(scope.size());
  return StrCat(relative, "/", input);
}

}  // namespace

OutputSpec InferGraphOutput(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  bool fully_defined = true;
  bool unknown_rank = false;
  for (const Tensor& t : inputs) {
    fully_defined = fully_defined && t.shape().IsFullyDefined();
    unknown_rank = unknown_rank || t.shape().unknown_rank();
  }
  if (unknown_rank) {
    // Nothing is known about the result's shape; the dtype comes from the
    // rule on stand-ins when it accepts them, else from the first input.
    std::optional<OutputSpec> guess = TryInfer(op, inputs, attrs, 1);
    return {Shape::UnknownRank(), guess ? guess->dtype : inputs[0].dtype()};
  }
  try {
    if (fully_defined) return op.infer(inputs, attrs);
    if (op.infer_partial != nullptr) return op.infer_partial(inputs, attrs);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat(op.type, ": ", e.what()));
  }
  // Unknown dimensions: run the rule with two different stand-in sizes; a
  // result dimension that changes with them depends on an unknown one.
  // Primes first (products and quotients differ too), then highly composite
  // sizes for rules that need divisibility (Reshape [?,?] to [3,-1]).
  constexpr std::pair<int64_t, int64_t> kStandIns[] = {{7919, 7927}, {720720, 1441440}};
  for (const auto& [first, second] : kStandIns) {
    std::optional<OutputSpec> a = TryInfer(op, inputs, attrs, first);
    std::optional<OutputSpec> b = a ? TryInfer(op, inputs, attrs, second) : std::nullopt;
    if (a && a->shape.unknown_rank()) return {Shape::UnknownRank(), a->dtype};  // values unknown
    if (!a || !b || a->shape.rank() != b->shape.rank()) continue;
    std::vector<int64_t> dims = a->shape.ToVector();
    for (int i = 0; i < a->shape.rank(); ++i) {
      if (a->shape.dim(i) != b->shape.dim(i)) dims[static_cast<size_t>(i)] = Shape::kUnknownDim;
    }
    return {Shape::Partial(dims), a->dtype};
  }
  // A rule that needs unknown dimensions to match known ones (x[?] + y[5]):
  // with stand-ins of 1 it broadcasts; keep the rank, not the dimensions.
  if (std::optional<OutputSpec> ones = TryInfer(op, inputs, attrs, 1)) {
    std::vector<int64_t> dims(static_cast<size_t>(ones->shape.rank()), Shape::kUnknownDim);
    return {Shape::Partial(dims), ones->dtype};
  }
  try {
    return op.infer(StandIns(inputs, 1), attrs);  // throws the rule's error
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(StrCat(op.type, ": ", e.what(), " (with unknown dimensions)"));
  }
}

int AddConstNode(Graph& graph, const Tensor& value, std::string_view name) {
  Node node{.name = graph.UniqueName(name), .op = "Const"};
  node.attrs = {{"dtype", value.dtype()}, {"value", value}};
  node.output_specs = {{value.shape(), value.dtype()}};
  return graph.AddNode(std::move(node));
}

std::string GraphInput(Graph& graph, const Tensor& tensor, std::string_view const_name) {
  if (!tensor.is_symbolic()) return graph.node(AddConstNode(graph, tensor, const_name)).name;
  const Operation producer = graph.OperationOf(tensor);  // throws for another graph's tensor
  return NodeInputName(producer.name(), tensor.symbolic()->index);
}

Tensor AddOpNode(Graph& graph, const OpDef& op, std::span<const Tensor> inputs,
                 const Attrs& attrs) {
  if (op.num_inputs != OpDef::kVariadic && static_cast<int>(inputs.size()) != op.num_inputs) {
    throw InvalidArgumentError(
        StrCat(op.type, ": expected ", op.num_inputs, " inputs, got ", inputs.size()));
  }
  if (op.eager_only && graph.capturing()) {
    // A Session runs it, but a trace is for TensorFlow, whose graphs never hold it.
    throw UnimplementedError(
        StrCat(op.type,
               " has no graph form: it is an eager-only op, which no TensorFlow graph holds "
               "(trace its public function, which adds the unfused ops)"));
  }
  for (const Tensor& t : inputs) {
    if (t.is_symbolic()) graph.OperationOf(t);  // another graph's tensor: throws before any change
  }
  const OutputSpec spec = InferGraphOutput(op, inputs, attrs);
  Node node{.name = graph.UniqueName(op.node_name.empty() ? op.type : op.node_name),
            .op = std::string(op.type)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(GraphInput(graph, inputs[i], ConstInputName(op, i, node.name)));
  }
  for (const InputAttr& a : op.input_attrs) {
    const Tensor value = InputAttrValue(op, a, attrs, spec);
    node.inputs.push_back(
        graph.node(AddConstNode(graph, value, StrCat(node.name, "/", a.input))).name);
  }
  for (const auto& [name, value] : attrs.items()) {
    if (!IsInputAttr(op, name)) node.attrs.SetDefault(name, value);
  }
  for (const TypeAttr& t : TypeAttrsOf(op)) {
    if (t.name.empty()) continue;  // an op without type attrs
    DType dtype = DType::kInt32;
    if (t.source == TypeAttr::kOutput) {
      dtype = spec.dtype;
    } else if (t.source >= 0) {
      EAGER_INTERNAL_CHECK(static_cast<size_t>(t.source) < inputs.size());
      dtype = inputs[static_cast<size_t>(t.source)].dtype();
    }
    node.attrs.SetDefault(t.name, dtype);
  }
  if (op.num_inputs == OpDef::kVariadic) {
    node.attrs.SetDefault("N", static_cast<int64_t>(inputs.size()));
  }
  node.output_specs = {spec};
  return graph.Output(graph.AddNode(std::move(node)), 0);
}

Attrs NodeKernelAttrs(const Node& node, const OpDef& op) {
  Attrs attrs = node.attrs;
  const OpSignature* signature = FindOpSignature(node.op);
  if (signature == nullptr) signature = FindOpSignature(op.type);
  if (signature != nullptr) SetAttrDefaults(*signature, attrs);
  return attrs;
}

Attrs KernelAttrs(const Node& node, const OpDef& op, std::span<const Tensor> input_attr_values) {
  Attrs attrs = NodeKernelAttrs(node, op);
  SetInputAttrs(node, op, input_attr_values, attrs);
  return attrs;
}

void SetInputAttrs(const Node& node, const OpDef& op, std::span<const Tensor> input_attr_values,
                   Attrs& attrs) {
  EAGER_INTERNAL_CHECK(input_attr_values.size() == op.input_attrs.size());
  for (size_t i = 0; i < op.input_attrs.size(); ++i) {
    const InputAttr& a = op.input_attrs[i];
    const Tensor& t = input_attr_values[i];
    const auto fail = [&](std::string_view expected) {
      return InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, "): input '", a.input,
                                         "' must be ", expected, ", got a ", t.dtype(),
                                         " tensor of shape ", t.shape()));
    };
    const auto ints = [&]() {
      if (t.dtype() == DType::kInt32) {
        auto d = t.data<int32_t>();
        return std::vector<int64_t>(d.begin(), d.end());
      }
      if (t.dtype() == DType::kInt64) return t.ToVector<int64_t>();
      throw fail("int32 or int64");
    };
    switch (a.kind) {
      case InputAttr::Kind::kInts:
        if (t.rank() > 1) throw fail("a scalar or vector");
        attrs.Set(a.attr, ints());
        break;
      case InputAttr::Kind::kInt:
        if (t.rank() != 0) throw fail("a scalar");
        attrs.Set(a.attr, ints()[0]);
        break;
      case InputAttr::Kind::kShape:
        if (t.rank() != 1) throw fail("a vector");
        attrs.Set(a.attr, Shape(ints()));
        break;
      case InputAttr::Kind::kOutputScalar: {
        if (t.num_elements() != 1) throw fail("a scalar");
        double v = 0;
        VisitNumericDType(t.dtype(), "graph input attr", [&](auto tag) {
          using T = typename decltype(tag)::type;
          v = static_cast<double>(t.data<T>()[0]);
        });
        attrs.Set(a.attr, v);
        break;
      }
    }
  }
}

OpCall NodeCall(const Graph& graph, int index) {
  const Node& node = graph.node(index);
  const OpDef* op = FindOp(node.op);
  if (op == nullptr) {
    throw UnimplementedError(StrCat("node '", node.name, "' has op type '", node.op,
                                    "', which eager does not implement"));
  }
  std::vector<Tensor> inputs;
  for (const std::string& input : node.inputs) {
    const NodeInput in = ParseNodeInput(input);
    if (in.control) continue;
    const int producer = graph.FindNodeIndex(in.node);
    if (producer < 0) {
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, ") has input '", input,
                                        "', but there is no node '", in.node, "'"));
    }
    inputs.push_back(graph.Output(producer, in.index));
  }
  const size_t num_attr_inputs = op->input_attrs.size();
  if (inputs.size() < num_attr_inputs) {
    throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, ") has ", inputs.size(),
                                      " inputs; expected at least ", num_attr_inputs));
  }
  const size_t num_tensors = inputs.size() - num_attr_inputs;
  std::vector<Tensor> attr_values;
  std::vector<std::pair<std::string_view, Tensor>> tensor_attrs;
  for (size_t i = num_tensors; i < inputs.size(); ++i) {
    const Node& producer = graph.node(inputs[i].symbolic()->node);
    const InputAttr& a = op->input_attrs[i - num_tensors];
    if (producer.op == "Const") {
      attr_values.push_back(producer.Attr<Tensor>("value"));
      continue;
    }
    if (!op->gradient_takes_tensor_attrs) {
      throw InvalidArgumentError(StrCat("node '", node.name, "' (", node.op, "): input '", a.input,
                                        "' must come from a Const node to differentiate it, not '",
                                        producer.name, "' (", producer.op, ")"));
    }
    tensor_attrs.emplace_back(a.attr, inputs[i]);
  }
  Attrs attrs;
  if (tensor_attrs.empty()) {
    attrs = KernelAttrs(node, *op, attr_values);
  } else {  // the Const ones only
    attrs = NodeKernelAttrs(node, *op);
    size_t next = 0;
    for (size_t i = 0; i < num_attr_inputs; ++i) {
      const InputAttr& a = op->input_attrs[i];
      const bool is_tensor = std::any_of(tensor_attrs.begin(), tensor_attrs.end(),
                                         [&](const auto& t) { return t.first == a.attr; });
      if (is_tensor) continue;
      const OpDef one{.type = op->type, .input_attrs = std::span<const InputAttr>(&a, 1)};
      SetInputAttrs(node, one, std::span<const Tensor>(&attr_values[next++], 1), attrs);
    }
  }
  OpCall call{.op = op,
              .inputs = std::vector<Tensor>(inputs.begin(), inputs.begin() + num_tensors),
              .output = graph.Output(index, 0),
              .attrs = std::move(attrs),
              .tensor_attrs = std::move(tensor_attrs)};
  return call;
}

}  // namespace eager::internal
