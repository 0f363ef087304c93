#include "distributed/world.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>

#include "runtime/errors.h"

namespace eager::distributed {
namespace {

const World& TheWorld() { return *World::Current(); }

TEST(WorldTest, RankAndSizeAgreeWithTheLauncher) {
  const World& world = TheWorld();
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(world.size(), size != nullptr ? std::atoi(size) : 1);
  EXPECT_EQ(world.rank(), rank != nullptr ? std::atoi(rank) : 0);
  EXPECT_EQ(world.uses_mpi(), size != nullptr);
  EXPECT_EQ(world.is_root(), world.rank() == 0);
}

TEST(WorldTest, ASecondWorldIsRefused) { EXPECT_THROW(World(), FailedPreconditionError); }

TEST(WorldTest, AllreduceSumAddsEveryRanksValues) {
  const World& world = TheWorld();
  const int n = world.size();
  const int triangle = n * (n - 1) / 2;  // 0 + 1 + ... + (n - 1)
  std::vector<float> floats = {1.0f, float(world.rank()), 0.5f};
  world.AllreduceSum(std::span<float>(floats));
  EXPECT_EQ(floats, (std::vector<float>{float(n), float(triangle), 0.5f * float(n)}));
  std::vector<double> doubles = {double(world.rank() + 1)};
  world.AllreduceSum(std::span<double>(doubles));
  EXPECT_EQ(doubles[0], double(triangle + n));
}

TEST(WorldTest, AllGatherReturnsEveryRanksBytesInRankOrder) {
  const World& world = TheWorld();
  const std::vector<std::string> all = world.AllGather(std::string(size_t(world.rank()), 'x'));
  ASSERT_EQ(all.size(), size_t(world.size()));
  for (size_t r = 0; r < all.size(); ++r) EXPECT_EQ(all[r], std::string(r, 'x'));
}

TEST(WorldTest, BroadcastCopiesRootsBytes) {
  const World& world = TheWorld();
  const int root = world.size() - 1;
  std::vector<std::byte> bytes(5, std::byte(world.rank()));
  world.Broadcast(bytes, root);
  EXPECT_EQ(bytes, std::vector<std::byte>(5, std::byte(root)));
  EXPECT_THROW(world.Broadcast(bytes, world.size()), InvalidArgumentError);
  world.Barrier();
}

}  // namespace
}  // namespace eager::distributed
