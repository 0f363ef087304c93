// What a name costs a NameRegistry (issue 27: graphs of millions of nodes).
// Heap in use is mallinfo2()'s, small blocks and mmapped ones together.

#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/names.h"
#include "tests/testing/memory_measurement.h"

namespace eager {
namespace {

constexpr bool kHeapIsEagers = testing::kMemoryIsMeasurable;

size_t HeapInUse() { return static_cast<size_t>(testing::HeapInUseBytes()); }

// 100k names like the nodes of issue 27's file, 12 to 14 bytes each.
// Measured (Release, glibc): 41 bytes a name: the lower-cased copy with 5
// bytes of count and length, and 21 bytes of table at this fill. An
// unordered_map<std::string, int> took 78: a 64-byte node per name plus
// its bucket. The bound leaves room for a fuller arena.
constexpr double kBytesPerNameBound = 56;

TEST(NameMemoryTest, ANameCostsItsBytesAndAFewMore) {
  constexpr int kNames = 100000;
  std::vector<std::string> wanted;
  wanted.reserve(kNames);
  for (int i = 0; i < kNames; ++i) wanted.push_back(StrCat("layer", i, "/add"));
  const size_t before = HeapInUse();
  auto names = std::make_unique<NameRegistry>();
  for (const std::string& name : wanted) ASSERT_EQ(names->UniqueName(name), name);
  const double per_name = static_cast<double>(HeapInUse() - before) / kNames;
  std::cout << "NameRegistry: " << per_name << " bytes a name\n";
  EXPECT_TRUE(names->IsUsed("LAYER99999/ADD"));
  names.reset();
  if (kHeapIsEagers) {
    EXPECT_LT(per_name, kBytesPerNameBound);
    EXPECT_LT(HeapInUse(), before + 4096) << "the registry's memory is freed";
  }
}

}  // namespace
}  // namespace eager
