#include "saving/tools/checkpoint_tools.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <type_traits>

#include "saving/bundle/bundle_files.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/object_graph.h"
#include "saving/tools/internal/json_text.h"
#include "saving/tools/keras_file_bundle.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using internal::JsonDims;
using internal::JsonNumber;
using internal::JsonString;
using internal::ShortestNumber;

std::string DTypeString(const BundleReader::Entry& entry) {
  return entry.dtype ? std::string(DTypeName(*entry.dtype)) : TfDataTypeName(entry.tf_dtype);
}

std::string TypeString(const BundleReader::Entry& entry) {
  return DTypeString(entry) + JsonDims(entry.dims);
}

template <typename T>
constexpr bool kNumericElement = !std::is_same_v<T, std::string> && requires(const T& v) {
  static_cast<double>(v);
};

// The elements as doubles, or nullopt for a non-numeric dtype.
std::optional<std::vector<double>> AsDoubles(const Tensor& t) {
  return VisitDType(t.dtype(), [&](auto tag) -> std::optional<std::vector<double>> {
    using T = typename decltype(tag)::type;
    if constexpr (kNumericElement<T>) {
      std::vector<double> out;
      out.reserve(static_cast<size_t>(t.num_elements()));
      for (const T& v : t.data<T>()) out.push_back(static_cast<double>(v));
      return out;
    } else {
      return std::nullopt;
    }
  });
}

// Never throws: a path that cannot be stat'ed (a symlink loop, too long) is
// reported as missing, not as std::filesystem_error.
bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// Why `entry` cannot be read by BundleReader::Read, without reading it; empty
// when it can be attempted.
std::string UnreadableReason(const BundleReader& reader, const BundleReader::Entry& entry) {
  if (!entry.dtype) return "dtype " + TfDataTypeName(entry.tf_dtype) + " is not supported by eager";
  if (entry.dims.size() > static_cast<size_t>(Shape::kMaxRank)) return "rank above eager's maximum";
  if (entry.size > 0 &&
      !Exists(DataFilename(reader.prefix(), entry.shard_id, reader.num_shards()))) {
    return "data file " + DataFilename(reader.prefix(), entry.shard_id, reader.num_shards()) +
           " is missing";
  }
  return "";
}

std::string Timestamp(std::optional<double> t) { return t ? ShortestNumber(*t) : "-"; }

}  // namespace

// ---- state -----------------------------------------------------------------

CheckpointStateReport DescribeCheckpointState(const std::string& dir) {
  const std::optional<CheckpointState> state = ReadCheckpointState(dir);
  if (!state) {
    throw NotFoundError(StrCat("No `checkpoint` state file in ", dir, " (expected ",
                               (fs::path(dir) / "checkpoint").string(), ")"));
  }
  CheckpointStateReport report;
  report.dir = dir;
  report.model_checkpoint_path = state->model_checkpoint_path;
  report.last_preserved_timestamp = state->last_preserved_timestamp;

  std::vector<std::string> stored = state->all_model_checkpoint_paths;
  if (!state->model_checkpoint_path.empty() &&
      std::find(stored.begin(), stored.end(), state->model_checkpoint_path) == stored.end()) {
    stored.push_back(state->model_checkpoint_path);
  }
  for (size_t i = 0; i < stored.size(); ++i) {
    CheckpointFilesStatus c;
    c.stored = stored[i];
    c.latest = stored[i] == state->model_checkpoint_path;
    if (i < state->all_model_checkpoint_timestamps.size() &&
        i < state->all_model_checkpoint_paths.size()) {
      c.timestamp = state->all_model_checkpoint_timestamps[i];
    }
    c.prefix = fs::path(stored[i]).is_absolute() ? stored[i] : (fs::path(dir) / stored[i]).string();
    if (!Exists(IndexFilename(c.prefix))) {
      c.status = "missing";
      c.detail = "no " + IndexFilename(c.prefix);
      // Written on another machine: say so when the files sit in DIR.
      const std::string here = (fs::path(dir) / fs::path(stored[i]).filename()).string();
      if (fs::path(stored[i]).is_absolute() && Exists(IndexFilename(here))) {
        c.detail += "; found as " + here;
      }
    } else {
      try {
        const BundleReader reader(c.prefix);
        c.shards = reader.num_shards();
        std::string missing;
        for (int s = 0; s < c.shards; ++s) {
          const std::string data = DataFilename(c.prefix, s, c.shards);
          if (!Exists(data)) {
            ++c.missing_shards;
            missing += (missing.empty() ? "no " : ", ") + data;
          }
        }
        c.status = c.missing_shards > 0 ? "incomplete" : "ok";
        c.detail = missing;
      } catch (const Error& e) {
        c.status = "unreadable";
        c.detail = e.what();
      }
    }
    report.checkpoints.push_back(std::move(c));
  }
  return report;
}

