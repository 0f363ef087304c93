// The C++ side of tests/tf/bundles.py: writes and reads TensorBundles with
// eager's BundleWriter and BundleReader, so that TensorFlow can judge them.
// Tensors travel as a text manifest plus a binary blob, both written and read
// by the Python test (one process call per batch of bundles):
//
//   bundle <prefix hex> <num_shards>
//   tensor <key hex> <TF DataType enum> <rank> <dim>... <blob offset> <bytes>
//   error <key hex> <message hex>          (read only: eager could not read it)
//
// A tensor's bytes are its elements in row-major order, little-endian; a
// string element is an 8-byte little-endian length and its bytes.
//
//   tf_bundle_tool write MANIFEST BLOB          # every bundle in MANIFEST
//   tf_bundle_tool read MANIFEST BLOB PREFIX... # every key of every PREFIX
//   tf_bundle_tool write-large PREFIX KEY BYTES # uint8, LargeByte(i) at i
//   tf_bundle_tool check-large PREFIX KEY       # reads KEY, checks the same
//
// Exit 0 on success; 1 with a message on stderr otherwise.

#include <complex>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "eager.h"

namespace {

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string Unhex(const std::string& hex) {
  if (hex == "-") return "";  // the empty string (a word cannot be empty)
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

std::string HexOrDash(std::string_view bytes) { return bytes.empty() ? "-" : Hex(bytes); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

uint64_t ReadLength(const std::string& blob, size_t& at) {
  uint64_t length = 0;
  if (at + 8 > blob.size()) throw std::runtime_error("string length past the blob's end");
  std::memcpy(&length, blob.data() + at, 8);
  at += 8;
  return length;
}

// The tensor of `dtype` and `shape` whose bytes are blob[offset, offset + size).
eager::Tensor FromBytes(eager::DType dtype, const eager::Shape& shape, const std::string& blob,
                        size_t offset, size_t size) {
  if (offset + size > blob.size()) throw std::runtime_error("tensor past the blob's end");
  const auto n = static_cast<size_t>(shape.num_elements());
  return eager::VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values(n);
    if constexpr (std::is_same_v<T, std::string>) {
      size_t at = offset;
      for (std::string& value : values) {
        const uint64_t length = ReadLength(blob, at);
        if (at + length > offset + size) throw std::runtime_error("string past its tensor's end");
        value.assign(blob.data() + at, length);
        at += length;
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < n; ++i) values[i] = blob[offset + i] != 0;
    } else {
      if (size != n * sizeof(T)) throw std::runtime_error("tensor bytes do not fit its shape");
      if (size > 0) std::memcpy(static_cast<void*>(values.data()), blob.data() + offset, size);
    }
    return eager::Tensor::FromVector<T>(std::move(values), shape);
  });
}

void AppendBytes(const eager::Tensor& tensor, std::string& blob) {
  if (tensor.dtype() == eager::DType::kString) {
    for (const std::string& value : tensor.data<std::string>()) {
      const uint64_t length = value.size();
      blob.append(reinterpret_cast<const char*>(&length), 8);
      blob += value;
    }
  } else {
    const std::span<const std::byte> bytes = tensor.bytes();
    blob.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
}

int Write(const std::string& manifest_path, const std::string& blob_path) {
  const std::string blob = ReadFile(blob_path);
  std::istringstream manifest(ReadFile(manifest_path));
  std::unique_ptr<eager::BundleWriter> writer;
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "bundle") {
      if (writer) writer->Finish();
      std::string prefix;
      int num_shards = 1;
      words >> prefix >> num_shards;
      writer = std::make_unique<eager::BundleWriter>(Unhex(prefix),
                                                     eager::BundleWriterOptions{num_shards});
    } else if (kind == "tensor") {
      std::string key;
      int tf_dtype = 0, rank = 0;
      words >> key >> tf_dtype >> rank;
      std::vector<int64_t> dims(static_cast<size_t>(rank));
      for (int64_t& dim : dims) words >> dim;
      size_t offset = 0, size = 0;
      words >> offset >> size;
      const std::optional<eager::DType> dtype = eager::DTypeFromTfDataType(tf_dtype);
      if (!dtype) throw std::runtime_error("no eager dtype for TF DataType " + line);
      writer->Add(Unhex(key), FromBytes(*dtype, eager::Shape(dims), blob, offset, size));
    }
  }
  if (writer) writer->Finish();
  return 0;
}

