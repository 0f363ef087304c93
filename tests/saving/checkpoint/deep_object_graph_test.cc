// A crafted object graph that is one long chain (issue 27): its display
// names together are quadratic in its depth (a 20,000-deep chain in a
// 0.5 MB file names 400 MB), so restoring it and describing it for
// `eager-ckpt graph` must build a name only when a message or a printed
// line needs it. Each run happens in a forked child, whose peak resident
// memory (getrusage) is its own, under an alarm.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/trackable.h"
#include "runtime/variable.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_key.h"
#include "saving/checkpoint/object_graph.h"
#include "saving/tools/checkpoint_tools.h"
#include "tests/saving/saving_test_util.h"
#include "tests/testing/memory_measurement.h"

namespace eager {
namespace {

using ::eager::testing::TempDir;
using ::testing::HasSubstr;

constexpr int kDepth = 20000;
// The bound on `eager-ckpt graph`'s output for these chains, in bytes per node.
constexpr size_t kBytesPerNode = 300;

// Root -> "a" -> "a" -> ... `depth` edges deep; every node below the root
// holds a VARIABLE_VALUE, all read from the bundle's one tensor "v".
std::string WriteChain(const std::string& prefix, int depth) {
  internal::SavedObjectGraph graph;
  graph.nodes.resize(static_cast<size_t>(depth) + 1);
  for (int i = 0; i < depth; ++i) {
    graph.nodes[static_cast<size_t>(i)].children.push_back({i + 1, "a"});
    graph.nodes[static_cast<size_t>(i) + 1].attributes.push_back({"VARIABLE_VALUE", "", "v"});
  }
  BundleWriter writer(prefix);
  writer.Add(kObjectGraphKey, Tensor(internal::SerializeObjectGraph(graph)));
  writer.Add("v", Tensor(1.0f));
  writer.Finish();
  return prefix;
}

// An ostream that counts what it is given and keeps none of it.
class CountingBuffer : public std::streambuf {
 public:
  size_t count = 0;

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) ++count;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    count += static_cast<size_t>(n);
    return n;
  }
};

// The growth of a forked child's peak RSS while it runs `work` (60 s at
// most, stderr silenced), in MB; -1 when the child failed.
long PeakGrowthMb(const std::function<void()>& work) {
  const long kb = testing::ChildPeakGrowthKb(
      [&] {
        std::freopen("/dev/null", "w", stderr);
        work();
      },
      60);
  return kb < 0 ? -1 : kb / 1024;
}

// All names built up front, as before, take more than 400 MB at kDepth; the
// streamed names take about 10 MB.
constexpr long kBoundMb = 100;

// Under AddressSanitizer the peak counts its quarantine of freed blocks
// (256 MB by default) and the redzones of every allocation, not eager's
// memory (786 MB measured there for 2 MB in Release): the sanitized pass
// still runs every step and checks every result; the bound is checked by the
// unsanitized pass.
constexpr bool kPeakMemoryIsEagers = testing::kMemoryIsMeasurable;

TEST(DeepObjectGraphTest, RestoreOfADeepChainUsesLinearMemory) {
  const std::string prefix = WriteChain(TempDir() + "/chain", kDepth);
  const long growth = PeakGrowthMb([&] {
    Variable v(Tensor(0.0f), "v");
    Checkpoint checkpoint({{"a", &v}});
    {
      CheckpointLoadStatus status = checkpoint.Read(prefix);
      try {
        status.AssertConsumed();
        _exit(3);
      } catch (const FailedPreconditionError& e) {
        // 19,999 unresolved objects: the first 20 are named.
        if (std::string(e.what()).find("... and 19979 more unresolved objects") ==
            std::string::npos) {
          _exit(4);
        }
      }
    }
    checkpoint.Read(prefix);  // unchecked: the warnings on stderr
    if (v.value().scalar<float>() != 1.0f) _exit(5);
  });
  EXPECT_GE(growth, 0) << "the child failed or ran out of time";
  std::printf("restore: peak growth %ld MB\n", growth);
  if (kPeakMemoryIsEagers) {
    EXPECT_LT(growth, kBoundMb) << "MB of peak memory to restore a chain " << kDepth << " deep";
  }
}

// A live object with one child, "a".
struct Link : Trackable {
  Trackable* next = nullptr;
  std::vector<Child> Children() override { return {{"a", next}}; }
};

// The whole chain bound to live objects: the restore records how it reached
// each node (the edge it followed), not the path's text, so binding is
// linear; a mismatch at the bottom names the full path it followed.
TEST(DeepObjectGraphTest, RestoreIntoADeepLiveChainUsesLinearMemory) {
  const std::string prefix = WriteChain(TempDir() + "/chain", kDepth);
  std::string expected_path = "(root)";
  for (int i = 0; i < kDepth; ++i) expected_path += ".a";
  const long growth = PeakGrowthMb([&] {
    std::vector<Link> links(kDepth - 1);
    for (size_t i = 0; i + 1 < links.size(); ++i) links[i].next = &links[i + 1];
    Variable v(Tensor(0.0f), "v");
    links.back().next = &v;
    Checkpoint({{"a", &links.front()}}).Read(prefix).ExpectPartial();
    if (v.value().scalar<float>() != 1.0f) _exit(3);
    Variable w(Tensor(int64_t{0}), "w");
    links.back().next = &w;
    try {
      Checkpoint({{"a", &links.front()}}).Read(prefix);
      _exit(4);
    } catch (const InvalidArgumentError& e) {
      if (std::string(e.what()).find("(" + expected_path + ") holds float32") ==
          std::string::npos) {
        _exit(5);
      }
    }
  });
  EXPECT_GE(growth, 0) << "the child failed or ran out of time";
  std::printf("restore into a live chain: peak growth %ld MB\n", growth);
  if (kPeakMemoryIsEagers) {
    EXPECT_LT(growth, kBoundMb) << "MB of peak memory to bind a chain " << kDepth << " deep";
  }
}

