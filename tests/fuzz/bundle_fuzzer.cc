// libFuzzer target: the bundle reader, the `checkpoint` state-file parser,
// object graphs and meta graphs on arbitrary bytes (issues 10 and 27).
// Input layout:
//   'S' + text                      -> ParseCheckpointStateText(text)
//   'G' + bytes                     -> the bytes as a TrackableObjectGraph:
//                                      parsed, restored into a small model
//                                      (with the status checks), described
//                                      and printed as `eager-ckpt graph` does
//   'M' / 'P' / 'D' + bytes         -> the bytes as a .meta file, a
//                                      saved_model.pb, a bare GraphDef: read,
//                                      listed as `eager-ckpt meta` does
//   'R' + bytes                     -> the bytes as a .meta file: imported
//                                      into a graph and every node run by a
//                                      Session (1 MiB per tensor at most,
//                                      64 loop iterations)
//   'F' + bytes                     -> the bytes as a TF 2 saved_model.pb:
//                                      loaded as LoadSavedModel does (no
//                                      variables/ beside it), then imported
//                                      with its function library and every
//                                      node run as for 'R' (calls, If,
//                                      While, Case and the bodies they run)
//   'H' + bytes                     -> the bytes as a Keras .weights.h5:
//                                      loaded into a small Sequential of
//                                      Dense layers with its Adam
//   'K' + bytes                     -> the bytes as a .keras archive: loaded
//                                      (config built, weights read) and run
//   'J' + bytes                     -> the bytes as a .keras archive's
//                                      config.json (in a stored zip written
//                                      here, beside a valid weights member)
//   any other byte b, fixed32 n, then n bytes of PREFIX.index and the rest as
//   PREFIX.data-00000-of-00001      -> BundleReader: list, Read and dump every key
// An even b reads with the default chunking (1 MiB chunks, two threads from
// 4 MiB: never reached under the 1 MiB input cap); an odd b with chunks of
// 2^(4 + (b >> 1) % 8) bytes (16 to 2048) and two threads from four chunks on
// (saving/bundle/internal/read_chunking.h), so that small inputs take the multi-chunk,
// two-thread path too ('C' = 0x43: 32-byte chunks, two threads from 128).
// libhdf5 is not instrumented (a Debian library): 'H' and 'K' find what
// eager's own checks and its forked reader let through, not bugs inside it.
// Any eager::Error is an expected outcome; anything else (a crash, a
// sanitizer report, std::bad_alloc, std::filesystem_error, a timeout) is a bug.
// Built and run by tests/fuzz/run.sh.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/sequential.h"
#include "ops/session.h"
#include "runtime/errors.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/bundle/internal/read_chunking.h"
#include "saving/bundle/posix_file.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/internal/restore_coordinator.h"
#include "saving/checkpoint/object_graph.h"
#include "saving/keras/keras_model.h"
#include "saving/keras/keras_weights.h"
#include "saving/saver/internal/function_library_reader.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saved_model.h"
#include "saving/tools/checkpoint_tools.h"
#include "saving/tools/inspect_checkpoint.h"
#include "saving/tools/meta_graph_listing.h"

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

// One bundle for every graph input: the tensor "v" its attributes may name.
std::shared_ptr<const eager::BundleReader> GraphBundle() {
  static const std::shared_ptr<const eager::BundleReader> reader = [] {
    const std::string prefix = Prefix() + "_graph";
    eager::BundleWriter writer(prefix);
    writer.Add("v", eager::Tensor(1.0f));
    writer.Finish();
    return std::make_shared<const eager::BundleReader>(prefix);
  }();
  return reader;
}

