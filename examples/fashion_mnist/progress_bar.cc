#include "examples/fashion_mnist/progress_bar.h"

#include <cstdio>
#include <utility>

namespace fashion_mnist {

ProgressBar::ProgressBar(std::ostream& out, std::string label, int64_t total, bool interactive,
                         int64_t log_every)
    : out_(out),
      label_(std::move(label)),
      total_(total),
      interactive_(interactive),
      log_every_(log_every > 0 ? log_every : 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

std::string ProgressBar::Format(const std::string& label, int64_t step, int64_t total, float loss,
                                double examples_per_second, int width) {
  const int64_t filled = total > 0 ? step * width / total : width;
  std::string bar(static_cast<size_t>(width), ' ');
  for (int64_t i = 0; i < filled && i < width; ++i) bar[static_cast<size_t>(i)] = '=';
  if (filled < width) bar[static_cast<size_t>(filled)] = '>';
  char numbers[96];
  std::snprintf(numbers, sizeof(numbers), " %lld/%lld loss %.4f %.0f ex/s",
                static_cast<long long>(step), static_cast<long long>(total), loss,
                examples_per_second);
  return label + " [" + bar + "]" + numbers;
}

void ProgressBar::Update(int64_t step, float loss, int64_t examples) {
  step_ = step;
  loss_ = loss;
  examples_ = examples;
  const auto now = std::chrono::steady_clock::now();
  if (interactive_) {
    if (now - last_draw_ >= std::chrono::milliseconds(100) || step == total_) {
      last_draw_ = now;
      Draw(false);
    }
  } else if (step % log_every_ == 0) {
    Draw(false);
  }
}

void ProgressBar::Finish() { Draw(true); }

void ProgressBar::Draw(bool final) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = seconds > 0 ? examples_ / seconds : 0.0;
  const std::string line = Format(label_, step_, total_, loss_, rate);
  if (interactive_) {
    out_ << "\r" << line << (final ? "\n" : "") << std::flush;
  } else {
    out_ << line << "\n";
  }
}

}  // namespace fashion_mnist
