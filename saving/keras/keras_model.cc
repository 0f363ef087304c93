#include "saving/keras/keras_model.h"

#include <zip.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/pooling.h"
#include "ops/nn_ops.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "saving/bundle/posix_file.h"
#include "saving/keras/internal/keras_config.h"
#include "saving/keras/internal/keras_functional_config.h"
#include "saving/keras/internal/keras_layer_kinds.h"
#include "saving/keras/internal/keras_layout.h"
#include "saving/keras/internal/keras_optimizer_config.h"

namespace eager {
namespace {

// A fresh scratch path in the system's temporary directory for a .keras
// file's weights member (libhdf5 reads files, not memory, in the child),
// after removing those that killed loads left.
std::string LoadScratchPath() {
  std::error_code error;
  std::string dir = std::filesystem::temp_directory_path(error).string();
  if (error || dir.empty()) dir = "/tmp";
  constexpr char kStem[] = "eager-keras-load-";
  internal::RemoveTemporariesOfDeadProcesses(dir, kStem);
  return StrCat(dir, "/", internal::TemporaryNameWithPid(kStem), ".weights.h5");
}

using Json = keras_internal::Json;

constexpr const char* kKerasVersion = "3.15.1";  // the format written, as keras 3.15.1's
constexpr uint64_t kMaxJson = 16 << 20;
constexpr uint64_t kMaxWeights = uint64_t{16} << 30;
constexpr int64_t kMaxMembers = 16;

using keras_internal::ConfigReader;
using keras_internal::KerasLayerKind;

Json ShapeJson(int64_t first, const Shape& rest) {
  Json s = Json::array({nullptr});
  if (first >= 0) s.push_back(first);
  for (int64_t d : rest.dims()) s.push_back(d);
  return s;
}

// The model's dtype: its first variable's (float32 for a weightless model).
DType ModelDType(Sequential& model) {
  for (Variable* v : model.TrainableVariables()) return v->dtype();
  return DType::kFloat32;
}

Json ModelConfig(Sequential& model) {
  const DType dtype = ModelDType(model);
  std::optional<Shape> input;
  std::string input_name = "input_layer";  // Keras's, when the model has no InputLayer
  for (Layer* layer : model.layers()) {
    if (auto* in = dynamic_cast<InputLayer*>(layer)) {
      if (in->shape()) input = *in->shape();
      input_name = in->name();
      break;
    }
    if (auto* d = dynamic_cast<Dense*>(layer); d != nullptr && d->built()) {
      input = Shape{d->kernel().shape().dim(0)};  // a Dense first: its input size
    }
    break;
  }
  if (!input) {
    throw FailedPreconditionError(StrCat("Keras model '", model.name(),
                                         "': the input shape is unknown; start the model with an "
                                         "InputLayer that has a shape"));
  }
  Json layers = Json::array();
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config",
                     {{"batch_shape", ShapeJson(-1, *input)},
                      {"dtype", dtype == DType::kFloat64 ? "float64" : "float32"},
                      {"sparse", false},
                      {"ragged", false},
                      {"name", input_name},
                      {"optional", false}}},
                    {"registered_name", nullptr}});
  for (Layer* layer : model.layers()) {
    if (dynamic_cast<InputLayer*>(layer) != nullptr) continue;
    layers.push_back(keras_internal::LayerEntryJson(*layer, dtype));
  }
  return {{"module", "keras"},
          {"class_name", "Sequential"},
          {"config",
           {{"name", model.name()},
            {"trainable", true},
            {"dtype", keras_internal::DTypePolicyJson(dtype)},
            {"layers", layers}}},
          {"registered_name", nullptr},
          {"build_config", {{"input_shape", ShapeJson(-1, *input)}}}};
}

// ---- zip ----

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

