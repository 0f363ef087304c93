#pragma once

// Keras 3's `.weights.h5` (model.save_weights / model.load_weights of
// keras 3.x, tf.keras since TF 2.16), read and written for eager's
// Sequential models of its layer library (Dense, Flatten, InputLayer, nested
// Sequential, and every layer of autodiff/layers/: the convolutions,
// poolings, normalizations, Embedding, Dropout, Masking, the shape layers,
// SimpleRNN, LSTM, GRU and MultiHeadAttention), and
// its optimizer (SGD, RMSprop, Adagrad, Adam, AdamW, Nadam). Which layers and how:
// saving/keras/internal/ keras_layer_kinds.h, one entry per layer class.
//
//   eager::SaveKerasWeights("m.weights.h5", model, &adam);
//   eager::LoadKerasWeights("m.weights.h5", model, &adam);
//
// The layout is Keras's saving_lib (H5IOStore), by structure, not by layer
// name:
//   vars                      the model's own (none), attribute name=<model>
//   layers/<key>/vars/<i>     layer variables in Keras's creation order
//                             (Dense: 0 kernel [in, units], 1 bias [units];
//                             BatchNormalization: gamma, beta, moving_mean,
//                             moving_variance; SeparableConv2D: depthwise,
//                             pointwise, bias)
//   layers/<key>/<sub>/vars/<i>  a layer whose variables Keras keeps in
//                             sublayers: an RNN's "cell" (kernel,
//                             recurrent_kernel, bias; vars named
//                             "lstm_cell", ...), MultiHeadAttention's
//                             "query_dense", "key_dense", "value_dense",
//                             "output_dense" (kernel, bias each) and the
//                             empty "_softmax" and "_dropout_layer"; its own
//                             vars group is empty
//   optimizer/vars/<i>        Keras 3's optimizer.variables: 0 iterations
//                             (int64 scalar), 1 learning_rate (floatx
//                             scalar; absent with a learning-rate
//                             schedule, which Keras 3 evaluates at the
//                             restored iterations instead, so the slots
//                             start at 1), then the slots in the order the
//                             Keras class's build() creates them (Adam:
//                             per trainable variable its momentum and
//                             velocity; RMSprop: every velocity, then every
//                             momentum; autodiff/optimizer.h's kKeras3
//                             "_variables", which is this list)
// where <key> is the snake_case class name made unique in the container
// ("dense", "dense_1", "conv2d", "batch_normalization", "sequential"), not
// the layer's name, and the InputLayer is not
// listed (Keras's Sequential.layers leaves it out). A nested Sequential has
// its own "layers" group under its key.
//
// A functional Model (autodiff/functional.h) is saved as Keras 3 saves a
// Functional: its operations() in order, InputLayers included
// ("layers/input_layer", "layers/input_layer_1", each with an empty vars
// group), a shared layer once; a nested Sequential or Model has its own
// "layers" group ("functional" is a nested Model's key). The optimizer's
// slots follow the trainable variables in that order.
//
// tf_keras's legacy HDF5 (save_weights("m.h5"), model.save("m.h5"): groups
// per layer named by the root's or "model_weights"' `layer_names`, datasets
// listed by each group's `weight_names`) is read by LoadKerasWeights too,
// without an optimizer: layers with weights matched by order, as tf_keras's
// load_weights matches them, each layer's weights in the same order as in
// Keras 3's layout (tf_keras's and Keras 3's build() create them alike);
// an unbuilt layer is built from their shapes.
//
// Reading never trusts the file: the HDF5 part runs in a forked child
// (saving/keras/internal/h5_file.h says why), and every dataset is checked
// against the model before any variable changes: a missing one, one of
// another dtype or shape, or extra ones are InvalidArgumentError naming the
// file, the dataset path, the layer and what was expected. An unbuilt Dense
// is built from the kernel's shape in the file. The optimizer part is read
// only when `optimizer` is given; if it is and the file has none, that is
// NotFoundError. The optimizer's slots are created first (Optimizer::Build
// over the trainable variables, as Keras's build(var_list)), then checked
// and assigned with the rest, so the next step continues from the file's
// state. The optimizer keeps its layout: to step as Keras 3 does (its betas
// as Python floats, an Embedding's rows squared one by one) set kKeras3
// (UseKerasLayout), as LoadKerasModel's optimizer is.
//
// Writing is crash-safe as eager's bundles: a temporary file beside `path`,
// fsync, rename, fsync of the directory: a kill leaves the old file or the
// new one, never a torn one. REQUIRES: every layer with variables built
// (else FailedPreconditionError naming it); a layer of another class is
// UnimplementedError naming it and the classes eager saves.

#include <string>

#include "autodiff/functional.h"
#include "autodiff/optimizer.h"
#include "autodiff/sequential.h"

namespace eager {

void SaveKerasWeights(const std::string& path, Sequential& model,
                      const Optimizer* optimizer = nullptr);
void LoadKerasWeights(const std::string& path, Sequential& model, Optimizer* optimizer = nullptr);
void SaveKerasWeights(const std::string& path, Model& model, const Optimizer* optimizer = nullptr);
void LoadKerasWeights(const std::string& path, Model& model, Optimizer* optimizer = nullptr);

}  // namespace eager