void PrintCheckpointState(const CheckpointStateReport& report, bool json, std::ostream& out) {
  if (json) {
    out << "{\"dir\":" << JsonString(report.dir)
        << ",\"model_checkpoint_path\":" << JsonString(report.model_checkpoint_path)
        << ",\"last_preserved_timestamp\":" << JsonNumber(report.last_preserved_timestamp)
        << ",\"checkpoints\":[";
    for (size_t i = 0; i < report.checkpoints.size(); ++i) {
      const CheckpointFilesStatus& c = report.checkpoints[i];
      out << (i ? "," : "") << "{\"stored\":" << JsonString(c.stored)
          << ",\"prefix\":" << JsonString(c.prefix)
          << ",\"latest\":" << (c.latest ? "true" : "false")
          << ",\"timestamp\":" << JsonNumber(c.timestamp) << ",\"status\":" << JsonString(c.status)
          << ",\"shards\":" << c.shards << ",\"missing_shards\":" << c.missing_shards
          << ",\"detail\":" << JsonString(c.detail) << "}";
    }
    out << "]}\n";
    return;
  }
  out << (fs::path(report.dir) / "checkpoint").string() << ": latest "
      << (report.model_checkpoint_path.empty() ? "(none)" : report.model_checkpoint_path) << ", "
      << report.checkpoints.size() << " checkpoint" << (report.checkpoints.size() == 1 ? "" : "s");
  if (report.last_preserved_timestamp) {
    out << ", last_preserved_timestamp " << ShortestNumber(*report.last_preserved_timestamp);
  }
  out << "\n";
  int missing = 0;
  for (const CheckpointFilesStatus& c : report.checkpoints) {
    out << (c.latest ? "* " : "  ") << c.stored << "  " << c.status;
    if (c.shards > 0) out << "  " << c.shards << (c.shards == 1 ? " shard" : " shards");
    out << "  timestamp " << Timestamp(c.timestamp);
    if (!c.detail.empty()) out << "  (" << c.detail << ")";
    out << "\n";
    if (c.status != "ok") ++missing;
  }
  out << report.checkpoints.size() - missing << " present, " << missing << " missing or damaged\n";
}

// ---- diff ------------------------------------------------------------------

std::vector<TensorDifference> DiffCheckpoints(const BundleReader& a, const BundleReader& b) {
  std::set<std::string> keys;
  for (const std::string& k : a.Keys()) keys.insert(k);
  for (const std::string& k : b.Keys()) keys.insert(k);
  std::vector<TensorDifference> diff;
  for (const std::string& key : keys) {
    TensorDifference d;
    d.key = key;
    const bool in_a = a.Contains(key), in_b = b.Contains(key);
    if (in_a) d.a_type = TypeString(a.GetEntry(key));
    if (in_b) d.b_type = TypeString(b.GetEntry(key));
    if (!in_a || !in_b) {
      d.kind = in_a ? TensorDifference::Kind::kRemoved : TensorDifference::Kind::kAdded;
      diff.push_back(std::move(d));
      continue;
    }
    const BundleReader::Entry& ea = a.GetEntry(key);
    const BundleReader::Entry& eb = b.GetEntry(key);
    if (ea.tf_dtype != eb.tf_dtype || ea.dims != eb.dims) {
      d.kind = TensorDifference::Kind::kChanged;
      d.detail = ea.tf_dtype != eb.tf_dtype ? "dtype" : "shape";
      diff.push_back(std::move(d));
      continue;
    }
    if (ea.size == eb.size && ea.masked_crc32c == eb.masked_crc32c &&
        ea.num_slices == eb.num_slices) {
      diff.push_back(std::move(d));  // same bytes (as far as a CRC32C tells)
      continue;
    }
    d.kind = TensorDifference::Kind::kChanged;
    std::string why = UnreadableReason(a, ea);
    if (why.empty()) why = UnreadableReason(b, eb);
    if (!why.empty()) {
      d.detail = "stored bytes differ; values not compared: " + why;
      diff.push_back(std::move(d));
      continue;
    }
    const Tensor ta = a.Read(key), tb = b.Read(key);
    const std::optional<std::vector<double>> va = AsDoubles(ta), vb = AsDoubles(tb);
    if (va && vb) {
      double max_diff = 0;
      for (size_t i = 0; i < va->size(); ++i) {
        const double x = (*va)[i], y = (*vb)[i];
        if (x == y || (std::isnan(x) && std::isnan(y))) continue;
        ++d.elements_differing;
        const double delta = std::fabs(x - y);
        max_diff = std::isfinite(delta) ? std::max(max_diff, delta)
                                        : std::numeric_limits<double>::infinity();
      }
      d.max_abs_diff = max_diff;
    } else {  // strings and complex numbers: element by element
      VisitDType(ta.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto sa = ta.data<T>(), sb = tb.data<T>();
        for (size_t i = 0; i < sa.size(); ++i) d.elements_differing += !(sa[i] == sb[i]);
      });
    }
    if (d.elements_differing == 0) {  // e.g. -0.0 vs 0.0: bytes differ, values equal
      d.kind = TensorDifference::Kind::kSame;
      d.max_abs_diff.reset();
    } else {
      d.detail = "values";
    }
    diff.push_back(std::move(d));
  }
  return diff;
}

