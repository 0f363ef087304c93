// Keras 3 `.weights.h5`: eager's writer and reader against each other, the
// layout Keras's saving_lib expects, and crafted files (wrong dtype, wrong
// shape, huge declared dimensions, truncation, bit flips, links to other
// files), each a clear error naming the file and dataset, never a crash.
// tests/tf_keras/keras_files_test.py has Keras 3 itself judge the files.

#include "saving/keras/keras_weights.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "eager.h"
#include "runtime/sanitizers.h"
#include "saving/keras/internal/h5_file.h"
#include "tests/saving/saving_test_util.h"

namespace eager {
namespace {

using keras_internal::H5Writer;
using keras_internal::ReadH5File;

std::unique_ptr<Sequential> MakeModel(int64_t hidden = 4) {
  auto model = std::make_unique<Sequential>("seq");
  model->Add(std::make_unique<InputLayer>(Shape{2, 3}));
  model->Add(std::make_unique<Flatten>());
  model->Add(std::make_unique<Dense>(hidden, Relu, true, 1));
  model->Add(std::make_unique<Dense>(2, nullptr, false, 2));
  return model;
}

Tensor Input() {
  return Tensor::FromVector<float>(
      {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f, 1.f, 2.f, -3.f, 0.f, 0.5f, 0.25f}, Shape{2, 2, 3});
}

Tensor Step(Sequential& model, Adam& adam) {
  const Tensor target = Tensor::FromVector<float>({1.f, 0.f, 0.f, 1.f}, Shape{2, 2});
  model(Input());  // builds it, so that TrainableVariables() lists every variable
  return adam.Minimize([&] { return ReduceMean(Square(Sub(model(Input()), target))); },
                       model.TrainableVariables());
}

void ExpectSameValues(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.ValuesString(1000), b.ValuesString(1000));
}

TEST(KerasWeights, LayoutIsKeras3s) {
  auto model = MakeModel();
  Adam adam(0.01);
  Step(*model, adam);
  const std::string path = testing::TempDir() + "/m.weights.h5";
  SaveKerasWeights(path, *model, &adam);
  const auto contents = ReadH5File(path);
  std::vector<std::string> keys;
  for (const auto& [key, ds] : contents.datasets)
    keys.push_back(StrCat(key, " ", ds.dtype, " ", ds.shape));
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "layers/dense/vars/0 float32 [6,4]", "layers/dense/vars/1 float32 [4]",
                      "layers/dense_1/vars/0 float32 [4,2]", "optimizer/vars/0 int64 []",
                      "optimizer/vars/1 float32 []", "optimizer/vars/2 float32 [6,4]",
                      "optimizer/vars/3 float32 [6,4]", "optimizer/vars/4 float32 [4]",
                      "optimizer/vars/5 float32 [4]", "optimizer/vars/6 float32 [4,2]",
                      "optimizer/vars/7 float32 [4,2]"}));
  EXPECT_TRUE(contents.groups.count("layers/flatten/vars"));  // as Keras: empty, with its name
  EXPECT_TRUE(contents.groups.count("vars"));
}

TEST(KerasWeights, RoundTripContinuesTrainingWithTheSameBits) {
  auto model = MakeModel();
  Adam adam(0.01);
  Step(*model, adam);
  const std::string path = testing::TempDir() + "/m.weights.h5";
  SaveKerasWeights(path, *model, &adam);

  auto restored = MakeModel();  // unbuilt: the file's kernel shapes build it
  Adam restored_adam(0.5);      // the file's learning rate replaces this one
  LoadKerasWeights(path, *restored, &restored_adam);
  EXPECT_EQ(restored_adam.iterations(), 1);
  ExpectSameValues((*restored)(Input()), (*model)(Input()));
  Step(*model, adam);
  Step(*restored, restored_adam);
  const auto a = model->Variables(), b = restored->Variables();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ExpectSameValues(a[i]->value(), b[i]->value());
  for (size_t i = 0; i < a.size(); ++i) {
    ExpectSameValues(adam.GetSlot(*a[i], "v")->value(), restored_adam.GetSlot(*b[i], "v")->value());
  }
}

