#pragma once

// TrackableList: a list of trackables whose checkpoint edges are their
// indices "0", "1", ... (TF's ListWrapper), as Keras 2.11+ and Keras 3
// optimizers keep "_variables", "_momentums" and "_velocities".
//
// Append() reports the new edge to any deferred restoration queued on the
// list (runtime/trackable.h), so a checkpoint restored before the items
// existed gives them their values as they are added. Items are not owned.

#include <string>
#include <vector>

#include "runtime/trackable.h"

namespace eager::internal {

class TrackableList final : public Trackable {
 public:
  void Append(Trackable& item) {
    items_.push_back(&item);
    NotifyChildAdded(std::to_string(items_.size() - 1), item);
  }
  void Clear() { items_.clear(); }
  size_t size() const { return items_.size(); }

  std::vector<Child> Children() override {
    std::vector<Child> out;
    out.reserve(items_.size());
    for (size_t i = 0; i < items_.size(); ++i) out.push_back({std::to_string(i), items_[i]});
    return out;
  }

 private:
  std::vector<Trackable*> items_;
};

}  // namespace eager::internal
