#include "saving/bundle/partitioned_variables.h"

#include <algorithm>
#include <bit>

#include "runtime/tensor_access.h"

namespace eager {

std::string SliceToString(const TensorSlice& slice) {
  std::string out;
  for (size_t d = 0; d < slice.size(); ++d) {
    if (d > 0) out += ":";
    out += slice[d].whole() ? std::string("-") : StrCat(slice[d].start, ",", slice[d].length);
  }
  return out;
}

namespace internal {
namespace {

// ---- OrderedCode (TF's lib/strings/ordered_code) --------------------------

// A length byte, then the value big-endian in that many bytes (0: none).
void PutNumIncreasing(std::string& out, uint64_t value) {
  const int bytes = value == 0 ? 0 : (std::bit_width(value) + 7) / 8;
  out += static_cast<char>(bytes);
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

bool GetNumIncreasing(std::string_view& in, uint64_t& value) {
  if (in.empty()) return false;
  const auto bytes = static_cast<uint8_t>(in[0]);
  if (bytes > 8 || in.size() < 1u + bytes) return false;
  value = 0;
  for (int i = 1; i <= bytes; ++i) value = (value << 8) | static_cast<uint8_t>(in[i]);
  in.remove_prefix(1u + bytes);
  return true;
}

// 0x00 -> 00 FF, 0xFF -> FF 00, then the terminator 00 01.
void PutString(std::string& out, std::string_view s) {
  for (char c : s) {
    out += c;
    if (c == '\x00') out += '\xff';
    if (c == '\xff') out += '\x00';
  }
  out += '\x00';
  out += '\x01';
}

bool GetString(std::string_view& in, std::string& s) {
  s.clear();
  while (in.size() >= 2 || (!in.empty() && in[0] != '\x00' && in[0] != '\xff')) {
    const char c = in[0];
    if (c != '\x00' && c != '\xff') {
      s += c;
      in.remove_prefix(1);
      continue;
    }
    const char next = in[1];
    in.remove_prefix(2);
    if (c == '\x00' && next == '\x01') return true;
    if (c == '\x00' && next == '\xff') {
      s += '\x00';
    } else if (c == '\xff' && next == '\x00') {
      s += '\xff';
    } else {
      return false;
    }
  }
  return false;  // no terminator
}

// n bytes hold values in [-2^(7n-1), 2^(7n-1)): the value big-endian, sign
// extended to n bytes, with the first one or two bytes XORed with n's header
// bits (n ones then a zero, counting from the top bit).
constexpr uint8_t kHeader[11][2] = {{0, 0},    {0x80, 0},    {0xc0, 0},   {0xe0, 0},
                                    {0xf0, 0}, {0xf8, 0},    {0xfc, 0},   {0xfe, 0},
                                    {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};

void PutSignedNumIncreasing(std::string& out, int64_t value) {
  const uint64_t magnitude = value < 0 ? ~static_cast<uint64_t>(value) : value;
  const int n = std::bit_width(magnitude) / 7 + 1;  // 1 .. 10
  uint8_t buf[10];
  for (int i = 0; i < 10; ++i) {
    const int shift = 8 * (9 - i);
    buf[i] = shift >= 64 ? (value < 0 ? 0xff : 0x00)
                         : static_cast<uint8_t>((static_cast<uint64_t>(value) >> shift) & 0xff);
  }
  uint8_t* begin = buf + 10 - n;
  begin[0] ^= kHeader[n][0];
  if (n > 1) begin[1] ^= kHeader[n][1];
  out.append(reinterpret_cast<const char*>(begin), static_cast<size_t>(n));
}

bool GetSignedNumIncreasing(std::string_view& in, int64_t& value) {
  if (in.empty()) return false;
  const bool negative = (static_cast<uint8_t>(in[0]) & 0x80) == 0;
  const uint8_t flip = negative ? 0xff : 0x00;
  // The length is the count of leading header bits, across up to two bytes.
  int n = std::countl_one(static_cast<uint8_t>(static_cast<uint8_t>(in[0]) ^ flip));
  if (n == 8) {
    if (in.size() < 2) return false;
    n += std::countl_one(static_cast<uint8_t>(static_cast<uint8_t>(in[1]) ^ flip));
  }
  if (n == 0 || n > 10 || in.size() < static_cast<size_t>(n)) return false;
  uint8_t buf[10];
  for (int i = 0; i < n; ++i) buf[i] = static_cast<uint8_t>(in[i]);
  buf[0] ^= kHeader[n][0];
  if (n > 1) buf[1] ^= kHeader[n][1];
  uint64_t bits = negative ? ~uint64_t{0} : 0;
  for (int i = 0; i < n; ++i) bits = (bits << 8) | buf[i];
  value = static_cast<int64_t>(bits);
  in.remove_prefix(static_cast<size_t>(n));
  // Only the minimal encoding is canonical: re-encode to compare.
  std::string again;
  PutSignedNumIncreasing(again, value);
  return again.size() == static_cast<size_t>(n);
}

// A slice with every extent resolved against the full shape.
struct Box {
  std::vector<int64_t> start, length;
  int64_t elements = 1;
  bool Contains(const std::vector<int64_t>& index) const {
    for (size_t d = 0; d < index.size(); ++d) {
      if (index[d] < start[d] || index[d] >= start[d] + length[d]) return false;
    }
    return true;
  }
};

// The multi-index of flat element `flat` of `dims`.
std::vector<int64_t> Unflatten(int64_t flat, std::span<const int64_t> dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : flat % dims[d];
    flat = dims[d] == 0 ? 0 : flat / dims[d];
  }
  return index;
}

}  // namespace

std::string EncodeTensorNameSlice(std::string_view name, const TensorSlice& slice) {
  std::string key;
  PutNumIncreasing(key, 0);
  PutString(key, name);
  PutNumIncreasing(key, slice.size());
  for (const SliceExtent& e : slice) {
    PutSignedNumIncreasing(key, e.whole() ? 0 : e.start);
    PutSignedNumIncreasing(key, e.whole() ? SliceExtent::kWhole : e.length);
  }
  return key;
}

bool DecodeTensorNameSlice(std::string_view key, std::string* name, TensorSlice* slice) {
  uint64_t zero = 1, rank = 0;
  if (!GetNumIncreasing(key, zero) || zero != 0 || !GetString(key, *name) ||
      !GetNumIncreasing(key, rank) || rank > key.size()) {
    return false;
  }
  slice->clear();
  for (uint64_t d = 0; d < rank; ++d) {
    SliceExtent e;
    if (!GetSignedNumIncreasing(key, e.start) || !GetSignedNumIncreasing(key, e.length)) {
      return false;
    }
    slice->push_back(e);
  }
  return key.empty();
}

Tensor AssembleSlices(std::string_view key, std::string_view where, DType dtype,
                      const Shape& full_shape, const std::vector<StoredSlice>& slices,
                      const std::function<Tensor(size_t)>& read_slice) {
  const std::span<const int64_t> full = full_shape.dims();
  const size_t rank = full.size();
  auto error = [&](const TensorSlice& slice, const auto&... what) {
    return DataLossError(StrCat("Partitioned variable ", key, " in ", where, ", slice \"",
                                SliceToString(slice), "\" of full shape ", full_shape, ": ",
                                what...));
  };
  auto listed = [&] {
    std::string out;
    for (const StoredSlice& s : slices) {
      out += (out.empty() ? "\"" : ", \"") + SliceToString(s.slice) + "\"";
    }
    return out;
  };
  // From the index alone: each slice inside the full shape, its entry of the
  // slice's dtype and shape, and the element counts adding up.
  const int64_t total = full_shape.num_elements();
  std::vector<Box> boxes;
  int64_t sum = 0;
  bool too_many = false;  // the element counts exceed the full shape's: an overlap
  for (const StoredSlice& stored : slices) {
    const TensorSlice& slice = stored.slice;
    if (slice.size() > rank) {
      throw error(slice, "it has ", slice.size(), " extents, expected at most the rank ", rank);
    }
    Box box;
    for (size_t d = 0; d < rank; ++d) {
      const SliceExtent e = d < slice.size() ? slice[d] : SliceExtent{};
      const int64_t start = e.whole() ? 0 : e.start;
      const int64_t length = e.whole() ? full[d] : e.length;
      if (start < 0 || length < 0 || start > full[d] || length > full[d] - start) {
        throw error(slice, "dimension ", d, " [", start, ", +", length,
                    ") exceeds the full shape; expected 0 <= start <= start + length <= ", full[d]);
      }
      box.start.push_back(start);
      box.length.push_back(length);
      box.elements *= length;  // <= the full tensor's element count: no overflow
    }
    if (stored.tf_dtype != TfDataType(dtype) || stored.dims != box.length) {
      throw error(slice, "its entry holds ", TfDataTypeName(stored.tf_dtype), " ",
                  DimsToString(stored.dims), ", expected ", TfDataTypeName(TfDataType(dtype)), " ",
                  DimsToString(box.length));
    }
    too_many = __builtin_add_overflow(sum, box.elements, &sum) || sum > total;
    boxes.push_back(std::move(box));
    if (too_many) break;  // these boxes already overlap (pigeonhole)
  }
  if (!too_many && sum < total) {
    throw DataLossError(StrCat("Partitioned variable ", key, " in ", where, " of full shape ",
                               full_shape, ": its ", slices.size(), " slices (", listed(),
                               ") hold ", sum, " elements, expected ", total,
                               ": some elements are in no slice"));
  }
  if (too_many) {
    // Some slices overlap: name a pair when there are few enough to compare.
    for (size_t i = 0; i < boxes.size() && boxes.size() <= 4096; ++i) {
      for (size_t j = 0; j < i; ++j) {
        bool overlap = true;
        for (size_t d = 0; d < rank && overlap; ++d) {
          overlap = boxes[i].start[d] < boxes[j].start[d] + boxes[j].length[d] &&
                    boxes[j].start[d] < boxes[i].start[d] + boxes[i].length[d];
        }
        if (overlap) {
          throw error(slices[i].slice, "it overlaps slice \"", SliceToString(slices[j].slice),
                      "\"");
        }
      }
    }
    throw DataLossError(StrCat("Partitioned variable ", key, " in ", where, " of full shape ",
                               full_shape, ": its ", slices.size(), " slices (", listed(),
                               ") hold more elements than the full shape: they overlap"));
  }

  Tensor out = internal::NewTensor(full_shape, dtype);
  std::vector<bool> covered(static_cast<size_t>(total), false);
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * full[d];
  for (size_t i = 0; i < slices.size(); ++i) {
    const Box& box = boxes[i];
    if (box.elements == 0) continue;
    const Tensor part = read_slice(i);
    if (part.dtype() != dtype || part.num_elements() != box.elements) {
      throw error(slices[i].slice, "its entry was read as ", part.dtype(), part.shape(),
                  ", expected ", dtype, " ", DimsToString(box.length));
    }
    // Row by row along the innermost dimension, checking that no element
    // was already written by another slice.
    const int64_t row = rank == 0 ? 1 : box.length[rank - 1];
    VisitDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = part.data<T>().data();
      T* dst = internal::MutableData<T>(out);
      std::vector<int64_t> index(box.start);  // the full-tensor index of the row's start
      for (int64_t done = 0; done < box.elements; done += row) {
        int64_t at = 0;
        for (size_t d = 0; d < rank; ++d) at += index[d] * strides[d];
        for (int64_t k = 0; k < row; ++k) {
          if (covered[static_cast<size_t>(at + k)]) {
            const std::vector<int64_t> element = Unflatten(at + k, full);
            size_t other = 0;
            while (other < i && !boxes[other].Contains(element)) ++other;
            throw error(slices[i].slice, "it overlaps slice \"", SliceToString(slices[other].slice),
                        "\" (both hold element ", DimsToString(element), ")");
          }
          covered[static_cast<size_t>(at + k)] = true;
          dst[at + k] = src[done + k];
        }
        // The next row: an odometer over the box's outer dimensions.
        for (size_t d = rank > 0 ? rank - 1 : 0; d-- > 0;) {
          if (++index[d] < box.start[d] + box.length[d]) break;
          index[d] = box.start[d];
        }
      }
    });
  }
  return out;
}

}  // namespace internal
}  // namespace eager
