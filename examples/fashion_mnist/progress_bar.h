#pragma once

// A one-line terminal progress bar: "[=====>    ] 412/938 loss 0.4321 52345 ex/s".
//
// On a terminal the line is redrawn in place (at most ~10 times a second);
// otherwise (a log file, a pipe) a plain line is written every `log_every`
// updates and at the end, so logs stay readable.

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace fashion_mnist {

class ProgressBar {
 public:
  // `total` steps; `interactive` selects in-place redraws.
  ProgressBar(std::ostream& out, std::string label, int64_t total, bool interactive,
              int64_t log_every = 100);
  // Reports that `step` (1-based) steps are done, with the latest loss and
  // the examples processed so far.
  void Update(int64_t step, float loss, int64_t examples);
  // Draws the final state and ends the line.
  void Finish();

  // The line for the given state (no control characters): for tests.
  static std::string Format(const std::string& label, int64_t step, int64_t total, float loss,
                            double examples_per_second, int width = 30);

 private:
  void Draw(bool final);

  std::ostream& out_;
  std::string label_;
  int64_t total_;
  bool interactive_;
  int64_t log_every_;
  int64_t step_ = 0;
  float loss_ = 0;
  int64_t examples_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace fashion_mnist
