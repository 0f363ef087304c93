#pragma once

// The main job's trained model (MLP or CNN) as a SavedModel for TF Serving, saved_model_cli
// and TensorFlow's loaders (saving/saver/saved_model_export.h).
//
// One export holds both weight sets, as two signatures of one graph:
//   "serving_default"  the exponential moving averages (what TF's EMA idiom
//                      evaluates and serves: the averaged weights are the
//                      ones meant for inference)
//   "raw"              the weights as trained
// each taking images [?, 784] float32 (pixels scaled to [0, 1]) and giving
// logits [?, 10] and probabilities [?, 10] (their softmax). Two signatures
// rather than two versions: TF Serving serves only the newest version of a
// model by default, so a second version would hide one set; one directory
// also keeps the pair consistent (same training run, same step). The
// variables file holds the weights under their own names and the averages
// under TF's "<name>/ExponentialMovingAverage".

#include <string>

#include "autodiff/exponential_moving_average.h"
#include "examples/fashion_mnist/classifier.h"

namespace fashion_mnist {

// Writes the export to BASE_DIR/<version>, TF Serving's layout, with version
// one more than the largest numbered subdirectory there (1 for a new or
// empty BASE_DIR), and returns that directory. REQUIRES: the model is built
// and every trainable variable has a shadow in `ema` (else
// InvalidArgumentError naming it). Throws SavedModelExport's errors.
std::string ExportForServing(Classifier& model, const eager::ExponentialMovingAverage& ema,
                             const std::string& base_dir);

}  // namespace fashion_mnist
