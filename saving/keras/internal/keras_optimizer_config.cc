#include "saving/keras/internal/keras_optimizer_config.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "autodiff/adagrad.h"
#include "autodiff/adam.h"
#include "autodiff/learning_rate_schedule.h"
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

// keras.optimizers.schedules.serialize: {"module", "class_name", "config",
// "registered_name"}, each class's get_config keys in its order and its
// default name (eager's schedules have none).
Json ScheduleJson(const LearningRateSchedule& schedule, const Optimizer& optimizer) {
  Json config;
  const char* cls = nullptr;
  if (const auto* e = dynamic_cast<const ExponentialDecay*>(&schedule)) {
    cls = "ExponentialDecay";
    config = {{"initial_learning_rate", e->initial_learning_rate()},
              {"decay_steps", e->decay_steps()},
              {"decay_rate", e->decay_rate()},
              {"staircase", e->staircase()},
              {"name", "ExponentialDecay"}};
  } else if (const auto* p = dynamic_cast<const PiecewiseConstantDecay*>(&schedule)) {
    cls = "PiecewiseConstantDecay";
    config = {
        {"boundaries", p->boundaries()}, {"values", p->values()}, {"name", "PiecewiseConstant"}};
  } else if (const auto* c = dynamic_cast<const CosineDecay*>(&schedule)) {
    cls = "CosineDecay";
    config = {{"initial_learning_rate", c->initial_learning_rate()},
              {"decay_steps", c->decay_steps()},
              {"alpha", c->alpha()},
              {"name", "CosineDecay"},
              {"warmup_target", nullptr},
              {"warmup_steps", 0}};
  } else {
    throw UnimplementedError(StrCat("Keras model: optimizer '", optimizer.name(),
                                    "' has a learning-rate schedule of a class eager cannot "
                                    "write (it writes ExponentialDecay, PiecewiseConstantDecay, "
                                    "CosineDecay)"));
  }
  return {{"module", "keras.optimizers.schedules"},
          {"class_name", cls},
          {"config", std::move(config)},
          {"registered_name", nullptr}};
}

// A Python float of the config (initial_learning_rate, a value): Keras
// computes a schedule in the dtype of its numbers, so an integer one would
// make it integer arithmetic, which eager's float32 schedules do not do.
double ScheduleFloat(ConfigReader& r, const Json& config, const char* key, double min, double max) {
  if (config.contains(key) && config[key].is_number_integer()) {
    r.Unsupported(key, StrCat("the integer ", config[key].dump().substr(0, 40),
                              " (Keras computes the schedule in int32; eager in float32)"));
  }
  return r.Float(key, min, max, std::nullopt);
}

