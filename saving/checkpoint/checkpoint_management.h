#pragma once

// The free functions of TensorFlow's checkpoint_management module, for
// programs that manage checkpoint files themselves (tf.train.
// get_checkpoint_state and tf.compat.v1.train.checkpoint_exists,
// get_checkpoint_mtimes, remove_checkpoint). Each behaves as its TF
// namesake, failures included.
//
//   if (auto state = eager::GetCheckpointState("./run")) {
//     for (const std::string& prefix : state->all_model_checkpoint_paths) ...
//   }
//   if (eager::CheckpointExists("./run/ckpt-3")) eager::RemoveCheckpoint("./run/ckpt-3");

#include <optional>
#include <string>
#include <vector>

#include "saving/bundle/checkpoint_state.h"

namespace eager {

// tf.train.get_checkpoint_state: `checkpoint_dir`/`latest_filename` parsed,
// with relative paths (model_checkpoint_path and all_model_checkpoint_paths)
// joined onto checkpoint_dir and absolute ones kept. As TF:
//  - no such file: nullopt;
//  - a file that cannot be read or parsed (e.g. cut off inside a string):
//    nullopt, after a warning on stderr naming the file and the error;
//  - a file that parses but has no model_checkpoint_path (an empty file, or
//    one listing only all_model_checkpoint_paths): InvalidArgumentError
//    "Invalid checkpoint state loaded from <checkpoint_dir>" (TF's
//    ValueError).
std::optional<CheckpointState> GetCheckpointState(
    const std::string& checkpoint_dir, const std::string& latest_filename = "checkpoint");

// tf.compat.v1.train.checkpoint_exists: whether PREFIX.index (V2) or the
// file PREFIX itself (V1) exists.
bool CheckpointExists(const std::string& checkpoint_prefix);

// tf.compat.v1.train.get_checkpoint_mtimes: the modification times, in
// seconds since the epoch (nanosecond resolution), of PREFIX.index, or for
// V1 of PREFIX, for each prefix that has one, in order. A prefix without a
// checkpoint is skipped, so the result may be shorter than the input (as TF).
std::vector<double> GetCheckpointMtimes(const std::vector<std::string>& checkpoint_prefixes);

enum class CheckpointFormat { kV1, kV2 };

// tf.compat.v1.train.remove_checkpoint: deletes the checkpoint's MetaGraph
// file (PREFIX.meta; a sharded V1 name's "-NNNNN-of-NNNNN" dropped first) and
// for V2 PREFIX.index and every PREFIX.data-NNNNN-of-NNNNN, for V1 the file
// PREFIX. Missing files are fine; nothing else is touched.
void RemoveCheckpoint(const std::string& checkpoint_prefix,
                      CheckpointFormat format = CheckpointFormat::kV2,
                      const std::string& meta_graph_suffix = "meta");

}  // namespace eager
