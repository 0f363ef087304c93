#include "saving/summary/summary_writer.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "runtime/errors.h"
#include "saving/bundle/coding.h"
#include "saving/bundle/crc32c.h"
#include "saving/bundle/posix_file.h"
#include "saving/proto/event.pb.h"

namespace eager {
namespace {

using Clock = std::chrono::steady_clock;

double WallTimeSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// TensorBoard's pattern; <n> keeps two writers of one process in the same
// second apart.
std::string EventFileName(const std::string& suffix) {
  static std::atomic<int> counter{0};
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%010lld",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count()));
  return StrCat("events.out.tfevents.", seconds, ".", HostName(), ".", getpid(), ".",
                counter.fetch_add(1), suffix);
}

// One TFRecord: the length and the data, each followed by its masked CRC32C.
std::string FrameRecord(const std::string& data) {
  std::string record;
  record.reserve(data.size() + 16);
  internal::PutFixed64(record, data.size());
  internal::PutFixed32(record, internal::crc32c::Mask(internal::crc32c::Value(record)));
  record.append(data);
  internal::PutFixed32(record, internal::crc32c::Mask(internal::crc32c::Value(data)));
  return record;
}

}  // namespace

struct SummaryWriter::State {
  SummaryWriterOptions options;
  std::unique_ptr<internal::WritableFile> file;
  std::string path;
  int pending = 0;
  Clock::time_point last_flush;
  bool closed = false;

  void Append(const tfproto::Event& event) {
    const std::string record = FrameRecord(event.SerializeAsString());
    file->Append(record.data(), record.size());
    ++pending;
  }
  void Flush() {
    file->Flush();
    pending = 0;
    last_flush = Clock::now();
  }
};

SummaryWriter::SummaryWriter(const std::string& logdir, SummaryWriterOptions options)
    : state_(std::make_unique<State>()) {
  EAGER_CHECK(!logdir.empty(), "SummaryWriter: logdir must not be empty");
  EAGER_CHECK(options.max_queue >= 1, "SummaryWriter: max_queue must be >= 1, got ",
              options.max_queue);
  EAGER_CHECK(options.flush_interval.count() >= 0,
              "SummaryWriter: flush_interval must be >= 0 ms, got ",
              options.flush_interval.count());
  internal::CreateDirectories(logdir);
  state_->options = std::move(options);
  state_->path = StrCat(logdir, "/", EventFileName(state_->options.filename_suffix));
  // The buffer is never the reason for a write: State::Flush decides.
  state_->file = internal::WritableFile::Create(state_->path, 1 << 16);
  tfproto::Event version;
  version.set_wall_time(WallTimeSeconds());
  version.set_file_version("brain.Event:2");
  state_->Append(version);
  state_->Flush();
}

SummaryWriter::~SummaryWriter() {
  try {
    Close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): documented; Close() reports
  }
}

void SummaryWriter::Scalar(std::string_view tag, float value, int64_t step) {
  EAGER_CHECK(!tag.empty(), "SummaryWriter::Scalar: the tag must not be empty");
  if (state_->closed) {
    throw FailedPreconditionError(
        StrCat("SummaryWriter::Scalar(\"", tag, "\"): ", state_->path, " is closed"));
  }
  tfproto::Event event;
  event.set_wall_time(WallTimeSeconds());
  event.set_step(step);
  tfproto::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(value);
  state_->Append(event);
  if (state_->pending >= state_->options.max_queue ||
      Clock::now() - state_->last_flush >= state_->options.flush_interval) {
    state_->Flush();
  }
}

void SummaryWriter::Flush() {
  if (!state_->closed) state_->Flush();
}

void SummaryWriter::Close() {
  if (state_->closed) return;
  state_->closed = true;
  state_->file->Sync();
  state_->file->Close();
}

const std::string& SummaryWriter::path() const { return state_->path; }

}  // namespace eager
