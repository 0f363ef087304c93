#include "autodiff/module.h"

#include <algorithm>

#include "runtime/errors.h"

namespace eager {
namespace {

// Depth-first over any Trackable's edges, so that variables under plain
// Trackables (not only Modules) are found too; `seen` makes shared objects
// (Keras's two edges to one layer) count once.
void Walk(Trackable& object, std::vector<Variable*>& out, std::vector<const Trackable*>& seen) {
  for (const Trackable::Child& child : object.Children()) {
    if (std::find(seen.begin(), seen.end(), child.object) != seen.end()) continue;
    seen.push_back(child.object);
    if (auto* variable = dynamic_cast<Variable*>(child.object)) {
      out.push_back(variable);
    } else {
      Walk(*child.object, out, seen);
    }
  }
}

}  // namespace

Module::Module(std::string_view name) : name_(name) {}

Module::~Module() = default;

void Module::CheckNewLocalName(std::string_view local_name) const {
  EAGER_CHECK(!local_name.empty(), "Module::Track in module '", name_,
              "': a local name must not be empty");
  for (const Child& c : children_) {
    EAGER_CHECK(c.name != local_name, "Module::Track in module '", name_, "': local name '",
                local_name, "' is already tracked; each edge needs its own name");
  }
}

void Module::Track(std::string_view local_name, Trackable& child) {
  CheckNewLocalName(local_name);
  children_.push_back({std::string(local_name), &child});
  NotifyChildAdded(local_name, child);
}

Variable& Module::AddVariable(std::string_view local_name, const Tensor& initial_value,
                              bool trainable, std::string_view variable_name) {
  CheckNewLocalName(local_name);
  if (variable_name.empty()) variable_name = local_name;
  return CreateVariable(local_name, initial_value, variable_name, trainable,
                        [&](std::unique_ptr<Variable> variable) {
                          children_.push_back({std::string(local_name), variable.get()});
                          owned_.push_back(std::move(variable));
                        });
}

std::vector<Trackable::Child> Module::Children() { return children_; }

std::vector<Variable*> Module::Variables() {
  std::vector<Variable*> out;
  std::vector<const Trackable*> seen;
  Walk(*this, out, seen);
  return out;
}

std::vector<Variable*> Module::TrainableVariables() {
  std::vector<Variable*> out = Variables();
  std::erase_if(out, [](const Variable* v) { return !v->trainable(); });
  return out;
}

std::vector<Variable*> Module::NonTrainableVariables() {
  std::vector<Variable*> out = Variables();
  std::erase_if(out, [](const Variable* v) { return v->trainable(); });
  return out;
}

}  // namespace eager
