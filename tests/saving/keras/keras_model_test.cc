// Keras 3 `.keras`: eager's writer and reader against each other, and
// crafted archives (zip bombs, path traversal, unexpected members, bad
// JSON, unsupported configs), each a clear error naming the file.

#include "saving/keras/keras_model.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/conv.h"
#include "eager.h"
#include "saving/bundle/posix_file.h"
#include "saving/keras/internal/keras_layout.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

Tensor Input() {
  return Tensor::FromVector<float>(
      {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f, 1.f, 2.f, -3.f, 0.f, 0.5f, 0.25f}, Shape{2, 2, 3});
}

template <typename Fn>
void ExpectError(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

// A zip with the given members (name, bytes), stored uncompressed.
void WriteZip(const std::string& path,
              const std::vector<std::pair<std::string, std::string>>& members) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE);
    ASSERT_GE(i, 0);
    zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_DEFLATE, 9);
  }
  ASSERT_EQ(zip_close(z), 0);
}

TEST(KerasModel, RoundTripBuildsTheModelFromConfig) {
  Sequential model("seq");
  model.Add(std::make_unique<InputLayer>(Shape{2, 3}));
  model.Add(std::make_unique<Flatten>());
  model.Add(std::make_unique<Dense>(4, Tanh, true, 1));
  model.Add(std::make_unique<Dense>(2, Softmax, false, 2));
  Adam adam(0.02);
  model(Input());
  adam.Minimize([&] { return ReduceMean(Square(model(Input()))); }, model.TrainableVariables());
  const std::string path = testing::TempDir() + "/m.keras";
  SaveKerasModel(path, model, &adam, "mse");
  KerasModel loaded = LoadKerasModel(path);
  EXPECT_EQ(loaded.keras_version, "3.15.1");
  EXPECT_EQ(loaded.loss, "mse");
  ASSERT_NE(loaded.optimizer, nullptr);
  EXPECT_EQ(loaded.optimizer->iterations(), 1);
  EXPECT_EQ((*loaded.model)(Input()).ValuesString(100), model(Input()).ValuesString(100));
  EXPECT_EQ(loaded.model->layers().size(), 4u);
}

// Loading a .keras file writes its weights member to a scratch file in
// $TMPDIR, never beside the archive (whose directory may be read-only), and
// removes it (issue 40). The file-step hook sees every file eager creates.
std::vector<std::string> g_created;
int RecordCreated(std::string_view step, const std::string& path) {
  if (step == "create") g_created.push_back(path);
  return 0;
}

