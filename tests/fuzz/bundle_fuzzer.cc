// libFuzzer target: the bundle reader and the `checkpoint` state-file parser
// on arbitrary bytes (issue 10). Input layout:
//   'S' + text                      -> ParseCheckpointStateText(text)
//   any other byte b, fixed32 n, then n bytes of PREFIX.index and the rest as
//   PREFIX.data-00000-of-00001      -> BundleReader: list, Read and dump every key
// An even b reads with the default chunking (1 MiB chunks, two threads from
// 4 MiB: never reached under the 1 MiB input cap); an odd b with chunks of
// 2^(4 + (b >> 1) % 8) bytes (16 to 2048) and two threads from four chunks on
// (saving/bundle/internal/read_chunking.h), so that small inputs take the multi-chunk,
// two-thread path too ('C' = 0x43: 32-byte chunks, two threads from 128).
// Any eager::Error is an expected outcome; anything else (a crash, a
// sanitizer report, std::bad_alloc, std::filesystem_error, a timeout) is a bug.
// Built and run by tests/fuzz/run.sh.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

#include "runtime/errors.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/internal/read_chunking.h"
#include "saving/tools/inspect_checkpoint.h"

namespace {

void WriteWhole(const std::string& path, const char* data, size_t n) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (n > 0 && std::fwrite(data, 1, n, f) != n) std::abort();
  std::fclose(f);
}

const std::string& Prefix() {
  static const std::string prefix = [] {
    const std::string dir = "/tmp/eager_fuzz_" + std::to_string(::getpid());
    ::mkdir(dir.c_str(), 0755);
    return dir + "/f";
  }();
  return prefix;
}

// The chunking selected by the input's first byte (see the layout above).
eager::internal::ReadChunking ChunkingFor(uint8_t b) {
  if ((b & 1) == 0) return {};
  const uint64_t chunk = uint64_t{16} << ((b >> 1) % 8);
  return {.chunk_bytes = chunk, .split_min_bytes = 4 * chunk};
}

void FuzzBundle(uint8_t mode, const char* data, size_t size) {
  if (size < 4) return;
  const eager::internal::ScopedReadChunking chunking(ChunkingFor(mode));
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(data[i])) << (8 * i);
  data += 4;
  size -= 4;
  if (n > size) n = static_cast<uint32_t>(size);
  const std::string& prefix = Prefix();
  WriteWhole(eager::IndexFilename(prefix), data, n);
  WriteWhole(eager::DataFilename(prefix, 0, 1), data + n, size - n);
  try {
    const eager::BundleReader reader(prefix);
    std::ostringstream out;
    eager::ListCheckpoint(reader, out);
    for (const std::string& key : reader.Keys()) {
      try {
        eager::DumpTensor(reader, key, 16, out);
      } catch (const eager::Error&) {
      }
    }
    (void)eager::VerifyCheckpoint(reader);
  } catch (const eager::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* bytes = reinterpret_cast<const char*>(data);
  if (bytes[0] == 'S') {
    try {
      (void)eager::ParseCheckpointStateText(std::string(bytes + 1, size - 1), "fuzz");
    } catch (const eager::Error&) {
    }
    return 0;
  }
  FuzzBundle(data[0], bytes + 1, size - 1);
  return 0;
}
