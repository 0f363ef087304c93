// Adam::Minimize in graph mode: TF1's AdamOptimizer.minimize, node for node
// (names in autodiff/adam.h). The arithmetic is the ApplyAdam kernel the
// eager step runs and float32 products for the powers, as eager's FinishStep.
// On resource variables (an imported TF 2.x graph's) as TF1 does there:
// resource slots and powers, ResourceApplyAdam, and the powers advanced by
// AssignVariableOp.

#include <string>
#include <utility>

#include "autodiff/adam.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/graph_ops.h"
#include "ops/resource_training_ops.h"
#include "ops/training_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {

Operation Adam::Minimize(const Tensor& loss, std::vector<Variable*> var_list) {
  if (!tf1_) {
    throw FailedPreconditionError(StrCat("Adam '", name(),
                                         "': Minimize(loss tensor) builds TF1's AdamOptimizer in "
                                         "a graph; construct it with tf1_compatible = true"));
  }
  const std::vector<std::pair<Tensor, Variable*>> pairs =
      GraphGradients("Adam", loss, std::move(var_list));
  Graph* graph = Graph::Current();  // not null: GraphGradients checked

  // _create_slots: the powers (first call only), then each variable's slots.
  // On resource variables the powers and slots are resource variables too:
  // the powers as the variable with the least name (TF colocates them with
  // it and takes its kind), each slot as its variable (slot_creator).
  {
    const Variable* first = pairs.front().second;
    for (const auto& pair : pairs) {
      if (pair.second->name() < first->name()) first = pair.second;
    }
    const Graph::UseResourceVariables resource(*graph, graph->IsResourceVariable(*first));
    CreatePowers();
  }
  for (const auto& [grad, var] : pairs) {
    const Graph::UseResourceVariables resource(*graph, graph->IsResourceVariable(*var));
    if (GetSlot(*var, "m") == nullptr) CreateSlots(*var);
  }

  NameScope scope(name());
  // _prepare: Python floats become float32 tensors once.
  const Tensor lr = Constant(Tensor(static_cast<float>(lr_value_)), "learning_rate");
  const Tensor beta1 = Constant(Tensor(static_cast<float>(beta_1_value_)), "beta1");
  const Tensor beta2 = Constant(Tensor(static_cast<float>(beta_2_value_)), "beta2");
  const Tensor epsilon = Constant(Tensor(static_cast<float>(epsilon_)), "epsilon");

  std::vector<Operation> updates;
  {
    std::vector<Operation> gradient_ops;
    gradient_ops.reserve(pairs.size());
    for (const auto& [grad, var] : pairs) gradient_ops.push_back(graph->OperationOf(grad));
    Graph::ControlDependencies after_gradients(*graph, gradient_ops);
    for (const auto& [grad, var] : pairs) {
      NameScope update("update_" + graph->FindVariable(var)->variable_node);
      // _apply_dense casts the float32 scalars to the variable's dtype.
      const DType dtype = var->dtype();  // clang 14 cannot capture a structured binding
      const auto cast = [dtype](const Tensor& t) {
        return dtype == DType::kFloat32 ? t : Cast(t, dtype);
      };
      if (graph->IsResourceVariable(*var)) {  // _resource_apply_dense
        updates.push_back(ResourceApplyAdam(
            *var, *GetSlot(*var, "m"), *GetSlot(*var, "v"), cast(beta1_power_->value()),
            cast(beta2_power_->value()), cast(lr), cast(beta1), cast(beta2), cast(epsilon), grad));
        continue;
      }
      const Tensor updated = ApplyAdam(*var, *GetSlot(*var, "m"), *GetSlot(*var, "v"),
                                       cast(beta1_power_->value()), cast(beta2_power_->value()),
                                       cast(lr), cast(beta1), cast(beta2), cast(epsilon), grad);
      updates.push_back(graph->OperationOf(updated));
    }
  }
  // _finish: the powers advance once every update has run.
  std::vector<Operation> all = updates;
  {
    Graph::ControlDependencies after_updates(*graph, updates);
    all.push_back(graph->OperationOf(Assign(*beta1_power_, Mul(beta1_power_->value(), beta1))));
    all.push_back(graph->OperationOf(Assign(*beta2_power_, Mul(beta2_power_->value(), beta2))));
  }
  return Group(all, scope.prefix());
}

}  // namespace eager
