#include "saving/checkpoint/checkpoint.h"

#include <algorithm>
#include <filesystem>

#include "runtime/errors.h"
#include "runtime/tensor_access.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"
#include "saving/bundle/save_group.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/internal/background_save.h"
#include "saving/checkpoint/internal/name_based_restore.h"
#include "saving/checkpoint/internal/own_copies.h"
#include "saving/checkpoint/internal/restore_coordinator.h"
#include "saving/checkpoint/object_graph.h"

namespace eager {
namespace {

constexpr const char* kSaveCounter = "save_counter";

// A SavedModel directory keeps its variables at variables/variables.
std::string ResolveSavePath(const std::string& save_path) {
  std::error_code ec;
  if (std::filesystem::is_directory(save_path, ec) &&
      std::filesystem::exists(save_path + "/variables/variables.index", ec)) {
    return save_path + "/variables/variables";
  }
  return save_path;
}

}  // namespace

Checkpoint::Checkpoint(std::vector<std::pair<std::string, Trackable*>> children)
    : background_(std::make_unique<internal::BackgroundSave>()) {
  std::sort(children.begin(), children.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < children.size(); ++i) {
    const auto& [name, object] = children[i];
    EAGER_CHECK(!name.empty(), "Checkpoint: a child name must not be empty");
    EAGER_CHECK(object != nullptr, "Checkpoint: the object for '", name, "' is null");
    EAGER_CHECK(name != kSaveCounter, "Checkpoint: the name 'save_counter' is reserved for ",
                "the Checkpoint's own counter");
    EAGER_CHECK(i == 0 || children[i - 1].first != name, "Checkpoint: the name '", name,
                "' is given twice");
    children_.push_back({name, object});
  }
}

Checkpoint::Checkpoint(Trackable& root)
    : root_(&root), background_(std::make_unique<internal::BackgroundSave>()) {}

Checkpoint::~Checkpoint() = default;

Variable& Checkpoint::save_counter() {
  if (root_ != nullptr) {
    throw FailedPreconditionError(
        "Checkpoint: a Checkpoint made for a root object (the Keras save_weights layout) has no "
        "save_counter; use Write(path) instead of Save(prefix)");
  }
  if (save_counter_ == nullptr) {
    children_before_counter_ = children_.size();
    CreateVariable(kSaveCounter, Tensor(int64_t{0}), kSaveCounter, /*trainable=*/false,
                   [&](std::unique_ptr<Variable> counter) { save_counter_ = std::move(counter); });
  }
  return *save_counter_;
}

std::vector<Trackable::Child> Checkpoint::Children() {
  std::vector<Child> children = children_;
  if (save_counter_ != nullptr) {
    children.insert(children.begin() + static_cast<std::ptrdiff_t>(children_before_counter_),
                    {kSaveCounter, save_counter_.get()});
  }
  return children;
}

void Checkpoint::UseKerasLayout(KerasLayout layout) {
  if (root_ != nullptr) SetKerasLayout(*root_, layout);
}

void Checkpoint::Track(const std::string& name, Trackable& object) {
  if (root_ != nullptr) {
    throw FailedPreconditionError(StrCat(
        "Checkpoint: a Checkpoint made for a root object (the Keras save_weights layout) cannot "
        "track '",
        name, "'; add it to the root object instead"));
  }
  EAGER_CHECK(!name.empty(), "Checkpoint: a child name must not be empty");
  EAGER_CHECK(name != kSaveCounter, "Checkpoint: the name 'save_counter' is reserved for ",
              "the Checkpoint's own counter");
  for (const Child& child : children_) {
    EAGER_CHECK(child.name != name, "Checkpoint: the name '", name, "' is already tracked");
  }
  children_.push_back({name, &object});
  // TF's _track_trackable -> _handle_deferred_dependencies: a pending restore
  // matches the new child now.
  NotifyChildAdded(name, object);
}

void Checkpoint::Sync() { background_->Sync(); }

bool Checkpoint::IsGroupSave(const CheckpointOptions& options) {
  return options.distributed && CurrentSaveGroup() != nullptr && CurrentSaveGroup()->size() > 1;
}

namespace {

// A save of several processes: rank 0 holds the directory's lock around the
// bundle and `then`; every step's failure on any rank is every rank's.
void WriteInGroup(const SaveGroup& group, const std::string& file_prefix,
                  std::vector<std::pair<std::string, Tensor>>& tensors,
                  const std::function<void(bool)>& then) {
  const std::string what = StrCat("Distributed save of ", file_prefix);
  const bool root = group.rank() == 0;
  std::optional<internal::DirectoryLock> lock;
  std::exception_ptr error;
  if (root) {
    try {
      const std::string dir = internal::DirName(file_prefix);
      internal::CreateDirectories(dir);
      lock.emplace(dir);
    } catch (...) {
      error = std::current_exception();
    }
  }
  AgreeOnOutcome(group, error, what);
  {
    BundleWriter writer(file_prefix, BundleWriterOptions{.group = &group});
    for (const auto& [key, tensor] : tensors) writer.Add(key, tensor);
    writer.Finish();
  }
  try {
    if (then) then(root);
  } catch (...) {
    error = std::current_exception();
  }
  AgreeOnOutcome(group, error, what);
}

}  // namespace

void Checkpoint::WriteThen(const std::string& file_prefix, const CheckpointOptions& options,
                           std::function<void(bool)> then) {
  EAGER_CHECK(options.num_shards >= 1 && options.num_shards <= 1024, "Checkpoint: writing ",
              file_prefix, ": CheckpointOptions.num_shards must be in [1, 1024], got ",
              options.num_shards);
  EAGER_CHECK(!options.distributed || (options.num_shards == 1 && !options.async),
              "Checkpoint: writing ", file_prefix,
              ": a distributed save writes one data file per process, synchronously; "
              "CheckpointOptions.num_shards must be 1 and async false");
  // The snapshot: Tensors are immutable, and an optimizer that finds a value
  // held here copies it instead of updating it in place, so holding them is
  // the whole copy-on-write.
  const internal::LiveObjectGraph live = internal::WalkObjectGraph(root());
  std::vector<std::pair<std::string, Tensor>> tensors;
  const internal::SavedObjectGraph saved = internal::SerializeLiveGraph(live, &tensors);
  tensors.emplace(tensors.begin(), kObjectGraphKey, Tensor(internal::SerializeObjectGraph(saved)));
  if (IsGroupSave(options)) {
    WriteInGroup(*CurrentSaveGroup(), file_prefix, tensors, then);
    return;
  }
  if (options.async) {
    // Here, on the calling thread, not on the writer: copy the values the
    // variables hold and let go of them (internal/own_copies.h), so that the
    // optimizer updates them in place from its next step on. The copies'
    // stores bypass the caches, so they do not evict this thread's working
    // set, and the writer then reads only its own copies: when it copied the
    // values itself, it read lines modified in this thread's cache, and the
    // step during the save paid for that (benchmarks/README.md, issue 11).
    // The copies are freed by BackgroundSave::Wait() on this thread, so the
    // next save's copies come from its buffer cache.
    internal::OwnCopiesOfHeldValues(tensors);
  }
  auto write = [file_prefix, num_shards = options.num_shards, async = options.async,
                tensors = std::move(tensors), then = std::move(then)]() mutable {
    const std::string dir = internal::DirName(file_prefix);
    internal::CreateDirectories(dir);
    const internal::DirectoryLock lock(dir);  // reentrant: a synchronous Save holds it
    {
      BundleWriter writer(file_prefix, BundleWriterOptions{.num_shards = num_shards});
      for (size_t i = 0; i < tensors.size(); ++i) {
        auto& [key, tensor] = tensors[i];
        writer.Add(key, tensor);
        // Written (unsharded; a sharded writer keeps its own reference until
        // Finish): let go of a value its variable still holds (one beyond
        // the copy budget), so that an optimizer step from now on updates it
        // in place instead of into a new buffer. A value only we hold (our
        // copies among them) stays, to be freed by the owner's thread
        // (internal/background_save.h).
        if (async && internal::BufferOf(tensor).use_count() > 1) tensor = Tensor();
      }
      writer.Finish();
    }
    if (then) then(true);
  };
  if (!options.async) {
    write();
    return;
  }
  background_->Start(file_prefix, std::move(write));
}

std::string Checkpoint::Write(const std::string& file_prefix, const CheckpointOptions& options) {
  Sync();
  WriteThen(file_prefix, options, nullptr);
  return file_prefix;
}

std::string Checkpoint::Save(const std::string& file_prefix, const CheckpointOptions& options) {
  Sync();
  // One lock over the bundle and the state file (saving/bundle/directory_lock.h).
  // An asynchronous save takes it on its own thread instead: the lock
  // belongs to one thread.
  const std::string dir = internal::DirName(file_prefix);
  internal::CreateDirectories(dir);
  std::optional<internal::DirectoryLock> lock;
  if (!options.async && !IsGroupSave(options)) lock.emplace(dir);
  Variable& counter = save_counter();
  counter.AssignAdd(Tensor(int64_t{1}));
  std::string path =
      StrCat(file_prefix, "-", counter.value().scalar<int64_t>());  // returned by move
  WriteThen(path, options, [path](bool writes_files) {
    if (!writes_files) return;
    // As tf.train.Checkpoint.save: the state file lists only this
    // checkpoint, relative to the directory.
    CheckpointState state;
    state.model_checkpoint_path = std::filesystem::path(path).filename().string();
    state.all_model_checkpoint_paths = {state.model_checkpoint_path};
    WriteCheckpointState(internal::DirName(path), state);
  });
  return path;
}

CheckpointLoadStatus Checkpoint::Restore(const std::string& save_path) {
  Sync();
  if (root_ == nullptr) save_counter();  // so that it is matched, as TF
  return Read(save_path);
}

CheckpointLoadStatus Checkpoint::Restore(std::nullopt_t) {
  Sync();
  if (root_ == nullptr) save_counter();
  return CheckpointLoadStatus(root());
}

CheckpointLoadStatus Checkpoint::Read(const std::string& save_path) {
  Sync();
  const std::string path = ResolveSavePath(save_path);
  std::shared_ptr<const BundleReader> reader;
  try {
    reader = std::make_shared<const BundleReader>(path);
  } catch (const NotFoundError& e) {
    throw NotFoundError(StrCat("Error when restoring from checkpoint or SavedModel at ", save_path,
                               ": ", e.what(),
                               " Please double-check that the path is correct. You may be "
                               "missing the checkpoint suffix (e.g. the '-1' in "
                               "'path/to/ckpt-1')."));
  }
  std::optional<internal::SavedObjectGraph> graph = internal::ReadObjectGraph(*reader);
  if (!graph) {
    auto restore = std::make_shared<internal::NameBasedRestore>(path, reader);
    restore->Start(root());
    return CheckpointLoadStatus(root(), std::move(restore));
  }
  auto coordinator =
      std::make_shared<internal::RestoreCoordinator>(path, reader, std::move(*graph));
  coordinator->Start(root());
  return CheckpointLoadStatus(root(), std::move(coordinator));
}

}  // namespace eager