std::string ReadMember(zip_t* z, zip_uint64_t index, const zip_stat_t& st,
                       const std::string& path) {
  zip_file_t* f = zip_fopen_index(z, index, 0);
  if (f == nullptr) {
    throw DataLossError(StrCat(".keras file '", path, "': member '", st.name,
                               "' cannot be opened: ", zip_strerror(z)));
  }
  std::string out(st.size, '\0');
  zip_uint64_t got = 0;
  while (got < st.size) {
    const zip_int64_t n = zip_fread(f, out.data() + got, st.size - got);
    if (n <= 0) {
      const std::string why = n < 0 ? zip_file_strerror(f) : "shorter than declared";
      zip_fclose(f);
      throw DataLossError(
          StrCat(".keras file '", path, "': member '", st.name, "' is corrupt (", why, ")"));
    }
    got += static_cast<zip_uint64_t>(n);
  }
  char extra;
  const zip_int64_t more = zip_fread(f, &extra, 1);  // also makes libzip check the CRC
  const std::string why = more < 0 ? zip_file_strerror(f) : "";
  zip_fclose(f);
  if (more != 0) {
    throw DataLossError(StrCat(".keras file '", path, "': member '", st.name, "' is corrupt (",
                               more > 0 ? "longer than declared" : why, ")"));
  }
  return out;
}

// ---- config ----

[[noreturn]] void Unsupported(const std::string& file, const std::string& where,
                              const std::string& what) {
  throw UnimplementedError(StrCat(".keras file '", file, "': ", where, ": ", what));
}

const Json& Field(const Json& j, const char* key, const std::string& file,
                  const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where, " has no '", key, "'"));
  }
  return j.at(key);
}

// A layer's dtype policy: float32/float64 (a DTypePolicy or a plain name);
// mixed precision and other dtypes are not implemented.
void CheckLayerDType(const Json& config, ConfigReader& reader) {
  reader.Ignore("dtype");
  if (!config.contains("dtype") || config["dtype"].is_null()) return;
  const Json& d = config["dtype"];
  const Json* name = &d;
  if (d.is_object()) {
    if (d.value("class_name", Json()) != "DTypePolicy" || !d.contains("config") ||
        !d["config"].is_object() || !d["config"].contains("name")) {
      reader.Unsupported("dtype", "not a DTypePolicy (eager reads float32 and float64 policies)");
    }
    name = &d["config"]["name"];
  }
  if (*name != "float32" && *name != "float64") {
    reader.Unsupported("dtype", StrCat(name->dump().substr(0, 40),
                                       " (eager reads the float32 and float64 policies)"));
  }
}

// One layer of config.layers from its config, through its kind.
std::unique_ptr<Layer> LayerFromConfig(const Json& layer, const std::string& file,
                                       const std::string& where) {
  const Json& cls_json = Field(layer, "class_name", file, where);
  if (!cls_json.is_string()) {
    throw InvalidArgumentError(
        StrCat(".keras file '", file, "': ", where, ".class_name is not a string"));
  }
  const std::string cls = cls_json.get<std::string>();
  const KerasLayerKind* kind = keras_internal::KindByClassName(cls);
  if (kind == nullptr || kind->from_config == nullptr) {
    Unsupported(file, where + ".class_name",
                StrCat("layer class '", cls.substr(0, 60), "' (eager reads ",
                       keras_internal::KindNames(), ")"));
  }
  ConfigReader reader(Field(layer, "config", file, where), file, where + ".config");
  std::string name;
  if (reader.Has("name")) {
    const Json& n = layer.at("config").at("name");
    if (!n.is_string() || n.get<std::string>().size() > 256)
      reader.Invalid("name", "is not a string of at most 256 characters");
    name = n.get<std::string>();
  }
  reader.Expect("trainable", {Json(true)});
  CheckLayerDType(layer.at("config"), reader);
  std::unique_ptr<Layer> out;
  try {
    out = kind->from_config(reader, name);
  } catch (const Error& e) {
    // The layer's own argument checks name the layer, not the file.
    if (std::string_view(e.what()).find(".keras file") != std::string_view::npos) throw;
    ThrowError(e.code(), StrCat(".keras file '", file, "': ", where, " (", cls, "): ", e.what()));
  }
  reader.Finish();
  return out;
}

