#include "runtime/variable.h"

#include <algorithm>
#include <vector>

#include "runtime/flush_denormal.h"
#include "runtime/graph.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

thread_local std::vector<internal::VariableReadObserver*> read_observers;

// TF2's names (runtime/names.h, EagerVariableNames): in a graph, or with
// kTf1, made unique (TF1's "v", "v_1"); else kept as given, so two eager
// "w1" are both "w1:0". The name is still marked used, so a name scope "w1"
// opened later is "w1_1" as before.
std::string MakeVariableName(std::string_view name) {
  EAGER_CHECK(!name.empty(), "Variable: a variable name must not be empty");
  std::string full = NameScope::Current() + std::string(name);
  if (VariableNamesAreUnique()) return DefaultNames().UniqueName(full) + ":0";
  DefaultNames().MarkUsed(full);
  return full + ":0";
}

template <typename Op>
Tensor Elementwise(const Tensor& a, const Tensor& b, std::string_view what, Op op) {
  Tensor out = internal::NewTensor(a.shape(), a.dtype());
  VisitNumericDType(a.dtype(), what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto x = a.data<T>();
    auto y = b.data<T>();
    T* z = internal::MutableData<T>(out);
    for (size_t i = 0; i < x.size(); ++i) z[i] = op(x[i], y[i]);
  });
  return out;
}

}  // namespace

Variable::Variable(const Tensor& initial_value, std::string_view name, bool trainable)
    : name_(MakeVariableName(name)),
      dtype_(initial_value.dtype()),
      shape_(initial_value.shape()),
      trainable_(trainable) {
  if (Graph* graph = Graph::Current()) [[unlikely]] {
    EAGER_CHECK(shape_.IsFullyDefined(), "Variable '", shared_name(),
                "': the initial value's shape ", shape_, " is not fully defined");
    value_ = Tensor::Zeros(Shape{}, dtype_);
    AddToGraph(*graph, &initial_value);
  } else {
    Assign(initial_value);
  }
  internal::RegisterLiveVariable(this, DefaultNames());
}

Variable::Variable(DType dtype, const Shape& shape, std::string_view name, bool trainable)
    : name_(MakeVariableName(name)),
      dtype_(dtype),
      shape_(shape),
      trainable_(trainable),
      value_(Tensor::Zeros(Shape{}, dtype)) {
  if (Graph* graph = Graph::Current()) [[unlikely]]
    AddToGraph(*graph, nullptr);
  internal::RegisterLiveVariable(this, DefaultNames());
}

Variable::Variable(GraphNodeTag, Graph& graph, GraphVariable& record, DType dtype,
                   const Shape& shape)
    : name_(record.variable_node + ":0"),
      dtype_(dtype),
      shape_(shape),
      trainable_(record.trainable),
      value_(Tensor::Zeros(Shape{}, dtype)),
      in_graph_(true),
      graph_(&graph) {
  const std::string snapshot =
      record.snapshot.empty() ? record.variable_node + ":0" : record.snapshot;
  read_ = graph.TensorByName(snapshot);
  record.variable = this;
  graph.RegisterVariable(record);
  internal::RegisterLiveVariable(this, graph.names());
}