TEST(KerasModel, LoadingWritesItsScratchFileToTmpdirOnly) {
  const std::string dir = testing::TempDir() + "/scratch_test";
  const std::string tmpdir = dir + "/tmp";
  std::filesystem::create_directories(tmpdir);
  Sequential model("seq");
  model.Add(std::make_unique<InputLayer>(Shape{2, 3}));
  model.Add(std::make_unique<Flatten>());
  model.Add(std::make_unique<Dense>(4));
  model(Input());
  SaveKerasModel(dir + "/m.keras", model);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved_tmpdir = old_tmpdir ? old_tmpdir : "";
  setenv("TMPDIR", tmpdir.c_str(), 1);
  g_created.clear();
  internal::SetFileStepHook(RecordCreated);
  KerasModel loaded = LoadKerasModel(dir + "/m.keras");
  internal::SetFileStepHook(nullptr);
  if (old_tmpdir) {
    setenv("TMPDIR", saved_tmpdir.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  ASSERT_EQ(g_created.size(), 1u);
  EXPECT_EQ(g_created[0].rfind(tmpdir + "/eager-keras-load-", 0), 0u) << g_created[0];
  EXPECT_TRUE(std::filesystem::is_empty(tmpdir)) << "the scratch file was left";
  EXPECT_EQ(testing::ListDir(dir), (std::vector<std::string>{"m.keras", "tmp"}));
  EXPECT_EQ((*loaded.model)(Input()).ValuesString(100), model(Input()).ValuesString(100));
}

TEST(KerasModelCrafted, HostileArchivesAreClearErrors) {
  const std::string dir = testing::TempDir();
  const std::string zeros(64 << 20, '\0');  // deflates ~1000:1
  WriteZip(dir + "/bomb.keras", {{"config.json", zeros}});
  ExpectError([&] { LoadKerasModel(dir + "/bomb.keras"); },
              {dir + "/bomb.keras", "config.json", "over the limit"});
  const std::string zeros2(8 << 20, ' ');
  WriteZip(dir + "/bomb2.keras", {{"model.weights.h5", zeros2 + zeros2 + zeros2 + zeros2}});
  ExpectError([&] { LoadKerasModel(dir + "/bomb2.keras"); }, {"zip bomb"});
  WriteZip(dir + "/traversal.keras", {{"../../etc/x", "x"}});
  ExpectError([&] { LoadKerasModel(dir + "/traversal.keras"); }, {"path traversal"});
  WriteZip(dir + "/extra.keras", {{"evil.sh", "x"}});
  ExpectError([&] { LoadKerasModel(dir + "/extra.keras"); }, {"'evil.sh'"});
  WriteZip(dir + "/nojson.keras",
           {{"config.json", "{\"class_name\": "}, {"model.weights.h5", "x"}});
  ExpectError([&] { LoadKerasModel(dir + "/nojson.keras"); }, {"malformed JSON"});
  WriteZip(
      dir + "/functional.keras",
      {{"config.json", R"({"class_name": "MyModel", "config": {}})"}, {"model.weights.h5", "x"}});
  ExpectError([&] { LoadKerasModel(dir + "/functional.keras"); },
              {"config.class_name", "'MyModel'"});
  WriteZip(
      dir + "/lstm.keras",
      {{"config.json",
        R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "ConvLSTM2D", "config": {}}]}})"},
       {"model.weights.h5", "x"}});
  ExpectError([&] { LoadKerasModel(dir + "/lstm.keras"); },
              {"config.layers[0].class_name", "'ConvLSTM2D'", "Conv2D"});
  WriteZip(
      dir + "/type.keras",
      {{"config.json",
        R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"units": "many"}}]}})"},
       {"model.weights.h5", "x"}});
  ExpectError([&] { LoadKerasModel(dir + "/type.keras"); },
              {"config.layers[0].config.units", "\"many\"", "expected an integer"});
  WriteZip(
      dir + "/badh5.keras",
      {{"config.json",
        R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"units": 2}}]}})"},
       {"model.weights.h5", "not hdf5"}});
  ExpectError([&] { LoadKerasModel(dir + "/badh5.keras"); }, {"not an HDF5 file"});
  testing::WriteFile(dir + "/text.keras", "hello");
  ExpectError([&] { LoadKerasModel(dir + "/text.keras"); }, {"not a readable zip"});
  ExpectError([&] { LoadKerasModel(dir + "/none.keras"); }, {"does not exist"});
  // Truncated archive.
  Sequential model("seq");
  model.Add(std::make_unique<InputLayer>(Shape{2, 3}));
  model.Add(std::make_unique<Flatten>());
  model.Add(std::make_unique<Dense>(4));
  model(Input());
  SaveKerasModel(dir + "/m.keras", model);
  const std::string bytes = testing::ReadFile(dir + "/m.keras");
  testing::WriteFile(dir + "/t.keras", bytes.substr(0, bytes.size() / 2));
  ExpectError([&] { LoadKerasModel(dir + "/t.keras"); }, {dir + "/t.keras"});
}