// `prefix` is the config path of `root` ("" for config.json's root,
// "config.layers[3]." for a nested Sequential), `group` its weights group
// ("" or "layers/sequential/").
std::optional<Shape> BuildModel(const Json& root, Sequential& model, const std::string& prefix,
                                const std::string& group, keras_internal::ConfigContext& context) {
  const std::string& file = context.file;
  std::optional<Shape> input;
  const Json& layers =
      Field(Field(root, "config", file, prefix + "config.json"), "layers", file, prefix + "config");
  if (!layers.is_array())
    throw InvalidArgumentError(
        StrCat(".keras file '", file, "': ", prefix, "config.layers is not a list"));
  std::map<std::string, int> used;  // weights group keys
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string where = StrCat(prefix, "config.layers[", i, "]");
    const Json& layer = layers[i];
    if (layer.is_object() && layer.value("class_name", Json()) == "InputLayer") {
      const Json& cfg = Field(layer, "config", file, where);
      const Json& shape = cfg.contains("batch_shape")
                              ? cfg.at("batch_shape")
                              : Field(cfg, "batch_input_shape", file, where + ".config");
      if (!shape.is_array() || shape.size() < 2 || shape.size() > 9) {
        throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where,
                                          ".config.batch_shape is not a list of 2 to 9 entries"));
      }
      std::vector<int64_t> dims;
      for (size_t k = 1; k < shape.size(); ++k) {
        if (!shape[k].is_number_integer() || shape[k].get<int64_t>() <= 0 ||
            shape[k].get<int64_t>() > keras_internal::kMaxConfigInt) {
          throw InvalidArgumentError(
              StrCat(".keras file '", file, "': ", where, ".config.batch_shape[", k, "] is ",
                     shape[k].dump().substr(0, 40), "; expected a positive integer"));
        }
        dims.push_back(shape[k].get<int64_t>());
      }
      input = Shape(dims);
      const std::string name =
          cfg.contains("name") && cfg["name"].is_string() ? cfg["name"].get<std::string>() : "";
      model.Add(std::make_unique<InputLayer>(*input, name));
    } else {
      model.Add(keras_internal::LayerFromEntry(
          layer, where, keras_internal::NextLayerGroup(layer, group, used), context));
    }
  }
  return input;
}

}  // namespace

