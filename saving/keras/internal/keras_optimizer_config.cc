#include "saving/keras/internal/keras_optimizer_config.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

#include "autodiff/adagrad.h"
#include "autodiff/adam.h"
#include "autodiff/nadam.h"
#include "autodiff/rmsprop.h"
#include "autodiff/sgd.h"
#include "runtime/errors.h"

namespace eager::keras_internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double ValueOf(const Variable& v) {
  return v.dtype() == DType::kFloat64 ? v.value().scalar<double>() : v.value().scalar<float>();
}

// A hyper-parameter Keras keeps as a Python float (beta_1, momentum) that
// eager keeps in a float32 variable: the shortest decimal that reads back
// as that float (0.9f is 0.9, not 0.8999999761581421), as the user wrote it.
double HyperOf(const Variable& v) {
  if (v.dtype() == DType::kFloat64) return v.value().scalar<double>();
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.value().scalar<float>());
  if (ec != std::errc()) return v.value().scalar<float>();
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

Json Optional(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// The arguments every Keras 3 optimizer has, in get_config's order.
Json BaseConfig(const char* name, Optimizer& optimizer, double learning_rate,
                std::optional<double> weight_decay) {
  const GradientClipping& c = optimizer.gradient_clipping();
  return {{"name", name},
          {"learning_rate", learning_rate},
          {"weight_decay", Optional(weight_decay)},
          {"clipnorm", Optional(c.clipnorm)},
          {"global_clipnorm", Optional(c.global_clipnorm)},
          {"clipvalue", Optional(c.clipvalue)},
          {"use_ema", false},
          {"ema_momentum", 0.99},
          {"ema_overwrite_frequency", nullptr},
          {"loss_scale_factor", nullptr},
          {"gradient_accumulation_steps", nullptr}};
}

Json Wrap(const char* class_name, Json config) {
  return {{"module", "keras.optimizers"},
          {"class_name", class_name},
          {"config", std::move(config)},
          {"registered_name", nullptr}};
}

}  // namespace

Json OptimizerConfig(Optimizer& optimizer) {
  if (optimizer.learning_rate_schedule() != nullptr) {
    throw UnimplementedError(StrCat("Keras model: optimizer '", optimizer.name(),
                                    "' has a learning-rate schedule; eager writes constant "
                                    "learning rates in compile_config"));
  }
  if (auto* adam = dynamic_cast<Adam*>(&optimizer)) {
    if (adam->tf1_compatible()) {
      throw UnimplementedError(StrCat("Keras model: Adam '", adam->name(),
                                      "' is TF1-compatible; Keras 3 has no such optimizer"));
    }
    const bool w = adam->weight_decay().has_value();
    Json c = BaseConfig(w ? "adamw" : "adam", optimizer, ValueOf(adam->learning_rate()),
                        adam->weight_decay());
    c["beta_1"] = HyperOf(adam->beta_1());
    c["beta_2"] = HyperOf(adam->beta_2());
    c["epsilon"] = adam->epsilon();
    c["amsgrad"] = adam->amsgrad();
    return Wrap(w ? "AdamW" : "Adam", std::move(c));
  }
  if (auto* sgd = dynamic_cast<SGD*>(&optimizer)) {
    if (sgd->tf1_compatible()) {
      throw UnimplementedError(StrCat("Keras model: SGD '", sgd->name(),
                                      "' is TF1-compatible; Keras 3 has no such optimizer"));
    }
    Json c = BaseConfig("SGD", optimizer, ValueOf(sgd->learning_rate()), std::nullopt);
    c["momentum"] = HyperOf(sgd->momentum());
    c["nesterov"] = sgd->nesterov();
    return Wrap("SGD", std::move(c));
  }
  if (auto* rms = dynamic_cast<RMSprop*>(&optimizer)) {
    const RMSpropOptions& o = rms->options();
    Json c = BaseConfig("rmsprop", optimizer, ValueOf(rms->learning_rate()), std::nullopt);
    c["rho"] = o.rho;
    c["momentum"] = o.momentum;
    c["epsilon"] = o.epsilon;
    c["centered"] = o.centered;
    return Wrap("RMSprop", std::move(c));
  }
  if (auto* ada = dynamic_cast<Adagrad*>(&optimizer)) {
    const AdagradOptions& o = ada->options();
    Json c = BaseConfig("adagrad", optimizer, ValueOf(ada->learning_rate()), std::nullopt);
    c["initial_accumulator_value"] = o.initial_accumulator_value;
    c["epsilon"] = o.epsilon;
    return Wrap("Adagrad", std::move(c));
  }
  if (auto* nadam = dynamic_cast<Nadam*>(&optimizer)) {
    const NadamOptions& o = nadam->options();
    Json c = BaseConfig("nadam", optimizer, ValueOf(nadam->learning_rate()), std::nullopt);
    c["beta_1"] = o.beta_1;
    c["beta_2"] = o.beta_2;
    c["epsilon"] = o.epsilon;
    return Wrap("Nadam", std::move(c));
  }
  throw UnimplementedError(StrCat("Keras model: optimizer '", optimizer.name(),
                                  "' is of a class eager cannot write in compile_config (it "
                                  "writes SGD, RMSprop, Adagrad, Adam, AdamW, Nadam)"));
}

