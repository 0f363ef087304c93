#include "saving/saver/saver.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/live_variables.h"
#include "runtime/tensor_access.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_retention.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/saver/internal/closest_keys.h"
#include "saving/saver/internal/function_library_reader.h"
#include "saving/saver/internal/save_restore_nodes.h"
#include "saving/saver/internal/saver_for_imported_graph.h"
#include "saving/saver/internal/tf_op_defs.h"
#include "saving/saver/meta_graph_import_export.h"

namespace eager {
namespace {

namespace fs = std::filesystem;

// TF1's Saver.restore wraps the RestoreV2 kernel's NotFound in this.
constexpr const char* kRestoreFailed =
    "Restoring from checkpoint failed. This is most likely due to a Variable name or other graph "
    "key that is missing from the checkpoint. Please ensure that you have not altered the graph "
    "expected based on the checkpoint. Original error:\n\n";

// TF1's Saver.restore wraps an InvalidArgument of the restore ops in this.
constexpr const char* kRestoreMismatch =
    "Restoring from checkpoint failed. This is most likely due to a mismatch between the current "
    "graph and the graph from the checkpoint. Please ensure that you have not altered the graph "
    "expected based on the checkpoint. Original error:\n\n";

// TF's DataTypeString: "float", "double", "int32", ...
std::string TfTypeString(DType dtype) {
  std::string name = TfDataTypeName(TfDataType(dtype)).substr(3);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// "{:08d}", as TF's pad_step_number.
std::string PaddedStep(int64_t step) {
  std::ostringstream out;
  out << std::setw(8) << std::setfill('0') << std::internal << step;
  return out.str();
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::map<std::string, Variable*> KeyedByName(const std::vector<Variable*>& var_list) {
  std::map<std::string, Variable*> out;
  for (size_t i = 0; i < var_list.size(); ++i) {
    Variable* v = var_list[i];
    EAGER_CHECK(v != nullptr, "Saver: var_list[", i, "] is a null Variable pointer");
    const std::string key(v->shared_name());
    if (!out.emplace(key, v).second) {
      throw InvalidArgumentError(StrCat("At least two variables have the same name: ", key));
    }
  }
  return out;
}

std::map<std::string, Variable*> CheckedMap(const std::map<std::string, Variable*>& var_map) {
  std::map<const Variable*, std::string> key_of;
  for (const auto& [key, v] : var_map) {
    EAGER_CHECK(!key.empty(), "Saver: a checkpoint key in the rename map is empty");
    EAGER_CHECK(v != nullptr, "Saver: the variable for checkpoint key '", key,
                "' is a null pointer");
    auto [it, inserted] = key_of.emplace(v, key);
    EAGER_CHECK(inserted, "The same saveable will be restored with two names: ", v->shared_name(),
                " (Saver: the variable is listed under two keys, '", it->second, "' and '", key,
                "')");
  }
  return var_map;
}

std::string Describe(const internal::KeySpec& spec) {
  std::ostringstream out;
  if (spec.dtype) {
    out << *spec.dtype;
  } else {
    out << "(a dtype eager does not support)";
  }
  out << " " << DimsToString(spec.dims);
  return out.str();
}

internal::KeySpec SpecOf(const std::string& key, const Variable& v) {
  return {key, v.dtype(), v.shape().ToVector()};
}

internal::KeySpec SpecOf(const std::string& key, const BundleReader::Entry& e) {
  return {key, e.dtype, e.dims};
}

// A C++ identifier to stand for variable `v` in a suggested rename map.
std::string Identifier(const Variable& v) {
  std::string id(v.shared_name());
  for (char& c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "v_" + id;
  return id;
}

// The NotFoundError for keys of `variables` absent from `reader`.
std::string MissingKeysMessage(const std::map<std::string, Variable*>& variables,
                               const std::vector<std::string>& missing,
                               const BundleReader& reader) {
  std::ostringstream out;
  out << kRestoreFailed;
  for (const std::string& key : missing) out << "Key " << key << " not found in checkpoint\n";

  std::vector<internal::KeySpec> present;
  for (const std::string& key : reader.Keys()) present.push_back(SpecOf(key, reader.GetEntry(key)));
  std::set<std::string> taken;  // keys other variables of this Saver restore
  std::vector<internal::KeySpec> wanted;
  for (const auto& [key, v] : variables) {
    if (reader.Contains(key)) {
      taken.insert(key);
    } else {
      wanted.push_back(SpecOf(key, *v));
    }
  }

  out << "\nClosest keys in checkpoint " << reader.prefix() << " (by scope parts, dtype, shape):\n";
  for (const internal::KeySpec& w : wanted) {
    out << "  " << w.key << " (" << Describe(w) << "): ";
    const std::vector<internal::KeyCandidate> close = internal::ClosestKeys(w, present, taken);
    if (close.empty()) out << "no unused key left";
    for (size_t i = 0; i < close.size(); ++i) {
      const auto& e = reader.GetEntry(close[i].key);
      out << (i ? ", " : "") << close[i].key << " (" << Describe(SpecOf(close[i].key, e)) << ")";
    }
    out << "\n";
  }

  const std::map<std::string, std::string> renames =
      internal::ProposeRenames(wanted, present, taken);
  if (renames.size() == wanted.size()) {
    // The whole map, checkpoint key -> variable, sorted by checkpoint key.
    std::map<std::string, const Variable*> map;
    for (const auto& [key, v] : variables) {
      auto it = renames.find(key);
      map.emplace(it == renames.end() ? key : it->second, v);
    }
    out << "\nThis rename map (checkpoint key -> your variable, each &name standing for that "
           "variable) restores every variable of this Saver:\n  eager::Saver saver({";
    bool first = true;
    for (const auto& [key, v] : map) {
      out << (first ? "" : ", ") << "{\"" << key << "\", &" << Identifier(*v) << "}";
      first = false;
    }
    out << "});";
  } else {
    out << "\nNo rename map restores every variable: no unused key of the same dtype and shape "
           "is left for";
    for (const internal::KeySpec& w : wanted) {
      if (renames.count(w.key) == 0) out << " " << w.key;
    }
    out << ".";
  }
  return out.str();
}

// The path as TF1's Saver writes it into the state file of `save_dir`:
// relative paths re-expressed relative to a relative save_dir, absolute ones
// kept unless save_relative_paths (generate_checkpoint_state_proto).
std::string StoredPath(const std::string& path, const std::string& save_dir,
                       bool save_relative_paths) {
  const std::string dir = save_dir.empty() ? "." : save_dir;
  const bool absolute = fs::path(path).is_absolute();
  if ((!absolute && !fs::path(dir).is_absolute()) || (absolute && save_relative_paths)) {
    const fs::path rel = fs::absolute(path).lexically_normal().lexically_relative(
        fs::absolute(dir).lexically_normal());
    if (!rel.empty()) return rel.string();
  }
  return path;
}

// The variables Saver(options) covers: those the SaverDef's restore op
// assigns, else every global variable of the default graph, else every live
// variable.
std::map<std::string, Variable*> DefaultVariables(const SaverOptions& options) {
  Graph* graph = Graph::Current();
  if (options.saver_def) {
    EAGER_CHECK(graph != nullptr,
                "Saver: a saver_def names nodes of a graph; make the Saver with a Graph as the "
                "default (eager::Graph::AsDefault)");
    const MetaSaverDef def = internal::ScopedSaverDef(*options.saver_def, options.name);
    EAGER_CHECK(!def.save_tensor_name.empty(),
                "saver_def must specify the save_tensor_name (Saver options.saver_def)");
    EAGER_CHECK(!def.restore_op_name.empty(),
                "saver_def must specify the restore_op_name (Saver options.saver_def)");
    EAGER_CHECK(graph->FindNode(def.restore_op_name) != nullptr, "Saver: saver_def's restore op '",
                def.restore_op_name, "' is not a node of the default graph");
    return internal::VariablesRestoredBy(*graph, def.restore_op_name);
  }
  return KeyedByName(graph != nullptr ? graph->GlobalVariables() : LiveVariables());
}

}  // namespace

Saver::Saver() : Saver(SaverOptions{}) {}

Saver::Saver(const SaverOptions& options) : Saver(DefaultVariables(options), options) {
  if (options_.saver_def) {
    imported_saver_def_ = internal::ScopedSaverDef(*options_.saver_def, options_.name);
  }
}

Saver::Saver(const std::vector<Variable*>& var_list, SaverOptions options)
    : Saver(KeyedByName(var_list), std::move(options)) {}

Saver::Saver(const std::map<std::string, Variable*>& var_map, SaverOptions options)
    : variables_(CheckedMap(var_map)),
      options_(std::move(options)),
      next_checkpoint_time_(Now() + options_.keep_checkpoint_every_n_hours * 3600.0),
      graph_(Graph::Current()) {
  EAGER_CHECK(!options_.max_to_keep || *options_.max_to_keep >= 0,
              "Saver: max_to_keep must be >= 0 (0 or unset keeps all), got ",
              *options_.max_to_keep);
  EAGER_CHECK(!variables_.empty() || options_.allow_empty, "No variables to save (Saver: ",
              graph_ != nullptr ? "no global variable in the default graph"
                                : "no live variable in the default name registry",
              ", or an empty list; SaverOptions::allow_empty makes an empty Saver)");
  // TF's Saver opens the name scope "save" (made unique) for its nodes, and
  // adds them to its graph: another Saver of the graph can then be made from
  // this one's SaverDef (TF's Saver(saver_def=saver.as_saver_def())).
  if (graph_ != nullptr && !options_.saver_def) {
    // An imported graph may hold another Saver's "save/..." nodes without
    // "save" being a used name: the next unique scope whose nodes are free.
    MetaGraphNodes nodes;
    MetaSaverDef def;
    const auto taken = [&](const MetaGraphNode& n) { return graph_->FindNode(n.name) != nullptr; };
    do {
      scope_ = graph_->UniqueName(options_.name.empty() ? "save" : options_.name) + "/";
      nodes.clear();
      def = internal::AppendSaverNodes(nodes, scope_, SaverVariables(), MaxToKeepForDef(),
                                       static_cast<float>(options_.keep_checkpoint_every_n_hours));
    } while (std::any_of(nodes.begin(), nodes.end(), taken));
    // The same subgraph saves a sharded checkpoint: eager's writer merges
    // the shards itself, so TF's restore op and save tensor work unchanged.
    def.sharded = options_.sharded;
    for (MetaGraphNode& node : nodes) graph_->AddNode(internal::GraphNodeFromMeta(std::move(node)));
    own_saver_def_ = std::move(def);
  }
}

Saver::~Saver() = default;

std::string Saver::Save(const std::string& save_path, std::optional<int64_t> global_step) {
  EAGER_CHECK(!save_path.empty(), "Saver::Save: save_path must not be empty");
  EAGER_CHECK(fs::path(options_.latest_filename).filename() == options_.latest_filename,
              "'latest_filename' must not contain path components: '", options_.latest_filename,
              "'");
  std::string prefix = save_path;
  if (global_step) {
    prefix = options_.pad_step_number ? StrCat(save_path, "-", PaddedStep(*global_step))
                                      : StrCat(save_path, "-", *global_step);
  } else if (!options_.sharded && fs::path(save_path).filename() == options_.latest_filename) {
    // The bundle's files would sit beside the state file under its name.
    throw InvalidArgumentError(StrCat("'latest_filename' collides with 'save_path': '",
                                      options_.latest_filename, "' and '", save_path,
                                      "' (Saver::Save: choose another prefix; the state file of ",
                                      "the directory has that name)"));
  }
  if (variables_.empty()) return "";  // allow_empty: TF writes nothing and returns None
  // Every value first: an uninitialized variable throws before a file exists.
  std::vector<std::pair<std::string, Tensor>> values;
  values.reserve(variables_.size());
  for (const auto& [key, v] : variables_) {
    values.emplace_back(key, v->in_graph() ? v->stored_value() : v->value());
  }
  // One lock over the bundle, the meta graph, the state file and retention.
  const std::string dir = internal::DirName(prefix);
  internal::CreateDirectories(dir);
  const internal::DirectoryLock lock(dir);
  BundleWriter writer(prefix, BundleWriterOptions{.num_shards = NumShards()});
  for (const auto& [key, value] : values) writer.Add(key, value);  // sorted, as SaveV2
  writer.Finish();
  // The meta graph before the state file: the state file names a complete
  // checkpoint.
  if (graph_ != nullptr && options_.write_meta_graph) WriteMetaGraphFile(prefix + ".meta");
  RecordAndUpdateState(prefix);
  return prefix;
}

std::string Saver::Save(const std::string& save_path, const Variable& global_step) {
  const Tensor step = global_step.in_graph() ? global_step.stored_value() : global_step.value();
  EAGER_CHECK(
      step.num_elements() == 1 && (step.dtype() == DType::kInt32 || step.dtype() == DType::kInt64),
      "Saver::Save: global_step ", global_step.shared_name(),
      " must be an int32 or int64 scalar, got ", step.dtype(), " of shape ", step.shape());
  const int64_t n = step.dtype() == DType::kInt32 ? step.scalar<int32_t>() : step.scalar<int64_t>();
  return Save(save_path, n);
}

void Saver::RecordAndUpdateState(const std::string& prefix) {
  // _RecordLastCheckpoint: a re-used prefix moves to the end; beyond
  // max_to_keep the oldest waits for deletion.
  if (options_.max_to_keep && *options_.max_to_keep > 0) {
    std::erase_if(last_checkpoints_, [&](const Kept& k) { return k.prefix == prefix; });
    last_checkpoints_.push_back({prefix, Now()});
    if (static_cast<int>(last_checkpoints_.size()) > *options_.max_to_keep) {
      to_be_deleted_.push_back(last_checkpoints_.front());
      last_checkpoints_.erase(last_checkpoints_.begin());
    }
  }
  // The state file, durably, before anything is deleted.
  const std::string save_dir = fs::path(prefix).parent_path().string();
  CheckpointState state;
  state.model_checkpoint_path = StoredPath(prefix, save_dir, options_.save_relative_paths);
  for (const Kept& k : last_checkpoints_) {
    state.all_model_checkpoint_paths.push_back(
        StoredPath(k.prefix, save_dir, options_.save_relative_paths));
  }
  if (state.all_model_checkpoint_paths.empty() ||
      state.all_model_checkpoint_paths.back() != state.model_checkpoint_path) {
    state.all_model_checkpoint_paths.push_back(state.model_checkpoint_path);
  }
  WriteCheckpointState(save_dir.empty() ? "." : save_dir, state, options_.latest_filename);
  // _MaybeDeleteOldCheckpoints: at most one per save; one per
  // keep_checkpoint_every_n_hours is kept for good.
  if (!to_be_deleted_.empty()) {
    const Kept oldest = to_be_deleted_.front();
    to_be_deleted_.erase(to_be_deleted_.begin());
    if (oldest.time > next_checkpoint_time_) {
      next_checkpoint_time_ += options_.keep_checkpoint_every_n_hours * 3600.0;
    } else {
      internal::DeleteCheckpointFiles(oldest.prefix, /*meta=*/true);
    }
  }
}

void Saver::CheckSessionGraph(const Graph* graph) const {
  EAGER_CHECK(graph_ != nullptr,
              "Saver: this Saver was made in eager mode; call Save(path) / "
              "Restore(path) without a Session");
  EAGER_CHECK(graph == graph_,
              "Saver: the Session runs another graph than the one this Saver "
              "was made in");
}

MetaSaverDef Saver::saver_def() const {
  if (imported_saver_def_) return *imported_saver_def_;
  if (own_saver_def_) return *own_saver_def_;
  MetaGraphNodes ignored;
  MetaSaverDef def =
      internal::AppendSaverNodes(ignored, scope_, SaverVariables(), MaxToKeepForDef(),
                                 static_cast<float>(options_.keep_checkpoint_every_n_hours));
  def.sharded = options_.sharded;
  return def;
}

void Saver::WriteMetaGraphFile(const std::string& path) const {
  // The SaverDef's nodes are in the graph already: this Saver's (added when
  // it was made) or an imported one's.
  MetaGraph meta = GraphToMetaGraph(*graph_);
  if (imported_saver_def_) {
    meta.saver_def = imported_saver_def_;
  } else {
    meta.saver_def = own_saver_def_;
    meta.stripped_op_list = internal::StrippedOpList(meta.nodes);
  }
  WriteMetaGraph(path, meta);
}

std::vector<internal::SaverGraphVariable> Saver::SaverVariables() const {
  std::vector<internal::SaverGraphVariable> out;
  for (const auto& [key, v] : variables_) {
    out.push_back(
        {key, std::string(v->shared_name()), TfDataType(v->dtype()), v->shape().ToVector()});
  }
  return out;
}

int Saver::MaxToKeepForDef() const { return options_.max_to_keep.value_or(0); }

int Saver::NumShards() const {
  if (!options_.sharded) return 1;
  // One shard per device, as TF's _GroupByDevices; variables without a
  // device (every eager one) share one.
  std::set<std::string> devices;
  for (const auto& [key, v] : variables_) {
    const GraphVariable* record = graph_ != nullptr ? graph_->FindVariable(v) : nullptr;
    const Node* node = record != nullptr ? graph_->FindNode(record->variable_node) : nullptr;
    devices.insert(node != nullptr ? node->device : "");
  }
  return std::max<int>(1, static_cast<int>(devices.size()));
}

void Saver::SetLastCheckpoints(const std::vector<std::string>& prefixes) {
  std::vector<std::pair<std::string, double>> with_time;
  with_time.reserve(prefixes.size());
  for (const std::string& p : prefixes) {
    with_time.emplace_back(p, std::numeric_limits<double>::infinity());
  }
  SetLastCheckpointsWithTime(with_time);
}

void Saver::SetLastCheckpointsWithTime(
    const std::vector<std::pair<std::string, double>>& checkpoints) {
  last_checkpoints_.clear();
  for (const auto& [prefix, time] : checkpoints) last_checkpoints_.push_back({prefix, time});
}

std::vector<std::string> Saver::last_checkpoints() const {
  std::vector<std::string> out;
  for (const Kept& k : last_checkpoints_) out.push_back(k.prefix);
  return out;
}

void Saver::Restore(const std::string& save_path) {
  if (variables_.empty()) return;  // allow_empty: TF restores nothing
  EAGER_CHECK(!save_path.empty(),
              "Can't load save_path when it is None (Saver::Restore: an empty "
              "save_path)");
  if (!fs::exists(IndexFilename(save_path))) {
    throw NotFoundError(StrCat("The passed save_path is not a valid checkpoint: ", save_path));
  }
  const BundleReader reader(save_path);

  // Each mismatch in the words of the TF op that reports it (RestoreV2 for a
  // dtype, Assign or, with reshape, Reshape for a shape), then eager's detail.
  std::vector<std::string> missing;
  std::vector<std::string> mismatches;
  for (const auto& [key, v] : variables_) {
    if (!reader.Contains(key)) {
      missing.push_back(key);
      continue;
    }
    const BundleReader::Entry& e = reader.GetEntry(key);
    const internal::KeySpec saved = SpecOf(key, e);
    const internal::KeySpec expected = SpecOf(key, *v);
    std::string tf_words;
    if (saved.dtype != expected.dtype) {
      const std::string original =
          saved.dtype ? TfTypeString(*saved.dtype) : TfDataTypeName(e.tf_dtype);
      tf_words = StrCat("tensor_name = ", key, "; expected dtype ", TfTypeString(v->dtype()),
                        " does not equal original dtype ", original, "; ");
    } else if (saved.dims != expected.dims) {
      if (!options_.reshape) {
        tf_words =
            StrCat("Assign requires shapes of both tensors to match. lhs shape= ",
                   DimsToString(expected.dims), " rhs shape= ", DimsToString(saved.dims), "; ");
      } else if (NumElements(saved.dims) != NumElements(expected.dims)) {
        tf_words =
            StrCat("Input to reshape is a tensor with ", NumElements(saved.dims),
                   " values, but the requested shape has ", NumElements(expected.dims), "; ");
      }
    }
    if (!tf_words.empty()) {
      mismatches.push_back(StrCat(tf_words, "key ", key, " holds ", Describe(saved),
                                  " in checkpoint ", save_path, ", but variable ", v->shared_name(),
                                  " expects ", Describe(expected)));
    }
  }
  if (!missing.empty()) throw NotFoundError(MissingKeysMessage(variables_, missing, reader));
  if (!mismatches.empty()) {
    std::string message = kRestoreMismatch;
    for (const std::string& m : mismatches) message += m + "\n";
    message += "(nothing was assigned)";
    throw InvalidArgumentError(message);
  }

  // Read everything (checksums verified) before assigning anything.
  std::vector<std::pair<Variable*, Tensor>> values;
  values.reserve(variables_.size());
  for (const auto& [key, v] : variables_) {
    Tensor value = reader.Read(key);
    if (options_.reshape && value.shape() != v->shape())
      value = internal::WithShape(value, v->shape());
    values.emplace_back(v, std::move(value));
  }
  for (auto& [v, value] : values) v->Assign(value);
}

}  // namespace eager
