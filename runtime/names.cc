#include "runtime/names.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/internal/case_fold.h"

namespace eager {
namespace {

// The table's 32 bits of a name's hash; its slot is hash & (size - 1).
uint32_t Hash32(std::string_view name) {
  const uint64_t h = internal::HashIgnoringCase(name);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

constexpr size_t kMinSlots = 16;

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
  const uint32_t hash = Hash32(name);
  if (table_.empty()) Rehash(kMinSlots);
  const size_t slot = Find(name, hash);
  int32_t uses = 0;
  if (table_[slot].entry != kNoEntry) {
    uses = UsesAt(table_[slot].entry);
    EAGER_CHECK(uses < std::numeric_limits<int32_t>::max(), "UniqueName: '", name,
                "' has been used too often");
    SetUsesAt(table_[slot].entry, uses + 1);
  } else {
    // An external name's first reuse is the first time the table holds it.
    uses = external_ != nullptr && external_->ContainsIgnoringCase(name) ? 1 : 0;
    Insert(name, hash, uses + 1);
    if (uses == 0) return std::string(name);
  }
  std::string candidate;
  for (int32_t i = uses;; ++i) {
    candidate.assign(name).append("_").append(std::to_string(i));
    const uint32_t candidate_hash = Hash32(candidate);
    if (UsesLocked(candidate, candidate_hash) == 0) {
      Insert(candidate, candidate_hash, 1);
      return candidate;
    }
  }
}

bool NameRegistry::IsUsed(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return UsesLocked(name, Hash32(name)) != 0;
}

void NameRegistry::MarkUsed(std::string_view name) {
  EAGER_CHECK(!name.empty(), "MarkUsed: a name must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  const uint32_t hash = Hash32(name);
  const bool external = external_ != nullptr && external_->ContainsIgnoringCase(name);
  const size_t slot = table_.empty() ? 0 : Find(name, hash);
  if (table_.empty() || table_[slot].entry == kNoEntry) {
    if (!external) Insert(name, hash, 1);
  } else if (external && UsesAt(table_[slot].entry) == 1) {
    Erase(slot);  // the external name counts the same, 1
  }
}

void NameRegistry::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Slot>().swap(table_);  // the memory too: a reset graph's names can be many
  std::string().swap(entries_);
  size_ = 0;
  erased_bytes_ = 0;
  external_ = nullptr;
  ++generation_;
}

uint64_t NameRegistry::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

size_t NameRegistry::Find(std::string_view name, uint32_t hash) const {
  const size_t mask = table_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    const Slot& s = table_[slot];
    if (s.entry == kNoEntry) return slot;
    if (s.hash == hash && internal::EqualsIgnoringCase(NameAt(s.entry), name)) return slot;
  }
}

int32_t NameRegistry::UsesLocked(std::string_view name, uint32_t hash) const {
  const uint32_t entry = table_.empty() ? kNoEntry : table_[Find(name, hash)].entry;
  if (entry != kNoEntry) return UsesAt(entry);
  return external_ != nullptr && external_->ContainsIgnoringCase(name) ? 1 : 0;
}

void NameRegistry::Insert(std::string_view name, uint32_t hash, int32_t uses) {
  if ((size_ + 1) * 4 > table_.size() * 3) Rehash(std::max(kMinSlots, table_.size() * 2));
  const size_t offset = entries_.size();
  if (offset + sizeof(uses) + 5 + name.size() >= kNoEntry) {
    throw ResourceExhaustedError(StrCat("NameRegistry: the names in use would exceed 4 GB with '",
                                        name.substr(0, 64), "' (", name.size(), " bytes)"));
  }
  // The entry: uses, the length as a varint (7 bits a byte), the name lower-cased.
  char header[sizeof(int32_t) + 5];
  std::memcpy(header, &uses, sizeof(uses));
  size_t header_size = sizeof(uses);
  for (auto n = static_cast<uint32_t>(name.size());; n >>= 7) {
    header[header_size++] = static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
    if (n < 0x80) break;
  }
  entries_.append(header, header_size);
  for (const char c : name) entries_.push_back(internal::FoldCase(c));
  table_[Find(name, hash)] = Slot{hash, static_cast<uint32_t>(offset)};
  ++size_;
}

void NameRegistry::Rehash(size_t slots) {
  std::vector<Slot> old(slots);
  old.swap(table_);
  const size_t mask = slots - 1;
  for (const Slot& s : old) {
    if (s.entry == kNoEntry) continue;
    size_t slot = s.hash & mask;
    while (table_[slot].entry != kNoEntry) slot = (slot + 1) & mask;
    table_[slot] = s;
  }
}

void NameRegistry::Erase(size_t slot) {
  erased_bytes_ += EntrySize(table_[slot].entry);
  // Backward-shift deletion: a later slot of the probe run moves into the
  // hole unless its home slot lies after the hole, so no probe run breaks.
  const size_t mask = table_.size() - 1;
  size_t hole = slot;
  for (size_t next = (hole + 1) & mask; table_[next].entry != kNoEntry; next = (next + 1) & mask) {
    const size_t home = table_[next].hash & mask;
    if (((next - home) & mask) >= ((next - hole) & mask)) {
      table_[hole] = table_[next];
      hole = next;
    }
  }
  table_[hole] = Slot{};
  --size_;
  if (erased_bytes_ * 2 <= entries_.size()) return;
  // Compaction: the live entries, in slot order, into a new string.
  std::string live;
  live.reserve(entries_.size() - erased_bytes_);
  for (Slot& s : table_) {
    if (s.entry == kNoEntry) continue;
    const size_t offset = live.size();
    live.append(entries_, s.entry, EntrySize(s.entry));
    s.entry = static_cast<uint32_t>(offset);
  }
  entries_.swap(live);
  erased_bytes_ = 0;
}

size_t NameRegistry::EntrySize(uint32_t entry) const {
  const std::string_view name = NameAt(entry);
  return static_cast<size_t>(name.data() - entries_.data()) + name.size() - entry;
}

int32_t NameRegistry::UsesAt(uint32_t entry) const {
  int32_t uses = 0;
  std::memcpy(&uses, entries_.data() + entry, sizeof(uses));
  return uses;
}

void NameRegistry::SetUsesAt(uint32_t entry, int32_t uses) {
  std::memcpy(entries_.data() + entry, &uses, sizeof(uses));
}

std::string_view NameRegistry::NameAt(uint32_t entry) const {
  size_t pos = entry + sizeof(int32_t);
  size_t length = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(entries_[pos++]);
    length |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  return std::string_view(entries_).substr(pos, length);
}

namespace {
std::atomic<EagerVariableNames> eager_variable_names{EagerVariableNames::kTf2};
}  // namespace

void SetEagerVariableNames(EagerVariableNames naming) { eager_variable_names.store(naming); }

EagerVariableNames GetEagerVariableNames() { return eager_variable_names.load(); }

bool VariableNamesAreUnique() {
  return Graph::Current() != nullptr || GetEagerVariableNames() == EagerVariableNames::kTf1;
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
  if (name == "/") {
    prefix_.clear();  // the root scope
  } else if (name.back() == '/') {
    prefix_ = std::string(name);  // an exact, already-unique scope
  } else {
    prefix_ = DefaultNames().UniqueName(previous_ + std::string(name)) + "/";
  }
  current_scope = prefix_;
}

NameScope::~NameScope() { current_scope = previous_; }

const std::string& NameScope::Current() { return current_scope; }

}  // namespace eager
