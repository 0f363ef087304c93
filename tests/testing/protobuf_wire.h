#pragma once

// Protobuf's wire format spelled out by hand, for tests that craft files
// byte by byte (a field that lies about its size, a message cut short, a node
// eager must refuse) independently of the protobuf code under test.
//
//   using namespace eager::testing::wire;
//   std::string node = MessageField(1, MessageField(1, "x") + MessageField(2, "Const"));
//   std::string version = VarintField(1, 38);

#include <cstdint>
#include <string>
#include <string_view>

namespace eager::testing::wire {

// A base-128 varint, least significant group first.
inline std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}

// Field `number` of `wire_type` (0 varint, 1 fixed64, 2 length-delimited,
// 5 fixed32) with `payload` as its encoded value; a length-delimited one gets
// its length prefix here.
inline std::string Field(int number, int wire_type, std::string_view payload) {
  std::string out = Varint(static_cast<uint64_t>(number) << 3 | static_cast<uint64_t>(wire_type));
  if (wire_type == 2) out += Varint(payload.size());
  return out.append(payload);
}

// A length-delimited field: bytes, a string or a nested message.
inline std::string MessageField(int number, std::string_view bytes) {
  return Field(number, 2, bytes);
}

// A varint field (int32/int64/uint64/bool/enum; a negative int64 as its
// two's complement, ten bytes, as protobuf writes it).
inline std::string VarintField(int number, int64_t v) {
  return Field(number, 0, Varint(static_cast<uint64_t>(v)));
}

}  // namespace eager::testing::wire
