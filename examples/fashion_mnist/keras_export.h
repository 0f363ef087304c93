#pragma once

// The main job's trained model as a Keras 3 `.keras` file
// (`fashion_mnist --save_keras DIR/model.keras`): `keras.models.load_model()`
// loads it and, on the same test images, gets the accuracy the run printed
// for the raw weights.
//
// The main job's models are plain Modules (mlp.h, cnn.h: header-only, shared
// with the benchmarks), so the file is written from a Keras Sequential of the
// layer library that computes the same function with a copy of the weights:
//   mlp: Input(784) -> Dense(256, relu) -> Dense(10)
//   cnn: Input(784) -> Reshape(28, 28, 1) -> Conv2D(32, 5, same, relu)
//        -> MaxPooling2D -> Conv2D(64, 5, same, relu) -> MaxPooling2D
//        -> Flatten -> Dense(1024, relu) -> Dense(10)
// The outputs are logits, as the training loss takes them.

#include <memory>
#include <string>

#include "autodiff/sequential.h"
#include "examples/fashion_mnist/classifier.h"

namespace fashion_mnist {

// A Keras Sequential computing what `model` computes, built, holding copies
// of its weights. Throws FailedPreconditionError for an unbuilt model,
// InvalidArgumentError for one that is neither Mlp nor Cnn.
std::unique_ptr<eager::Sequential> AsKerasSequential(const Classifier& model);

// Writes AsKerasSequential(model) to `path` (a `.keras` archive, written
// crash-safely: the old file or the new one) without optimizer state.
void SaveAsKeras(const Classifier& model, const std::string& path);

}  // namespace fashion_mnist
