#pragma once

// The `checkpoint` state file that TensorFlow's savers keep in a checkpoint
// directory (FORMAT.md 3): a text-format CheckpointState naming the latest
// checkpoint prefix and the ones still kept, e.g.
//
//   model_checkpoint_path: "ckpt-19"
//   all_model_checkpoint_paths: "ckpt-18"
//   all_model_checkpoint_paths: "ckpt-19"
//   all_model_checkpoint_timestamps: 1673735913.342593
//   all_model_checkpoint_timestamps: 1673736140.596798
//   last_preserved_timestamp: 1673735591.495455

#include <optional>
#include <string>
#include <vector>

namespace eager {

struct CheckpointState {
  std::string model_checkpoint_path{};                    // the latest prefix, as stored
  std::vector<std::string> all_model_checkpoint_paths{};  // oldest first
  std::vector<double> all_model_checkpoint_timestamps{};  // seconds since the epoch
  std::optional<double> last_preserved_timestamp{};

  friend bool operator==(const CheckpointState&, const CheckpointState&) = default;
};

// The text format TF writes: one field per line in field-number order, strings
// quoted with C escapes (non-printable and non-ASCII bytes as 3-digit octal),
// doubles in shortest round-trip form.
std::string CheckpointStateToText(const CheckpointState& state);
// Parses the text format (any field order, `#` comments, C escapes, hex/octal
// escapes, single or double quotes). Throws DataLossError naming `filename`,
// the line and what was expected for anything else, unknown fields included.
CheckpointState ParseCheckpointStateText(const std::string& text,
                                         const std::string& filename = "<checkpoint state>");

// `dir`/`filename` parsed, or nullopt when that file does not exist. Paths are
// returned as stored (not joined with `dir`). Throws DataLossError when the
// file is malformed.
std::optional<CheckpointState> ReadCheckpointState(const std::string& dir,
                                                   const std::string& filename = "checkpoint");

// Writes `dir`/`filename` atomically: to `filename`.tmp<32 hex digits>, fsync,
// rename over the old file, fsync `dir`. On error the temporary file is
// removed and the old state file is untouched. Paths are stored as given.
void WriteCheckpointState(const std::string& dir, const CheckpointState& state,
                          const std::string& filename = "checkpoint");

// tf.train.latest_checkpoint: the prefix of the latest checkpoint in `dir`,
// with a relative model_checkpoint_path joined onto `dir` and an absolute one
// kept. nullopt when there is no state file or when the prefix's files are
// gone (neither PREFIX.index nor, for V1, PREFIX exists). Throws
// DataLossError for a malformed state file or an empty model_checkpoint_path.
std::optional<std::string> LatestCheckpoint(const std::string& dir,
                                            const std::string& filename = "checkpoint");

}  // namespace eager