namespace keras_internal {

Json LayerEntryJson(Layer& layer, DType dtype) {
  if (auto* nested = dynamic_cast<Sequential*>(&layer)) return ModelConfig(*nested);
  if (auto* nested = dynamic_cast<Model*>(&layer)) return FunctionalConfig(*nested, dtype);
  const KerasLayerKind& kind = KindOf(layer);
  if (kind.to_config == nullptr) {
    throw UnimplementedError(StrCat("Keras model: layer '", layer.name(), "' (", kind.class_name,
                                    ") cannot be saved in a .keras config"));
  }
  Json config = {{"name", layer.name()}, {"trainable", true}, {"dtype", DTypePolicyJson(dtype)}};
  kind.to_config(layer, config);
  return {{"module", "keras.layers"},
          {"class_name", kind.class_name},
          {"config", config},
          {"registered_name", nullptr}};
}

std::string NextLayerGroup(const Json& entry, const std::string& prefix,
                           std::map<std::string, int>& used) {
  const Json cls = entry.is_object() ? entry.value("class_name", Json()) : Json();
  const KerasLayerKind* kind =
      cls.is_string() ? keras_internal::KindByClassName(cls.get<std::string>()) : nullptr;
  if (kind == nullptr) return prefix + "layers/?";  // LayerFromEntry refuses the class
  const int n = used[kind->key]++;
  return StrCat(prefix, "layers/", n == 0 ? std::string(kind->key) : StrCat(kind->key, "_", n));
}

std::unique_ptr<Layer> LayerFromEntry(const Json& entry, const std::string& where,
                                      const std::string& group, ConfigContext& context) {
  const std::string& file = context.file;
  const Json cls = entry.is_object() ? entry.value("class_name", Json()) : Json();
  if (cls == "Sequential" || cls == "Functional") {
    if (context.depth >= kMaxModelDepth) {
      throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where, " nests models over ",
                                        kMaxModelDepth, " deep"));
    }
    ++context.depth;
    std::unique_ptr<Layer> nested;
    if (cls == "Sequential") {
      const Json& cfg = Field(entry, "config", file, where);
      auto sequential = std::make_unique<Sequential>(
          cfg.is_object() && cfg.value("name", Json()).is_string() ? cfg["name"].get<std::string>()
                                                                   : "");
      BuildModel(entry, *sequential, where + ".", group + "/", context);
      nested = std::move(sequential);
    } else {
      nested = FunctionalFromConfig(entry, where + ".", group + "/", context);
    }
    --context.depth;
    return nested;
  }
  std::unique_ptr<Layer> layer = LayerFromConfig(entry, file, where);
  const KerasLayerKind& kind = KindOf(*layer);
  if (kind.growth != nullptr) context.growth *= kind.growth(*layer);
  if (context.growth > kMaxGrowth) {
    throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where, " (", kind.class_name,
                                      "): the layers up to here multiply an input's size by ",
                                      context.growth, ", over the limit of ", kMaxGrowth,
                                      " (running the model would allocate what no file holds)"));
  }
  return layer;
}

std::map<std::string, std::string> ReadKerasArchive(const std::string& path) {
  int err = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err));
  if (!z) {
    if (err == ZIP_ER_NOENT) throw NotFoundError(StrCat(".keras file '", path, "' does not exist"));
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    const std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw DataLossError(StrCat(".keras file '", path, "' is not a readable zip archive: ", why));
  }
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  if (n < 0 || n > kMaxMembers) {
    throw InvalidArgumentError(StrCat(".keras file '", path, "' has ", n, " members; at most ",
                                      kMaxMembers, " (Keras writes 3)"));
  }
  std::map<std::string, std::string> members;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_SIZE)) {
      throw DataLossError(
          StrCat(".keras file '", path, "': member ", i, " has an unreadable header"));
    }
    const std::string name = st.name;
    if (name.empty() || name[0] == '/' || name.find("..") != std::string::npos ||
        name.find('\\') != std::string::npos) {
      throw InvalidArgumentError(StrCat(".keras file '", path, "': member name '", name,
                                        "' is absolute or leaves the archive (path traversal)"));
    }
    if (name.back() == '/') continue;  // a directory entry
    const bool json = name == "config.json" || name == "metadata.json";
    if (!json && name != "model.weights.h5") {
      throw UnimplementedError(StrCat(".keras file '", path, "': member '", name,
                                      "' is not one eager reads (config.json, metadata.json, "
                                      "model.weights.h5)"));
    }
    const uint64_t limit = json ? kMaxJson : kMaxWeights;
    if (st.size > limit) {
      throw ResourceExhaustedError(StrCat(".keras file '", path, "': member '", name, "' declares ",
                                          st.size, " bytes, over the limit of ", limit));
    }
    if (st.size > 100 * st.comp_size + (1 << 20)) {  // Keras stores members uncompressed
      throw InvalidArgumentError(StrCat(".keras file '", path, "': member '", name, "' declares ",
                                        st.size, " bytes from ", st.comp_size,
                                        " compressed: a zip bomb, refused"));
    }
    members[name] = ReadMember(z.get(), static_cast<zip_uint64_t>(i), st, path);
  }
  for (const char* need : {"config.json", "model.weights.h5"}) {
    if (!members.count(need)) {
      throw InvalidArgumentError(StrCat(".keras file '", path, "' has no member '", need, "'"));
    }
  }
  return members;
}