bool HasDifferences(const std::vector<TensorDifference>& diff) {
  return std::any_of(diff.begin(), diff.end(), [](const TensorDifference& d) {
    return d.kind != TensorDifference::Kind::kSame;
  });
}

void PrintCheckpointDiff(const BundleReader& a, const BundleReader& b,
                         const std::vector<TensorDifference>& diff, bool json, std::ostream& out) {
  static constexpr const char* kKindNames[] = {"added", "removed", "changed", "same"};
  int64_t counts[4] = {};
  for (const TensorDifference& d : diff) ++counts[static_cast<int>(d.kind)];
  if (json) {
    out << "{\"a\":" << JsonString(ckpt_tool::ShownPrefix(a))
        << ",\"b\":" << JsonString(ckpt_tool::ShownPrefix(b)) << ",\"added\":" << counts[0]
        << ",\"removed\":" << counts[1] << ",\"changed\":" << counts[2] << ",\"same\":" << counts[3]
        << ",\"tensors\":[";
    bool first = true;
    for (const TensorDifference& d : diff) {
      out << (first ? "" : ",") << "{\"key\":" << JsonString(d.key) << ",\"status\":\""
          << kKindNames[static_cast<int>(d.kind)] << "\""
          << ",\"a\":" << (d.a_type.empty() ? "null" : JsonString(d.a_type))
          << ",\"b\":" << (d.b_type.empty() ? "null" : JsonString(d.b_type))
          << ",\"max_abs_diff\":" << JsonNumber(d.max_abs_diff);
      if (d.max_abs_diff && !std::isfinite(*d.max_abs_diff))
        out << ",\"max_abs_diff_text\":\"inf\"";
      out << ",\"elements_differing\":" << d.elements_differing
          << ",\"detail\":" << JsonString(d.detail) << "}";
      first = false;
    }
    out << "]}\n";
    return;
  }
  out << "--- " << ckpt_tool::ShownPrefix(a) << "\n+++ " << ckpt_tool::ShownPrefix(b) << "\n";
  for (const TensorDifference& d : diff) {
    switch (d.kind) {
      case TensorDifference::Kind::kSame:
        continue;
      case TensorDifference::Kind::kAdded:
        out << "+ " << d.key << "  " << d.b_type << "\n";
        break;
      case TensorDifference::Kind::kRemoved:
        out << "- " << d.key << "  " << d.a_type << "\n";
        break;
      case TensorDifference::Kind::kChanged:
        out << "~ " << d.key << "  ";
        if (d.a_type != d.b_type) {
          out << d.a_type << " -> " << d.b_type;
        } else {
          out << d.a_type;
        }
        if (d.max_abs_diff) out << "  max_abs_diff " << ShortestNumber(*d.max_abs_diff);
        if (d.elements_differing > 0) out << "  " << d.elements_differing << " elements differ";
        if (!d.detail.empty() && d.detail != "values") out << "  (" << d.detail << ")";
        out << "\n";
        break;
    }
  }
  out << counts[0] << " added, " << counts[1] << " removed, " << counts[2] << " changed, "
      << counts[3] << " same\n";
}

// ---- stats -----------------------------------------------------------------

