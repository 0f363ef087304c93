#pragma once

// Module: a Trackable that owns or tracks variables and child modules by
// local name (tf.Module / a Keras layer's dependency tracking).
//
//   struct MyModel : eager::Module {
//     eager::Dense dense{10};
//     MyModel() { Track("dense", dense); }
//     eager::Tensor operator()(const eager::Tensor& x) { return dense(x); }
//   };
//
// The local names given to Track() and AddVariable() are the edges of the
// checkpoint object graph ("model/dense/kernel/..."), so they are format:
// renaming one breaks checkpoints already written.
//
// Ownership: Track() does not take ownership; the tracked object must outlive
// this module (members of the subclass, as above). AddVariable() creates a
// Variable owned by the module. Modules are neither copyable nor movable:
// others keep pointers into them.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"
#include "runtime/trackable.h"
#include "runtime/variable.h"

namespace eager {

class Module : public Trackable {
 public:
  // `name` is the module's name as Keras layers carry one (used by Dense for
  // its variable scope); empty for an unnamed module.
  explicit Module(std::string_view name = "");
  ~Module() override;

  const std::string& name() const { return name_; }

  // Adds the edge `local_name` -> `child`. Throws InvalidArgumentError when
  // the local name is empty or already used in this module (naming both).
  // `child` is not owned and must outlive this module.
  void Track(std::string_view local_name, Trackable& child);

  // Every variable reachable through tracked children, depth-first in
  // tracking order (a Dense's kernel before its bias; a model's first layer
  // before its second), each once. Variables are non-owning pointers valid
  // for the owners' lifetime.
  std::vector<Variable*> Variables();
  // The trainable ones, same order.
  std::vector<Variable*> TrainableVariables();
  // The non-trainable ones, same order.
  std::vector<Variable*> NonTrainableVariables();

  // Trackable: the tracked edges in tracking order.
  std::vector<Child> Children() override;

 protected:
  // Creates a variable owned by this module, named `variable_name` in the
  // current name scope, tracked under `local_name`. The initial value is the
  // checkpoint's when a deferred restoration has one for `local_name`
  // (restore-on-create), else `initial_value`; restorations are then told of
  // the new child. Throws InvalidArgumentError for a duplicate local name or
  // a restored value of another dtype or shape.
  Variable& AddVariable(std::string_view local_name, const Tensor& initial_value,
                        bool trainable = true, std::string_view variable_name = "");

 private:
  // Throws InvalidArgumentError for an empty or already tracked local name.
  void CheckNewLocalName(std::string_view local_name) const;

  std::string name_;
  std::vector<Child> children_;
  std::vector<std::unique_ptr<Variable>> owned_;
};

}  // namespace eager
