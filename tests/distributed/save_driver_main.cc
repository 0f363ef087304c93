// distributed_save_driver: the processes of the distributed checkpoint tests
// (distributed_checkpoint_test.sh), under mpirun or alone.
//
//   save DIR GEN [KILL_RANK KILL_STEP]
//       every rank saves generation GEN's values with a CheckpointManager
//       (max_to_keep 1) as DIR/ckpt-GEN, CheckpointOptions{.distributed = true}; rank
//       KILL_RANK SIGKILLs itself just before its KILL_STEP-th file step of
//       the save (internal::SetFileStepHook). Prints "saved PATH" on rank 0.
//   restore DIR GEN
//       every rank restores DIR's latest checkpoint with the ordinary
//       Checkpoint::Restore and checks it holds generation GEN.
//   check DIR
//       one process: the latest checkpoint, and every one the state file
//       lists, restores whole to generation 1 or 2 (never a mix); prints
//       "generation G".

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "distributed/world.h"
#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_manager.h"

namespace {

using eager::Tensor;
using eager::Variable;

// Sizes with a big first one (bigger than the writer's 256 KiB buffer) so
// every rank's share has bytes on 2 and 3 ranks.
constexpr int64_t kSizes[] = {70000, 3000, 2000, 1500, 100};

Tensor Value(int i, float generation) {
  std::vector<float> values(static_cast<size_t>(kSizes[i]));
  for (size_t j = 0; j < values.size(); ++j) {
    values[j] = generation * 1e6f + float(i) * 1e4f + float(j % 1000);
  }
  return Tensor::FromVector<float>(std::move(values));
}

struct Variables {
  explicit Variables(float generation) {
    for (int i = 0; i < 5; ++i) {
      owned.push_back(generation > 0 ? std::make_unique<Variable>(Value(i, generation), "v")
                                     : std::make_unique<Variable>(eager::DType::kFloat32,
                                                                  eager::Shape{kSizes[i]}, "v"));
      children.emplace_back("v" + std::to_string(i), owned.back().get());
    }
  }
  // 1 or 2 when every variable holds that generation, else 0.
  int Generation() const {
    for (int generation : {1, 2}) {
      bool all = true;
      for (int i = 0; i < 5; ++i) {
        all = all && owned[static_cast<size_t>(i)]->value().ToVector<float>() ==
                         Value(i, float(generation)).ToVector<float>();
      }
      if (all) return generation;
    }
    return 0;
  }
  std::vector<std::unique_ptr<Variable>> owned;
  std::vector<std::pair<std::string, eager::Trackable*>> children;
};

int g_kill_at = 0;
int g_steps = 0;
int KillHook(std::string_view, const std::string&) {
  if (++g_steps == g_kill_at) raise(SIGKILL);
  return 0;
}

int RestoredGeneration(const std::string& prefix) {
  Variables restored(0);
  eager::Checkpoint(restored.children).Restore(prefix).AssertConsumed();
  return restored.Generation();
}

int Run(int argc, char** argv) {
  eager::distributed::World world(argc, argv);
  const std::string mode = argc > 2 ? argv[1] : "";
  const std::string dir = argc > 2 ? argv[2] : "";
  if (mode == "save" && (argc == 4 || argc == 6)) {
    Variables variables(std::stof(argv[3]));
    eager::Checkpoint checkpoint(variables.children);
    eager::CheckpointManager manager(checkpoint, dir, /*max_to_keep=*/1);
    if (argc == 6 && world.rank() == std::atoi(argv[4])) {
      g_kill_at = std::atoi(argv[5]);
      eager::internal::SetFileStepHook(KillHook);
    }
    const std::string path = *manager.Save(std::atoi(argv[3]), true, {.distributed = true});
    eager::internal::SetFileStepHook(nullptr);
    if (world.is_root()) std::printf("saved %s on %d ranks\n", path.c_str(), world.size());
    return 0;
  }
  if (mode == "restore" && argc == 4) {
    const std::optional<std::string> latest = eager::LatestCheckpoint(dir);
    EAGER_CHECK(latest.has_value(), "no checkpoint in ", dir);
    const int generation = RestoredGeneration(*latest);
    if (generation != std::atoi(argv[3])) {
      std::fprintf(stderr, "rank %d restored generation %d from %s\n", world.rank(), generation,
                   latest->c_str());
      return 1;
    }
    if (world.is_root()) std::printf("restored %s on %d ranks\n", latest->c_str(), world.size());
    return 0;
  }
  if (mode == "check" && argc == 3) {
    const std::optional<std::string> latest = eager::LatestCheckpoint(dir);
    EAGER_CHECK(latest.has_value(), "no checkpoint in ", dir);
    const int generation = RestoredGeneration(*latest);
    const std::optional<eager::CheckpointState> state = eager::ReadCheckpointState(dir);
    for (const std::string& path : state->all_model_checkpoint_paths) {
      std::string prefix = dir;
      prefix.append("/").append(path);
      if (RestoredGeneration(prefix) == 0) {
        std::fprintf(stderr, "%s/%s is a mix of generations\n", dir.c_str(), path.c_str());
        return 1;
      }
    }
    std::printf("generation %d\n", generation);
    return generation == 0 ? 1 : 0;
  }
  std::fprintf(stderr,
               "usage: distributed_save_driver save DIR GEN [KILL_RANK KILL_STEP] | "
               "restore DIR GEN | check DIR\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_save_driver: error: %s\n", e.what());
    return 1;
  }
}
