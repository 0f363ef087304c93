// SummaryWriter's event files read back by a decoder written here from the
// formats alone (TFRecord framing, CRC-32C bit by bit, protobuf wire format),
// sharing no code with the writer.

#include "saving/summary/summary_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/errors.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using testing::ListDir;
using testing::ReadFile;
using testing::TempDir;

// CRC-32C, one bit at a time from the reflected polynomial.
uint32_t Crc32cBitwise(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return crc ^ 0xFFFFFFFFu;
}
uint32_t MaskedCrc(const std::string& bytes) {
  const uint32_t crc = Crc32cBitwise(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}
uint64_t LittleEndian(const std::string& bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// The records of a TFRecord file; fails the test on a bad length or CRC.
std::vector<std::string> ReadRecords(const std::string& file) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    EXPECT_GE(file.size() - at, 12u) << "truncated record header at " << at;
    if (file.size() - at < 12) break;
    const uint64_t length = LittleEndian(file, at, 8);
    EXPECT_EQ(LittleEndian(file, at + 8, 4), MaskedCrc(file.substr(at, 8)))
        << "length CRC of the record at " << at;
    EXPECT_GE(file.size() - at - 12, length + 4) << "truncated record at " << at;
    if (file.size() - at - 12 < length + 4) break;
    const std::string data = file.substr(at + 12, length);
    EXPECT_EQ(LittleEndian(file, at + 12 + length, 4), MaskedCrc(data))
        << "data CRC of the record at " << at;
    records.push_back(data);
    at += 12 + length + 4;
  }
  return records;
}

// Protobuf wire format: the fields of one message, by number.
struct Field {
  int number = 0;
  int wire_type = 0;
  uint64_t varint = 0;  // wire types 0, 1 (raw bits), 5 (raw bits)
  std::string bytes;    // wire type 2
};
uint64_t ReadVarint(const std::string& m, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0; at < m.size(); shift += 7) {
    const auto b = static_cast<unsigned char>(m[at++]);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
  ADD_FAILURE() << "truncated varint";
  return v;
}
std::vector<Field> ParseMessage(const std::string& m) {
  std::vector<Field> fields;
  size_t at = 0;
  while (at < m.size()) {
    Field f;
    const uint64_t tag = ReadVarint(m, at);
    f.number = static_cast<int>(tag >> 3);
    f.wire_type = static_cast<int>(tag & 7);
    switch (f.wire_type) {
      case 0:
        f.varint = ReadVarint(m, at);
        break;
      case 1:
        f.varint = LittleEndian(m, at, 8);
        at += 8;
        break;
      case 5:
        f.varint = LittleEndian(m, at, 4);
        at += 4;
        break;
      case 2: {
        const uint64_t n = ReadVarint(m, at);
        f.bytes = m.substr(at, n);
        at += n;
        break;
      }
      default:
        ADD_FAILURE() << "unexpected wire type " << f.wire_type;
        return fields;
    }
    fields.push_back(f);
  }
  return fields;
}

// tensorflow.Event with one Summary.Value, or the file_version record.
struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::string tag;
  bool has_simple_value = false;
  float simple_value = 0;
};
DecodedEvent DecodeEvent(const std::string& record) {
  DecodedEvent e;
  for (const Field& f : ParseMessage(record)) {
    if (f.number == 1 && f.wire_type == 1) {
      std::memcpy(&e.wall_time, &f.varint, 8);
    } else if (f.number == 2 && f.wire_type == 0) {
      e.step = static_cast<int64_t>(f.varint);
    } else if (f.number == 3 && f.wire_type == 2) {
      e.file_version = f.bytes;
    } else if (f.number == 5 && f.wire_type == 2) {  // Summary
      const std::vector<Field> values = ParseMessage(f.bytes);
      EXPECT_EQ(values.size(), 1u);
      for (const Field& value : values) {
        EXPECT_EQ(value.number, 1);  // repeated Value value = 1
        for (const Field& vf : ParseMessage(value.bytes)) {
          if (vf.number == 1 && vf.wire_type == 2) {
            e.tag = vf.bytes;
          } else if (vf.number == 2 && vf.wire_type == 5) {
            const auto bits = static_cast<uint32_t>(vf.varint);
            std::memcpy(&e.simple_value, &bits, 4);
            e.has_simple_value = true;
          } else {
            ADD_FAILURE() << "unexpected Summary.Value field " << vf.number;
          }
        }
      }
    } else {
      ADD_FAILURE() << "unexpected Event field " << f.number << " (wire type " << f.wire_type
                    << ")";
    }
  }
  return e;
}

