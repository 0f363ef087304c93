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
//
// Memory: a registry keeps each name it counts once, lower-cased, with some
// 5 bytes of length and count, plus 11 to 21 bytes of table per name, not a
// hash-map node per name (issue 27). A Graph's registry does not copy its
// nodes' names at all: it counts them from the Graph's own node index
// (ExternalNames) and keeps only names used more than once or not (yet)
// nodes' names, so importing or building millions of nodes costs it next to
// nothing. Lookups hash the name as given, without a lower-cased copy.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace eager {

class NameRegistry {
 public:
  // Names kept elsewhere that a registry counts as used once each, as if it
  // had handed them out, without copying them: a Graph's node names (TF marks
  // the name of every node it adds or imports used).
  class ExternalNames {
   public:
    // Whether one of the names equals `name` ignoring ASCII case. Called
    // under the registry's lock: whoever changes the names must not do so
    // while another thread calls the registry.
    virtual bool ContainsIgnoringCase(std::string_view name) const = 0;

   protected:
    ~ExternalNames() = default;
  };

  NameRegistry() = default;
  // A registry that counts every name of `external` as used once, until
  // Clear(). REQUIRES: `external` outlives the registry.
  explicit NameRegistry(const ExternalNames* external) : external_(external) {}
  NameRegistry(const NameRegistry&) = delete;
  NameRegistry& operator=(const NameRegistry&) = delete;

  // Returns `name` or `name_N`, the first not yet used, and marks it used.
  // REQUIRES: name is not empty.
  std::string UniqueName(std::string_view name);
  // Whether `name` has been handed out (case-insensitively).
  bool IsUsed(std::string_view name) const;
  // Marks `name` used if it is not, as is: TF's graph does so with the name
  // of every node it adds. The owner of external names calls it after adding
  // `name` to them; the registry then drops its own copy of a name used
  // once, which the external one stands for (a graph built with UniqueName
  // keeps its nodes' names once, too). REQUIRES: name is not empty.
  void MarkUsed(std::string_view name);
  // Forgets every name, the external ones too (names added to them later do
  // not count either), and starts a new generation.
  void Clear();
  // Counts Clear() calls: variables named before the last Clear belong to an
  // earlier generation (a graph that was reset), see runtime/live_variables.h.
  uint64_t generation() const;

 private:
  // The names in use and their use counts: each one's entry in `entries_`
  // is its count (4 bytes), its length (a varint) and its lower-cased bytes;
  // `table_` is an open-addressing table (linear probing, at most 3/4 full)
  // of entry offsets with 32 bits of each name's hash, so a probe reads the
  // entries only on a hash match.
  struct Slot {
    uint32_t hash = 0;
    uint32_t entry = kNoEntry;
  };
  static constexpr uint32_t kNoEntry = UINT32_MAX;
  // The slot holding `name` (case-insensitively), else the free slot where
  // it would go. REQUIRES: mu_ held, table_ not empty.
  size_t Find(std::string_view name, uint32_t hash) const;
  // The uses of `name`, 0 when it is not in use; 1 for an external name
  // not in the table. REQUIRES: mu_ held.
  int32_t UsesLocked(std::string_view name, uint32_t hash) const;
  // Adds `name` (not in use) with `uses`, growing the table first when it
  // would be over 3/4 full. REQUIRES: mu_ held.
  void Insert(std::string_view name, uint32_t hash, int32_t uses);
  void Rehash(size_t slots);
  // Removes the name in table_[slot]; its entry's bytes are reclaimed when
  // they are half of entries_. REQUIRES: mu_ held.
  void Erase(size_t slot);
  size_t EntrySize(uint32_t entry) const;
  int32_t UsesAt(uint32_t entry) const;
  void SetUsesAt(uint32_t entry, int32_t uses);
  std::string_view NameAt(uint32_t entry) const;

  mutable std::mutex mu_;
  const ExternalNames* external_ = nullptr;  // null after Clear()
  std::vector<Slot> table_;                  // empty, or a power of two of slots
  size_t size_ = 0;                          // names in table_
  std::string entries_;
  size_t erased_bytes_ = 0;  // of entries no slot refers to
  uint64_t generation_ = 0;
};

// The registry that Variables and NameScopes use: the names of the Graph
// that is the default on this thread (runtime/graph.h), else the process's
// (TensorFlow's global default graph).
NameRegistry& DefaultNames();
// Forgets every name in the process's registry and every Keras-style object
// name counter (tf.keras.backend.clear_session()). REQUIRES: no NameScope open.
void ResetDefaultNames();

// How a Variable made outside any Graph is named. kTf2 (the default): as
// given, as TF2's eager tf.Variable (two "w1" are both "w1:0"; Keras layers
// stay unique through their own names, "dense", "dense_1"). kTf1: made
// unique in DefaultNames() as in TF1's default graph ("w1", "w1_1"), for a
// program that rebuilds a TF1 graph's variable names without a Graph, e.g.
// to read a TF1 name-based checkpoint. In a Graph names are always unique.
// Process-wide; set it before creating the variables.
enum class EagerVariableNames { kTf2, kTf1 };
void SetEagerVariableNames(EagerVariableNames naming);
EagerVariableNames GetEagerVariableNames();
// Whether a Variable created now on this thread gets a unique name: inside
// a Graph, or with kTf1.
bool VariableNamesAreUnique();

// Keras's per-class object names, zero-based: the first Dense is "dense", the
// next "dense_1" (backend.unique_object_name). Counts per base name, apart from
// the graph's names, and per graph as Keras does: while a Graph is the default
// its own counters (Graph::UniqueObjectName), else the process's.
std::string UniqueObjectName(std::string_view base);

// `with tf.name_scope(name):` for this thread while the object lives.
//   { NameScope scope("dense"); Variable k(..., "kernel"); }  // "dense/kernel:0"
// The scope's own name is made unique in DefaultNames() ("dense", "dense_1").
// A name ending in "/" re-enters that exact scope without uniquifying it;
// "/" alone the root scope (TF's name_scope("")).
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
