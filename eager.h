#pragma once

// eager: everything a user program needs, in one include.
//
//   #include "eager.h"
//
// For users and examples only: the library itself never includes this file
// (each library file includes exactly the headers it uses), so that the
// layering runtime <- ops <- autodiff (and saving <- runtime) stays visible.

// runtime: values, variables, names, errors.
#include "runtime/dtype.h"
#include "runtime/errors.h"
#include "runtime/graph.h"
#include "runtime/live_variables.h"
#include "runtime/names.h"
#include "runtime/shape.h"
#include "runtime/tensor.h"
#include "runtime/threads.h"
#include "runtime/trackable.h"
#include "runtime/variable.h"

// ops: the op functions and C++ operators.
#include "ops/activation_ops.h"
#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/conv_ops.h"
#include "ops/cumulative_ops.h"
#include "ops/depthwise_conv.h"
#include "ops/fused_conv.h"
#include "ops/fused_matmul.h"
#include "ops/graph_ops.h"
#include "ops/index_ops.h"
#include "ops/matmul.h"
#include "ops/nn_ops.h"
#include "ops/operators.h"
#include "ops/pooling_ops.h"
#include "ops/random_generator.h"
#include "ops/random_ops.h"
#include "ops/reduction_ops.h"
#include "ops/session.h"
#include "ops/shape_ops.h"
#include "ops/training_ops.h"
#include "ops/unary_ops.h"
#include "ops/variable_scope.h"

// autodiff: the tape, layers, optimizers, moving averages.
#include "autodiff/adam.h"
#include "autodiff/dense.h"
#include "autodiff/exponential_moving_average.h"
#include "autodiff/flatten.h"
#include "autodiff/gradient_tape.h"
#include "autodiff/graph_gradients.h"
#include "autodiff/input_layer.h"
#include "autodiff/layer.h"
#include "autodiff/layers/conv.h"
#include "autodiff/layers/pooling.h"
#include "autodiff/module.h"
#include "autodiff/optimizer.h"
#include "autodiff/sequential.h"
#include "autodiff/sgd.h"
// Keras 3 / tf_keras optimizers (issue 38).
#include "autodiff/adagrad.h"
#include "autodiff/learning_rate_schedule.h"
#include "autodiff/nadam.h"
#include "autodiff/rmsprop.h"
// autodiff/layers: Keras's layer library (issue 38).
#include "autodiff/layers/attention.h"
#include "autodiff/layers/embedding.h"
#include "autodiff/layers/normalization.h"
#include "autodiff/layers/recurrent.h"
#include "autodiff/layers/regularization.h"
#include "autodiff/layers/reshaping.h"
// The functional API and merge layers (issue 38).
#include "autodiff/functional.h"
#include "autodiff/keras_tensor.h"
#include "autodiff/layers/masking.h"
#include "autodiff/layers/merging.h"

// saving: TensorFlow's checkpoint files (link eager_saving).
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"
#include "saving/bundle/checkpoint_state.h"
#include "saving/checkpoint/checkpoint.h"
#include "saving/checkpoint/checkpoint_management.h"
#include "saving/checkpoint/checkpoint_manager.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saved_model.h"
#include "saving/saver/saved_model_export.h"
#include "saving/saver/saver.h"
#include "saving/summary/summary_writer.h"

// distributed: many processes over MPI (link eager::distributed, built when
// CMake finds MPI; it defines EAGER_HAS_DISTRIBUTED for its users).
#ifdef EAGER_HAS_DISTRIBUTED
#include "distributed/distributed.h"
#endif
