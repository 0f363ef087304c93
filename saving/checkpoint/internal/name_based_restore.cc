#include "saving/checkpoint/internal/name_based_restore.h"

#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/checkpoint/object_graph.h"

namespace eager::internal {

NameBasedRestore::NameBasedRestore(std::string save_path,
                                   std::shared_ptr<const BundleReader> reader)
    : save_path_(std::move(save_path)), reader_(std::move(reader)) {}

NameBasedRestore::~NameBasedRestore() = default;

std::optional<Tensor> NameBasedRestore::Lookup(const Variable& variable) const {
  const std::string key(variable.shared_name());
  if (!reader_->Contains(key)) return std::nullopt;
  const BundleReader::Entry& entry = reader_->GetEntry(key);
  if (!entry.dtype || *entry.dtype != variable.dtype() || entry.shape() != variable.shape()) {
    const std::string saved =
        entry.dtype ? StrCat(*entry.dtype) : StrCat("TF DataType ", entry.tf_dtype);
    throw InvalidArgumentError(StrCat("Checkpoint ", save_path_, " (name-based): key '", key,
                                      "' holds ", saved, " of shape ", entry.shape(),
                                      ", but variable '", key, "' is ", variable.dtype(),
                                      " of shape ", variable.shape(), "; nothing was restored"));
  }
  return reader_->Read(key);
}

void NameBasedRestore::Visit(Trackable& object) {
  if (auto* variable = dynamic_cast<Variable*>(&object)) {
    if (restored_.contains(variable)) return;
    if (auto value = Lookup(*variable)) {
      variable->Assign(*value);
      restored_.insert(variable);
    }
    return;
  }
  if (hooked_.insert(&object).second) object.AddDeferredRestoration(shared_from_this());
}

void NameBasedRestore::Start(Trackable& root) {
  const LiveObjectGraph live = WalkObjectGraph(root);
  // Check everything first: a mismatch assigns nothing.
  std::vector<std::pair<Variable*, Tensor>> values;
  for (const auto& node : live.nodes) {
    if (auto* variable = dynamic_cast<Variable*>(node.object)) {
      if (auto value = Lookup(*variable)) values.emplace_back(variable, std::move(*value));
    }
  }
  for (auto& [variable, value] : values) {
    variable->Assign(value);
    restored_.insert(variable);
  }
  for (const auto& node : live.nodes) Visit(*node.object);
}

void NameBasedRestore::ChildAdded(Trackable& owner, std::string_view name, Trackable& child) {
  (void)owner, (void)name;
  Visit(child);
  for (const Trackable::Child& c : child.Children()) Visit(*c.object);
}

void NameBasedRestore::SlotAdded(Trackable& owner, const Trackable::Slot& slot) {
  (void)owner;
  Visit(*slot.slot);
}

void NameBasedRestore::AssertConsumed(Trackable& root) {
  std::string missing;
  for (const auto& node : WalkObjectGraph(root).nodes) {
    const auto* variable = dynamic_cast<const Variable*>(node.object);
    if (variable == nullptr || restored_.contains(variable)) continue;
    if (variable->shared_name() == "save_counter") continue;  // exempt, as TF
    missing +=
        StrCat(missing.empty() ? "" : ", ", node.pretty_name, " ('", variable->shared_name(), "')");
  }
  if (!missing.empty()) {
    throw FailedPreconditionError(StrCat("Checkpoint ", save_path_,
                                         " (name-based): Some objects had attributes which were "
                                         "not restored: ",
                                         missing));
  }
}

}  // namespace eager::internal