// keras.optimizers.schedules.deserialize of the classes eager has.
// `where` is the path of `schedule` ("...config.learning_rate").
std::shared_ptr<const LearningRateSchedule> ScheduleFromConfig(const Json& schedule,
                                                               const std::string& file,
                                                               const std::string& where) {
  if (!schedule.contains("class_name") || !schedule["class_name"].is_string() ||
      !schedule.contains("config") || !schedule["config"].is_object()) {
    throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where,
                                      " is an object but not a serialized learning-rate "
                                      "schedule ({\"class_name\", \"config\"})"));
  }
  const std::string cls = schedule["class_name"].get<std::string>();
  const Json& config = schedule["config"];
  ConfigReader r(config, file, where + ".config");
  r.Ignore("name");  // a name scope in Keras; nothing in the arithmetic
  std::shared_ptr<const LearningRateSchedule> out;
  try {
    if (cls == "ExponentialDecay") {
      const double initial = ScheduleFloat(r, config, "initial_learning_rate", 0, kInf);
      const int64_t steps = r.Int("decay_steps", 1, kMaxConfigInt, std::nullopt);
      const double rate = r.Float("decay_rate", 0, kInf, std::nullopt);
      const bool staircase = r.Bool("staircase", false);
      r.Finish();
      out = std::make_shared<ExponentialDecay>(initial, steps, rate, staircase);
    } else if (cls == "PiecewiseConstantDecay") {
      const Json* b = config.contains("boundaries") ? &config["boundaries"] : nullptr;
      const Json* v = config.contains("values") ? &config["values"] : nullptr;
      r.Ignore("boundaries");
      r.Ignore("values");
      constexpr size_t kMaxPieces = 4096;
      if (b == nullptr || !b->is_array() || b->empty() || b->size() >= kMaxPieces) {
        r.Invalid("boundaries", StrCat("is not a list of 1 to ", kMaxPieces - 1, " integers"));
      }
      if (v == nullptr || !v->is_array() || v->size() != b->size() + 1) {
        r.Invalid("values", StrCat("is not a list of ", b->size() + 1,
                                   " numbers (one more than boundaries)"));
      }
      std::vector<int64_t> boundaries;
      for (size_t i = 0; i < b->size(); ++i) {
        const Json& x = (*b)[i];
        if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<uint64_t>() > INT64_MAX)) {
          r.Unsupported("boundaries", StrCat("[", i, "] is ", x.dump().substr(0, 40),
                                             " (eager compares the step with integers)"));
        }
        if (!boundaries.empty() && x.get<int64_t>() < boundaries.back()) {
          r.Invalid("boundaries", StrCat("[", i, "] is ", x.get<int64_t>(), ", less than [", i - 1,
                                         "]: Keras's boundaries increase"));
        }
        boundaries.push_back(x.get<int64_t>());
      }
      std::vector<double> values;
      const bool integers = (*v)[0].is_number_integer();
      for (size_t i = 0; i < v->size(); ++i) {
        const Json& x = (*v)[i];
        if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0) {
          r.Invalid("values",
                    StrCat("[", i, "] is ", x.dump().substr(0, 40), "; expected a number >= 0"));
        }
        if (x.is_number_integer() != integers) {
          r.Unsupported("values", StrCat("[", i, "] is ", x.dump(), ": integers and floats mixed ",
                                         "(Keras computes in the type of values[0])"));
        }
        values.push_back(x.get<double>());
      }
      r.Finish();
      out = std::make_shared<PiecewiseConstantDecay>(std::move(boundaries), std::move(values));
    } else if (cls == "CosineDecay") {
      const double initial = ScheduleFloat(r, config, "initial_learning_rate", 0, kInf);
      const int64_t steps = r.Int("decay_steps", 1, kMaxConfigInt, std::nullopt);
      const double alpha = r.Float("alpha", 0, 1, 0.0);
      if (r.Has("warmup_target")) {
        r.Unsupported("warmup_target", "a linear warmup (eager's CosineDecay has none)");
      }
      r.Ignore("warmup_steps");  // Keras reads it only with a warmup_target
      r.Finish();
      out = std::make_shared<CosineDecay>(initial, steps, alpha);
    } else {
      throw UnimplementedError(
          StrCat(".keras file '", file, "': ", where, ".class_name: learning-rate schedule '",
                 cls.substr(0, 60),
                 "' (eager reads ExponentialDecay, PiecewiseConstantDecay, CosineDecay)"));
    }
  } catch (const Json::exception& e) {
    throw InvalidArgumentError(StrCat(".keras file '", file, "': ", where, ": ", e.what()));
  }
  return out;
}

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

Json OptimizerConfigWithConstantRate(Optimizer& optimizer) {
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

}  // namespace

Json OptimizerConfig(Optimizer& optimizer) {
  Json config = OptimizerConfigWithConstantRate(optimizer);
  if (const LearningRateSchedule* schedule = optimizer.learning_rate_schedule()) {
    config["config"]["learning_rate"] = ScheduleJson(*schedule, optimizer);
  }
  return config;
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
  std::shared_ptr<const LearningRateSchedule> schedule;
  double lr = 0.001;
  if (optimizer["config"].contains("learning_rate") &&
      optimizer["config"]["learning_rate"].is_object()) {
    r.Ignore("learning_rate");
    schedule = ScheduleFromConfig(optimizer["config"]["learning_rate"], file,
                                  where + ".config.learning_rate");
  } else {
    lr = r.Float("learning_rate", 0, kInf, 0.001);
  }
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
    if (schedule != nullptr) {
      // Keras 3's variables with a schedule: no learning_rate variable.
      out->UseKerasLayout(KerasLayout::kKeras3);
      out->SetLearningRateSchedule(std::move(schedule));
    }
  } catch (const Error& e) {
    ThrowError(e.code(), StrCat(".keras file '", file, "': ", where, ".config: ", e.what()));
  }
  return out;
}

}  // namespace eager::keras_internal
