#include "saving/tools/keras_file_bundle.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "runtime/errors.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/posix_file.h"
#include "saving/keras/keras_file_tensors.h"
#include "saving/tools/inspect_checkpoint.h"

namespace eager::ckpt_tool {
namespace {

constexpr char kStem[] = "eager-ckpt-keras-";

std::string TemporaryDirectory() {
  std::error_code error;
  std::string dir = std::filesystem::temp_directory_path(error).string();
  return error || dir.empty() ? "/tmp" : dir;
}

// Live bundles: prefix -> the Keras file's path (ShownPrefix).
std::mutex& ShownMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, std::string>& Shown() {
  static std::map<std::string, std::string> shown;
  return shown;
}

}  // namespace

KerasFileBundle::KerasFileBundle(const std::string& path) {
  const auto tensors = ReadKerasFileTensors(path);  // before anything is written
  const std::string tmp = TemporaryDirectory();
  internal::RemoveTemporariesOfDeadProcesses(tmp, kStem);
  dir_ = StrCat(tmp, "/", internal::TemporaryNameWithPid(kStem));
  internal::CreateDirectories(dir_);
  try {
    prefix_ = StrCat(dir_, "/", std::filesystem::path(path).filename().string());
    BundleWriter writer(prefix_);
    for (const auto& [key, value] : tensors) writer.Add(key, value);
    writer.Finish();
    const std::lock_guard<std::mutex> lock(ShownMutex());
    Shown()[prefix_] = path;
  } catch (...) {
    std::error_code error;
    std::filesystem::remove_all(dir_, error);
    throw;
  }
}

KerasFileBundle::~KerasFileBundle() {
  {
    const std::lock_guard<std::mutex> lock(ShownMutex());
    Shown().erase(prefix_);
  }
  std::error_code error;
  std::filesystem::remove_all(dir_, error);
}

std::string ShownPrefix(const std::string& prefix) {
  const std::lock_guard<std::mutex> lock(ShownMutex());
  auto it = Shown().find(prefix);
  return it == Shown().end() ? prefix : it->second;
}

std::string ShownPrefix(const BundleReader& reader) { return ShownPrefix(reader.prefix()); }

std::string ResolveReadablePath(const std::string& path, std::unique_ptr<KerasFileBundle>& holder) {
  if (!IsKerasFile(path)) return ResolveCheckpointPath(path);
  holder = std::make_unique<KerasFileBundle>(path);
  return holder->prefix();
}

}  // namespace eager::ckpt_tool