std::vector<TensorStatistics> ComputeTensorStatistics(const BundleReader& reader) {
  std::vector<TensorStatistics> all;
  for (const std::string& key : reader.Keys()) {
    const BundleReader::Entry& entry = reader.GetEntry(key);
    TensorStatistics s;
    s.key = key;
    s.dtype = DTypeString(entry);
    s.dims = entry.dims;
    s.elements = entry.num_elements();
    s.unreadable = UnreadableReason(reader, entry);
    if (s.unreadable.empty()) {
      const std::optional<std::vector<double>> values = AsDoubles(reader.Read(key));
      s.numeric = values.has_value();
      if (values) {
        double sum = 0;
        int64_t finite = 0;
        for (const double v : *values) {
          if (std::isnan(v)) {
            ++s.nan_count;
          } else if (std::isinf(v)) {
            ++s.inf_count;
          } else {
            s.min = s.min ? std::min(*s.min, v) : v;
            s.max = s.max ? std::max(*s.max, v) : v;
            sum += v;
            ++finite;
          }
        }
        if (finite > 0) s.mean = sum / static_cast<double>(finite);
      }
    }
    all.push_back(std::move(s));
  }
  return all;
}

void PrintTensorStatistics(const BundleReader& reader, const std::vector<TensorStatistics>& stats,
                           bool json, std::ostream& out) {
  if (json) {
    out << "{\"prefix\":" << JsonString(ckpt_tool::ShownPrefix(reader)) << ",\"tensors\":[";
    for (size_t i = 0; i < stats.size(); ++i) {
      const TensorStatistics& s = stats[i];
      out << (i ? "," : "") << "{\"key\":" << JsonString(s.key)
          << ",\"dtype\":" << JsonString(s.dtype) << ",\"shape\":" << JsonDims(s.dims)
          << ",\"elements\":" << s.elements << ",\"min\":" << JsonNumber(s.min)
          << ",\"max\":" << JsonNumber(s.max) << ",\"mean\":" << JsonNumber(s.mean)
          << ",\"nan\":" << s.nan_count << ",\"inf\":" << s.inf_count
          << ",\"unreadable\":" << (s.unreadable.empty() ? "null" : JsonString(s.unreadable))
          << "}";
    }
    out << "]}\n";
    return;
  }
  out << ckpt_tool::ShownPrefix(reader) << ": " << stats.size() << " tensors\n";
  out << "key  dtype  shape  min  max  mean  nan  inf\n";
  for (const TensorStatistics& s : stats) {
    out << s.key << "  " << s.dtype << "  " << JsonDims(s.dims) << "  ";
    if (!s.unreadable.empty()) {
      out << "(not read: " << s.unreadable << ")\n";
    } else if (!s.numeric) {
      out << "-  -  -  -  -\n";
    } else {
      auto opt = [](std::optional<double> v) { return v ? ShortestNumber(*v) : std::string("-"); };
      out << opt(s.min) << "  " << opt(s.max) << "  " << opt(s.mean) << "  " << s.nan_count << "  "
          << s.inf_count << "\n";
    }
  }
}

// ---- graph -----------------------------------------------------------------

std::vector<ObjectGraphNode> DescribeObjectGraph(const BundleReader& reader) {
  const std::optional<internal::SavedObjectGraph> read = internal::ReadObjectGraph(reader);
  if (!read) {
    throw NotFoundError(StrCat("Checkpoint ", ckpt_tool::ShownPrefix(reader), " has no ",
                               kObjectGraphKey,
                               ": it is name-based (tf.compat.v1.train.Saver), not "
                               "object-based, so it has no object graph"));
  }
  return DescribeObjectGraph(*read, reader);
}

std::vector<ObjectGraphNode> DescribeObjectGraph(const internal::SavedObjectGraph& graph,
                                                 const BundleReader& reader) {
  std::vector<ObjectGraphNode> nodes(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const internal::SavedObjectGraph::Node& in = graph.nodes[i];
    ObjectGraphNode& node = nodes[i];
    node.id = static_cast<int>(i);
    for (const auto& c : in.children) node.children.push_back({c.local_name, c.node_id});
    for (const auto& a : in.attributes) {
      node.attributes.push_back({a.name, a.full_name, a.checkpoint_key,
                                 reader.Contains(a.checkpoint_key)
                                     ? TypeString(reader.GetEntry(a.checkpoint_key))
                                     : std::string("(not in the bundle)")});
    }
    for (const auto& s : in.slot_variables) {
      node.slot_variables.push_back(
          {s.slot_name, s.original_variable_node_id, s.slot_variable_node_id});
    }
  }
  // Only each node's first-path parent is kept (SavedObjectNames); paths
  // are spelled out when printed.
  const internal::SavedObjectNames names(graph);
  for (ObjectGraphNode& node : nodes) {
    node.parent = names.parent(node.id);
    node.parent_edge = names.parent_edge(node.id);
  }
  for (const ObjectGraphNode& optimizer : nodes) {
    for (size_t k = 0; k < optimizer.slot_variables.size(); ++k) {
      ObjectGraphNode& slot =
          nodes[static_cast<size_t>(optimizer.slot_variables[k].slot_variable_node_id)];
      if (slot.id == 0 || slot.parent >= 0 || slot.slot_optimizer >= 0) continue;
      slot.slot_optimizer = optimizer.id;
      slot.slot_entry = static_cast<int>(k);
    }
  }
  return nodes;
}

