#include "ops/lookup_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ops/internal/dispatch.h"
#include "ops/op_def.h"
#include "runtime/graph.h"
#include "runtime/resource.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

// "node 'hash_table_Lookup' (LookupTableFindV2)"
std::string Where(const NodeContext& c) {
  return StrCat("node '", c.node.name, "' (", c.node.op, ")");
}

// A hash table: each key once, its value at entries_[index].
class LookupTable final : public Resource {
 public:
  LookupTable(std::string name, DType key_dtype, DType value_dtype)
      : name_(std::move(name)), key_dtype_(key_dtype), value_dtype_(value_dtype) {}

  std::string_view resource_kind() const override { return "lookup table"; }
  std::string_view resource_name() const override { return name_; }
  DType key_dtype() const { return key_dtype_; }
  DType value_dtype() const { return value_dtype_; }
  bool initialized() const { return initialized_; }
  int64_t size() const { return initialized_ ? values_.num_elements() : 0; }
  // Every entry's value, [size()] (empty before initialization).
  const Tensor& values() const { return values_; }

  // "table 'hash_table' (string -> int64)"
  std::string Describe() const {
    return StrCat("table '", name_, "' (", key_dtype_, " -> ", value_dtype_, ")");
  }

  // The entry of each key, or -1.
  std::vector<int64_t> Find(const Tensor& keys) const {
    std::vector<int64_t> found(static_cast<size_t>(keys.num_elements()), -1);
    if (key_dtype_ == DType::kString) {
      const auto k = keys.data<std::string>();
      for (size_t i = 0; i < k.size(); ++i) {
        if (auto it = strings_.find(k[i]); it != strings_.end()) found[i] = it->second;
      }
    } else {
      internal::Dispatch<internal::DTypeSet::kIndex>(key_dtype_, [&](auto tag) {
        using K = typename decltype(tag)::type;
        const auto k = keys.data<K>();
        for (size_t i = 0; i < k.size(); ++i) {
          if (auto it = ints_.find(static_cast<int64_t>(k[i])); it != ints_.end()) {
            found[i] = it->second;
          }
        }
      });
    }
    return found;
  }

  // Fills an uninitialized table; on an initialized one, checks that the
  // entries are the ones it holds (TF's rule). REQUIRES: dtypes checked.
  void Initialize(const NodeContext& c, const Tensor& keys, const Tensor& values) {
    LookupTable fresh(name_, key_dtype_, value_dtype_);
    fresh.Insert(c, keys, values);
    if (!initialized_) {
      *this = std::move(fresh);
      return;
    }
    if (!SameEntries(fresh)) {
      throw FailedPreconditionError(StrCat("Table was already initialized with different data. (",
                                           Where(c), " initializes ", Describe(), " again, with ",
                                           fresh.size(), " entries; it holds ", size(), ")"));
    }
  }

 private:
  LookupTable(LookupTable&&) = default;
  LookupTable& operator=(LookupTable&&) = default;

  void Insert(const NodeContext& c, const Tensor& keys, const Tensor& values) {
    const int64_t n = keys.num_elements();
    std::vector<int64_t> unique;  // into `values`, each key's first occurrence
    const auto add = [&](auto& map, const auto& key, int64_t i, const auto& shown) {
      auto [it, inserted] = map.emplace(key, static_cast<int64_t>(unique.size()));
      if (inserted) {
        unique.push_back(i);
        return;
      }
      if (!SameValue(values, unique[static_cast<size_t>(it->second)], i)) {
        throw InvalidArgumentError(StrCat("HashTable has different value for same key. Key ", shown,
                                          " has 2 values (", Where(c), ", ", Describe(), ")"));
      }
    };
    if (key_dtype_ == DType::kString) {
      const auto k = keys.data<std::string>();
      for (int64_t i = 0; i < n; ++i) add(strings_, k[i], i, k[i]);
    } else {
      internal::Dispatch<internal::DTypeSet::kIndex>(key_dtype_, [&](auto tag) {
        using K = typename decltype(tag)::type;
        const auto k = keys.data<K>();
        for (int64_t i = 0; i < n; ++i) add(ints_, static_cast<int64_t>(k[i]), i, k[i]);
      });
    }
    Tensor picked = internal::NewTensor(Shape{static_cast<int64_t>(unique.size())}, value_dtype_);
    VisitDType(value_dtype_, [&](auto tag) {
      using V = typename decltype(tag)::type;
      const auto v = values.data<V>();
      V* out = internal::MutableData<V>(picked);
      for (size_t j = 0; j < unique.size(); ++j) out[j] = v[static_cast<size_t>(unique[j])];
    });
    values_ = picked;
    initialized_ = true;
  }