// From a scratch file in the system's temporary directory ($TMPDIR), not
// beside the archive: a .keras file in a read-only directory loads.
H5Contents ReadWeightsMember(const std::string& path, const std::string& bytes) {
  const std::string scratch = LoadScratchPath();
  try {
    {
      auto file = internal::WritableFile::Create(scratch, 1 << 16);
      file->Append(bytes.data(), bytes.size());
      file->Close();
    }
    H5Contents contents = ReadH5File(scratch);
    internal::RemoveFileNoThrow(scratch);
    return contents;
  } catch (const Error& e) {
    internal::RemoveFileNoThrow(scratch);
    // The scratch file's name means nothing to the user: name the member.
    ThrowError(e.code(), StrCat(".keras file '", path, "': member 'model.weights.h5': ", e.what()));
  } catch (...) {
    internal::RemoveFileNoThrow(scratch);
    throw;
  }
}

}  // namespace keras_internal

namespace {

// Writes the archive of `config` (the model's config.json root) and
// `model`'s weights, crash-safe.
void WriteKerasArchive(const std::string& path, Json config, Layer& model,
                       const Optimizer* optimizer, const std::string& loss) {
  if (optimizer != nullptr) {
    // Reading hyper-parameters only; Optimizer's accessors are not const.
    Optimizer& opt = const_cast<Optimizer&>(*optimizer);
    config["compile_config"] = {{"optimizer", keras_internal::OptimizerConfig(opt)},
                                {"loss", loss.empty() ? Json(nullptr) : Json(loss)},
                                {"loss_weights", nullptr},
                                {"metrics", nullptr},
                                {"weighted_metrics", nullptr},
                                {"run_eagerly", false},
                                {"steps_per_execution", 1},
                                {"jit_compile", false}};
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(date, sizeof date, "%Y-%m-%d@%H:%M:%S", &tm);
  const std::string metadata = Json{{"keras_version", kKerasVersion}, {"date_saved", date}}.dump();
  const std::string config_text = config.dump();
  // The weights go to a scratch file that libzip copies into the archive
  // (no second copy in memory); it is removed on every path out.
  const std::string h5_tmp = keras_internal::TempPathBeside(path) + ".h5";
  struct Scratch {
    std::string path;
    ~Scratch() { internal::RemoveFileNoThrow(path); }
  } scratch{h5_tmp};
  keras_internal::WriteWeightsFile(h5_tmp, model, optimizer);
  const std::string tmp = keras_internal::TempPathBeside(path);
  int err = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_EXCL, &err);
  if (z == nullptr)
    throw FailedPreconditionError(StrCat("writing .keras file '", path, "': cannot create ", tmp));
  // Members are stored, not deflated, as Keras's zipfile writes them:
  // weights are float noise that deflate shrinks by a few percent at
  // 15-20 MB/s, which made saving a 240 MB model take 14 s.
  auto add = [&](const char* name, zip_source_t* src) {
    const zip_int64_t index = src == nullptr ? -1 : zip_file_add(z, name, src, ZIP_FL_OVERWRITE);
    if (index < 0 ||
        zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0) {
      if (src != nullptr && index < 0) zip_source_free(src);
      const std::string why = zip_strerror(z);
      zip_discard(z);
      internal::RemoveFileNoThrow(tmp);
      throw FailedPreconditionError(
          StrCat("writing .keras file '", path, "': member ", name, ": ", why));
    }
  };
  add("metadata.json", zip_source_buffer(z, metadata.data(), metadata.size(), 0));
  add("config.json", zip_source_buffer(z, config_text.data(), config_text.size(), 0));
  add("model.weights.h5", zip_source_file(z, h5_tmp.c_str(), 0, -1));
  if (zip_close(z) != 0) {
    const std::string why = zip_strerror(z);
    zip_discard(z);
    internal::RemoveFileNoThrow(tmp);
    throw FailedPreconditionError(StrCat("writing .keras file '", path, "': ", why));
  }
  keras_internal::CommitFile(tmp, path);
}

}  // namespace

