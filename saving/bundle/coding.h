#pragma once

// Little-endian fixed-width integers and varints (FORMAT.md 1.1), LevelDB
// style: encoders append to a std::string; decoders consume from the front of
// a std::string_view and return false, consuming nothing, when the input is
// short or malformed, so callers check every length against what is left.
// For saving's bundle and summary files; not installed (cmake/package.cmake): not user API.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace eager::internal {

inline void PutFixed32(std::string& out, uint32_t v) {
  char buf[4];
  for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out.append(buf, 4);
}

inline void PutFixed64(std::string& out, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out.append(buf, 8);
}

inline void PutVarint64(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++len;
  }
  return len;
}

inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

inline bool GetFixed32(std::string_view& in, uint32_t& v) {
  if (in.size() < 4) return false;
  v = DecodeFixed32(in.data());
  in.remove_prefix(4);
  return true;
}

// At most 10 bytes; a 10th byte may only carry the top bit of a uint64.
inline bool GetVarint64(std::string_view& in, uint64_t& v) {
  uint64_t result = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    const auto byte = static_cast<uint8_t>(in[i]);
    if (i == 9 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      v = result;
      in.remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

}  // namespace eager::internal