namespace {

// What `eager-ckpt graph` prints is linear in the graph (issue 37: a
// 50,000-deep chain printed 2.5 GB): a printed path keeps its last
// kShownComponents names, each cut at kShownNameBytes, and says how many
// levels it left out; indentation stops deepening at kShownIndentLevels,
// deeper lines saying their depth.
constexpr size_t kShownComponents = 16;
constexpr size_t kShownNameBytes = 64;
constexpr size_t kShownIndentLevels = 32;

std::string ShownName(const std::string& name) {
  return name.size() <= kShownNameBytes ? name : name.substr(0, kShownNameBytes) + "...";
}

// Each node's depth on its first path (0 for the root and for nodes no path
// reaches), in one pass: every node's depth is set once.
std::vector<size_t> TreeDepths(const std::vector<ObjectGraphNode>& nodes) {
  constexpr size_t kUnknown = static_cast<size_t>(-1);
  std::vector<size_t> depth(nodes.size(), kUnknown);
  std::vector<int> chain;
  for (size_t i = 0; i < nodes.size(); ++i) {
    int at = static_cast<int>(i);
    while (depth[static_cast<size_t>(at)] == kUnknown && at != 0 &&
           nodes[static_cast<size_t>(at)].parent >= 0) {
      chain.push_back(at);
      at = nodes[static_cast<size_t>(at)].parent;
    }
    size_t d = depth[static_cast<size_t>(at)] == kUnknown ? 0 : depth[static_cast<size_t>(at)];
    depth[static_cast<size_t>(at)] = d;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[static_cast<size_t>(*it)] = ++d;
    chain.clear();
  }
  return depth;
}

// The path by parent links only; "" when no path reaches `id`. With
// `depths` (TreeDepths) it is bounded as printed paths are; without, whole.
std::string TreePath(const std::vector<ObjectGraphNode>& nodes, int id,
                     const std::vector<size_t>* depths) {
  if (id != 0 && nodes[static_cast<size_t>(id)].parent < 0) return "";
  const size_t most = depths != nullptr ? kShownComponents : std::numeric_limits<size_t>::max();
  std::vector<const std::string*> names;  // leaf first
  int at = id;
  while (at != 0 && names.size() < most) {
    const ObjectGraphNode& n = nodes[static_cast<size_t>(at)];
    names.push_back(&nodes[static_cast<size_t>(n.parent)]
                         .children[static_cast<size_t>(n.parent_edge)]
                         .local_name);
    at = n.parent;
  }
  std::string out = "(root)";
  if (at != 0) out += StrCat(".(", (*depths)[static_cast<size_t>(at)], " more levels)");
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    out.append(".").append(depths != nullptr ? ShownName(**it) : **it);
  }
  return out;
}

// ObjectGraphPath, bounded as TreePath is when `depths` is given.
std::string PathOf(const std::vector<ObjectGraphNode>& nodes, int id,
                   const std::vector<size_t>* depths) {
  std::string path = TreePath(nodes, id, depths);
  if (!path.empty()) return path;
  const ObjectGraphNode& n = nodes[static_cast<size_t>(id)];
  auto named = [&](int node) {
    std::string name = TreePath(nodes, node, depths);
    return name.empty() ? StrCat("(unreachable node ", node, ")") : name;
  };
  if (n.slot_optimizer >= 0) {
    const ObjectGraphNode::Slot& s = nodes[static_cast<size_t>(n.slot_optimizer)]
                                         .slot_variables[static_cast<size_t>(n.slot_entry)];
    return StrCat(named(n.slot_optimizer), "'s state '",
                  depths != nullptr ? ShownName(s.slot_name) : s.slot_name, "' for ",
                  named(s.original_variable_node_id));
  }
  return StrCat("(unreachable node ", id, ")");
}

}  // namespace

