#include "saving/bundle/checkpoint_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <unordered_set>

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

// `path` with `..` and every symlink of its existing part resolved; the
// lexical normal form when the file system cannot tell (never throws).
fs::path Resolved(const fs::path& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? Normal(path.string()) : out;
}

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

// ".data-00000-of-00001"
constexpr size_t kDataSuffixSize = 20;

std::atomic<int64_t> directory_scans{0};

}  // namespace

bool IsCheckpointInDirectory(const std::string& prefix, const std::string& directory) {
  const fs::path resolved = Resolved(prefix);
  return resolved.has_filename() &&
         resolved.parent_path() == Resolved(directory.empty() ? "." : directory);
}

int RemoveOrphanedDataFiles(const std::string& directory, const std::string& name) {
  int removed = 0;
  std::error_code ec;
  std::vector<fs::path> orphans;
  ++directory_scans;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    // NAME-<digits>.data-NNNNN-of-NNNNN
    const size_t dot = file.find(".data-");
    if (dot == std::string::npos || !file.starts_with(name + "-")) continue;
    const std::string_view number =
        std::string_view(file).substr(name.size() + 1, dot - name.size() - 1);
    if (number.empty() ||
        !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const std::string base = file.substr(0, dot);
    if (!IsDataFileOf(file, base)) continue;
    std::error_code exists_ec;
    if (!fs::exists(it->path().parent_path() / IndexFilename(base), exists_ec) && !exists_ec) {
      orphans.push_back(it->path());
    }
  }
  for (const fs::path& f : orphans) removed += internal::RemoveFileNoThrow(f.string()) ? 1 : 0;
  return removed;
}

int DeleteCheckpointFiles(const std::string& prefix, bool meta) {
  const fs::path p(prefix);
  return DeleteCheckpointsIn(p.has_parent_path() ? p.parent_path().string() : ".",
                             {p.filename().string()}, meta);
}

int DeleteCheckpointsIn(const std::string& directory, const std::vector<std::string>& names,
                        bool meta) {
  if (names.empty()) return 0;
  // Everything goes through one descriptor of `directory`, by plain names:
  // a listed path is never resolved again between a check and an unlink.
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return 0;  // nothing to delete in a directory that is gone
  int removed = 0;
  auto remove = [&](const std::string& name) {
    if (RemoveFileAtNoThrow(dir_fd, name, (directory + "/").append(name))) ++removed;
  };
  // The indexes first: once one is gone its checkpoint is invisible, so a
  // kill between these removals never leaves a readable half.
  for (const std::string& name : names) {
    remove(IndexFilename(name));
    if (meta) remove(name + ".meta");
  }
  // Then one scan for all their data files (not one per checkpoint).
  const std::unordered_set<std::string> doomed(names.begin(), names.end());
  std::vector<std::string> data;
  const int scan_fd = ::dup(dir_fd);
  DIR* d = scan_fd < 0 ? nullptr : ::fdopendir(scan_fd);
  if (d == nullptr && scan_fd >= 0) ::close(scan_fd);
  if (d != nullptr) {
    ++directory_scans;
    while (const dirent* e = ::readdir(d)) {
      const std::string file = e->d_name;
      if (file.size() <= kDataSuffixSize) continue;
      const std::string base = file.substr(0, file.size() - kDataSuffixSize);
      if (doomed.contains(base) && IsDataFileOf(file, base)) data.push_back(file);
    }
    ::closedir(d);
  }
  for (const std::string& file : data) remove(file);
  ::close(dir_fd);
  return removed;
}

int64_t DirectoryScansForTest() { return directory_scans.load(); }

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
    const std::string path = JoinOnto(directory_, paths[i]);
    if (!IsCheckpointInDirectory(path, directory_)) {
      ignored_.push_back(path);  // never managed, so never deleted
      continue;
    }
    double stamp;
    if (stamps.empty()) {
      stamp = options_.adopt_untimestamped_paths ? now : last_preserved_;
      if (options_.adopt_untimestamped_paths) {
        managed_.push_back({path, stamp});
        continue;
      }
    } else {
      stamp = i < stamps.size() ? std::min(stamps[i], now) : last_preserved_;
    }
    if (stamp > last_preserved_) managed_.push_back({path, stamp});
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

std::vector<std::string> CheckpointRetention::Record(const std::string& prefix, bool write_files) {
  const double now = Now();
  const std::vector<Entry> managed_before = managed_;
  const std::optional<std::string> latest_before = latest_;
  const double last_preserved_before = last_preserved_;
  std::erase_if(managed_, [&](const Entry& e) { return SamePath(e.path, prefix); });
  managed_.push_back({prefix, now});
  latest_ = prefix;
  std::vector<std::string> doomed;
  // The oldest leave from the front, all erased at once (linear).
  const size_t leaving =
      options_.max_to_keep && managed_.size() > static_cast<size_t>(*options_.max_to_keep)
          ? managed_.size() - static_cast<size_t>(*options_.max_to_keep)
          : 0;
  for (size_t i = 0; i < leaving; ++i) {
    const Entry& oldest = managed_[i];
    const auto& hours = options_.keep_checkpoint_every_n_hours;
    if (hours && *hours > 0.0 && oldest.timestamp - *hours * 3600.0 >= last_preserved_) {
      last_preserved_ = oldest.timestamp;  // kept forever, no longer managed
      continue;
    }
    doomed.push_back(oldest.path);
  }
  managed_.erase(managed_.begin(), managed_.begin() + static_cast<std::ptrdiff_t>(leaving));
  if (!write_files) return {};
  // The state file stops listing the doomed checkpoints before any of their
  // files goes, so a kill at any point leaves every listed checkpoint whole.
  try {
    WriteState();
  } catch (...) {
    managed_ = managed_before;
    latest_ = latest_before;
    last_preserved_ = last_preserved_before;
    throw;
  }
  // Deleted by plain name through the directory's own descriptor: the path
  // (perhaps a state file's `sub/../v`) only decides whether it is ours.
  // All of them at once: one scan of the directory, not one per checkpoint.
  std::vector<std::string> deleted;
  std::vector<std::string> names;
  for (const std::string& path : doomed) {
    if (!IsCheckpointInDirectory(path, directory_)) continue;  // a caller's prefix elsewhere
    names.push_back(Resolved(path).filename().string());
    deleted.push_back(path);
  }
  DeleteCheckpointsIn(directory_.empty() ? "." : directory_, names, options_.delete_meta_files);
  return deleted;
}

}  // namespace eager::internal
