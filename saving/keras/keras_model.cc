#include "saving/keras/keras_model.h"

#include <zip.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "autodiff/dense.h"
#include "autodiff/flatten.h"
#include "autodiff/input_layer.h"
#include "ops/nn_ops.h"
#include "ops/unary_ops.h"
#include "runtime/errors.h"
#include "saving/bundle/posix_file.h"
#include "saving/keras/internal/keras_layout.h"

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

using Json = nlohmann::ordered_json;

constexpr const char* kKerasVersion = "3.15.1";  // the format written, as keras 3.15.1's
constexpr uint64_t kMaxJson = 16 << 20;
constexpr uint64_t kMaxWeights = uint64_t{16} << 30;
constexpr int64_t kMaxMembers = 16;

using ActivationFn = Tensor (*)(const Tensor&);

std::string ActivationName(const Dense& dense) {
  const Activation& a = dense.activation();
  if (!a) return "linear";
  const ActivationFn* fn = a.target<ActivationFn>();
  if (fn != nullptr) {
    if (*fn == &Relu) return "relu";
    if (*fn == &Sigmoid) return "sigmoid";
    if (*fn == &Tanh) return "tanh";
    if (*fn == &Softmax) return "softmax";
  }
  throw UnimplementedError(StrCat("Keras model: Dense '", dense.name(),
                                  "' has an activation Keras cannot name (linear, relu, sigmoid, "
                                  "tanh, softmax can be saved)"));
}

Json DTypePolicy(DType dtype) {
  return Json{{"module", "keras"},
              {"class_name", "DTypePolicy"},
              {"config", {{"name", dtype == DType::kFloat64 ? "float64" : "float32"}}},
              {"registered_name", nullptr}};
}

Json ShapeJson(int64_t first, const Shape& rest) {
  Json s = Json::array({nullptr});
  if (first >= 0) s.push_back(first);
  for (int64_t d : rest.dims()) s.push_back(d);
  return s;
}

Json ModelConfig(Sequential& model) {
  DType dtype = DType::kFloat32;
  std::optional<Shape> input;
  Json layers = Json::array();
  for (Layer* layer : model.layers()) {
    if (auto* in = dynamic_cast<InputLayer*>(layer)) {
      if (in->shape()) input = *in->shape();
    } else if (auto* d = dynamic_cast<Dense*>(layer)) {
      if (!d->built())
        throw FailedPreconditionError(StrCat("Keras model: Dense '", d->name(), "' is not built"));
      dtype = d->kernel().dtype();
      if (!input) input = Shape{d->kernel().shape().dim(0)};
    }
  }
  if (!input) {
    throw FailedPreconditionError(StrCat("Keras model '", model.name(),
                                         "': the input shape is unknown; start the model with an "
                                         "InputLayer that has a shape"));
  }
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config",
                     {{"batch_shape", ShapeJson(-1, *input)},
                      {"dtype", dtype == DType::kFloat64 ? "float64" : "float32"},
                      {"sparse", false},
                      {"ragged", false},
                      {"name", "input_layer"},
                      {"optional", false}}},
                    {"registered_name", nullptr}});
  for (Layer* layer : model.layers()) {
    if (dynamic_cast<InputLayer*>(layer) != nullptr) continue;
    if (dynamic_cast<Flatten*>(layer) != nullptr) {
      layers.push_back({{"module", "keras.layers"},
                        {"class_name", "Flatten"},
                        {"config",
                         {{"name", layer->name()},
                          {"trainable", true},
                          {"dtype", DTypePolicy(dtype)},
                          {"data_format", "channels_last"}}},
                        {"registered_name", nullptr}});
    } else if (auto* d = dynamic_cast<Dense*>(layer)) {
      layers.push_back(
          {{"module", "keras.layers"},
           {"class_name", "Dense"},
           {"config",
            {{"name", d->name()},
             {"trainable", true},
             {"dtype", DTypePolicy(dtype)},
             {"units", d->units()},
             {"activation", ActivationName(*d)},
             {"use_bias", d->use_bias()},
             {"kernel_initializer",
              {{"module", "keras.initializers"},
               {"class_name", "GlorotUniform"},
               {"config", {{"seed", nullptr}}},
               {"registered_name", nullptr}}},
             {"bias_initializer",
              {{"module", "keras.initializers"},
               {"class_name", "Zeros"},
               {"config", Json::object()},
               {"registered_name", nullptr}}},
             {"kernel_regularizer", nullptr},
             {"bias_regularizer", nullptr},
             {"kernel_constraint", nullptr},
             {"bias_constraint", nullptr}}},
           {"registered_name", nullptr},
           {"build_config", {{"input_shape", ShapeJson(-1, Shape{d->kernel().shape().dim(0)})}}}});
    } else {
      throw UnimplementedError(StrCat("Keras model: layer '", layer->name(),
                                      "' cannot be saved in a .keras config yet (InputLayer, "
                                      "Flatten, Dense can)"));
    }
  }
  return {{"module", "keras"},
          {"class_name", "Sequential"},
          {"config",
           {{"name", model.name()},
            {"trainable", true},
            {"dtype", DTypePolicy(dtype)},
            {"layers", layers}}},
          {"registered_name", nullptr},
          {"build_config", {{"input_shape", ShapeJson(-1, *input)}}}};
}