// Described at full depth; printed at half of it (printing is quadratic in
// time: every line carries its path or indentation).
TEST(DeepObjectGraphTest, GraphCommandOfADeepChainUsesLinearMemory) {
  const std::string dir = TempDir();
  const std::string prefix = WriteChain(dir + "/chain", kDepth);
  const std::string half = WriteChain(dir + "/half", kDepth / 2);
  const long growth = PeakGrowthMb([&] {
    if (DescribeObjectGraph(BundleReader(prefix)).size() != kDepth + 1) _exit(3);
    const BundleReader reader(half);
    const std::vector<ObjectGraphNode> nodes = DescribeObjectGraph(reader);
    for (bool json : {false, true}) {
      CountingBuffer buffer;
      std::ostream out(&buffer);
      PrintObjectGraph(reader, nodes, json, out);
      // Paths and indentation are bounded (issue 37): linear output.
      if (buffer.count > kBytesPerNode * (kDepth / 2 + 1)) _exit(4);
    }
  });
  std::printf("describe and print: peak growth %ld MB\n", growth);
  EXPECT_GE(growth, 0) << "the child failed or ran out of time";
  if (kPeakMemoryIsEagers) {
    EXPECT_LT(growth, kBoundMb) << "MB of peak memory to describe a chain " << kDepth << " deep";
  }
}

// issue 37: `eager-ckpt graph` printed 2.5 GB for a 535 KB, 50,000-deep
// chain (every line carried its indentation or its whole path). Printed
// paths keep their last components, indentation stops deepening, so the
// output is linear in the graph: at most kBytesPerNode bytes a node here.
TEST(DeepObjectGraphTest, GraphCommandOutputOfA50kDeepChainIsBounded) {
  constexpr int kDeep = 50000;
  const std::string prefix = WriteChain(TempDir() + "/chain", kDeep);
  const BundleReader reader(prefix);
  const std::vector<ObjectGraphNode> nodes = DescribeObjectGraph(reader);
  for (bool json : {false, true}) {
    CountingBuffer buffer;
    std::ostream out(&buffer);
    PrintObjectGraph(reader, nodes, json, out);
    EXPECT_LE(buffer.count, kBytesPerNode * (kDeep + 1))
        << (json ? "JSON" : "text") << " bytes printed for a chain " << kDeep << " deep";
  }
  std::ostringstream text;
  PrintObjectGraph(reader, nodes, false, text);
  EXPECT_THAT(text.str(), HasSubstr("[depth 50000]"));
  std::ostringstream json;
  PrintObjectGraph(reader, nodes, true, json);
  EXPECT_THAT(json.str(),
              HasSubstr("\"path\":\"(root).(49984 more levels).a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a\""));
}

// Every walk over a file's object graph is iterative (issue 37 point 2): a
// 1,000,000-deep chain (a 12 MB file) is restored, checked, described and
// printed, in the sanitized pass too, where a recursive walk overflows the
// stack long before. (The live objects here are shallow: a live graph is
// the program's, and its paths are the checkpoint keys it saves.)
TEST(DeepObjectGraphTest, AMillionDeepChainIsRestoredAndPrintedWithoutRecursion) {
  constexpr int kMillion = 1000000;
  const std::string prefix = WriteChain(TempDir() + "/million", kMillion);
  Variable v(Tensor(0.0f), "v");
  Checkpoint checkpoint({{"a", &v}});
  CheckpointLoadStatus status = checkpoint.Read(prefix);
  EXPECT_EQ(v.value().scalar<float>(), 1.0f);
  try {
    status.AssertConsumed();
    ADD_FAILURE() << "a chain of a million values was consumed by one variable";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("... and 999979 more unresolved objects"));
  }
  const BundleReader reader(prefix);
  const std::vector<ObjectGraphNode> nodes = DescribeObjectGraph(reader);
  EXPECT_EQ(nodes.size(), static_cast<size_t>(kMillion) + 1);
  CountingBuffer buffer;
  std::ostream out(&buffer);
  PrintObjectGraph(reader, nodes, false, out);
  EXPECT_LE(buffer.count, kBytesPerNode * (kMillion + 1));
}

TEST(DeepObjectGraphTest, NamesAndListingsOfAShortChain) {
  const std::string prefix = WriteChain(TempDir() + "/chain", 3);
  const BundleReader reader(prefix);
  const std::vector<ObjectGraphNode> nodes = DescribeObjectGraph(reader);
  EXPECT_EQ(ObjectGraphPath(nodes, 3), "(root).a.a.a");
  EXPECT_EQ(nodes[3].parent, 2);
  EXPECT_EQ(nodes[3].parent_edge, 0);
  std::ostringstream text;
  PrintObjectGraph(reader, nodes, false, text);
  EXPECT_EQ(text.str(), prefix +
                            ": object graph of 4 nodes\n"
                            "(root)  #0\n"
                            "  a  #1\n"
                            "    .VARIABLE_VALUE = v  float32[]\n"
                            "    a  #2\n"
                            "      .VARIABLE_VALUE = v  float32[]\n"
                            "      a  #3\n"
                            "        .VARIABLE_VALUE = v  float32[]\n");
  Variable v(Tensor(0.0f), "v");
  EXPECT_THAT(
      [&] {
        Checkpoint({{"a", &v}}).Read(prefix).AssertConsumed();
      },
      ::testing::ThrowsMessage<FailedPreconditionError>(
          HasSubstr("Unresolved object in checkpoint (root).a.a.a: attributes {v}")));
}

}  // namespace
}  // namespace eager
