#pragma once

// NameBasedRestore: restoring a bundle without an object graph (a TF1 Saver
// file) into an object graph, as TF2's Checkpoint.restore falls back to
// (FORMAT.md 4.5): every variable is looked up by its global name
// (Variable::shared_name(), "dense/kernel"), values found are assigned, also
// to variables and slots created later (it stays queued on the objects it
// walked), and missing names are remembered for AssertConsumed. No matching
// by path happens in this mode.

#include <memory>
#include <set>
#include <string>
#include <unordered_set>

#include "runtime/trackable.h"

namespace eager {
class BundleReader;
class Variable;
}  // namespace eager

namespace eager::internal {

class NameBasedRestore final : public Trackable::DeferredRestoration,
                               public std::enable_shared_from_this<NameBasedRestore> {
 public:
  NameBasedRestore(std::string save_path, std::shared_ptr<const BundleReader> reader);
  ~NameBasedRestore() override;

  // Validates every found value against its variable before assigning any
  // (InvalidArgumentError naming the key), then assigns.
  void Start(Trackable& root);
  // TF's NameBasedSaverStatus: all three assertions are this one. Fails
  // (FailedPreconditionError) naming every variable reachable from `root`
  // (save_counter exempt) that got no value.
  void AssertConsumed(Trackable& root);
  const std::string& save_path() const { return save_path_; }

  void ChildAdded(Trackable& owner, std::string_view name, Trackable& child) override;
  void SlotAdded(Trackable& owner, const Trackable::Slot& slot) override;

 private:
  // The value for `variable` if the bundle has its name (checked).
  std::optional<Tensor> Lookup(const Variable& variable) const;
  void Visit(Trackable& object);

  std::string save_path_;
  std::shared_ptr<const BundleReader> reader_;
  std::unordered_set<const Variable*> restored_;
  std::unordered_set<Trackable*> hooked_;
};

}  // namespace eager::internal
