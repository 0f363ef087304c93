#include "ops/stack_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/resource.h"

namespace eager {
namespace {

std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

class Stack final : public Resource {
 public:
  Stack(std::string name, DType dtype, int64_t max_size)
      : name_(std::move(name)), dtype_(dtype), max_size_(max_size) {}

  std::string_view resource_kind() const override { return "stack"; }
  std::string_view resource_name() const override { return name_; }

  void Push(const NodeContext& c, const Tensor& elem) {
    if (elem.dtype() != dtype_) {
      throw InvalidArgumentError(StrCat(Where(c), ": stack '", name_, "' holds ", dtype_,
                                        " elements; pushed a ", elem.dtype(), " tensor"));
    }
    if (max_size_ >= 0 && static_cast<int64_t>(elements_.size()) >= max_size_) {
      throw InvalidArgumentError(StrCat(Where(c), ": stack '", name_, "' is full: it holds ",
                                        elements_.size(), " elements, its max_size"));
    }
    elements_.push_back(elem);
  }

  Tensor Pop(const NodeContext& c) {
    if (elements_.empty()) {
      throw InvalidArgumentError(StrCat(Where(c), ": stack '", name_, "' is empty"));
    }
    Tensor top = std::move(elements_.back());
    elements_.pop_back();
    return top;
  }

 private:
  std::string name_;
  DType dtype_;
  int64_t max_size_;
  std::vector<Tensor> elements_;
};

struct StackState final : NodeState {
  std::unique_ptr<Stack> stack;
};

Stack& StackOf(const NodeContext& c, size_t values) {
  if (c.refs.size() != 1 || c.inputs.size() != values) {
    throw InvalidArgumentError(StrCat(Where(c), " takes a stack handle and ", values,
                                      " tensors; it has ", c.refs.size(), " handle(s) and ",
                                      c.inputs.size(), " tensors"));
  }
  auto* stack = dynamic_cast<Stack*>(c.refs[0]);
  if (stack == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c), " needs a stack handle; it got ",
                                      c.refs[0]->resource_kind(), " '", c.refs[0]->resource_name(),
                                      "'"));
  }
  return *stack;
}

NodeOutputs RunStack(const NodeContext& c) {
  if (c.inputs.size() != 1 || c.inputs[0].dtype() != DType::kInt32 || c.inputs[0].rank() != 0) {
    throw InvalidArgumentError(StrCat(Where(c), " takes one int32 scalar, max_size"));
  }
  const int64_t max_size = c.inputs[0].data<int32_t>()[0];
  const auto* name = AttrAs<std::string>(c.attrs.Find("stack_name"));
  auto state = std::make_unique<StackState>();
  state->stack =
      std::make_unique<Stack>(name != nullptr && !name->empty() ? *name : c.node.name,
                              c.attrs.GetType("elem_type"), max_size < 0 ? -1 : max_size);
  Stack* stack = state->stack.get();
  *c.state = std::move(state);
  return {.values = {}, .ref = stack};
}

NodeOutputs RunPush(const NodeContext& c) {
  StackOf(c, 1).Push(c, c.inputs[0]);
  return {{c.inputs[0]}};
}

NodeOutputs RunPop(const NodeContext& c) { return {{StackOf(c, 0).Pop(c)}}; }

NodeOutputs RunControlTrigger(const NodeContext&) { return {}; }

}  // namespace

const OpDef kStackV2Op = {.type = "StackV2", .num_inputs = 1, .run = RunStack};
const OpDef kStackPushV2Op = {
    .type = "StackPushV2", .num_inputs = 2, .run = RunPush, .ref_inputs = 0b1};
const OpDef kStackPopV2Op = {
    .type = "StackPopV2", .num_inputs = 1, .run = RunPop, .ref_inputs = 0b1};
const OpDef kControlTriggerOp = {
    .type = "ControlTrigger", .run = RunControlTrigger, .num_outputs = 0};

}  // namespace eager
