// The main job: train a 784-256-10 MLP on Fashion-MNIST with Adam and an
// exponential moving average of the weights, then report test accuracy with
// the raw and the averaged weights.
//
//   fashion_mnist                       # 2 epochs, batch 64, lr 0.001
//   fashion_mnist --epochs 5 --batch_size 128
//   fashion_mnist --model cnn           # the LeNet-style CNN (cnn.h), 3 epochs
//   fashion_mnist --checkpoint_dir /tmp/run   # saves every epoch and on Ctrl-C;
//                                             # run again to resume
//   fashion_mnist --logdir runs/mlp     # then: tensorboard --logdir runs
//   mpirun -np 2 fashion_mnist          # data parallel: each rank half of every batch
//   fashion_mnist --export_dir /tmp/serving/mlp   # a SavedModel in /tmp/serving/mlp/1
//   fashion_mnist --save_keras /tmp/mlp.keras     # keras.models.load_model() reads it

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/distributed_training.h"
#include "examples/fashion_mnist/export.h"
#include "examples/fashion_mnist/keras_export.h"
#include "examples/fashion_mnist/models.h"
#include "examples/fashion_mnist/training.h"
#include "saving/summary/summary_writer.h"

namespace {

// Set by Ctrl-C; the training loop saves a checkpoint and returns.
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnInterrupt(int) { stop_requested.store(true); }

int Run(int argc, char** argv) {
  fashion_mnist::DataParallel ranks(argc, argv);  // mpirun -np N: data parallelism
  fashion_mnist::TrainOptions options;
  std::string data_dir = fashion_mnist::kDefaultDataDir;

  CLI::App app{
      "Trains a 784-256-10 ReLU MLP on Fashion-MNIST with Adam and an exponential moving "
      "average of the weights; prints test accuracy with raw and averaged weights."};
  // The default depends on --model, so the help states both (not CLI11's one "[2]").
  app.add_option("--epochs", options.epochs,
                 "Passes over the 60000 training images (default " +
                     std::to_string(fashion_mnist::DefaultEpochs("mlp")) + " for --model mlp, " +
                     std::to_string(fashion_mnist::DefaultEpochs("cnn")) + " for cnn)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch_size", options.batch_size, "Examples per Adam step")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{60000}));
  app.add_option("--learning_rate", options.learning_rate, "Adam learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", options.seed, "Seed of the weight initialization and the shuffling")
      ->capture_default_str();
  app.add_option("--data_dir", data_dir,
                 "Folder with the four *-ubyte.gz files (Debian dataset-fashion-mnist)")
      ->capture_default_str();
  app.add_option("--checkpoint_dir", options.checkpoint_dir,
                 "Save model, optimizer, EMA, step and data order there every epoch and on "
                 "Ctrl-C (CheckpointManager, 3 kept); resume from its latest checkpoint");
  int64_t stop_after_steps = 0;
  app.add_option("--stop_after_steps", stop_after_steps,
                 "For tests: stop (as on Ctrl-C) after this many steps in total")
      ->group("");
  std::string logdir;
  app.add_option("--logdir", logdir,
                 "Write TensorBoard summaries here: loss and examples/s every step, test "
                 "accuracy (raw and EMA weights) every epoch");
  std::string model_name = "mlp";
  app.add_option("--model", model_name,
                 "mlp (784-256-10) or cnn (conv 5x5x32, pool, conv 5x5x64, pool, dense 1024)")
      ->capture_default_str()
      ->check(CLI::IsMember(fashion_mnist::kModelNames));
  std::string export_dir;
  app.add_option("--export_dir", export_dir,
                 "After training, write a SavedModel to EXPORT_DIR/<next version> (signatures "
                 "serving_default: EMA weights, raw: trained weights)");
  std::string keras_path;
  app.add_option("--save_keras", keras_path,
                 "After training, write the model with its trained (raw) weights as a Keras 3 "
                 "file (e.g. DIR/model.keras) that keras.models.load_model() reads; it outputs "
                 "logits");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--epochs") == 0) options.epochs = fashion_mnist::DefaultEpochs(model_name);
  std::string exported;
  if ((!export_dir.empty() || !keras_path.empty()) && ranks.is_root()) {
    options.on_trained = [&](fashion_mnist::Classifier& m,
                             const eager::ExponentialMovingAverage& ema) {
      if (!export_dir.empty()) exported = fashion_mnist::ExportForServing(m, ema, export_dir);
      if (!keras_path.empty()) fashion_mnist::SaveAsKeras(m, keras_path);
    };
  }

  const fashion_mnist::Dataset train = fashion_mnist::LoadSplit(data_dir, "train");
  const fashion_mnist::Dataset test = fashion_mnist::LoadSplit(data_dir, "t10k");
  std::cout << "Fashion-MNIST: " << train.size() << " training and " << test.size()
            << " test images from " << data_dir << "\n";
  if (stop_after_steps > 0) options.stop_after_steps = stop_after_steps;
  options.stop = &stop_requested;
  std::signal(SIGINT, OnInterrupt);
  options.interactive = isatty(STDERR_FILENO) != 0;
  std::unique_ptr<eager::SummaryWriter> summaries;
  ranks.Configure(options);
  if (!logdir.empty() && ranks.is_root()) {
    summaries = std::make_unique<eager::SummaryWriter>(logdir);
    std::cout << "TensorBoard summaries: " << summaries->path() << "\n";
    options.on_step = [&](const fashion_mnist::StepReport& r) {
      summaries->Scalar("loss", r.loss, r.step);
      summaries->Scalar("examples_per_second", static_cast<float>(r.examples_per_second), r.step);
    };
    options.on_epoch = [&](const fashion_mnist::EpochReport& r) {
      summaries->Scalar("accuracy/raw", static_cast<float>(r.test_accuracy), r.step);
      summaries->Scalar("accuracy/ema", static_cast<float>(r.ema_test_accuracy), r.step);
      // What the summaries hold, also in the log (tests/tf/tensorboard_logdir.py).
      std::printf("epoch %d/%d: accuracy %.2f%% (raw weights), %.2f%% (EMA weights) at step %lld\n",
                  r.epoch, options.epochs, 100 * r.test_accuracy, 100 * r.ema_test_accuracy,
                  static_cast<long long>(r.step));
    };
  }
  const std::unique_ptr<fashion_mnist::Classifier> model =
      fashion_mnist::MakeModel(model_name, options.seed);
  const fashion_mnist::TrainResult result =
      fashion_mnist::Train(*model, train, test, options, ranks.Log(std::cerr));
  std::printf("trained %lld steps in %.1f s (%.0f examples/s), last loss %.4f\n",
              static_cast<long long>(result.steps), result.seconds, result.examples_per_second,
              result.last_loss);
  if (result.interrupted) {
    std::printf("interrupted after %lld steps%s%s\n", static_cast<long long>(result.steps),
                result.last_checkpoint.empty() ? "" : "; saved ", result.last_checkpoint.c_str());
    return 130;
  }
  std::printf("test accuracy: %.2f%% (raw weights), %.2f%% (EMA weights)\n",
              100 * result.test_accuracy, 100 * result.ema_test_accuracy);
  if (summaries) summaries->Close();
  if (!keras_path.empty() && ranks.is_root()) {
    std::printf("saved Keras model %s; load it with keras.models.load_model\n", keras_path.c_str());
  }
  if (!exported.empty()) {
    std::printf("exported SavedModel %s; inspect it with: saved_model_cli show --dir %s --all\n",
                exported.c_str(), exported.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // eager's errors (a missing data file, a checkpoint that does not match)
  // and anything else (out of memory) end the run with a message, not an
  // uncaught-exception abort.
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: error: %s\n", e.what());
    return 1;
  }
}
