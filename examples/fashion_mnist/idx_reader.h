#pragma once

// Reader for the IDX files of MNIST and Fashion-MNIST, gzip-compressed or not.
//
// IDX layout (big-endian): two zero bytes, a type byte, the number of
// dimensions, one uint32 per dimension, then the elements row-major. The
// datasets use type 0x08 (unsigned byte), the only type supported here.
//
// Nothing in the file is trusted: the header is checked before anything is
// allocated for the data, the data is read in bounded chunks (a lying header
// cannot make us allocate more than the file holds), and a short or overlong
// file is an error.

#include <cstdint>
#include <string>
#include <vector>

namespace fashion_mnist {

struct IdxArray {
  std::vector<int64_t> dims;  // e.g. {60000, 28, 28}
  std::vector<uint8_t> data;  // product(dims) bytes, row-major
};

// Reads `path` (gzip is detected from the content, not the name).
// Throws eager::NotFoundError when the file cannot be opened,
// eager::DataLossError for a malformed, truncated or overlong file (bad magic,
// zero or too many dimensions, a size over `max_bytes`, fewer or more data
// bytes than the header says, a corrupt gzip stream), and
// eager::UnimplementedError for a well-formed IDX file of another element
// type. Every message names the file and what was expected.
IdxArray ReadIdxFile(const std::string& path, int64_t max_bytes = int64_t{1} << 31);

}  // namespace fashion_mnist