// A small live model: a Checkpoint of "a" and "b" (Variables).
void FuzzObjectGraph(const char* data, size_t size) {
  eager::internal::SavedObjectGraph graph;
  try {
    graph = eager::internal::ParseObjectGraph(std::string(data, size), "fuzz");
  } catch (const eager::Error&) {
    return;
  }
  const auto reader = GraphBundle();
  const eager::internal::SavedObjectNames names(graph);
  // Every name is O(depth): only a bounded sample, as messages do.
  for (size_t i = 0; i < graph.nodes.size() && i < 64; ++i) (void)names.Name(static_cast<int>(i));
  eager::Variable a(eager::Tensor(0.0f), "a");
  eager::Variable b(eager::Tensor(0.0f), "b");
  eager::Checkpoint root({{"a", &a}, {"b", &b}});  // a Trackable with a save_counter child
  try {
    auto coordinator = std::make_shared<eager::internal::RestoreCoordinator>("fuzz", reader, graph);
    coordinator->Start(root);
    for (int check = 0; check < 3; ++check) {
      try {
        if (check == 0) coordinator->AssertExistingObjectsMatched(root);
        if (check == 1) coordinator->AssertNontrivialMatch(root);
        if (check == 2) coordinator->AssertConsumed(root);
      } catch (const eager::Error&) {
      }
    }
    coordinator->MarkChecked();
  } catch (const eager::Error&) {
  }
  const std::vector<eager::ObjectGraphNode> nodes = eager::DescribeObjectGraph(graph, *reader);
  if (nodes.size() > 2000) return;  // the printed paths are quadratic in the depth
  for (bool json : {false, true}) {
    std::ostringstream out;
    eager::PrintObjectGraph(*reader, nodes, json, out);
  }
}

void FuzzMetaGraph(char mode, const char* data, size_t size) {
  const std::string dir = eager::internal::DirName(Prefix());
  const std::string path = dir + (mode == 'P' ? "/saved_model.pb" : "/graph.meta");
  WriteWhole(path, data, size);
  try {
    eager::MetaGraphListing listing;
    if (mode == 'D') {
      listing.file = path;
      listing.graphs.emplace(path, eager::MetaGraphFile::Kind::kGraphDef);
    } else {
      listing = eager::ReadMetaGraphListing(path);
    }
    for (bool json : {false, true}) {
      std::ostringstream out;
      eager::PrintMetaGraphListing(listing, json, out);
    }
    for (size_t i = 0; i < listing.graphs->num_graphs(); ++i) {
      for (const char* name : {"variables", "trainable_variables"}) {
        try {
          (void)eager::VariableDefsOf(listing.graphs->graph(i), name);
        } catch (const eager::Error&) {
        }
      }
    }
  } catch (const eager::Error&) {
  }
}

// Runs each node of `graph` (up to 256) on its own: every kernel on
// whatever attributes and inputs the file gives it. A While loop stops after
// 64 iterations (an endless one is a file's right, not a hang of ours).
void RunEveryNode(eager::Graph& graph) {
  eager::Session session(graph, {.memory_limit_bytes = 1 << 20, .max_loop_iterations = 64});
  for (int n = 0; n < graph.num_nodes() && n < 256; ++n) {
    try {
      session.Run(graph.OperationByName(graph.node(n).name));
      for (size_t i = 0; i < graph.node(n).output_specs.size() && i < 4; ++i) {
        (void)session.Run(eager::StrCat(graph.node(n).name, ":", i).c_str());
      }
    } catch (const eager::Error&) {
    }
  }
}

void FuzzGraphRun(const char* data, size_t size) {
  const std::string path = eager::internal::DirName(Prefix()) + "/run.meta";
  WriteWhole(path, data, size);
  eager::Graph graph;
  try {
    eager::ImportIntoGraph(eager::ReadMetaGraph(path), graph);
  } catch (const eager::Error&) {
    return;
  }
  RunEveryNode(graph);
}

// A TF 2 SavedModel: LoadSavedModel (object graph, function library, the
// restore it plans; there is no variables/ to read), then the graph with its
// library run node by node.
void FuzzSavedModelFunctions(const char* data, size_t size) {
  const std::string dir = eager::internal::DirName(Prefix()) + "/sm";
  ::mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/saved_model.pb";
  WriteWhole(path, data, size);
  try {
    (void)eager::LoadSavedModel(dir, {"serve"});
  } catch (const eager::Error&) {
  }
  eager::Graph graph;
  try {
    const eager::MetaGraphFile file(path, eager::MetaGraphFile::Kind::kSavedModel);
    if (file.num_graphs() == 0) return;
    eager::ImportIntoGraph(file, 0, graph);
    graph.SetFunctionLibrary(eager::internal::ReadSavedModelFunctions(path, 0));
  } catch (const eager::Error&) {
    return;
  }
  RunEveryNode(graph);
}

// A small compiled model: Dense(4) on [1, 3] then Dense(2), with its Adam.
void FuzzKerasWeights(const char* data, size_t size) {
  const std::string path = eager::internal::DirName(Prefix()) + "/m.weights.h5";
  WriteWhole(path, data, size);
  eager::Sequential model("sequential");
  model.Add(std::make_unique<eager::Dense>(4));
  model.Add(std::make_unique<eager::Dense>(2));
  eager::Adam adam(0.001);
  try {
    eager::LoadKerasWeights(path, model, &adam);
    (void)model(eager::Tensor::FromVector<float>({1, 2, 3}, eager::Shape({1, 3})));
  } catch (const eager::Error&) {
  }
}