std::unique_ptr<Optimizer> OptimizerFromConfig(const Json& optimizer, const std::string& file,
                                               const std::string& where) {
  const std::string cls = optimizer.is_object() && optimizer.value("class_name", Json()).is_string()
                              ? optimizer["class_name"].get<std::string>()
                              : "";
  if (!optimizer.is_object() || !optimizer.contains("config") || !optimizer["config"].is_object()) {
    if (optimizer.is_string()) {
      throw UnimplementedError(StrCat(".keras file '", file, "': ", where, " is the name ",
                                      optimizer.dump().substr(0, 40),
                                      "; eager reads an optimizer's full config"));
    }
    throw InvalidArgumentError(
        StrCat(".keras file '", file, "': ", where, " is not an optimizer object with a config"));
  }
  ConfigReader r(optimizer["config"], file, where + ".config");
  r.Ignore("name");
  if (optimizer["config"].contains("learning_rate") &&
      optimizer["config"]["learning_rate"].is_object()) {
    r.Unsupported("learning_rate", "a learning-rate schedule (eager reads a number)");
  }
  const double lr = r.Float("learning_rate", 0, kInf, 0.001);
  GradientClipping clipping;
  if (r.Has("clipnorm")) clipping.clipnorm = r.Float("clipnorm", 0, kInf, std::nullopt);
  if (r.Has("clipvalue")) clipping.clipvalue = r.Float("clipvalue", 0, kInf, std::nullopt);
  if (r.Has("global_clipnorm"))
    clipping.global_clipnorm = r.Float("global_clipnorm", 0, kInf, std::nullopt);
  r.Expect("use_ema", {Json(false)});
  r.Ignore("ema_momentum");  // used only with use_ema
  r.Ignore("ema_overwrite_frequency");
  std::unique_ptr<Optimizer> out;
  if (cls == "Adam" || cls == "AdamW") {
    AdamOptions o;
    o.learning_rate = lr;
    o.beta_1 = r.Float("beta_1", 0, 1, 0.9);
    o.beta_2 = r.Float("beta_2", 0, 1, 0.999);
    o.epsilon = r.Float("epsilon", 0, kInf, 1e-7);
    o.amsgrad = r.Bool("amsgrad", false);
    if (cls == "AdamW") o.weight_decay = r.Float("weight_decay", 0, kInf, 0.004);
    out = std::make_unique<Adam>(o);
  } else if (cls == "SGD") {
    SGDOptions o;
    o.learning_rate = lr;
    o.momentum = r.Float("momentum", 0, 1, 0.0);
    o.nesterov = r.Bool("nesterov", false);
    out = std::make_unique<SGD>(o);
  } else if (cls == "RMSprop") {
    RMSpropOptions o;
    o.learning_rate = lr;
    o.rho = r.Float("rho", 0, 1, 0.9);
    o.momentum = r.Float("momentum", 0, kInf, 0.0);
    o.epsilon = r.Float("epsilon", 0, kInf, 1e-7);
    o.centered = r.Bool("centered", false);
    out = std::make_unique<RMSprop>(o);
  } else if (cls == "Adagrad") {
    AdagradOptions o;
    o.learning_rate = lr;
    o.initial_accumulator_value = r.Float("initial_accumulator_value", 0, kInf, 0.1);
    o.epsilon = r.Float("epsilon", 0, kInf, 1e-7);
    out = std::make_unique<Adagrad>(o);
  } else if (cls == "Nadam") {
    NadamOptions o;
    o.learning_rate = lr;
    o.beta_1 = r.Float("beta_1", 0, 1, 0.9);
    o.beta_2 = r.Float("beta_2", 0, 1, 0.999);
    o.epsilon = r.Float("epsilon", 0, kInf, 1e-7);
    out = std::make_unique<Nadam>(o);
  } else {
    throw UnimplementedError(StrCat(".keras file '", file, "': ", where, ".class_name: optimizer '",
                                    cls.substr(0, 60),
                                    "' (eager reads SGD, RMSprop, Adagrad, Adam, AdamW, Nadam)"));
  }
  // Anything else set (weight_decay outside AdamW, loss_scale_factor,
  // gradient_accumulation_steps) is refused by name.
  r.Finish();
  try {
    out->SetGradientClipping(clipping);
  } catch (const Error& e) {
    ThrowError(e.code(), StrCat(".keras file '", file, "': ", where, ".config: ", e.what()));
  }
  return out;
}

}  // namespace eager::keras_internal
