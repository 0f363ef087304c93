#include "saving/saver/saver.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/live_variables.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_retention.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/saver/internal/closest_keys.h"
#include "saving/saver/internal/save_restore_nodes.h"
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
    EAGER_CHECK(inserted, "Saver: variable ", v->shared_name(), " is listed under two keys, '",
                it->second, "' and '", key, "'");
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

}  // namespace

Saver::Saver() : Saver(SaverOptions{}) {}

Saver::Saver(const SaverOptions& options)
    : Saver(Graph::Current() != nullptr ? Graph::Current()->GlobalVariables() : LiveVariables(),
            options) {
  EAGER_CHECK(!variables_.empty(), "Saver: there are no variables to save (no ",
              graph_ != nullptr ? "global variable in the default graph"
                                : "live variable in the default name registry",
              ")");
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
  // TF's Saver opens the name scope "save" (made unique) for its nodes.
  if (graph_ != nullptr) scope_ = graph_->UniqueName("save") + "/";
}

Saver::~Saver() = default;

std::string Saver::Save(const std::string& save_path, std::optional<int64_t> global_step) {
  EAGER_CHECK(!save_path.empty(), "Saver::Save: save_path must not be empty");
  std::string prefix = global_step ? StrCat(save_path, "-", *global_step) : save_path;
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
  BundleWriter writer(prefix);
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
  std::vector<MetaGraphNode> ignored;
  return internal::AppendSaverNodes(ignored, scope_, SaverVariables(), MaxToKeepForDef(),
                                    static_cast<float>(options_.keep_checkpoint_every_n_hours));
}

void Saver::WriteMetaGraphFile(const std::string& path) const {
  MetaGraph meta = GraphToMetaGraph(*graph_);
  if (imported_saver_def_) {
    meta.saver_def = imported_saver_def_;  // its nodes are in the graph already
  } else {
    meta.saver_def =
        internal::AppendSaverNodes(meta.nodes, scope_, SaverVariables(), MaxToKeepForDef(),
                                   static_cast<float>(options_.keep_checkpoint_every_n_hours));
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

std::vector<std::string> Saver::last_checkpoints() const {
  std::vector<std::string> out;
  for (const Kept& k : last_checkpoints_) out.push_back(k.prefix);
  return out;
}

void Saver::Restore(const std::string& save_path) {
  EAGER_CHECK(!save_path.empty(), "Can't load save_path when it is empty (None).");
  if (!fs::exists(IndexFilename(save_path))) {
    throw NotFoundError(StrCat("The passed save_path is not a valid checkpoint: ", save_path));
  }
  const BundleReader reader(save_path);

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
    if (saved.dtype != expected.dtype || saved.dims != expected.dims) {
      mismatches.push_back(StrCat("key ", key, " holds ", Describe(saved), " in checkpoint ",
                                  save_path, ", but variable ", v->shared_name(), " expects ",
                                  Describe(expected)));
    }
  }
  if (!missing.empty()) throw NotFoundError(MissingKeysMessage(variables_, missing, reader));
  if (!mismatches.empty()) {
    std::string message = "Restoring from checkpoint failed, nothing was assigned:";
    for (const std::string& m : mismatches) message += "\n  " + m;
    throw InvalidArgumentError(message);
  }

  // Read everything (checksums verified) before assigning anything.
  std::vector<std::pair<Variable*, Tensor>> values;
  values.reserve(variables_.size());
  for (const auto& [key, v] : variables_) values.emplace_back(v, reader.Read(key));
  for (auto& [v, value] : values) v->Assign(value);
}

}  // namespace eager
