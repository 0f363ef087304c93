// SGD::Minimize in graph mode: TF1's GradientDescentOptimizer.minimize and
// MomentumOptimizer.minimize, node for node (names in autodiff/sgd.h). On
// resource variables (an imported TF 2.x graph's) as TF1 does there:
// resource slots and ResourceApplyGradientDescent / ResourceApplyMomentum.

#include <string>
#include <utility>

#include "autodiff/sgd.h"
#include "ops/array_ops.h"
#include "ops/graph_ops.h"
#include "ops/resource_training_ops.h"
#include "ops/training_ops.h"
#include "runtime/graph.h"
#include "runtime/names.h"

namespace eager {

Operation SGD::Minimize(const Tensor& loss, std::vector<Variable*> var_list) {
  if (!tf1_) {
    throw FailedPreconditionError(
        StrCat("SGD '", name(),
               "': Minimize(loss tensor) builds TF1's GradientDescentOptimizer or "
               "MomentumOptimizer in a graph; construct it with tf1_compatible = true"));
  }
  const std::vector<std::pair<Tensor, Variable*>> pairs =
      GraphGradients("SGD", loss, std::move(var_list));
  Graph* graph = Graph::Current();  // not null: GraphGradients checked
  // _create_slots (MomentumOptimizer only).
  for (const auto& [grad, var] : pairs) {
    // slot_creator: a resource variable's slot is a resource variable.
    const Graph::UseResourceVariables resource(*graph, graph->IsResourceVariable(*var));
    if (use_momentum_ && GetSlot(*var, "momentum") == nullptr) CreateSlots(*var);
  }

  NameScope scope(name());
  // _prepare: Python floats become float32 tensors once.
  const Tensor lr = Constant(Tensor(static_cast<float>(lr_value_)), "learning_rate");
  const std::optional<Tensor> momentum =
      use_momentum_
          ? std::optional<Tensor>(Constant(Tensor(static_cast<float>(momentum_value_)), "momentum"))
          : std::nullopt;
  std::vector<Operation> updates;
  updates.reserve(pairs.size());
  {
    std::vector<Operation> gradient_ops;
    gradient_ops.reserve(pairs.size());
    for (const auto& [grad, var] : pairs) gradient_ops.push_back(graph->OperationOf(grad));
    Graph::ControlDependencies after_gradients(*graph, gradient_ops);
    for (const auto& pair : pairs) {
      const Tensor& grad = pair.first;
      Variable* var = pair.second;  // not a structured binding: the lambda captures it
      NameScope update("update_" + graph->FindVariable(var)->variable_node);
      // _apply_dense casts the float32 scalars to the variable's dtype.
      const auto cast = [&](const Tensor& t) {
        return var->dtype() == DType::kFloat32 ? t : Cast(t, var->dtype());
      };
      if (graph->IsResourceVariable(*var)) {  // _resource_apply_dense
        updates.push_back(use_momentum_
                              ? ResourceApplyMomentum(*var, *GetSlot(*var, "momentum"), cast(lr),
                                                      grad, cast(*momentum), nesterov_)
                              : ResourceApplyGradientDescent(*var, cast(lr), grad));
        continue;
      }
      const Tensor updated = use_momentum_
                                 ? ApplyMomentum(*var, *GetSlot(*var, "momentum"), cast(lr), grad,
                                                 cast(*momentum), nesterov_)
                                 : ApplyGradientDescent(*var, cast(lr), grad);
      updates.push_back(graph->OperationOf(updated));
    }
  }
  // _finish: the group, named as the optimizer's scope.
  return Group(updates, scope.prefix());
}

}  // namespace eager
