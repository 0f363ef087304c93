#include "saving/bundle/checkpoint_retention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "runtime/errors.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/posix_file.h"

namespace eager::internal {
namespace {

namespace fs = std::filesystem;

std::string JoinOnto(const std::string& dir, const std::string& path) {
  if (dir.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(dir) / path).string();
}

fs::path Normal(const std::string& path) { return fs::absolute(path).lexically_normal(); }

// os.path.relpath(path, dir).
std::string RelativeTo(const std::string& path, const std::string& dir) {
  const fs::path rel = Normal(path).lexically_relative(Normal(dir.empty() ? "." : dir));
  return rel.empty() ? path : rel.string();
}

bool SamePath(const std::string& a, const std::string& b) { return Normal(a) == Normal(b); }

// "NAME.data-00000-of-00001": five digits, "-of-", five digits.
bool IsDataFileOf(const std::string& file, const std::string& base) {
  const std::string head = base + ".data-";
  if (!file.starts_with(head) || file.size() != head.size() + 14) return false;
  const std::string_view rest = std::string_view(file).substr(head.size());
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(rest.substr(0, 5)) && rest.substr(5, 4) == "-of-" && digits(rest.substr(9, 5));
}

}  // namespace

int DeleteCheckpointFiles(const std::string& prefix, bool meta) {
  int removed = 0;
  // The index first: once it is gone the checkpoint is invisible, so a kill
  // between these removals never leaves a readable half.
  auto remove = [&](const fs::path& p) {
    if (internal::RemoveFileNoThrow(p.string())) ++removed;
  };
  remove(IndexFilename(prefix));
  if (meta) remove(prefix + ".meta");
  const fs::path p(prefix);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string base = p.filename().string();
  std::error_code ec;
  std::vector<fs::path> data;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsDataFileOf(it->path().filename().string(), base)) data.push_back(it->path());
  }
  for (const fs::path& f : data) remove(f);
  return removed;
}

CheckpointRetention::CheckpointRetention(std::string directory, RetentionOptions options)
    : directory_(std::move(directory)), options_(std::move(options)) {
  if (options_.max_to_keep && *options_.max_to_keep <= 0) {
    throw InvalidArgumentError(
        StrCat("max_to_keep must be a positive integer or unset (keep all), ", "got ",
               *options_.max_to_keep));
  }
  if (options_.keep_checkpoint_every_n_hours && !(*options_.keep_checkpoint_every_n_hours >= 0.0)) {
    throw InvalidArgumentError(StrCat("keep_checkpoint_every_n_hours must be >= 0, got ",
                                      *options_.keep_checkpoint_every_n_hours));
  }
  const double now = Now();
  const std::optional<CheckpointState> state =
      ReadCheckpointState(directory_, options_.state_filename);
  if (!state) {
    // Set back slightly, as TF, for a manager re-created within a second.
    last_preserved_ = now - 1.0;
    return;
  }
  if (!state->model_checkpoint_path.empty()) {
    latest_ = JoinOnto(directory_, state->model_checkpoint_path);
  }
  last_preserved_ = state->last_preserved_timestamp.value_or(0.0);
  // Time went backwards: clip, so that old checkpoints are not deleted by accident.
  if (now < last_preserved_) last_preserved_ = now;
  const auto& paths = state->all_model_checkpoint_paths;
  const auto& stamps = state->all_model_checkpoint_timestamps;
  for (size_t i = 0; i < paths.size(); ++i) {
    double stamp;
    if (stamps.empty()) {
      stamp = options_.adopt_untimestamped_paths ? now : last_preserved_;
      if (options_.adopt_untimestamped_paths) {
        managed_.push_back({JoinOnto(directory_, paths[i]), stamp});
        continue;
      }
    } else {
      stamp = i < stamps.size() ? std::min(stamps[i], now) : last_preserved_;
    }
    if (stamp > last_preserved_) managed_.push_back({JoinOnto(directory_, paths[i]), stamp});
  }
}

double CheckpointRetention::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> CheckpointRetention::checkpoints() const {
  std::vector<std::string> out;
  out.reserve(managed_.size());
  for (const Entry& e : managed_) out.push_back(e.path);
  return out;
}

void CheckpointRetention::WriteState() const {
  auto stored = [&](const std::string& path) {
    const bool both_relative = !fs::path(path).is_absolute() && !fs::path(directory_).is_absolute();
    return options_.relative_paths || both_relative ? RelativeTo(path, directory_) : path;
  };
  CheckpointState state;
  if (latest_) state.model_checkpoint_path = stored(*latest_);
  for (const Entry& e : managed_) {
    state.all_model_checkpoint_paths.push_back(stored(e.path));
    if (options_.write_timestamps) state.all_model_checkpoint_timestamps.push_back(e.timestamp);
  }
  if (options_.write_timestamps) state.last_preserved_timestamp = last_preserved_;
  WriteCheckpointState(directory_, state, options_.state_filename);
}

std::vector<std::string> CheckpointRetention::Record(const std::string& prefix) {
  const double now = Now();
  std::erase_if(managed_, [&](const Entry& e) { return SamePath(e.path, prefix); });
  managed_.push_back({prefix, now});
  latest_ = prefix;
  WriteState();  // the new checkpoint is listed before anything is deleted

  std::vector<std::string> deleted;
  if (!options_.max_to_keep) return deleted;
  bool changed = false;
  while (managed_.size() > static_cast<size_t>(*options_.max_to_keep)) {
    const Entry oldest = managed_.front();
    managed_.erase(managed_.begin());
    changed = true;
    const auto& hours = options_.keep_checkpoint_every_n_hours;
    if (hours && *hours > 0.0 && oldest.timestamp - *hours * 3600.0 >= last_preserved_) {
      last_preserved_ = oldest.timestamp;  // kept forever, no longer managed
      continue;
    }
    DeleteCheckpointFiles(oldest.path, options_.delete_meta_files);
    deleted.push_back(oldest.path);
  }
  if (changed) WriteState();
  return deleted;
}

}  // namespace eager::internal
