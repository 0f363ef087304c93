#pragma once

// The checksum of a DT_STRING tensor's lengths in a bundle (FORMAT.md 2.7),
// in one place for the writer and the reader. The data file stores each
// length as a varint64, but TF's checksum is fed each length as a 4-byte
// little-endian integer, or 8 bytes when it does not fit in 32 bits; the
// masked result follows the varints, and the entry's CRC runs over those fed
// lengths, the 4 stored bytes of the masked length CRC, then the strings.

#include <cstdint>

#include "saving/bundle/crc32c.h"

namespace eager::internal {

// `crc` extended by one string length, as TF's checksum sees it.
inline uint32_t ExtendCrcWithStringLength(uint32_t crc, uint64_t length) {
  char fixed[8];
  const int width = length <= UINT32_MAX ? 4 : 8;
  for (int b = 0; b < width; ++b) fixed[b] = static_cast<char>((length >> (8 * b)) & 0xff);
  return crc32c::Extend(crc, fixed, static_cast<size_t>(width));
}

}  // namespace eager::internal