int Read(const std::string& manifest_path, const std::string& blob_path,
         const std::vector<std::string>& prefixes) {
  std::string blob;
  std::ostringstream manifest;
  for (const std::string& prefix : prefixes) {
    eager::BundleReader reader(prefix);
    manifest << "bundle " << Hex(prefix) << " " << reader.num_shards() << "\n";
    for (const std::string& key : reader.Keys()) {
      if (reader.IsSliceOfPartitionedVariable(key)) continue;  // read as its variable
      try {
        const eager::Tensor tensor = reader.Read(key);
        manifest << "tensor " << HexOrDash(key) << " " << eager::TfDataType(tensor.dtype()) << " "
                 << tensor.shape().rank();
        for (const int64_t dim : tensor.shape().dims()) manifest << " " << dim;
        const size_t offset = blob.size();
        AppendBytes(tensor, blob);
        manifest << " " << offset << " " << blob.size() - offset << "\n";
      } catch (const eager::Error& e) {
        manifest << "error " << HexOrDash(key) << " " << Hex(e.what()) << "\n";
      }
    }
  }
  std::ofstream(blob_path, std::ios::binary) << blob;
  std::ofstream(manifest_path) << manifest.str();
  return 0;
}

// The byte at index i of the large tensor: every byte of i matters, so a
// chunk read from the wrong offset (by any multiple of 2^k bytes) differs.
uint8_t LargeByte(uint64_t i) {
  return static_cast<uint8_t>(i ^ (i >> 8) ^ (i >> 16) ^ (i >> 24) ^ (i >> 32));
}

int WriteLarge(const std::string& prefix, const std::string& key, int64_t bytes) {
  std::vector<uint8_t> values(static_cast<size_t>(bytes));
  for (size_t i = 0; i < values.size(); ++i) values[i] = LargeByte(i);
  eager::BundleWriter writer(prefix);
  writer.Add(key, eager::Tensor::FromVector<uint8_t>(std::move(values), eager::Shape{bytes}));
  writer.Finish();
  std::cout << "wrote " << key << ": uint8[" << bytes << "]\n";
  return 0;
}

int CheckLarge(const std::string& prefix, const std::string& key) {
  const eager::Tensor tensor = eager::BundleReader(prefix).Read(key);
  if (tensor.dtype() != eager::DType::kUInt8 || tensor.shape().rank() != 1) {
    std::cerr << "check-large: " << key << " is " << tensor.dtype() << tensor.shape() << "\n";
    return 1;
  }
  const std::span<const uint8_t> values = tensor.data<uint8_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != LargeByte(i)) {
      std::cerr << "check-large: " << key << " differs at byte " << i << "\n";
      return 1;
    }
  }
  std::cout << "read " << key << ": uint8[" << values.size() << "], every byte as written\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 3 && args[0] == "write") return Write(args[1], args[2]);
    if (args.size() >= 3 && args[0] == "read") {
      return Read(args[1], args[2], std::vector<std::string>(args.begin() + 3, args.end()));
    }
    if (args.size() == 4 && args[0] == "write-large") {
      return WriteLarge(args[1], args[2], std::stoll(args[3]));
    }
    if (args.size() == 3 && args[0] == "check-large") return CheckLarge(args[1], args[2]);
  } catch (const std::exception& e) {
    std::cerr << "tf_bundle_tool: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: tf_bundle_tool write|read|write-large|check-large ...\n";
  return 2;
}