void Variable::AddToGraph(Graph& graph, const Tensor* initial_value) {
  // TF1's tf.Variable: VariableV2 "v1", its initializer "v1/Assign" fed by
  // "v1/initial_value" (or by the given graph tensor), and "v1/read".
  // TF builds a variable inside init_scope(): none of its nodes waits for
  // the control dependencies open where it is created.
  const Graph::InitScope init_scope(graph);
  const std::string op(shared_name());
  const std::vector<std::string> colocate = {"loc:@" + op};
  GraphVariable record;
  record.variable = this;
  record.variable_node = op;
  record.trainable = trainable_;

  std::string init_input;
  if (initial_value != nullptr) {
    if (initial_value->is_symbolic()) {
      const Operation producer = graph.OperationOf(*initial_value);  // throws for another graph
      init_input = NodeInputName(producer.name(), initial_value->symbolic()->index);
      record.initial_value = initial_value->name();
    } else {
      Node c{.name = graph.names().UniqueName(op + "/initial_value"), .op = "Const"};
      c.attrs = {{"dtype", dtype_}, {"value", *initial_value}};
      c.output_specs = {{shape_, dtype_}};
      init_input = c.name;
      record.initial_value = c.name + ":0";
      graph.AddNode(std::move(c));
    }
  }
  if (graph.creates_resource_variables()) {
    AddResourceNodes(graph, record, init_input);
    return;
  }
  Node var{.name = op, .op = "VariableV2"};
  var.attrs = {{"shape", shape_},
               {"dtype", dtype_},
               {"container", std::string()},
               {"shared_name", std::string()}};
  var.output_specs = {{shape_, dtype_}};
  graph.AddNode(std::move(var));
  if (initial_value != nullptr) {
    Node assign{.name = graph.names().UniqueName(op + "/Assign"), .op = "Assign"};
    assign.inputs = {op, init_input};
    assign.attrs = {
        {"T", dtype_}, {"_class", colocate}, {"use_locking", true}, {"validate_shape", true}};
    assign.output_specs = {{shape_, dtype_}};
    record.initializer = assign.name;
    graph.AddNode(std::move(assign));
  }
  Node read{.name = graph.names().UniqueName(op + "/read"), .op = "Identity"};
  read.inputs = {op};
  read.attrs = {{"T", dtype_}, {"_class", colocate}};
  read.output_specs = {{shape_, dtype_}};
  record.snapshot = read.name + ":0";
  read_ = graph.Output(graph.AddNode(std::move(read)));
  in_graph_ = true;
  graph_ = &graph;
  graph.RegisterVariable(record);
}

void Variable::AddResourceNodes(Graph& graph, GraphVariable& record,
                                const std::string& init_input) {
  // TF 2.x's ResourceVariable in a graph: the handle, its initializer and a
  // snapshot read (ops/resource_variable_ops.h). The handle's shared_name is
  // the node's, so a Session finds the variable under it.
  const std::string op(shared_name());
  Node handle{.name = op, .op = "VarHandleOp"};
  handle.attrs = {{"shape", shape_},
                  {"dtype", dtype_},
                  {"container", std::string()},
                  {"shared_name", op},
                  {"allowed_devices", std::vector<std::string>{}}};
  graph.AddNode(std::move(handle));
  if (!init_input.empty()) {
    Node assign{.name = graph.names().UniqueName(op + "/Assign"), .op = "AssignVariableOp"};
    assign.inputs = {op, init_input};
    assign.attrs = {{"dtype", dtype_}, {"validate_shape", false}};
    record.initializer = assign.name;
    graph.AddNode(std::move(assign));
  }
  Node read{.name = graph.names().UniqueName(op + "/Read/ReadVariableOp"), .op = "ReadVariableOp"};
  read.inputs = {op};
  read.attrs = {{"dtype", dtype_}};
  read.output_specs = {{shape_, dtype_}};
  record.snapshot = read.name + ":0";
  read_ = graph.Output(graph.AddNode(std::move(read)));
  in_graph_ = true;
  graph_ = &graph;
  graph.RegisterVariable(record);
}

Variable::Variable(CaptureTag, Graph& graph, const std::string& name, bool trainable,
                   const Tensor& value)
    : name_(name),
      dtype_(value.dtype()),
      shape_(value.shape()),
      trainable_(trainable),
      value_(Tensor::Zeros(Shape{}, value.dtype())) {
  // Checked before any node is added: a throwing constructor must leave no
  // graph record pointing at it.
  const std::string wanted(shared_name());
  const std::string got = graph.names().UniqueName(wanted);
  if (got != wanted) {
    throw InvalidArgumentError(StrCat("capturing variable '", wanted,
                                      "' into a graph: the name is taken there (it would be '", got,
                                      "'); two variables with one name cannot both be exported"));
  }
  // The graph's initializer gives zeros, not the value: the value is saved
  // with the variables, and a Const of it would store every weight twice.
  const Tensor zeros = Tensor::Zeros(shape_, dtype_);
  AddToGraph(graph, &zeros);
  Assign(value);
  internal::RegisterLiveVariable(this, graph.names());
}

Variable::~Variable() {
  if (graph_ != nullptr) graph_->UnregisterVariable(this);
  internal::UnregisterLiveVariable(this);
}

void Variable::RequireInitialized(const char* op) const {
  if (!initialized_) [[unlikely]] {
    throw FailedPreconditionError(StrCat("Attempting to use uninitialized value ", shared_name(),
                                         " (in Variable::", op, "; the variable has dtype ", dtype_,
                                         " and shape ", shape_,
                                         " but was never assigned or restored)"));
  }
}