float ScalarOf(const Variable& v) { return v.value().scalar<float>(); }

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

Activation ActivationFromName(const std::string& name, const std::string& file,
                              const std::string& where) {
  if (name == "linear") return nullptr;
  if (name == "relu") return Relu;
  if (name == "sigmoid") return Sigmoid;
  if (name == "tanh") return Tanh;
  if (name == "softmax") return Softmax;
  Unsupported(file, where,
              StrCat("activation '", name, "' (eager has linear, relu, sigmoid, tanh, softmax)"));
}

std::optional<Shape> BuildModel(const Json& root, const std::string& file, Sequential& model) {
  std::optional<Shape> input;
  const Json& layers = Field(Field(root, "config", file, "config.json"), "layers", file, "config");
  if (!layers.is_array())
    throw InvalidArgumentError(StrCat(".keras file '", file, "': config.layers is not a list"));
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string where = StrCat("config.layers[", i, "]");
    const Json& layer = layers[i];
    const std::string cls = Field(layer, "class_name", file, where).get<std::string>();
    const Json& cfg = Field(layer, "config", file, where);
    const std::string name = cfg.value("name", "");
    if (cls == "InputLayer") {
      const Json& shape = cfg.contains("batch_shape")
                              ? cfg.at("batch_shape")
                              : Field(cfg, "batch_input_shape", file, where + ".config");
      std::vector<int64_t> dims;
      for (size_t k = 1; k < shape.size(); ++k) {
        const int64_t d = shape[k].get<int64_t>();
        if (d <= 0 || d > (int64_t{1} << 40))
          throw InvalidArgumentError(
              StrCat(".keras file '", file, "': ", where, ".config.batch_shape has dimension ", d));
        dims.push_back(d);
      }
      input = Shape(dims);
      model.Add(std::make_unique<InputLayer>(*input, name));
    } else if (cls == "Flatten") {
      model.Add(std::make_unique<Flatten>(name));
    } else if (cls == "Dense") {
      for (const char* k : {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                            "kernel_constraint", "bias_constraint", "lora_rank"}) {
        if (cfg.contains(k) && !cfg.at(k).is_null())
          Unsupported(file, StrCat(where, ".config.", k), "not null");
      }
      const int64_t units = Field(cfg, "units", file, where + ".config").get<int64_t>();
      if (units <= 0 || units > (int64_t{1} << 31))
        throw InvalidArgumentError(
            StrCat(".keras file '", file, "': ", where, ".config.units is ", units));
      model.Add(std::make_unique<Dense>(
          units,
          ActivationFromName(cfg.value("activation", "linear"), file, where + ".config.activation"),
          cfg.value("use_bias", true), std::nullopt, name));
    } else {
      Unsupported(file, where + ".class_name",
                  StrCat("layer class '", cls, "' (eager reads InputLayer, Flatten, Dense)"));
    }
  }
  return input;
}

}  // namespace