// Crafted layer configs: wrong types, huge or negative sizes, arguments
// eager lacks. Each is a clear error naming the file and the config path,
// and nothing is allocated from a config's sizes: a Conv2D of 2^30 filters
// with a 2^20 x 2^20 kernel (in range for a config) is refused by the
// weights' shapes before its kernel exists.
TEST(KerasModelCrafted, HostileLayerConfigsNameTheConfigPath) {
  const std::string dir = testing::TempDir();
  // A real weights member: Conv2D(2, 3x3) on [5, 5, 1].
  Sequential model("seq");
  model.Add(std::make_unique<InputLayer>(Shape{5, 5, 1}));
  model.Add(std::make_unique<layers::Conv2D>(2, std::array<int64_t, 2>{3, 3}));
  model(Tensor::Zeros(Shape{1, 5, 5, 1}));
  SaveKerasModel(dir + "/real.keras", model);
  const std::string weights =
      keras_internal::ReadKerasArchive(dir + "/real.keras").at("model.weights.h5");
  const std::string input =
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 5, 5, 1]}})";
  const auto conv = [&](const std::string& args) {
    return R"({"class_name": "Sequential", "config": {"layers": [)" + input +
           R"(, {"class_name": "Conv2D", "config": {)" + args + "}}]}}";
  };
  struct Case {
    std::string what, config;
    std::vector<std::string> parts;
  };
  std::vector<Case> cases = {
      {"float filters",
       conv(R"("filters": 1e12, "kernel_size": 3)"),
       {"config.layers[1].config.filters", "expected an integer"}},
      {"huge filters",
       conv(R"("filters": 1000000000000, "kernel_size": 3)"),
       {"config.layers[1].config.filters", "1000000000000"}},
      {"2^64 filters",
       conv(R"("filters": 18446744073709551615, "kernel_size": 3)"),
       {"config.layers[1].config.filters"}},
      {"negative kernel",
       conv(R"("filters": 2, "kernel_size": [-3, 3])"),
       {"config.layers[1].config.kernel_size", "-3"}},
      {"kernel of 3",
       conv(R"("filters": 2, "kernel_size": [3, 3, 3])"),
       {"config.layers[1].config.kernel_size", "a list of 2"}},
      {"string strides",
       conv(R"("filters": 2, "kernel_size": 3, "strides": "2")"),
       {"config.layers[1].config.strides"}},
      {"padding",
       conv(R"("filters": 2, "kernel_size": 3, "padding": "reflect")"),
       {"config.layers[1].config.padding", "reflect"}},
      {"groups",
       conv(R"("filters": 2, "kernel_size": 3, "groups": 2)"),
       {"config.layers[1].config.groups"}},
      {"regularizer",
       conv(R"("filters": 2, "kernel_size": 3, "kernel_regularizer": {"a": 1})"),
       {"config.layers[1].config.kernel_regularizer", "not supported"}},
      {"activation",
       conv(R"("filters": 2, "kernel_size": 3, "activation": "quick_gelu")"),
       {"config.layers[1].config.activation", "quick_gelu", "eager has linear, relu"}},
      {"activation not a string",
       conv(R"("filters": 2, "kernel_size": 3, "activation": {"class_name": "Gelu"})"),
       {"config.layers[1].config.activation", "expected one of"}},
      {"channels_first",
       conv(R"("filters": 2, "kernel_size": 3, "data_format": "channels_first")"),
       {"config.layers[1].config.data_format"}},
      {"dtype",
       conv(R"("filters": 2, "kernel_size": 3, "dtype": "mixed_float16")"),
       {"config.layers[1].config.dtype"}},
      {"strides and dilation",
       conv(R"("filters": 2, "kernel_size": 3, "strides": 2, "dilation_rate": 2)"),
       {"config.layers[1]", "Conv2D"}},
      {"in range but huge",
       conv(R"("filters": 1073741824, "kernel_size": [1048576, 1048576])"),
       {"layers/conv2d/vars", "expected [1048576,1048576,?,1073741824]"}},
      {"batch_shape",
       R"({"class_name": "Sequential", "config": {"layers": [{"class_name": )"
       R"("InputLayer", "config": {"batch_shape": [null, -5]}}]}})",
       {"config.layers[0].config.batch_shape[1]"}},
  };
  const auto layer = [&](const std::string& cls, const std::string& args) {
    return R"({"class_name": "Sequential", "config": {"layers": [)" + input +
           R"(, {"class_name": ")" + cls + R"(", "config": {)" + args + "}}]}}";
  };
  std::vector<Case> more = {
      {"dropout rate", layer("Dropout", R"("rate": 2)"), {"config.layers[1].config.rate"}},
      {"reshape zero",
       layer("Reshape", R"("target_shape": [0, 5])"),
       {"config.layers[1]", "target_shape"}},
      {"permute", layer("Permute", R"("dims": [1, 1, 2])"), {"config.layers[1]", "Permute"}},
      {"repeat", layer("RepeatVector", R"("n": -1)"), {"config.layers[1].config.n"}},
      {"padding",
       layer("ZeroPadding2D", R"("padding": [[1, 2], [3, -4]])"),
       {"config.layers[1].config.padding"}},
      {"cropping",
       layer("Cropping2D", R"("cropping": "all")"),
       {"config.layers[1].config.cropping"}},
      {"pool",
       layer("MaxPooling2D", R"("pool_size": [0, 2])"),
       {"config.layers[1].config.pool_size"}},
      {"bn axis", layer("BatchNormalization", R"("axis": 1)"), {"config.layers[1].config.axis"}},
      {"bn momentum",
       layer("BatchNormalization", R"("momentum": "high")"),
       {"config.layers[1].config.momentum"}},
      {"embedding",
       layer("Embedding", R"("input_dim": 10, "output_dim": 1e12)"),
       {"config.layers[1].config.output_dim"}},
      {"units", layer("Dense", R"("units": -3)"), {"config.layers[1].config.units"}},
      {"repeat 2^31",
       layer("RepeatVector", R"("n": 2147483648)"),
       {"config.layers[1] (RepeatVector)", "multiply an input's size"}},
      {"repeat twice",
       R"({"class_name": "Sequential", "config": {"layers": [)" + input +
           R"(, {"class_name": "RepeatVector", "config": {"n": 5000}}, )"
           R"({"class_name": "Reshape", "config": {"target_shape": [-1]}}, )"
           R"({"class_name": "RepeatVector", "config": {"n": 5000}}]}})",
       {"config.layers[3] (RepeatVector)", "multiply an input's size by 2.5e+07"}},
      {"padding 2^20",
       layer("ZeroPadding2D", R"("padding": 1048576)"),
       {"config.layers[1] (ZeroPadding2D)", "over the limit"}},
      {"transpose strides",
       layer("Conv2DTranspose", R"("filters": 1, "kernel_size": 1, "strides": 100000)"),
       {"config.layers[1] (Conv2DTranspose)", "over the limit"}},
      {"trainable",
       layer("Dense", R"("units": 3, "trainable": false)"),
       {"config.layers[1].config.trainable"}},
      {"config not object",
       R"({"class_name": "Sequential", "config": {"layers": [)" + input +
           R"(, {"class_name": "Dense", "config": [1]}]}})",
       {"config.layers[1].config", "expected an object"}},
  };
  for (Case& c : more) cases.push_back(std::move(c));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string path = dir + "/crafted.keras";
    WriteZip(path, {{"config.json", c.config}, {"model.weights.h5", weights}});
    std::vector<std::string> parts = c.parts;
    parts.push_back(path);
    try {
      LoadKerasModel(path);
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      for (const std::string& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << "'" << part << "' not in: " << e.what();
      }
    }
  }
}