std::vector<DecodedEvent> ReadEvents(const std::string& path) {
  std::vector<DecodedEvent> events;
  for (const std::string& r : ReadRecords(ReadFile(path))) events.push_back(DecodeEvent(r));
  return events;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(SummaryWriterTest, WritesVersionThenScalarsTensorBoardCanRead) {
  const std::string logdir = TempDir() + "/runs/mlp";  // created, parents too
  const double before = Now();
  std::string path;
  {
    SummaryWriter writer(logdir);
    path = writer.path();
    writer.Scalar("loss", 2.5f, 0);
    writer.Scalar("accuracy/ema", 0.875f, 1);
    writer.Scalar("loss", -1e-3f, 1234567890123);
  }  // the destructor flushes
  const double after = Now();

  // TensorBoard's file name pattern, in logdir itself.
  ASSERT_EQ(ListDir(logdir).size(), 1u);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string name = std::filesystem::path(path).filename().string();
  EXPECT_EQ(std::filesystem::path(path).parent_path(), std::filesystem::path(logdir));
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      name, m, std::regex(R"(events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+))")))
      << name;
  EXPECT_NEAR(std::stod(m[1]), before, 2.0);
  EXPECT_EQ(m[2].str(), host);
  EXPECT_EQ(m[3].str(), std::to_string(getpid()));

  const std::vector<DecodedEvent> events = ReadEvents(path);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].step, 0);
  EXPECT_TRUE(events[0].tag.empty());
  EXPECT_EQ(events[1].tag, "loss");
  EXPECT_TRUE(events[1].has_simple_value);
  EXPECT_EQ(events[1].simple_value, 2.5f);
  EXPECT_EQ(events[1].step, 0);
  EXPECT_EQ(events[2].tag, "accuracy/ema");
  EXPECT_EQ(events[2].simple_value, 0.875f);
  EXPECT_EQ(events[2].step, 1);
  EXPECT_EQ(events[3].simple_value, -1e-3f);
  EXPECT_EQ(events[3].step, 1234567890123);
  for (const DecodedEvent& e : events) {
    EXPECT_GE(e.wall_time, before - 1e-3);
    EXPECT_LE(e.wall_time, after + 1e-3);
  }
}

TEST(SummaryWriterTest, ZeroValueIsStillWritten) {
  // proto3 omits default scalars, but a oneof member is written when set:
  // TensorBoard must see a 0 point, not a value-less summary.
  SummaryWriter writer(TempDir());
  writer.Scalar("zero", 0.0f, 3);
  writer.Close();
  const std::vector<DecodedEvent> events = ReadEvents(writer.path());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[1].has_simple_value);
  EXPECT_EQ(events[1].simple_value, 0.0f);
}

TEST(SummaryWriterTest, BuffersUntilMaxQueueThenFlushes) {
  SummaryWriterOptions options;
  options.flush_interval = std::chrono::hours(1);
  options.max_queue = 3;
  SummaryWriter writer(TempDir(), options);
  EXPECT_EQ(ReadEvents(writer.path()).size(), 1u);  // file_version is on disk at once
  writer.Scalar("a", 1, 1);
  writer.Scalar("a", 2, 2);
  EXPECT_EQ(ReadEvents(writer.path()).size(), 1u);  // pending
  writer.Scalar("a", 3, 3);
  EXPECT_EQ(ReadEvents(writer.path()).size(), 4u);  // the third one flushes
  writer.Scalar("a", 4, 4);
  EXPECT_EQ(ReadEvents(writer.path()).size(), 4u);
  writer.Flush();
  EXPECT_EQ(ReadEvents(writer.path()).size(), 5u);
  writer.Scalar("a", 5, 5);
  writer.Close();
  const std::vector<DecodedEvent> events = ReadEvents(writer.path());
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[5].simple_value, 5.0f);
}

TEST(SummaryWriterTest, FlushesWhenTheIntervalHasPassed) {
  SummaryWriterOptions options;
  options.flush_interval = std::chrono::milliseconds(50);
  options.max_queue = 1000;
  SummaryWriter writer(TempDir(), options);
  writer.Scalar("a", 1, 1);  // within the interval of the file_version flush
  EXPECT_EQ(ReadEvents(writer.path()).size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  writer.Scalar("a", 2, 2);
  EXPECT_EQ(ReadEvents(writer.path()).size(), 3u);
}

TEST(SummaryWriterTest, TwoWritersInOneSecondGetTwoFiles) {
  const std::string dir = TempDir();
  SummaryWriter a(dir);
  SummaryWriter b(dir);
  EXPECT_NE(a.path(), b.path());
  EXPECT_EQ(ListDir(dir).size(), 2u);
}

TEST(SummaryWriterTest, FilenameSuffix) {
  SummaryWriterOptions options;
  options.filename_suffix = ".v2";
  SummaryWriter writer(TempDir(), options);
  EXPECT_TRUE(writer.path().ends_with(".v2")) << writer.path();
}

TEST(SummaryWriterTest, Errors) {
  const std::string dir = TempDir();
  SummaryWriter writer(dir);
  EXPECT_THROW(writer.Scalar("", 1, 1), InvalidArgumentError);
  writer.Close();
  writer.Close();  // idempotent
  try {
    writer.Scalar("loss", 1, 1);
    FAIL() << "expected FailedPreconditionError";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
  }
  SummaryWriterOptions bad;
  bad.max_queue = 0;
  EXPECT_THROW(SummaryWriter(dir, bad), InvalidArgumentError);
  // A logdir that is a file cannot hold an event file.
  testing::WriteFile(dir + "/file", "x");
  try {
    SummaryWriter w(dir + "/file");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace eager
