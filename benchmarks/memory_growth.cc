// The main job's resident memory over many epochs (issue 30): trains the
// main job's model (examples/fashion_mnist's Train, the same loop, Adam, EMA
// and per-epoch test accuracy) for --epochs epochs, samples the resident set
// size (VmRSS) after each one, and exits with status 1 when a later epoch
// ends with more than --tolerance_mb above the first epoch's RSS: the first
// epoch fills the caches (eager's buffer cache, malloc's arenas, the thread
// pool's stacks), after it a steady loop has nothing left to grow by.
//
//   build/benchmarks/memory_growth                       # MLP, 10 epochs
//   build/benchmarks/memory_growth --model cnn --epochs 3
//   build/benchmarks/memory_growth --checkpoint_dir /tmp/mg   # also saves every epoch
//   build/benchmarks/memory_growth --train_examples 6000 --test_examples 1000   # the ctest
//
// Prints one line per epoch (RSS, its change since epoch 1, VmHWM, accuracy)
// and a verdict. Reads Fashion-MNIST from --data_dir (the Debian package's).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "examples/fashion_mnist/dataset.h"
#include "examples/fashion_mnist/models.h"
#include "examples/fashion_mnist/training.h"
#include "runtime/threads.h"

namespace {

// A "VmRSS"-style field of /proc/self/status, in bytes (-1 when absent).
int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return -1;
}

double Mb(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The first `n` examples of `data` (all of them when n <= 0 or n >= size).
fashion_mnist::Dataset Head(const fashion_mnist::Dataset& data, int64_t n) {
  if (n <= 0 || n >= data.size()) return data;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  return fashion_mnist::Batch(data, order, 0, n);
}

int Run(int argc, char** argv) {
  fashion_mnist::TrainOptions options;
  options.epochs = 10;
  std::string data_dir = fashion_mnist::kDefaultDataDir;
  std::string model_name = "mlp";
  int64_t train_examples = 0;
  int64_t test_examples = 0;
  int threads = 0;
  double tolerance_mb = 4;
  CLI::App app{"Trains the main job's model and fails when its RSS grows after the first epoch."};
  app.add_option("--model", model_name, "mlp or cnn")->capture_default_str();
  app.add_option("--epochs", options.epochs, "Epochs (>= 2)")->capture_default_str();
  app.add_option("--batch_size", options.batch_size)->capture_default_str();
  app.add_option("--data_dir", data_dir)->capture_default_str();
  app.add_option("--checkpoint_dir", options.checkpoint_dir,
                 "Also save a checkpoint every epoch there (emptied first)");
  app.add_option("--train_examples", train_examples, "Train on the first N images (0: all)");
  app.add_option("--test_examples", test_examples, "Test on the first N images (0: all)");
  app.add_option("--threads", threads, "eager::SetNumThreads (0: the default)");
  app.add_option("--tolerance_mb", tolerance_mb,
                 "Allowed RSS above the first epoch's, in MiB (allocator noise)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (options.epochs < 2) {
    std::cerr << "--epochs must be >= 2 to see growth after the first, got " << options.epochs
              << "\n";
    return 2;
  }
  if (threads > 0) eager::SetNumThreads(threads);
  if (!options.checkpoint_dir.empty()) std::filesystem::remove_all(options.checkpoint_dir);

  const fashion_mnist::Dataset train =
      Head(fashion_mnist::LoadSplit(data_dir, "train"), train_examples);
  const fashion_mnist::Dataset test =
      Head(fashion_mnist::LoadSplit(data_dir, "t10k"), test_examples);
  std::printf("model %s, %lld training and %lld test images, batch %lld, %d epochs, %d threads%s\n",
              model_name.c_str(), static_cast<long long>(train.size()),
              static_cast<long long>(test.size()), static_cast<long long>(options.batch_size),
              options.epochs, eager::GetNumThreads(),
              options.checkpoint_dir.empty() ? "" : ", a checkpoint every epoch");
  const int64_t rss_before = ProcStatusBytes("VmRSS");
  std::printf("RSS with the data loaded, before training: %.1f MiB\n", Mb(rss_before));

  std::vector<int64_t> rss;
  options.on_epoch = [&](const fashion_mnist::EpochReport& r) {
    rss.push_back(ProcStatusBytes("VmRSS"));
    std::printf(
        "epoch %2d: RSS %8.1f MiB (%+7.2f since epoch 1), VmHWM %8.1f MiB, accuracy %.2f%% "
        "(EMA %.2f%%)\n",
        r.epoch, Mb(rss.back()), Mb(rss.back() - rss.front()), Mb(ProcStatusBytes("VmHWM")),
        100 * r.test_accuracy, 100 * r.ema_test_accuracy);
    std::fflush(stdout);
  };
  std::ostringstream quiet;  // the progress bars
  const auto model = fashion_mnist::MakeModel(model_name, options.seed);
  const fashion_mnist::TrainResult result =
      fashion_mnist::Train(*model, train, test, options, quiet);
  // The save after the last epoch happens after on_epoch: one more sample.
  rss.push_back(ProcStatusBytes("VmRSS"));
  std::printf("after training: RSS %.1f MiB (%+.2f since epoch 1), %.0f examples/s\n",
              Mb(rss.back()), Mb(rss.back() - rss.front()), result.examples_per_second);
  if (!options.checkpoint_dir.empty()) std::filesystem::remove_all(options.checkpoint_dir);

  const int64_t worst = *std::max_element(rss.begin() + 1, rss.end());
  const double growth = Mb(worst - rss.front());
  if (growth > tolerance_mb) {
    std::printf("FAIL: RSS grew by %.2f MiB after epoch 1 (tolerance %.2f MiB)\n", growth,
                tolerance_mb);
    return 1;
  }
  std::printf("OK: RSS after epoch 1 stayed within %.2f MiB of it (at most %+.2f MiB)\n",
              tolerance_mb, growth);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "memory_growth: " << e.what() << "\n";
    return 2;
  }
}