  static bool SameValue(const Tensor& values, int64_t a, int64_t b) {
    bool same = false;
    VisitDType(values.dtype(), [&](auto tag) {
      using V = typename decltype(tag)::type;
      const auto v = values.data<V>();
      same = v[static_cast<size_t>(a)] == v[static_cast<size_t>(b)];
    });
    return same;
  }

  bool SameEntries(const LookupTable& other) const {
    if (other.size() != size()) return false;
    bool same = true;
    const auto compare = [&](const auto& mine, const auto& theirs) {
      for (const auto& entry : theirs) {
        auto it = mine.find(entry.first);
        if (it == mine.end()) return false;
        const auto a = static_cast<size_t>(it->second);
        const auto b = static_cast<size_t>(entry.second);
        VisitDType(value_dtype_, [&](auto tag) {
          using V = typename decltype(tag)::type;
          same = same && values_.data<V>()[a] == other.values_.data<V>()[b];
        });
      }
      return same;
    };
    return key_dtype_ == DType::kString ? compare(strings_, other.strings_)
                                        : compare(ints_, other.ints_);
  }

  std::string name_;
  DType key_dtype_;
  DType value_dtype_;
  bool initialized_ = false;
  std::unordered_map<std::string, int64_t> strings_;  // string keys -> entry
  std::unordered_map<int64_t, int64_t> ints_;         // int32/int64 keys -> entry
  Tensor values_;                                     // [entries] of value_dtype_
};

struct TableState final : NodeState {
  std::shared_ptr<LookupTable> table;
};

// The table a HashTableV2 node stands for, by TF's naming rule
// (ResourceManager's ContainerInfo): its shared_name, else its node name
// under use_node_name_sharing, else a table of its own. A named table is
// looked up in the Session's shared resources by (container, name), so
// every node naming it reaches one table, which must have its dtypes.
std::shared_ptr<LookupTable> MakeOrFindTable(const NodeContext& c, DType key, DType value) {
  std::string name = c.attrs.GetString("shared_name");
  if (name.empty() && c.attrs.Has("use_node_name_sharing") &&
      c.attrs.GetBool("use_node_name_sharing")) {
    name = c.node.name;
  }
  if (name.empty() || c.shared_resources == nullptr) {
    return std::make_shared<LookupTable>(name.empty() ? c.node.name : name, key, value);
  }
  const std::string container = c.attrs.Has("container") ? c.attrs.GetString("container") : "";
  std::shared_ptr<Resource>& slot = (*c.shared_resources)[{container, name}];
  if (slot == nullptr) {
    auto table = std::make_shared<LookupTable>(name, key, value);
    slot = table;
    return table;
  }
  auto table = std::dynamic_pointer_cast<LookupTable>(slot);
  if (table == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c), ": shared_name '", name, "' names a ",
                                      slot->resource_kind(), ", not a lookup table"));
  }
  if (table->key_dtype() != key || table->value_dtype() != value) {
    throw InvalidArgumentError(StrCat("Conflicting key/value dtypes ", key, "->", value, " with ",
                                      table->key_dtype(), "-", table->value_dtype(), " for table ",
                                      name, " (", Where(c), " shares ", table->Describe(), ")"));
  }
  return table;
}

NodeOutputs RunHashTable(const NodeContext& c) {
  auto& state = *c.state;
  if (state == nullptr) {
    const DType key = c.attrs.GetType("key_dtype");
    const DType value = c.attrs.GetType("value_dtype");
    if (key != DType::kString && key != DType::kInt64 && key != DType::kInt32) {
      throw UnimplementedError(StrCat(Where(c), ": key_dtype ", key,
                                      " is not supported; eager's tables take string, int64 or "
                                      "int32 keys"));
    }
    auto s = std::make_unique<TableState>();
    s->table = MakeOrFindTable(c, key, value);
    state = std::move(s);
  }
  return {.values = {}, .ref = static_cast<TableState&>(*state).table.get()};
}