TEST(KerasWeights, WithoutOptimizer) {
  auto model = MakeModel();
  (*model)(Input());
  const std::string path = testing::TempDir() + "/m.weights.h5";
  SaveKerasWeights(path, *model);
  EXPECT_EQ(ReadH5File(path).datasets.count("optimizer/vars/0"), 0u);
  auto restored = MakeModel();
  LoadKerasWeights(path, *restored);
  ExpectSameValues((*restored)(Input()), (*model)(Input()));
  Adam adam;
  try {
    LoadKerasWeights(path, *restored, &adam);
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("no optimizer state"), std::string::npos) << e.what();
  }
}

// Expects `fn` to throw an eager::Error whose message contains every part.
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

TEST(KerasWeights, WrongShapeNamesDatasetAndExpectation) {
  auto model = MakeModel(4);
  (*model)(Input());
  const std::string path = testing::TempDir() + "/m.weights.h5";
  SaveKerasWeights(path, *model);
  auto other = MakeModel(5);
  (*other)(Input());
  ExpectError([&] { LoadKerasWeights(path, *other); },
              {path, "'layers/dense/vars/0'", "is float32 [6,4]", "expected float32 [6,5]"});
  // Nothing was assigned: the check precedes every assignment.
  auto fresh = MakeModel(5);
  (*fresh)(Input());
  ExpectSameValues(other->Variables()[0]->value(), fresh->Variables()[0]->value());
}

TEST(KerasWeights, WrongDtypeAndMissingDatasets) {
  const std::string dir = testing::TempDir();
  {
    H5Writer w(dir + "/int.weights.h5");
    w.CreateGroup("layers");
    w.CreateGroup("layers/dense");
    w.CreateGroup("layers/dense/vars", "dense");
    w.WriteDataset("layers/dense/vars/0", Tensor::Zeros(Shape{6, 4}, DType::kInt32));
    w.WriteDataset("layers/dense/vars/1", Tensor::Zeros(Shape{4}));
    w.Close();
  }
  auto model = MakeModel();
  (*model)(Input());
  ExpectError([&] { LoadKerasWeights(dir + "/int.weights.h5", *model); },
              {"'layers/dense/vars/0'", "is int32 [6,4]", "expected float32 [6,4]"});
  {
    H5Writer w(dir + "/extra.weights.h5");
    w.CreateGroup("layers");
    w.CreateGroup("layers/dense");
    w.CreateGroup("layers/dense/vars");
    for (int i = 0; i < 3; ++i)
      w.WriteDataset(StrCat("layers/dense/vars/", i), Tensor::Zeros(Shape{6, 4}));
    w.Close();
  }
  ExpectError([&] { LoadKerasWeights(dir + "/extra.weights.h5", *model); },
              {"'layers/dense/vars/1'"});
  ExpectError([&] { LoadKerasWeights(dir + "/missing.weights.h5", *model); }, {"does not exist"});
}