// config.json is file-supplied structure: a 1,000,000-deep nesting (2 MB,
// under the 16 MiB limit) anywhere in it is a clear error, never a stack
// overflow in the parser, the walk, a message or the destructor (issue 37).
TEST(KerasModelCrafted, DeeplyNestedConfigIsAClearError) {
  const std::string dir = testing::TempDir();
  const size_t depth = 1000000;
  const std::string arrays = std::string(depth, '[') + std::string(depth, ']');
  std::string objects;
  for (size_t i = 0; i < depth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(depth, '}');
  const std::vector<std::pair<std::string, std::string>> configs = {
      {"top", arrays},
      {"layers", R"({"class_name": "Sequential", "config": {"layers": )" + arrays + "}}"},
      {"layer", R"({"class_name": "Sequential", "config": {"layers": [)" + objects + "]}}"},
      {"units", R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", )"
                R"("config": {"units": )" +
                    arrays + "}}]}}"},
      {"name", R"({"class_name": "Sequential", "config": {"name": )" + objects + "}}"},
  };
  for (const auto& [what, json] : configs) {
    SCOPED_TRACE(what);
    const std::string path = StrCat(dir, "/deep_", what, ".keras");
    WriteZip(path, {{"config.json", json}, {"model.weights.h5", "x"}});
    ExpectError([&] { LoadKerasModel(path); }, {path, "config"});
  }
}

}  // namespace
}  // namespace eager
