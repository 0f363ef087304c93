// Sharded bundles (BundleWriterOptions::num_shards, CheckpointOptions):
// TF's merged layout, N data files and one index, written in parallel.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "runtime/errors.h"
#include "saving/bundle/bundle_files.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_manager.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::ExpectVerifies;
using ::eager::testing::ListDir;
using ::eager::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Floats(int n, float first) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) values[static_cast<size_t>(i)] = first + static_cast<float>(i);
  return Tensor::FromVector<float>(std::move(values));
}

// Five float tensors of 100, 50, 40, 30 and 20 elements over two shards:
// largest first to the lighter shard gives shard 0 {100, 20} and shard 1
// {50, 40, 30} (400 + 80 bytes against 200 + 160 + 120).
void WriteFive(const std::string& prefix, int num_shards) {
  BundleWriter writer(prefix, BundleWriterOptions{.num_shards = num_shards});
  writer.Add("e", Floats(20, 5000));
  writer.Add("a", Floats(100, 1000));
  writer.Add("b", Floats(50, 2000));
  writer.Add("c", Floats(40, 3000));
  writer.Add("d", Floats(30, 4000));
  writer.Add("s", Tensor(std::string("a string")));
  writer.Finish();
}

TEST(ShardedSaveTest, TwoShardsAreTfsMergedLayout) {
  const std::string dir = TempDir();
  WriteFive(dir + "/model.ckpt", 2);
  EXPECT_THAT(ListDir(dir), ElementsAre("model.ckpt.data-00000-of-00002",
                                        "model.ckpt.data-00001-of-00002", "model.ckpt.index"));
  const BundleReader reader(dir + "/model.ckpt");
  EXPECT_EQ(reader.num_shards(), 2);
  // Dealt by size; in a shard, in the order added.
  EXPECT_EQ(reader.GetEntry("a").shard_id, 0);
  EXPECT_EQ(reader.GetEntry("e").shard_id, 0);
  EXPECT_EQ(reader.GetEntry("b").shard_id, 1);
  EXPECT_EQ(reader.GetEntry("c").shard_id, 1);
  EXPECT_EQ(reader.GetEntry("d").shard_id, 1);
  EXPECT_EQ(reader.GetEntry("e").offset, 0);  // added first
  EXPECT_EQ(reader.GetEntry("a").offset, 80);
  EXPECT_EQ(reader.GetEntry("b").offset, 0);
  EXPECT_EQ(reader.GetEntry("c").offset, 200);
  EXPECT_EQ(reader.GetEntry("d").offset, 360);
  for (const auto& [key, first, n] : std::vector<std::tuple<std::string, float, int>>{
           {"a", 1000, 100}, {"b", 2000, 50}, {"c", 3000, 40}, {"d", 4000, 30}, {"e", 5000, 20}}) {
    const Tensor t = reader.Read(key);
    ASSERT_EQ(t.num_elements(), n) << key;
    EXPECT_EQ(t.data<float>()[0], first) << key;
    EXPECT_EQ(t.data<float>()[static_cast<size_t>(n - 1)], first + static_cast<float>(n - 1));
  }
  EXPECT_EQ(reader.Read("s").scalar<std::string>(), "a string");
  EXPECT_EQ(fs::file_size(dir + "/model.ckpt.data-00000-of-00002") +
                fs::file_size(dir + "/model.ckpt.data-00001-of-00002"),
            (100 + 50 + 40 + 30 + 20) * 4 + reader.GetEntry("s").size);
  ExpectVerifies(dir + "/model.ckpt");
}

TEST(ShardedSaveTest, SameTensorsSameFilesAsOneShardApartFromTheLayout) {
  const std::string dir = TempDir();
  WriteFive(dir + "/one", 1);
  WriteFive(dir + "/four", 4);
  const BundleReader one(dir + "/one"), four(dir + "/four");
  EXPECT_EQ(four.num_shards(), 4);
  EXPECT_EQ(one.Keys(), four.Keys());
  std::set<int> shards_used;
  for (const std::string& key : one.Keys()) {
    EXPECT_EQ(one.GetEntry(key).masked_crc32c, four.GetEntry(key).masked_crc32c) << key;
    EXPECT_EQ(one.GetEntry(key).size, four.GetEntry(key).size) << key;
    shards_used.insert(four.GetEntry(key).shard_id);
  }
  EXPECT_THAT(shards_used, ElementsAre(0, 1, 2, 3));
  ExpectVerifies(dir + "/four");
}

