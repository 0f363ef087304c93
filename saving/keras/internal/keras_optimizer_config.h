#pragma once

// A compiled model's optimizer in config.json's compile_config, both ways:
// Keras 3's SGD, RMSprop, Adagrad, Adam, AdamW and Nadam
// ({"module": "keras.optimizers", "class_name", "config"}), the eager
// optimizers of autodiff/ with the same update. Private to saving/keras/.
//
// Read: each class's arguments (learning_rate a number or a schedule; SGD
// momentum and nesterov; RMSprop rho, momentum, epsilon, centered; Adagrad
// initial_accumulator_value, epsilon; Adam/AdamW/Nadam beta_1, beta_2,
// epsilon; Adam/AdamW amsgrad; AdamW weight_decay) and the clipping
// options (clipnorm, clipvalue, global_clipnorm). use_ema,
// loss_scale_factor, gradient_accumulation_steps, weight_decay outside
// AdamW and any other argument are UnimplementedError naming the config
// path; a value out of range InvalidArgumentError.
//
// A learning-rate schedule is keras.optimizers.schedules.serialize's
// {"module": "keras.optimizers.schedules", "class_name", "config"}, both
// ways, for the classes autodiff/learning_rate_schedule.h has:
// ExponentialDecay (initial_learning_rate, decay_steps, decay_rate,
// staircase), PiecewiseConstantDecay (boundaries, values) and CosineDecay
// (initial_learning_rate, decay_steps, alpha; no warmup_target). Another
// class, an argument eager lacks (warmup_target) or an integer where Keras
// would compute in integers is UnimplementedError naming the path
// ("config.compile_config.optimizer.config.learning_rate.config.
// warmup_target"). The optimizer read with one is in the kKeras3 layout
// (Optimizer::SetLearningRateSchedule): as Keras 3's, its variables are
// iterations and the slots, with no learning_rate, which is what
// optimizer/vars holds then; the schedule's name is not kept (eager's
// schedules have none; Keras's default is written).

#include <memory>
#include <string>

#include "autodiff/optimizer.h"
#include "saving/keras/internal/keras_config.h"

namespace eager::keras_internal {

// Throws UnimplementedError naming the optimizer for a class Keras 3 does
// not have in this form (a TF1-compatible optimizer) or a schedule class
// other than the three above.
Json OptimizerConfig(Optimizer& optimizer);

// `where` is the path of `optimizer` ("config.compile_config.optimizer").
std::unique_ptr<Optimizer> OptimizerFromConfig(const Json& optimizer, const std::string& file,
                                               const std::string& where);

}  // namespace eager::keras_internal