// A raw HDF5 file built with the C API, for what eager's writer never makes.
template <typename Fn>
void RawH5(const std::string& path, Fn fn) {
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Gclose(H5Gcreate2(file, "layers", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(H5Gcreate2(file, "layers/dense", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(H5Gcreate2(file, "layers/dense/vars", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  fn(file);
  H5Fclose(file);
}

// tf_keras's legacy .h5, written here with fixed-length string attributes
// (h5py writes variable-length ones: tests/tf_keras/keras_files_test.py has
// tf_keras write those): the layout loads, and broken attributes are errors
// naming the file and what is wrong.
void FixedStrings(hid_t object, const char* name, const std::vector<std::string>& values) {
  size_t width = 1;
  for (const std::string& v : values) width = std::max(width, v.size());
  std::string bytes(values.size() * width, '\0');
  for (size_t i = 0; i < values.size(); ++i) bytes.replace(i * width, values[i].size(), values[i]);
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, width);
  const hsize_t n = values.size();
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t attr = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, type, bytes.data());
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
}

void WriteFloats(hid_t file, const std::string& path, const Tensor& value) {
  std::vector<hsize_t> dims;
  for (int64_t d : value.shape().ToVector()) dims.push_back(static_cast<hsize_t>(d));
  hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t ds =
      H5Dcreate2(file, path.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data<float>().data());
  H5Dclose(ds);
  H5Sclose(space);
}

// `source`'s two Dense layers as tf_keras's save_weights("m.h5") lays them
// out; `layer_names` as given.
void WriteLegacy(const std::string& path, Sequential& source,
                 const std::vector<std::string>& layer_names) {
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  FixedStrings(file, "layer_names", layer_names);
  size_t i = 2;  // after the InputLayer and the Flatten
  for (const char* name : {"dense", "dense_1"}) {
    auto* dense = dynamic_cast<Dense*>(source.layers()[i++]);
    hid_t group = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(group, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    std::vector<std::string> weights{StrCat(name, "/kernel:0")};
    if (dense->bias() != nullptr) weights.push_back(StrCat(name, "/bias:0"));
    FixedStrings(group, "weight_names", weights);
    H5Gclose(group);
    WriteFloats(file, StrCat(name, "/", name, "/kernel:0"), dense->kernel().value());
    if (dense->bias() != nullptr)
      WriteFloats(file, StrCat(name, "/", name, "/bias:0"), dense->bias()->value());
  }
  hid_t flatten = H5Gcreate2(file, "flatten", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  FixedStrings(flatten, "weight_names", {});
  H5Gclose(flatten);
  H5Fclose(file);
}

TEST(KerasWeightsLegacy, TfKerasH5LoadsByLayerOrderAndBrokenOnesAreNamed) {
  const std::string dir = testing::TempDir();
  auto source = MakeModel();
  source->operator()(Input());
  WriteLegacy(dir + "/legacy.h5", *source, {"flatten", "dense", "dense_1"});
  auto model = MakeModel(4);
  LoadKerasWeights(dir + "/legacy.h5", *model);
  EXPECT_EQ((*model)(Input()).ValuesString(100), (*source)(Input()).ValuesString(100));
  Adam adam(0.01);
  ExpectError([&] { LoadKerasWeights(dir + "/legacy.h5", *model, &adam); },
              {dir + "/legacy.h5", "legacy .h5", "without an optimizer"});

  WriteLegacy(dir + "/missing.h5", *source, {"flatten", "dense", "dense_7"});
  ExpectError([&] { LoadKerasWeights(dir + "/missing.h5", *MakeModel()); },
              {dir + "/missing.h5", "'dense_7'", "no weight_names"});
  WriteLegacy(dir + "/short.h5", *source, {"dense"});
  ExpectError([&] { LoadKerasWeights(dir + "/short.h5", *MakeModel()); },
              {"holds weights of 1 layers (dense)", "the model has 2 layers with weights"});
  WriteLegacy(dir + "/wider.h5", *source, {"flatten", "dense", "dense_1"});
  ExpectError([&] { LoadKerasWeights(dir + "/wider.h5", *MakeModel(5)); },
              {dir + "/wider.h5", "dense/dense/kernel:0"});
  hid_t file = H5Fcreate((dir + "/ints.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t n = 3;
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t attr = H5Acreate2(file, "layer_names", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
  const int32_t values[3] = {1, 2, 3};
  H5Awrite(attr, H5T_NATIVE_INT32, values);
  H5Aclose(attr);
  H5Sclose(space);
  H5Fclose(file);
  ExpectError([&] { LoadKerasWeights(dir + "/ints.h5", *MakeModel()); },
              {dir + "/ints.h5", "'layer_names'", "not a list of strings"});
}

// An object name with control characters (an escape sequence a terminal
// would run) is refused, and the message shows its bytes escaped, never raw.
TEST(KerasWeightsCrafted, ControlCharactersInNamesAreEscapedInTheError) {
  const std::string path = testing::TempDir() + "/escape.weights.h5";
  {
    H5Writer w(path);
    w.CreateGroup("layers");
    w.CreateGroup("layers/de\x1b[2Jnse\x01");
    w.Close();
  }
  auto model = MakeModel();
  try {
    LoadKerasWeights(path, *model);
    ADD_FAILURE() << "a name with control characters was taken";
  } catch (const DataLossError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("layers/de\\x1b[2Jnse\\x01"), std::string::npos) << what;
    EXPECT_NE(what.find("control characters"), std::string::npos) << what;
    for (const char c : what) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << what;
  }
}

TEST(KerasWeightsCrafted, HugeDeclaredDimensionsAreRefusedBeforeAllocation) {
  const std::string path = testing::TempDir() + "/huge.weights.h5";
  RawH5(path, [](hid_t file) {
    const hsize_t dims[2] = {hsize_t{1} << 40, hsize_t{1} << 20};  // 4 EiB of float32
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE);
    H5Dclose(H5Dcreate2(file, "layers/dense/vars/0", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                        H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(space);
  });
  auto model = MakeModel();
  ExpectError([&] { LoadKerasWeights(path, *model); },
              {path, "'layers/dense/vars/0'", "more bytes than the whole file"});
}

TEST(KerasWeightsCrafted, CompressedChunkedAndLinkedDatasetsAreRefused) {
  const std::string dir = testing::TempDir();
  RawH5(dir + "/gzip.weights.h5", [](hid_t file) {
    const hsize_t dims[2] = {6, 4};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, dims);
    H5Pset_deflate(dcpl, 6);
    H5Dclose(H5Dcreate2(file, "layers/dense/vars/0", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                        H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(space);
  });
  ExpectError([&] { ReadH5File(dir + "/gzip.weights.h5"); }, {"'layers/dense/vars/0'", "chunked"});
  RawH5(dir + "/external.weights.h5", [](hid_t file) {
    H5Lcreate_external("/etc/passwd", "/x", file, "layers/dense/vars/0", H5P_DEFAULT, H5P_DEFAULT);
  });
  ExpectError([&] { ReadH5File(dir + "/external.weights.h5"); }, {"external link"});
  // Raw data in another file (HDF5's external storage): libhdf5 would open
  // the file the dataset names.
  RawH5(dir + "/external_data.weights.h5", [](hid_t file) {
    const hsize_t n = 4;
    hid_t space = H5Screate_simple(1, &n, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, "/etc/passwd", 0, 16);
    H5Dclose(H5Dcreate2(file, "layers/dense/vars/0", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                        H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(space);
  });
  ExpectError([&] { ReadH5File(dir + "/external_data.weights.h5"); },
              {"'layers/dense/vars/0'", "external files"});
  RawH5(dir + "/string.weights.h5", [](hid_t file) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 16);
    hid_t space = H5Screate(H5S_SCALAR);
    H5Dclose(H5Dcreate2(file, "layers/dense/vars/0", type, space, H5P_DEFAULT, H5P_DEFAULT,
                        H5P_DEFAULT));
    H5Sclose(space);
    H5Tclose(type);
  });
  ExpectError([&] { ReadH5File(dir + "/string.weights.h5"); },
              {"'layers/dense/vars/0'", "HDF5 type class"});
}

TEST(KerasWeightsCrafted, NotHdf5AndTruncated) {
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/text.weights.h5", "not an HDF5 file at all");
  ExpectError([&] { ReadH5File(dir + "/text.weights.h5"); }, {"is not an HDF5 file"});
  auto model = MakeModel();
  Adam adam;
  Step(*model, adam);
  SaveKerasWeights(dir + "/m.weights.h5", *model, &adam);
  const std::string bytes = testing::ReadFile(dir + "/m.weights.h5");
  for (size_t keep : {size_t{8}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    testing::WriteFile(dir + "/t.weights.h5", bytes.substr(0, keep));
    ExpectError([&] { LoadKerasWeights(dir + "/t.weights.h5", *model, &adam); },
                {dir + "/t.weights.h5"});
  }
}

// Random byte flips of a valid file: each read either succeeds or throws an
// eager::Error; a crash or hang of libhdf5 stays in the reading child.
TEST(KerasWeightsCrafted, BitFlipsNeverCrashTheCaller) {
  const std::string dir = testing::TempDir();
  auto model = MakeModel();
  Adam adam;
  Step(*model, adam);
  SaveKerasWeights(dir + "/m.weights.h5", *model, &adam);
  const std::string bytes = testing::ReadFile(dir + "/m.weights.h5");
  std::mt19937_64 rng(40);
  int errors = 0, ok = 0;
  for (int round = 0; round < 150; ++round) {
    std::string mutated = bytes;
    const int flips = 1 + static_cast<int>(rng() % 8);
    // Mostly the first 4 KiB: the superblock and object headers.
    for (int f = 0; f < flips; ++f) {
      const size_t at = (rng() % 4 == 0 ? rng() % mutated.size()
                                        : rng() % std::min<size_t>(4096, mutated.size()));
      mutated[at] = static_cast<char>(rng());
    }
    testing::WriteFile(dir + "/f.weights.h5", mutated);
    keras_internal::H5ReadLimits limits;
    limits.timeout_seconds = 20;
    try {
      ReadH5File(dir + "/f.weights.h5", limits);
      ++ok;
    } catch (const Error& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find(dir + "/f.weights.h5"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(errors, 0);
  std::cout << "bit flips: " << ok << " read, " << errors << " refused\n";
}

}  // namespace
}  // namespace eager

namespace eager {
namespace {

// A 20 KB file bundle_fuzzer made (tests/fuzz, input kind 'H'): its object
// header makes libhdf5 allocate an "on disk image buffer" of 412 GB. The
// reading child's address-space budget turns that into a refusal naming the
// file; under a sanitizer (no budget: its shadow memory needs the address
// space) the sanitizer's allocator stops the child, which is still an error.
TEST(KerasWeightsCrafted, HeaderAskingFor412GBIsRefused) {
  const std::string path =
      std::string(EAGER_SOURCE_DIR) + "/tests/saving/keras/data/asks_412gb.weights.h5";
  try {
    ReadH5File(path);
    FAIL() << "read a file whose headers ask for 412 GB";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("could not allocate"), std::string::npos) << e.what();
  } catch (const Error& e) {
    EXPECT_TRUE(kSanitizerShadowMemory) << "expected ResourceExhaustedError, got: " << e.what();
  }
}

// A 43 KB file bundle_fuzzer made (tests/fuzz, kind 'H'): its object
// headers send libhdf5 into an endless loop. Before the CPU budget the caller waited out the 600 s
// wall-clock deadline (`eager-ckpt list` hung); now the child is stopped
// after the default 2 CPU seconds and the error names the file and the
// budget. CPU time, not wall time: a loaded machine does not trip it.
TEST(KerasWeightsCrafted, EndlessLoopInLibhdf5IsStoppedByTheCpuBudget) {
  const std::string path =
      std::string(EAGER_SOURCE_DIR) + "/tests/saving/keras/data/loops.weights.h5";
  try {
    ReadH5File(path);
    FAIL() << "read a file that makes libhdf5 loop";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 s of CPU time"), std::string::npos) << e.what();
  }
}

// A 27 KB file the fuzzer made (kind 'H'): a string attribute whose global
// heap entry makes libhdf5 memcpy far past its buffer (ASan in the child:
// memcpy-param-overlap in H5HG_read, under H5Aread's variable-length
// conversion). libhdf5's own bug, inside the reading child: the caller gets
// DataLossError naming the file, whether the child died of SIGSEGV (release)
// or of a sanitizer's report (exit status).
TEST(KerasWeightsCrafted, LibHdf5MemoryErrorInTheChildIsADataLossError) {
  const std::string path =
      std::string(EAGER_SOURCE_DIR) + "/tests/saving/keras/data/heap_overread.weights.h5";
  try {
    ReadH5File(path);
    FAIL() << "read a file on which libhdf5 overruns its buffer";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reading child process"), std::string::npos) << e.what();
  }
}

// A budget set by the caller is the one applied and named.
TEST(KerasWeightsCrafted, CpuBudgetIsTheCallersWhenSet) {
  keras_internal::H5ReadLimits limits;
  limits.max_reader_cpu_seconds = 1;
  const std::string path =
      std::string(EAGER_SOURCE_DIR) + "/tests/saving/keras/data/loops.weights.h5";
  try {
    ReadH5File(path, limits);
    FAIL() << "read a file that makes libhdf5 loop";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("1 s of CPU time"), std::string::npos) << e.what();
  }
}

// A big-endian float32 dataset of `n` elements 0, 1, 2, ... at
// layers/dense/vars/0 (libhdf5 converts it: the reading child sends it
// through the pipe rather than letting the parent read the file).
void WriteBigEndian(const std::string& path, hsize_t n) {
  RawH5(path, [&](hid_t file) {
    std::vector<float> values(n);
    for (hsize_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 4096);
    hid_t space = H5Screate_simple(1, &n, nullptr);
    hid_t ds = H5Dcreate2(file, "layers/dense/vars/0", H5T_IEEE_F32BE, space, H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(ds);
    H5Sclose(space);
  });
}

// The budget bounds what the child may allocate: a big-endian 96 MiB
// dataset (converted in the child) reads under the default budget (the
// file's size plus 1 GiB) and is refused under 4 MiB, naming the budget,
// and the caller's process is unaffected. (The budget is new address space:
// the child may still use what it inherited, such as heap the caller freed
// and glibc's per-thread arenas, reserved in 64 MiB heaps. 96 MiB fits in
// none of them.)
TEST(KerasWeightsCrafted, ReaderMemoryBudgetBoundsTheChild) {
  const std::string dir = testing::TempDir();
  const std::string path = dir + "/big.weights.h5";
  WriteBigEndian(path, hsize_t{24} << 20);
  const auto contents = ReadH5File(path);
  ASSERT_EQ(contents.datasets.size(), 1u);
  keras_internal::H5ReadLimits limits;
  limits.max_reader_bytes = uint64_t{4} << 20;
  if (kSanitizerShadowMemory) {
    EXPECT_EQ(ReadH5File(path, limits).datasets.size(), 1u);
    return;
  }
  try {
    ReadH5File(path, limits);
    FAIL() << "read 96 MiB through the child within a 4 MiB budget";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(limits.max_reader_bytes)),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ReadH5File(path).datasets.size(), 1u);
}

// Datasets stored in native byte order are read by the caller from the file
// at the offset the child found (no copy through the child): Keras's own
// files, 128 MiB of them, read under a 4 MiB child budget, with the values
// written; a big-endian one still comes converted through the child.
TEST(KerasWeightsCrafted, NativeDatasetsAreReadFromTheFileByTheCaller) {
  const std::string dir = testing::TempDir();
  auto model = MakeModel(int64_t{1} << 22);
  (*model)(Input());
  auto* dense = dynamic_cast<Dense*>(model->layers()[2]);
  dense->kernel().Assign(RandomUniform(dense->kernel().value().shape(), 5, -1.0, 1.0));
  SaveKerasWeights(dir + "/big.weights.h5", *model);
  keras_internal::H5ReadLimits limits;
  limits.max_reader_bytes = uint64_t{4} << 20;
  const auto contents = ReadH5File(dir + "/big.weights.h5", limits);
  ASSERT_EQ(contents.datasets.size(), 3u);
  const auto kernel = contents.datasets.at("layers/dense/vars/0").value.data<float>();
  const auto want = dense->kernel().value().data<float>();
  ASSERT_EQ(kernel.size(), want.size());
  EXPECT_EQ(std::memcmp(kernel.data(), want.data(), kernel.size_bytes()), 0);

  WriteBigEndian(dir + "/be.weights.h5", 1000);
  const auto be = ReadH5File(dir + "/be.weights.h5").datasets.at("layers/dense/vars/0");
  const auto v = be.value.data<float>();
  ASSERT_EQ(v.size(), 1000u);
  EXPECT_EQ(v[997], 997.0f);
  EXPECT_EQ(v[999], 999.0f);
}

}  // namespace
}  // namespace eager
