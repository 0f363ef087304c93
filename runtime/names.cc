#include "runtime/names.h"

#include <algorithm>
#include <cctype>

#include "runtime/errors.h"
#include "runtime/graph.h"

namespace eager {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

thread_local std::string current_scope;

struct ObjectNames {
  std::mutex mu;
  std::unordered_map<std::string, int> uses;
};

// Names outside any graph (TensorFlow's global default graph).
NameRegistry& ProcessNames() {
  static NameRegistry registry;
  return registry;
}

ObjectNames& DefaultObjectNames() {
  static ObjectNames names;
  return names;
}

}  // namespace

std::string NameRegistry::UniqueName(std::string_view name) {
  EAGER_CHECK(!name.empty(), "UniqueName: a name must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  // The same algorithm as Graph.unique_name: count uses per lower-cased name
  // and, on reuse, probe name_i until a free one is found.
  std::string key = Lower(name);
  int i = names_in_use_[key]++;
  if (i == 0) return std::string(name);
  const std::string base_key = key;
  while (names_in_use_.count(key) != 0) {
    key = base_key + "_" + std::to_string(i);
    ++i;
  }
  names_in_use_[key] = 1;
  return std::string(name) + "_" + std::to_string(i - 1);
}

bool NameRegistry::IsUsed(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return names_in_use_.count(Lower(name)) != 0;
}

void NameRegistry::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  names_in_use_.clear();
  ++generation_;
}

uint64_t NameRegistry::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

NameRegistry& DefaultNames() {
  if (Graph* graph = Graph::Current()) return graph->names();
  return ProcessNames();
}

void ResetDefaultNames() {
  ProcessNames().Clear();
  ObjectNames& names = DefaultObjectNames();
  std::lock_guard<std::mutex> lock(names.mu);
  names.uses.clear();
}

std::string UniqueObjectName(std::string_view base) {
  if (Graph* graph = Graph::Current()) return graph->UniqueObjectName(base);
  EAGER_CHECK(!base.empty(), "UniqueObjectName: a name must not be empty");
  ObjectNames& names = DefaultObjectNames();
  std::lock_guard<std::mutex> lock(names.mu);
  const int n = names.uses[std::string(base)]++;
  return n == 0 ? std::string(base) : std::string(base) + "_" + std::to_string(n);
}

NameScope::NameScope(std::string_view name) : previous_(current_scope) {
  EAGER_CHECK(!name.empty(), "NameScope: a scope name must not be empty");
  if (name.back() == '/') {
    prefix_ = std::string(name);  // an exact, already-unique scope
  } else {
    prefix_ = DefaultNames().UniqueName(previous_ + std::string(name)) + "/";
  }
  current_scope = prefix_;
}

NameScope::~NameScope() { current_scope = previous_; }

const std::string& NameScope::Current() { return current_scope; }

}  // namespace eager
