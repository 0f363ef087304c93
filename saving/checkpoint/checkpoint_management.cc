#include "saving/checkpoint/checkpoint_management.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "runtime/errors.h"
#include "saving/bundle/checkpoint_retention.h"
#include "saving/bundle/posix_file.h"

namespace eager {
namespace {

namespace fs = std::filesystem;

// os.path.join(dir, path) for the state file's paths.
std::string JoinOnto(const std::string& dir, const std::string& path) {
  if (dir.empty() || path.starts_with('/')) return path;
  return dir.ends_with('/') ? dir + path : dir + "/" + path;
}

// The modification time of the file `path`, or nullopt when there is none.
std::optional<double> MtimeOf(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) / 1e9;
}

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

// TF's meta_graph_filename: "<name>.<suffix>" with a trailing
// "-<digits or ?>-of-<digits>" (a sharded V1 name) removed from <name>.
std::string MetaGraphFilename(const std::string& prefix, const std::string& suffix) {
  std::string base = prefix;
  const size_t of = base.rfind("-of-");
  if (of != std::string::npos && IsDigits(std::string_view(base).substr(of + 4))) {
    const size_t dash = base.rfind('-', of == 0 ? 0 : of - 1);
    if (dash != std::string::npos && dash < of) {
      const std::string_view shard = std::string_view(base).substr(dash + 1, of - dash - 1);
      bool ok = !shard.empty();
      for (const char c : shard) {
        ok = ok && (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '?');
      }
      if (ok) base.resize(dash);
    }
  }
  return base + "." + suffix;
}

}  // namespace

std::optional<CheckpointState> GetCheckpointState(const std::string& checkpoint_dir,
                                                  const std::string& latest_filename) {
  std::optional<CheckpointState> state;
  try {
    state = ReadCheckpointState(checkpoint_dir, latest_filename);
  } catch (const Error& e) {
    // TF logs a read or parse error and answers None.
    std::fprintf(stderr, "WARNING: %s: %s\nWARNING: %s: Checkpoint ignored\n",
                 JoinOnto(checkpoint_dir, latest_filename).c_str(), e.what(),
                 JoinOnto(checkpoint_dir, latest_filename).c_str());
    return std::nullopt;
  }
  if (!state) return std::nullopt;
  if (state->model_checkpoint_path.empty()) {
    throw InvalidArgumentError(StrCat("Invalid checkpoint state loaded from ", checkpoint_dir));
  }
  state->model_checkpoint_path = JoinOnto(checkpoint_dir, state->model_checkpoint_path);
  for (std::string& path : state->all_model_checkpoint_paths) {
    path = JoinOnto(checkpoint_dir, path);
  }
  return state;
}

bool CheckpointExists(const std::string& checkpoint_prefix) {
  std::error_code ec;
  return fs::exists(checkpoint_prefix + ".index", ec) || fs::exists(checkpoint_prefix, ec);
}

std::vector<double> GetCheckpointMtimes(const std::vector<std::string>& checkpoint_prefixes) {
  std::vector<double> mtimes;
  for (const std::string& prefix : checkpoint_prefixes) {
    std::optional<double> mtime = MtimeOf(prefix + ".index");
    if (!mtime) mtime = MtimeOf(prefix);
    if (mtime) mtimes.push_back(*mtime);
  }
  return mtimes;
}

void RemoveCheckpoint(const std::string& checkpoint_prefix, CheckpointFormat format,
                      const std::string& meta_graph_suffix) {
  internal::RemoveFileNoThrow(MetaGraphFilename(checkpoint_prefix, meta_graph_suffix));
  if (format == CheckpointFormat::kV2) {
    internal::DeleteCheckpointFiles(checkpoint_prefix);
  } else {
    internal::RemoveFileNoThrow(checkpoint_prefix);
  }
}

}  // namespace eager