namespace keras_internal {

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

void SaveKerasModel(const std::string& path, Sequential& model, const Adam* optimizer,
                    const std::string& loss) {
  Json config = ModelConfig(model);
  if (optimizer != nullptr) {
    Adam& adam = const_cast<Adam&>(*optimizer);
    config["compile_config"] = {{"optimizer",
                                 {{"module", "keras.optimizers"},
                                  {"class_name", "Adam"},
                                  {"config",
                                   {{"name", "adam"},
                                    {"learning_rate", ScalarOf(adam.learning_rate())},
                                    {"beta_1", ScalarOf(adam.beta_1())},
                                    {"beta_2", ScalarOf(adam.beta_2())},
                                    {"epsilon", adam.epsilon()},
                                    {"amsgrad", false}}},
                                  {"registered_name", nullptr}}},
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
  const std::string h5_tmp = keras_internal::TempPathBeside(path) + ".h5";
  std::string weights;
  try {
    keras_internal::WriteWeightsFile(h5_tmp, model, optimizer);
    weights = internal::ReadFileToString(h5_tmp, kMaxWeights);
  } catch (...) {
    internal::RemoveFileNoThrow(h5_tmp);
    throw;
  }
  internal::RemoveFileNoThrow(h5_tmp);
  const std::string tmp = keras_internal::TempPathBeside(path);
  int err = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_EXCL, &err);
  if (z == nullptr)
    throw FailedPreconditionError(StrCat("writing .keras file '", path, "': cannot create ", tmp));
  auto add = [&](const char* name, const std::string& bytes) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    if (src == nullptr || zip_file_add(z, name, src, ZIP_FL_OVERWRITE) < 0) {
      if (src != nullptr) zip_source_free(src);
      const std::string why = zip_strerror(z);
      zip_discard(z);
      internal::RemoveFileNoThrow(tmp);
      throw FailedPreconditionError(
          StrCat("writing .keras file '", path, "': member ", name, ": ", why));
    }
  };
  add("metadata.json", metadata);
  add("config.json", config_text);
  add("model.weights.h5", weights);
  if (zip_close(z) != 0) {
    const std::string why = zip_strerror(z);
    zip_discard(z);
    internal::RemoveFileNoThrow(tmp);
    throw FailedPreconditionError(StrCat("writing .keras file '", path, "': ", why));
  }
  keras_internal::CommitFile(tmp, path);
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
  try {
    const std::string cls = Field(config, "class_name", path, "config.json").get<std::string>();
    if (cls != "Sequential") {
      Unsupported(path, "config.class_name",
                  StrCat("model class '", cls, "' (eager reads Sequential)"));
    }
    out.model = std::make_unique<Sequential>(
        Field(config, "config", path, "config.json").value("name", ""));
    const std::optional<Shape> input = BuildModel(config, path, *out.model);
    if (config.contains("compile_config") && config["compile_config"].is_object()) {
      const Json& cc = config["compile_config"];
      const Json& opt = Field(cc, "optimizer", path, "config.compile_config");
      const std::string ocls = opt.is_object() ? opt.value("class_name", "") : "";
      if (ocls != "Adam")
        Unsupported(path, "config.compile_config.optimizer",
                    StrCat("optimizer '", ocls, "' (eager reads Adam)"));
      const Json& oc = Field(opt, "config", path, "config.compile_config.optimizer");
      if (oc.value("amsgrad", false))
        Unsupported(path, "config.compile_config.optimizer.config.amsgrad", "true");
      AdamOptions options;
      options.learning_rate = oc.value("learning_rate", 0.001);
      options.beta_1 = oc.value("beta_1", 0.9);
      options.beta_2 = oc.value("beta_2", 0.999);
      options.epsilon = oc.value("epsilon", 1e-7);
      out.optimizer = std::make_unique<Adam>(options);
      if (cc.contains("loss") && cc["loss"].is_string()) out.loss = cc["loss"].get<std::string>();
    }
    if (input) {
      std::vector<int64_t> dims{1};
      for (int64_t d : input->dims()) dims.push_back(d);
      (void)(*out.model)(Tensor::Zeros(Shape(dims)));  // builds every Dense
    }
  } catch (const Json::exception& e) {
    throw InvalidArgumentError(StrCat(".keras file '", path, "': config.json: ", e.what()));
  }
  // The weights, through the same forked-child reader as a .weights.h5.
  const keras_internal::H5Contents contents =
      keras_internal::ReadWeightsMember(path, members.at("model.weights.h5"));
  members.clear();
  Adam* optimizer = contents.groups.count("optimizer/vars") ? out.optimizer.get() : nullptr;
  keras_internal::ApplyWeights(contents, path + ":model.weights.h5", *out.model, optimizer);
  return out;
}

}  // namespace eager