// refs[0] as a table, after checking the node's inputs.
LookupTable& Table(const NodeContext& c, size_t values) {
  if (c.refs.size() != 1 || c.inputs.size() != values) {
    throw InvalidArgumentError(StrCat(Where(c), " takes a table handle and ", values,
                                      " tensors; it has ", c.refs.size(), " handle(s) and ",
                                      c.inputs.size(), " tensors"));
  }
  auto* table = dynamic_cast<LookupTable*>(c.refs[0]);
  if (table == nullptr) {
    throw InvalidArgumentError(StrCat(Where(c),
                                      ": input 0 must be a lookup table's handle, but it "
                                      "is ",
                                      c.refs[0]->resource_kind(), " '", c.refs[0]->resource_name(),
                                      "'"));
  }
  return *table;
}

void CheckDType(const NodeContext& c, const LookupTable& table, const Tensor& t,
                std::string_view what, DType want) {
  if (t.dtype() == want) return;
  throw InvalidArgumentError(StrCat(Where(c), ": ", what, " are ", t.dtype(), " but ",
                                    table.Describe(), " takes ", want, " ", what));
}

NodeOutputs RunInitializeTable(const NodeContext& c) {
  LookupTable& table = Table(c, 2);
  const Tensor& keys = c.inputs[0];
  const Tensor& values = c.inputs[1];
  CheckDType(c, table, keys, "keys", table.key_dtype());
  CheckDType(c, table, values, "values", table.value_dtype());
  if (keys.num_elements() != values.num_elements() || keys.rank() > 1 || values.rank() > 1) {
    throw InvalidArgumentError(StrCat(Where(c), ": keys ", keys.shape(), " and values ",
                                      values.shape(), " must be vectors of one size (",
                                      table.Describe(), ")"));
  }
  table.Initialize(c, keys, values);
  return {};
}

NodeOutputs RunFind(const NodeContext& c) {
  LookupTable& table = Table(c, 2);
  const Tensor& keys = c.inputs[0];
  const Tensor& fallback = c.inputs[1];
  CheckDType(c, table, keys, "keys", table.key_dtype());
  CheckDType(c, table, fallback, "default_value", table.value_dtype());
  if (fallback.num_elements() != 1) {
    throw InvalidArgumentError(
        StrCat(Where(c), ": default_value must be a scalar, got shape ", fallback.shape()));
  }
  if (!table.initialized()) {
    throw FailedPreconditionError(
        StrCat("Table not initialized. (", Where(c), " looks up in ", table.Describe(),
               ", which its initializer has not filled: run the init op, e.g. legacy_init_op, "
               "first)"));
  }
  const std::vector<int64_t> found = table.Find(keys);
  Tensor out = internal::NewTensor(keys.shape(), table.value_dtype());
  const Tensor& values = table.values();
  VisitDType(table.value_dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    const auto v = values.data<V>();
    const V d = fallback.data<V>()[0];
    V* o = internal::MutableData<V>(out);
    for (size_t i = 0; i < found.size(); ++i) {
      o[i] = found[i] < 0 ? d : v[static_cast<size_t>(found[i])];
    }
  });
  return {{out}};
}

NodeOutputs RunSize(const NodeContext& c) { return {{Tensor(Table(c, 0).size())}}; }

}  // namespace

const OpDef kHashTableV2Op = {.type = "HashTableV2", .run = RunHashTable};
const OpDef kInitializeTableV2Op = {.type = "InitializeTableV2",
                                    .num_inputs = 3,
                                    .run = RunInitializeTable,
                                    .num_outputs = 0,
                                    .ref_inputs = 0b1};
const OpDef kLookupTableImportV2Op = {.type = "LookupTableImportV2",
                                      .num_inputs = 3,
                                      .run = RunInitializeTable,
                                      .num_outputs = 0,
                                      .ref_inputs = 0b1};
const OpDef kLookupTableFindV2Op = {
    .type = "LookupTableFindV2", .num_inputs = 3, .run = RunFind, .ref_inputs = 0b1};
const OpDef kLookupTableSizeV2Op = {
    .type = "LookupTableSizeV2", .num_inputs = 1, .run = RunSize, .ref_inputs = 0b1};

}  // namespace eager