void SaveKerasModel(const std::string& path, Sequential& model, const Optimizer* optimizer,
                    const std::string& loss) {
  WriteKerasArchive(path, ModelConfig(model), model, optimizer, loss);
}

void SaveKerasModel(const std::string& path, Model& model, const Optimizer* optimizer,
                    const std::string& loss) {
  DType dtype = DType::kFloat32;
  for (Variable* v : model.TrainableVariables()) {
    dtype = v->dtype();
    break;
  }
  WriteKerasArchive(path, keras_internal::FunctionalConfig(model, dtype), model, optimizer, loss);
}

KerasModel LoadKerasModel(const std::string& path) {
  std::map<std::string, std::string> members = keras_internal::ReadKerasArchive(path);
  KerasModel out;
  Json config;
  try {
    config = Json::parse(members.at("config.json"));
    if (members.count("metadata.json")) {
      Json meta = Json::parse(members.at("metadata.json"));
      if (meta.is_object() && meta.contains("keras_version") && meta["keras_version"].is_string()) {
        out.keras_version = meta["keras_version"].get<std::string>();
      }
    }
  } catch (const Json::exception& e) {
    throw InvalidArgumentError(StrCat(".keras file '", path, "': malformed JSON: ", e.what()));
  }
  // The weights, through the same forked-child reader as a .weights.h5:
  // read after a Sequential's config is checked, but before a functional
  // model's graph is replayed (its layers are built from their shapes
  // first: keras_functional_config.h).
  std::optional<keras_internal::H5Contents> contents;
  auto weights = [&]() -> const keras_internal::H5Contents& {
    if (!contents) {
      contents = keras_internal::ReadWeightsMember(path, members.at("model.weights.h5"));
      members.clear();
    }
    return *contents;
  };
  keras_internal::ConfigContext context{path, weights, &out.functional_layers};
  try {
    const std::string cls = Field(config, "class_name", path, "config.json").get<std::string>();
    if (cls == "Functional") {
      weights();
      out.functional = keras_internal::FunctionalFromConfig(config, "", "", context);
    } else if (cls == "Sequential") {
      out.model = std::make_unique<Sequential>(
          Field(config, "config", path, "config.json").value("name", ""));
      // Built from the weights' shapes (ApplyWeights below), not by a call;
      // a nested functional Model's layers as it is read.
      BuildModel(config, *out.model, "", "", context);
    } else {
      Unsupported(path, "config.class_name",
                  StrCat("model class '", cls.substr(0, 60), "' (eager reads Sequential and ",
                         "Functional)"));
    }
    // Keras writes "compile_config": {} for a model never compiled.
    if (config.contains("compile_config") && config["compile_config"].is_object() &&
        !config["compile_config"].empty()) {
      const Json& cc = config["compile_config"];
      out.optimizer =
          keras_internal::OptimizerFromConfig(Field(cc, "optimizer", path, "config.compile_config"),
                                              path, "config.compile_config.optimizer");
      if (cc.contains("loss") && cc["loss"].is_string()) out.loss = cc["loss"].get<std::string>();
    }
  } catch (const Json::exception& e) {
    throw InvalidArgumentError(StrCat(".keras file '", path, "': config.json: ", e.what()));
  }
  Optimizer* optimizer = weights().groups.count("optimizer/vars") ? out.optimizer.get() : nullptr;
  keras_internal::ApplyWeights(weights(), path + ":model.weights.h5", out.root(), optimizer);
  // A Keras 3 file: the model computes (merge masks) and checkpoints as Keras 3.
  SetKerasLayout(out.root(), KerasLayout::kKeras3);
  if (out.optimizer) SetKerasLayout(*out.optimizer, KerasLayout::kKeras3);
  return out;
}

}  // namespace eager
