#pragma once

// Unique names and name scopes, with TensorFlow's rules.
//
// TensorFlow makes every op and variable name unique within its graph
// (Graph.unique_name): names compare case-insensitively; the first use of "v"
// gives "v", later uses "v_1", "v_2", ..., skipping a candidate that is
// already taken ("v_1" given explicitly earlier makes the next "v" "v_2").
// Name scopes prefix names ("dense/kernel") and are themselves made unique
// ("dense", then "dense_1").
//
// The legacy name-based Saver keys variables by these names, which is why
// they are fragile: building a model twice in one process names the second
// copy's layer "dense_1". Object-based checkpoints do not depend on them.
//
// NameRegistry is a value the caller may own (one per graph). The default
// registry stands in for TensorFlow's default graph; ResetDefaultNames() is
// tf.compat.v1.reset_default_graph() for names. Thread-safe.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace eager {

class NameRegistry {
 public:
  // Returns `name` or `name_N`, the first not yet used, and marks it used.
  // REQUIRES: name is not empty.
  std::string UniqueName(std::string_view name);
  // Whether `name` has been handed out (case-insensitively).
  bool IsUsed(std::string_view name) const;
  // Forgets every name and starts a new generation.
  void Clear();
  // Counts Clear() calls: variables named before the last Clear belong to an
  // earlier generation (a graph that was reset), see runtime/live_variables.h.
  uint64_t generation() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> names_in_use_;  // lower-cased name -> uses
  uint64_t generation_ = 0;
};

// The registry that Variables and NameScopes use: the names of the Graph
// that is the default on this thread (runtime/graph.h), else the process's
// (TensorFlow's global default graph).
NameRegistry& DefaultNames();
// Forgets every name in the process's registry and every Keras-style object
// name counter (tf.keras.backend.clear_session()). REQUIRES: no NameScope open.
void ResetDefaultNames();

// Keras's per-class object names, zero-based: the first Dense is "dense", the
// next "dense_1" (backend.unique_object_name). Counts per base name, apart from
// the graph's names, and per graph as Keras does: while a Graph is the default
// its own counters (Graph::UniqueObjectName), else the process's.
std::string UniqueObjectName(std::string_view base);

// `with tf.name_scope(name):` for this thread while the object lives.
//   { NameScope scope("dense"); Variable k(..., "kernel"); }  // "dense/kernel:0"
// The scope's own name is made unique in DefaultNames() ("dense", "dense_1").
// A name ending in "/" re-enters that exact scope without uniquifying it.
class NameScope {
 public:
  explicit NameScope(std::string_view name);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

  // The full scope prefix opened by this object, with a trailing "/".
  const std::string& prefix() const { return prefix_; }

  // The current thread's innermost scope prefix ("" at top level, else "a/b/").
  static const std::string& Current();

 private:
  std::string prefix_;
  std::string previous_;
};

}  // namespace eager