std::string ObjectGraphPath(const std::vector<ObjectGraphNode>& nodes, int id) {
  return PathOf(nodes, id, nullptr);
}

void PrintObjectGraph(const BundleReader& reader, const std::vector<ObjectGraphNode>& nodes,
                      bool json, std::ostream& out) {
  const std::vector<size_t> depths = TreeDepths(nodes);
  if (json) {
    out << "{\"prefix\":" << JsonString(ckpt_tool::ShownPrefix(reader)) << ",\"nodes\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      const ObjectGraphNode& n = nodes[i];
      out << (i ? "," : "") << "{\"id\":" << n.id
          << ",\"path\":" << JsonString(PathOf(nodes, n.id, &depths)) << ",\"parent\":" << n.parent
          << ",\"children\":[";
      for (size_t k = 0; k < n.children.size(); ++k) {
        out << (k ? "," : "") << "{\"local_name\":" << JsonString(n.children[k].local_name)
            << ",\"node_id\":" << n.children[k].node_id << "}";
      }
      out << "],\"attributes\":[";
      for (size_t k = 0; k < n.attributes.size(); ++k) {
        const ObjectGraphNode::Attribute& a = n.attributes[k];
        out << (k ? "," : "") << "{\"name\":" << JsonString(a.name)
            << ",\"full_name\":" << JsonString(a.full_name)
            << ",\"checkpoint_key\":" << JsonString(a.checkpoint_key)
            << ",\"type\":" << JsonString(a.type) << "}";
      }
      out << "],\"slot_variables\":[";
      for (size_t k = 0; k < n.slot_variables.size(); ++k) {
        const ObjectGraphNode::Slot& s = n.slot_variables[k];
        out << (k ? "," : "") << "{\"slot_name\":" << JsonString(s.slot_name)
            << ",\"original_variable_node_id\":" << s.original_variable_node_id
            << ",\"slot_variable_node_id\":" << s.slot_variable_node_id << "}";
      }
      out << "]}";
    }
    out << "]}\n";
    return;
  }
  out << ckpt_tool::ShownPrefix(reader) << ": object graph of " << nodes.size() << " nodes\n";
  auto attributes = [&](const ObjectGraphNode& n, const std::string& indent) {
    for (const ObjectGraphNode::Attribute& a : n.attributes) {
      out << indent << "  ." << a.name << " = " << a.checkpoint_key << "  " << a.type;
      if (!a.full_name.empty()) out << "  (" << a.full_name << ")";
      out << "\n";
    }
  };
  // Depth first without recursion (a crafted chain is as deep as it is
  // long): each frame is a node, its depth and the next child edge to show.
  struct Frame {
    int id;
    size_t depth;
    size_t next;
  };
  out << "(root)  #0\n";
  attributes(nodes[0], "");
  std::vector<Frame> stack = {{0, 0, 0}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    const ObjectGraphNode& n = nodes[static_cast<size_t>(top.id)];
    if (top.next == n.children.size()) {
      stack.pop_back();
      continue;
    }
    const size_t k = top.next++;
    const ObjectGraphNode::Child& c = n.children[k];
    const ObjectGraphNode& child = nodes[static_cast<size_t>(c.node_id)];
    std::string indent(2 * std::min(top.depth, kShownIndentLevels), ' ');
    if (top.depth > kShownIndentLevels) indent += StrCat("[depth ", top.depth + 1, "] ");
    if (child.parent == n.id && child.parent_edge == static_cast<int>(k)) {
      out << indent << "  " << c.local_name << "  #" << c.node_id << "\n";
      attributes(child, indent + "  ");
      stack.push_back({c.node_id, top.depth + 1, 0});  // `top` is not used after this
    } else {
      out << indent << "  " << c.local_name << " -> " << PathOf(nodes, c.node_id, &depths) << "  #"
          << c.node_id << "\n";
    }
  }
  bool header = false;
  for (const ObjectGraphNode& optimizer : nodes) {
    for (const ObjectGraphNode::Slot& s : optimizer.slot_variables) {
      if (!header) out << "slot variables:\n";
      header = true;
      const ObjectGraphNode& slot = nodes[static_cast<size_t>(s.slot_variable_node_id)];
      out << "  " << PathOf(nodes, slot.id, &depths) << "  #" << slot.id << "\n";
      attributes(slot, "  ");
    }
  }
}

}  // namespace eager
