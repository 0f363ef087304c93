#pragma once

// Trackable: anything an object-based Checkpoint can save and restore.
//
// A Trackable names its children (the edges of the object graph) and may own
// tensors directly (a Variable's value, saved as the attribute
// "VARIABLE_VALUE"). Optimizers also report slot variables (Adam's "m" and "v"
// per model variable). Checkpoint walks these edges breadth-first from a root
// and keys every tensor by the path of local names that reaches it, e.g.
// "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE". Local names ARE the
// checkpoint format: renaming an edge breaks every checkpoint already written.
//
// These methods must not create objects or variables.

#include <map>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace eager {

class Variable;

class Trackable {
 public:
  struct Child {
    std::string name;
    Trackable* object;  // not owned
  };
  // Optimizer state for one variable, e.g. Adam's "m" for a Dense kernel.
  struct Slot {
    const Variable* original;  // not owned
    std::string name;          // "m"
    Variable* slot;            // not owned
  };

  Trackable() = default;
  Trackable(const Trackable&) = delete;
  Trackable& operator=(const Trackable&) = delete;
  virtual ~Trackable() = default;

  // Children in a stable order: it fixes node ids in the file.
  virtual std::vector<Child> Children() { return {}; }
  // Slot variables, for optimizers; in slot-name order, then variable order.
  virtual std::vector<Slot> Slots() { return {}; }
  // Tensors saved under "<object path>/.ATTRIBUTES/<key>".
  virtual std::map<std::string, Tensor> SerializeToTensors() const { return {}; }
  // Receives the tensors saved by SerializeToTensors, keyed alike.
  virtual void RestoreFromTensors(const std::map<std::string, Tensor>& tensors) {
    (void)tensors;
  }
};

}  // namespace eager
