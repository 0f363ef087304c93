#include "runtime/live_variables.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include "runtime/names.h"
#include "runtime/variable.h"

namespace eager {
namespace {

struct Registration {
  Variable* variable;
  const NameRegistry* registry;
  uint64_t generation;
};

struct Registry {
  std::mutex mu;
  uint64_t next_sequence = 0;
  std::map<uint64_t, Registration> by_sequence;  // creation order
  std::unordered_map<const Variable*, uint64_t> sequence_of;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: variables may outlive statics
  return *registry;
}

std::vector<Variable*> Collect(bool trainable_only) {
  const NameRegistry& names = DefaultNames();
  const uint64_t generation = names.generation();
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<Variable*> out;
  for (const auto& [sequence, reg] : r.by_sequence) {
    if (reg.registry != &names || reg.generation != generation) continue;
    if (trainable_only && !reg.variable->trainable()) continue;
    out.push_back(reg.variable);
  }
  return out;
}

}  // namespace

std::vector<Variable*> LiveVariables() { return Collect(false); }

std::vector<Variable*> LiveTrainableVariables() { return Collect(true); }

namespace internal {

void RegisterLiveVariable(Variable* variable, const NameRegistry& registry) {
  const uint64_t generation = registry.generation();
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  const uint64_t sequence = r.next_sequence++;
  r.by_sequence.emplace(sequence, Registration{variable, &registry, generation});
  r.sequence_of[variable] = sequence;
}

void UnregisterLiveVariable(Variable* variable) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.sequence_of.find(variable);
  if (it == r.sequence_of.end()) return;
  r.by_sequence.erase(it->second);
  r.sequence_of.erase(it);
}

}  // namespace internal
}  // namespace eager
