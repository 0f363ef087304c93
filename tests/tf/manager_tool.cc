// The C++ side of tests/tf/managers.py: eager's CheckpointManager on a
// directory that TensorFlow then reads, or that TensorFlow started.
//
//   tf_manager_tool DIR MAX_TO_KEEP SAVES [KEEP_CHECKPOINT_EVERY_N_HOURS]
//
// The checkpoint is tf.train.Checkpoint(v=tf.Variable(0.0)). The manager
// first restores DIR's latest checkpoint if there is one (save_counter and v
// continue from it), then saves SAVES times, v set to the checkpoint number
// before each save. Prints, one per line:
//   restored PATH v=VALUE      (when DIR had a checkpoint)
//   saved PATH                 (each save)
//   latest PATH
//   kept PATH                  (the manager's list, oldest first)

#include <iostream>
#include <string>

#include "eager.h"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: tf_manager_tool DIR MAX_TO_KEEP SAVES [KEEP_CHECKPOINT_EVERY_N_HOURS]\n";
    return 2;
  }
  try {
    eager::Variable v(0.0f, "v");
    eager::Checkpoint checkpoint({{"v", &v}});
    std::optional<double> keep_every_n_hours;
    if (argc == 5) keep_every_n_hours = std::stod(argv[4]);
    eager::CheckpointManager manager(checkpoint, argv[1], std::stoi(argv[2]), keep_every_n_hours);
    if (const std::optional<std::string> restored = manager.RestoreOrInitialize()) {
      std::cout << "restored " << *restored << " v=" << v.value().ValuesString() << "\n";
    }
    for (int i = 0; i < std::stoi(argv[3]); ++i) {
      const int64_t number = checkpoint.save_counter().value().scalar<int64_t>() + 1;
      v.Assign(static_cast<float>(number));
      std::cout << "saved " << manager.Save().value() << "\n";
    }
    std::cout << "latest " << manager.latest_checkpoint().value_or("(none)") << "\n";
    for (const std::string& path : manager.checkpoints()) std::cout << "kept " << path << "\n";
  } catch (const eager::Error& e) {
    std::cerr << "tf_manager_tool: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
