#pragma once

// TensorBoard summaries: a SummaryWriter appends scalar summaries to an event
// file in `logdir` that `tensorboard --logdir LOGDIR` plots, as
// tf.summary.create_file_writer(logdir) does.
//
//   eager::SummaryWriter writer("runs/mlp");
//   writer.Scalar("loss", loss, step);       // one point of the "loss" curve
//   writer.Flush();                          // optional: also periodic and on Close
//
// The file is "LOGDIR/events.out.tfevents.<seconds, 10 digits>.<hostname>.<pid>.<n>"
// (TensorBoard reads every file whose name contains "tfevents"): TFRecords
// (uint64 length, masked CRC32C of the length, the bytes, masked CRC32C of the
// bytes), each an Event proto; the first Event has file_version
// "brain.Event:2", the others one Summary value each (`simple_value`).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace eager {

struct SummaryWriterOptions {
  // Events are buffered in memory and written to the file when this much time
  // has passed since the last write (checked at each event), when
  // `max_queue` events are pending, and on Flush and Close. TF's defaults.
  std::chrono::milliseconds flush_interval{120000};
  int max_queue = 10;
  // Appended to the file name (e.g. ".v2", as TF 2 does); may be empty.
  std::string filename_suffix;
};

class SummaryWriter {
 public:
  // Creates `logdir` (and its parents) when missing and a new event file in
  // it, whose file_version record is on disk when this returns. Throws
  // FailedPreconditionError (or NotFoundError) naming the path when the
  // directory or the file cannot be created, InvalidArgumentError for
  // options out of range.
  explicit SummaryWriter(const std::string& logdir, SummaryWriterOptions options = {});
  // Closes (flushes) the file; errors are swallowed here: call Close() to see them.
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // One point (step, value) of the curve `tag` (e.g. "loss", "accuracy/ema"),
  // stamped with the current wall time. InvalidArgumentError for an empty tag;
  // FailedPreconditionError after Close.
  void Scalar(std::string_view tag, float value, int64_t step);

  // Writes the pending events to the file (so TensorBoard sees them).
  void Flush();
  // Flush and fsync, then close; later calls do nothing.
  void Close();

  // The event file's full path.
  const std::string& path() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace eager
