#include "ops/sgd_training_ops.h"

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ops/internal/graph_builder.h"
#include "ops/op_def.h"
#include "runtime/flush_denormal.h"
#include "runtime/graph.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// `tensors` in TF's input order after the refs; `grad_index` is the one of
// var's shape, the others are scalars.
void CheckArguments(std::string_view op, const Variable& var, const Variable* accum,
                    std::span<const Tensor> tensors, std::span<const char* const> names,
                    size_t grad_index) {
  const auto fail = [&](const std::string& what) {
    return InvalidArgumentError(StrCat(op, " on variable '", var.shared_name(), "': ", what));
  };
  if (var.dtype() != DType::kFloat32 && var.dtype() != DType::kFloat64) {
    throw fail(StrCat("dtype ", var.dtype(), " is not supported; expected float32 or float64"));
  }
  if (accum != nullptr && (accum->dtype() != var.dtype() || accum->shape() != var.shape())) {
    throw fail(StrCat("accum '", accum->shared_name(), "' is ", accum->dtype(), " ", accum->shape(),
                      ", expected ", var.dtype(), " ", var.shape()));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const bool is_grad = i == grad_index;
    const bool shape_ok = is_grad ? t.shape().IsCompatibleWith(var.shape())
                                  : !t.shape().IsFullyDefined() || t.num_elements() == 1;
    if (t.dtype() != var.dtype() || !shape_ok) {
      throw fail(StrCat(names[i], " is a ", t.dtype(), " tensor of shape ", t.shape(),
                        "; expected ", var.dtype(), is_grad ? " of the variable's shape " : "",
                        is_grad ? var.shape().ToString() : " scalar"));
    }
  }
}

Tensor CopyOf(const Variable& variable) {
  if (!variable.is_initialized()) {
    throw FailedPreconditionError(
        StrCat("Attempting to use uninitialized value ", variable.shared_name()));
  }
  const Tensor value = variable.stored_value();
  Tensor copy = internal::NewTensor(value.shape(), value.dtype());
  std::memcpy(internal::MutableRawData(copy), internal::RawData(value), value.bytes().size());
  return copy;
}

std::string RefInput(std::string_view op, Graph& graph, const Variable& variable) {
  const GraphVariable* record = graph.FindVariable(&variable);
  if (record == nullptr) {
    throw InvalidArgumentError(StrCat(op, ": variable '", variable.shared_name(),
                                      "' does not belong to the default graph"));
  }
  return record->variable_node;
}

constexpr const char* kGdNames[] = {"alpha", "delta"};
constexpr const char* kMomentumNames[] = {"lr", "grad", "momentum"};

Tensor RunGradientDescent(Variable& var, std::span<const Tensor> t) {
  CheckArguments("ApplyGradientDescent", var, nullptr, t, kGdNames, 1);
  Tensor new_var = CopyOf(var);
  const internal::ScopedFlushDenormal flush;  // a kernel: TF's kernel mode
  VisitFloatDType(var.dtype(), "ApplyGradientDescent", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T alpha = t[0].data<T>()[0];
    const T* g = t[1].data<T>().data();
    T* x = internal::MutableData<T>(new_var);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) x[i] -= alpha * g[i];
  });
  var.Assign(new_var);
  return var.stored_value();
}

Tensor RunMomentum(Variable& var, Variable& accum, std::span<const Tensor> t, bool nesterov) {
  CheckArguments("ApplyMomentum", var, &accum, t, kMomentumNames, 1);
  Tensor new_var = CopyOf(var);
  Tensor new_accum = CopyOf(accum);
  const internal::ScopedFlushDenormal flush;  // a kernel: TF's kernel mode
  VisitFloatDType(var.dtype(), "ApplyMomentum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = t[0].data<T>()[0];
    const T* g = t[1].data<T>().data();
    const T momentum = t[2].data<T>()[0];
    T* x = internal::MutableData<T>(new_var);
    T* a = internal::MutableData<T>(new_accum);
    for (int64_t i = 0; i < new_var.num_elements(); ++i) {
      a[i] = a[i] * momentum + g[i];
      x[i] -= nesterov ? g[i] * lr + a[i] * momentum * lr : lr * a[i];
    }
  });
  accum.Assign(new_accum);
  var.Assign(new_var);
  return var.stored_value();
}

NodeOutputs RunGradientDescentNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 1 && c.inputs.size() == 2, "node '", c.node.name, "' (", c.node.op,
              ") needs 3 inputs, has ", c.refs.size() + c.inputs.size());
  return {{RunGradientDescent(*c.refs[0], c.inputs)}};
}

NodeOutputs RunMomentumNode(const NodeContext& c) {
  EAGER_CHECK(c.refs.size() == 2 && c.inputs.size() == 3, "node '", c.node.name, "' (", c.node.op,
              ") needs 5 inputs, has ", c.refs.size() + c.inputs.size());
  const bool nesterov = c.attrs.Has("use_nesterov") && c.attrs.GetBool("use_nesterov");
  return {{RunMomentum(*c.refs[0], *c.refs[1], c.inputs, nesterov)}};
}

// The node: refs, then the tensors, TF's attributes.
Tensor AddNode(std::string_view op, std::span<Variable* const> refs,
               std::span<const Tensor> tensors, const Attrs& attrs) {
  Graph& graph = *Graph::Current();
  Variable& var = *refs[0];
  Node node{.name = graph.UniqueName(op), .op = std::string(op)};
  for (const Variable* r : refs) node.inputs.push_back(RefInput(op, graph, *r));
  for (const Tensor& t : tensors) node.inputs.push_back(internal::GraphInput(graph, t));
  node.attrs = {{"T", var.dtype()},
                {"_class", std::vector<std::string>{"loc:@" + node.inputs[0]}},
                {"use_locking", false}};
  for (const auto& [name, value] : attrs.items()) node.attrs.Set(name, value);
  node.output_dtypes = {var.dtype()};
  node.output_shapes = {var.shape()};
  return graph.Output(graph.AddNode(std::move(node)));
}

}  // namespace

const OpDef kApplyGradientDescentOp = {.type = "ApplyGradientDescent",
                                       .num_inputs = 3,
                                       .run = RunGradientDescentNode,
                                       .ref_inputs = 0b1};
const OpDef kApplyMomentumOp = {
    .type = "ApplyMomentum", .num_inputs = 5, .run = RunMomentumNode, .ref_inputs = 0b11};

Tensor ApplyGradientDescent(Variable& var, const Tensor& alpha, const Tensor& delta) {
  const Tensor tensors[] = {alpha, delta};
  if (Graph::Current() == nullptr) return RunGradientDescent(var, tensors);
  CheckArguments("ApplyGradientDescent", var, nullptr, tensors, kGdNames, 1);
  Variable* refs[] = {&var};
  return AddNode("ApplyGradientDescent", refs, tensors, Attrs{});
}

Tensor ApplyMomentum(Variable& var, Variable& accum, const Tensor& lr, const Tensor& grad,
                     const Tensor& momentum, bool use_nesterov) {
  const Tensor tensors[] = {lr, grad, momentum};
  if (Graph::Current() == nullptr) return RunMomentum(var, accum, tensors, use_nesterov);
  CheckArguments("ApplyMomentum", var, &accum, tensors, kMomentumNames, 1);
  Variable* refs[] = {&var, &accum};
  return AddNode("ApplyMomentum", refs, tensors, Attrs{{"use_nesterov", use_nesterov}});
}

}  // namespace eager
