#pragma once

// HeldUpdate: the variables one optimizer update writes (a model variable
// and its slots), each locked and made writable (WritableValue) until
// Commit() assigns them all, so a save on another thread sees each of them
// before or after the step, never half-written.

#include <mutex>
#include <utility>
#include <vector>

#include "autodiff/internal/writable_value.h"
#include "runtime/tensor_access.h"
#include "runtime/variable.h"

namespace eager::internal {

class HeldUpdate {
 public:
  // Locks `variable` and returns its writable value (valid until Commit).
  // Hold each variable once.
  template <typename T>
  T* Hold(Variable& variable) {
    locks_.push_back(LockVariable(variable));
    held_.emplace_back(&variable, WritableValue(variable));
    return MutableData<T>(held_.back().second);
  }
  // Assigns every held value to its variable, in Hold order.
  void Commit() {
    for (auto& [variable, value] : held_) variable->Assign(value);
    held_.clear();
    locks_.clear();
  }

 private:
  std::vector<std::unique_lock<std::recursive_mutex>> locks_;
  std::vector<std::pair<Variable*, Tensor>> held_;
};

}  // namespace eager::internal