bool Variable::is_initialized() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return initialized_;
}

Tensor Variable::value() const {
  if (in_graph_) [[unlikely]]
    return read_;
  if (Graph* graph = Graph::Current(); graph != nullptr && graph->capturing()) [[unlikely]]
    return graph->Capture(*this);
  Tensor value = stored_value();
  for (internal::VariableReadObserver* observer : read_observers) {
    observer->OnVariableRead(*this, value);
  }
  return value;
}

Tensor Variable::stored_value() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  RequireInitialized("stored_value");
  return value_;
}

void Variable::CheckCompatible(const Tensor& value, const char* op) const {
  if (!in_graph_) {
    if (const Graph* graph = Graph::Current(); graph != nullptr && graph->capturing())
        [[unlikely]] {
      // The change would happen once, now, and never in the traced graph.
      throw UnimplementedError(StrCat("Variable::", op, " on '", shared_name(),
                                      "' while tracing into a graph: a traced call must not change "
                                      "eager variables (the graph would not repeat the change)"));
    }
  }
  if (value.is_symbolic()) [[unlikely]] {
    throw InvalidArgumentError(
        StrCat("Variable::", op, " on '", shared_name(), "': got the graph tensor '", value.name(),
               "', which has no value yet; in graph mode use eager::", op,
               "(variable, value) from ops/graph_ops.h, which adds an op to run in a Session"));
  }
  if (value.dtype() != dtype_ || value.shape() != shape_) {
    throw InvalidArgumentError(StrCat("Variable::", op, " on '", shared_name(), "': expected a ",
                                      dtype_, " tensor of shape ", shape_, ", got ", value.dtype(),
                                      " of shape ", value.shape()));
  }
}

void Variable::Assign(const Tensor& value) {
  CheckCompatible(value, "Assign");
  // A fresh id, so that no two variables (or a variable and an unrelated
  // tensor) ever share one in a GradientTape; the buffer is shared.
  Tensor fresh = internal::WithShape(value, shape_);
  std::lock_guard<std::recursive_mutex> lock(mu_);
  value_ = std::move(fresh);
  initialized_ = true;
}

void Variable::AssignAdd(const Tensor& delta) {
  std::lock_guard<std::recursive_mutex> lock(mu_);  // a read-modify-write
  RequireInitialized("AssignAdd");
  CheckCompatible(delta, "AssignAdd");
  const internal::ScopedFlushDenormal flush;  // TF's AssignAdd is a kernel
  value_ = Elementwise(value_, delta, "Variable::AssignAdd", [](auto x, auto y) { return x + y; });
}

void Variable::AssignSub(const Tensor& delta) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  RequireInitialized("AssignSub");
  CheckCompatible(delta, "AssignSub");
  const internal::ScopedFlushDenormal flush;
  value_ = Elementwise(value_, delta, "Variable::AssignSub", [](auto x, auto y) { return x - y; });
}

std::map<std::string, Tensor> Variable::SerializeToTensors() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  RequireInitialized("SerializeToTensors");
  return {{kValueAttribute, value_}};
}

void Variable::RestoreFromTensors(const std::map<std::string, Tensor>& tensors) {
  auto it = tensors.find(kValueAttribute);
  if (it == tensors.end()) {
    throw NotFoundError(StrCat("Variable '", shared_name(), "': no ", kValueAttribute,
                               " attribute among the restored tensors"));
  }
  CheckCompatible(it->second, "RestoreFromTensors");
  Assign(it->second);
}

namespace internal {

std::unique_lock<std::recursive_mutex> LockVariable(const Variable& variable) {
  return std::unique_lock<std::recursive_mutex>(variable.mu_);
}

void UninitializeVariable(Variable& variable) {
  std::lock_guard<std::recursive_mutex> lock(variable.mu_);
  variable.value_ = Tensor();
  variable.initialized_ = false;
}

void AddVariableReadObserver(VariableReadObserver* observer) { read_observers.push_back(observer); }

void RemoveVariableReadObserver(VariableReadObserver* observer) {
  auto it = std::find(read_observers.begin(), read_observers.end(), observer);
  EAGER_INTERNAL_CHECK(it != read_observers.end());
  read_observers.erase(it);
}

}  // namespace internal
}  // namespace eager