TEST(ShardedSaveTest, OverwriteAlternatesNAndNPlusOneFiles) {
  const std::string dir = TempDir();
  const std::string prefix = dir + "/ckpt";
  WriteFive(prefix, 2);
  // Over a 2-file bundle, a 2-shard save writes 3 files, the last empty, so
  // that no data file the old index names is replaced before the index.
  {
    BundleWriter writer(prefix, BundleWriterOptions{.num_shards = 2});
    writer.Add("x", Floats(10, 1));
    writer.Add("y", Floats(10, 2));
    writer.Finish();
  }
  EXPECT_THAT(ListDir(dir), ElementsAre("ckpt.data-00000-of-00003", "ckpt.data-00001-of-00003",
                                        "ckpt.data-00002-of-00003", "ckpt.index"));
  EXPECT_EQ(fs::file_size(prefix + ".data-00002-of-00003"), 0u);
  {
    const BundleReader reader(prefix);
    EXPECT_EQ(reader.num_shards(), 3);
    EXPECT_THAT(reader.Keys(), ElementsAre("x", "y"));
    EXPECT_EQ(reader.GetEntry("x").shard_id, 0);
    EXPECT_EQ(reader.GetEntry("y").shard_id, 1);
    EXPECT_EQ(reader.Read("y").data<float>()[0], 2.0f);
  }
  ExpectVerifies(prefix);
  // And back to 2 files.
  WriteFive(prefix, 2);
  EXPECT_THAT(ListDir(dir),
              ElementsAre("ckpt.data-00000-of-00002", "ckpt.data-00001-of-00002", "ckpt.index"));
  EXPECT_EQ(BundleReader(prefix).Read("a").data<float>()[0], 1000.0f);
  // A 1-shard save over it is 1 file; over that, 2 (the first being the data).
  WriteFive(prefix, 1);
  EXPECT_THAT(ListDir(dir), ElementsAre("ckpt.data-00000-of-00001", "ckpt.index"));
}

TEST(ShardedSaveTest, CheckpointSavesShardedAndRestores) {
  const std::string dir = TempDir();
  Variable a(Floats(1000, 0), "a"), b(Floats(10, 7), "b");
  Checkpoint checkpoint({{"a", &a}, {"b", &b}});
  const std::string path = checkpoint.Save(dir + "/ckpt", CheckpointOptions{.num_shards = 2});
  EXPECT_TRUE(fs::exists(path + ".data-00001-of-00002"));
  EXPECT_EQ(BundleReader(path).num_shards(), 2);
  ExpectVerifies(path);
  // Asynchronous and sharded, through a manager.
  CheckpointManager manager(checkpoint, dir, 2);
  const std::string path2 =
      *manager.Save(std::nullopt, true, CheckpointOptions{.async = true, .num_shards = 3});
  a.Assign(Floats(1000, -5));
  checkpoint.Sync();
  EXPECT_EQ(BundleReader(path2).num_shards(), 3);

  Variable a2(Floats(1000, 1), "a"), b2(Floats(10, 1), "b");
  Checkpoint restored({{"a", &a2}, {"b", &b2}});
  restored.Restore(path2).AssertExistingObjectsMatched();
  EXPECT_EQ(a2.value().data<float>()[999], 999.0f);
  EXPECT_EQ(b2.value().data<float>()[0], 7.0f);
}

TEST(ShardedSaveTest, RejectsShardCountsOutOfRange) {
  const std::string dir = TempDir();
  for (int n : {0, -1, 1025}) {
    try {
      BundleWriter writer(dir + "/ckpt", BundleWriterOptions{.num_shards = n});
      ADD_FAILURE() << n;
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), HasSubstr("num_shards must be in [1, 1024], got " + std::to_string(n)));
    }
  }
  Variable v(Tensor(1.0f), "v");
  Checkpoint checkpoint({{"v", &v}});
  EXPECT_THROW(checkpoint.Write(dir + "/ckpt", CheckpointOptions{.num_shards = 0}),
               InvalidArgumentError);
  EXPECT_THAT(ListDir(dir), ElementsAre());
}

TEST(ShardedSaveTest, FailedShardRemovesEveryTemporaryFile) {
  const std::string dir = TempDir();
  BundleWriter writer(dir + "/ckpt", BundleWriterOptions{.num_shards = 3});
  writer.Add("a", Floats(10, 0));
  writer.Add("b", Floats(10, 0));
  writer.Add("c", Floats(10, 0));
  // A shard's temporary file vanishes under the writer: its fsync still
  // works on the open descriptor, but the rename into place fails.
  for (const std::string& name : ListDir(dir)) {
    if (name.starts_with("ckpt.data-00001-of-00003")) fs::remove(fs::path(dir) / name);
  }
  EXPECT_THROW(writer.Finish(), Error);
  // No temporary file is left and no index names the incomplete data.
  for (const std::string& name : ListDir(dir)) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr("tempstate")));
  }
  EXPECT_FALSE(fs::exists(dir + "/ckpt.index"));
  EXPECT_THROW(BundleReader(dir + "/ckpt"), NotFoundError);
}

}  // namespace
}  // namespace eager