// CRC-32 (zip's, the reflected 0xEDB88320 polynomial), bitwise: seeds are small.
uint32_t Crc32(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void Put(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// A zip of `members` stored uncompressed (APPNOTE 4.3: local headers, the
// central directory, its end record).
std::string StoredZip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out;
  std::string central;
  for (const auto& [name, bytes] : members) {
    const uint64_t offset = out.size();
    const uint32_t crc = Crc32(bytes);
    Put(out, 0x04034b50, 4);
    Put(out, 20, 2);  // version needed
    Put(out, 0, 2);   // flags
    Put(out, 0, 2);   // stored
    Put(out, 0, 4);   // time, date
    Put(out, crc, 4);
    Put(out, bytes.size(), 4);
    Put(out, bytes.size(), 4);
    Put(out, name.size(), 2);
    Put(out, 0, 2);
    out += name;
    out += bytes;
    Put(central, 0x02014b50, 4);
    Put(central, 20, 2);
    Put(central, 20, 2);
    Put(central, 0, 2);
    Put(central, 0, 2);
    Put(central, 0, 4);
    Put(central, crc, 4);
    Put(central, bytes.size(), 4);
    Put(central, bytes.size(), 4);
    Put(central, name.size(), 2);
    Put(central, 0, 2);  // extra
    Put(central, 0, 2);  // comment
    Put(central, 0, 2);  // disk
    Put(central, 0, 2);  // internal attributes
    Put(central, 0, 4);  // external attributes
    Put(central, offset, 4);
    central += name;
  }
  const uint64_t central_offset = out.size();
  out += central;
  Put(out, 0x06054b50, 4);
  Put(out, 0, 4);  // disks
  Put(out, members.size(), 2);
  Put(out, members.size(), 2);
  Put(out, central.size(), 4);
  Put(out, central_offset, 4);
  Put(out, 0, 2);
  return out;
}

// The weights member every 'J' input is paired with: a real .weights.h5 of
// Dense(4) on [1, 3] then Dense(2), written once.
const std::string& KerasWeightsMember() {
  static const std::string bytes = [] {
    const std::string path = eager::internal::DirName(Prefix()) + "/seed.weights.h5";
    eager::Sequential model("sequential");
    model.Add(std::make_unique<eager::Dense>(4));
    model.Add(std::make_unique<eager::Dense>(2));
    (void)model(eager::Tensor::FromVector<float>({1, 2, 3}, eager::Shape({1, 3})));
    eager::SaveKerasWeights(path, model);
    return eager::internal::ReadFileToString(path, 1 << 20);
  }();
  return bytes;
}

void FuzzKerasModel(char mode, const char* data, size_t size) {
  const std::string path = eager::internal::DirName(Prefix()) + "/m.keras";
  if (mode == 'J') {
    const std::string zip = StoredZip({{"config.json", std::string(data, size)},
                                       {"metadata.json", R"({"keras_version": "3.15.1"})"},
                                       {"model.weights.h5", KerasWeightsMember()}});
    WriteWhole(path, zip.data(), zip.size());
  } else {
    WriteWhole(path, data, size);
  }
  try {
    eager::KerasModel loaded = eager::LoadKerasModel(path);
    // A Functional config's model is `functional` (`model` is null then).
    (void)loaded.root()(eager::Tensor::FromVector<float>({1, 2, 3}, eager::Shape({1, 3})));
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
  switch (bytes[0]) {
    case 'G':
      FuzzObjectGraph(bytes + 1, size - 1);
      return 0;
    case 'R':
      FuzzGraphRun(bytes + 1, size - 1);
      return 0;
    case 'F':
      FuzzSavedModelFunctions(bytes + 1, size - 1);
      return 0;
    case 'H':
      FuzzKerasWeights(bytes + 1, size - 1);
      return 0;
    case 'K':
    case 'J':
      FuzzKerasModel(bytes[0], bytes + 1, size - 1);
      return 0;
    case 'M':
    case 'P':
    case 'D':
      FuzzMetaGraph(bytes[0], bytes + 1, size - 1);
      return 0;
    default:
      FuzzBundle(data[0], bytes + 1, size - 1);
  }
  return 0;
}
