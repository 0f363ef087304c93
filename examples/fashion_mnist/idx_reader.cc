#include "examples/fashion_mnist/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "runtime/errors.h"

namespace fashion_mnist {
namespace {

using eager::DataLossError;
using eager::StrCat;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to `n` bytes; returns how many were read. Throws on a zlib error
// (a corrupt or truncated gzip stream).
size_t ReadSome(gzFile file, const std::string& path, void* out, size_t n) {
  size_t total = 0;
  while (total < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - total, 1u << 20));
    const int got = gzread(file, static_cast<char*>(out) + total, chunk);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      throw DataLossError(
          StrCat("IDX file ", path, ": corrupt gzip stream after ", total, " bytes: ", message));
    }
    if (got == 0) break;
    total += static_cast<size_t>(got);
  }
  // zlib reports a stream that ends early only through gzerror.
  int code = Z_OK;
  gzerror(file, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    throw DataLossError(
        StrCat("IDX file ", path, ": truncated or corrupt gzip stream: ", gzerror(file, &code)));
  }
  return total;
}

}  // namespace

IdxArray ReadIdxFile(const std::string& path, int64_t max_bytes) {
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) {
    throw eager::NotFoundError(StrCat("IDX file ", path, ": cannot open (", std::strerror(errno),
                                      "); Fashion-MNIST is in /usr/share/datasets/fashion-mnist "
                                      "(Debian package dataset-fashion-mnist)"));
  }
  unsigned char magic[4];
  if (ReadSome(file.get(), path, magic, 4) != 4) {
    throw DataLossError(StrCat("IDX file ", path, ": shorter than the 4-byte magic number"));
  }
  if (magic[0] != 0 || magic[1] != 0) {
    throw DataLossError(StrCat("IDX file ", path,
                               ": bad magic number (expected two zero bytes, a type byte and a "
                               "dimension count; got bytes ",
                               int(magic[0]), " ", int(magic[1]), " ", int(magic[2]), " ",
                               int(magic[3]), ")"));
  }
  const int type = magic[2];
  const int rank = magic[3];
  switch (type) {
    case 0x08:
      break;
    case 0x09:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x0E:
      throw eager::UnimplementedError(StrCat("IDX file ", path, ": element type 0x", std::hex, type,
                                             " is valid IDX but only unsigned bytes "
                                             "(0x08) are supported"));
    default:
      throw DataLossError(StrCat("IDX file ", path, ": unknown element type byte ", type,
                                 " (expected 0x08 for unsigned bytes)"));
  }
  if (rank < 1 || rank > 4) {
    throw DataLossError(
        StrCat("IDX file ", path, ": ", rank, " dimensions; expected 1 (labels) to 4"));
  }
  IdxArray out;
  int64_t num_bytes = 1;
  for (int i = 0; i < rank; ++i) {
    unsigned char b[4];
    if (ReadSome(file.get(), path, b, 4) != 4) {
      throw DataLossError(
          StrCat("IDX file ", path, ": header ends inside dimension ", i, " of ", rank));
    }
    const int64_t dim =
        (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | int64_t{b[3]};
    out.dims.push_back(dim);
    num_bytes *= dim;  // at most 4 factors below 2^32 each are checked one by one
    if (num_bytes > max_bytes) {
      throw DataLossError(
          StrCat("IDX file ", path, ": dimensions claim more than ", max_bytes, " bytes of data"));
    }
  }
  // Grow with what is actually read, so a lying header cannot make us
  // allocate memory the file does not back.
  constexpr size_t kChunk = size_t{1} << 20;
  while (out.data.size() < static_cast<size_t>(num_bytes)) {
    const size_t want = std::min(kChunk, static_cast<size_t>(num_bytes) - out.data.size());
    const size_t old = out.data.size();
    out.data.resize(old + want);
    const size_t got = ReadSome(file.get(), path, out.data.data() + old, want);
    if (got != want) {
      throw DataLossError(StrCat("IDX file ", path, ": truncated: the header promises ", num_bytes,
                                 " data bytes but the file holds ", old + got));
    }
  }
  unsigned char extra;
  if (ReadSome(file.get(), path, &extra, 1) != 0) {
    throw DataLossError(StrCat("IDX file ", path, ": more data than the header's ", num_bytes,
                               " bytes (trailing garbage or a wrong dimension)"));
  }
  return out;
}

}  // namespace fashion_mnist
