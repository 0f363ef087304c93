#pragma once

// LiveVariables: the variables that exist right now, TensorFlow's
// tf.compat.v1.global_variables() for eager.
//
// Every Variable registers itself on construction and leaves on destruction,
// tagged with the name registry its name came from (DefaultNames() at that
// moment). LiveVariables() lists, in creation order, those of the current
// default registry; ResetDefaultNames() starts a new generation of it, so
// variables created before a reset are no longer listed (as after
// tf.compat.v1.reset_default_graph()). The legacy name-based Saver() saves
// exactly these.
//
// The pointers are valid only as long as the variables live: take the list
// right before use. Thread-safe.

#include <vector>

namespace eager {

class NameRegistry;
class Variable;

// The live variables named in DefaultNames() (its current generation), in
// creation order.
std::vector<Variable*> LiveVariables();
// The same, of those that are trainable (tf.compat.v1.trainable_variables()).
std::vector<Variable*> LiveTrainableVariables();

namespace internal {
// Called by Variable's constructor and destructor only.
void RegisterLiveVariable(Variable* variable, const NameRegistry& registry);
void UnregisterLiveVariable(Variable* variable);
}  // namespace internal

}  // namespace eager
