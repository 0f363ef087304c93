// keras_layers_driver: eager's side of the layer judges (tests/tf_keras,
// keras_layers_test.py): BatchNormalization, LayerNormalization, Embedding
// and Dropout saved and restored through tf.train.Checkpoint(layer=...).
//
//   keras_layers_driver restore LAYOUT KIND FEEDS CKPT OUT
//   keras_layers_driver save    LAYOUT KIND FEEDS DIR
//
// KIND is bn, ln, embedding, dropout or seq (Sequential of Dense(4),
// BatchNormalization, Dropout(0.3), Dense(2)), or a shape layer (softmax,
// reshape, permute, repeat, zeropad, crop: keras_layers_test.py's arguments);
// LAYOUT keras3 or keras2
// (SetKerasLayout before anything is built). FEEDS is a bundle with "x" (the
// input; int32 ids for embedding) and, for save, the weights to set, "w0",
// "w1", ... in Variables() order (Keras's layer.weights order).
//
// restore: a fresh, unbuilt layer restores CKPT, is called on x (building it:
//          the variables take the saved values on creation), asserts the
//          restore was consumed, and writes to the bundle OUT "infer"
//          (layer(x)), then "train" (layer(x, true)) and, for bn and seq, the
//          "moving_mean" and "moving_variance" after that training call.
// save:    builds the layer on x, assigns the FEEDS weights, and saves
//          tf.train.Checkpoint(layer=...) as DIR/ckpt-1.
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "eager.h"

namespace {

eager::KerasLayout ParseLayout(const std::string& name) {
  for (auto layout : {eager::KerasLayout::kKeras2, eager::KerasLayout::kKeras3}) {
    if (eager::KerasLayoutName(layout) == name) return layout;
  }
  throw eager::InvalidArgumentError("unknown layout '" + name + "'; expected keras2 or keras3");
}

std::unique_ptr<eager::Layer> MakeLayer(const std::string& kind) {
  if (kind == "bn") return std::make_unique<eager::layers::BatchNormalization>();
  if (kind == "ln") return std::make_unique<eager::layers::LayerNormalization>();
  if (kind == "embedding") return std::make_unique<eager::layers::Embedding>(7, 5);
  if (kind == "dropout") return std::make_unique<eager::layers::Dropout>(0.3, 1234);
  if (kind == "seq") {
    auto model = std::make_unique<eager::Sequential>();
    model->Add(std::make_unique<eager::Dense>(4));
    model->Add(std::make_unique<eager::layers::BatchNormalization>());
    model->Add(std::make_unique<eager::layers::Dropout>(0.3, 1234));
    model->Add(std::make_unique<eager::Dense>(2));
    return model;
  }
  if (kind == "softmax") return std::make_unique<eager::layers::Activation>("softmax");
  if (kind == "reshape")
    return std::make_unique<eager::layers::Reshape>(std::vector<int64_t>{3, -1});
  if (kind == "permute")
    return std::make_unique<eager::layers::Permute>(std::vector<int64_t>{2, 1});
  if (kind == "repeat") return std::make_unique<eager::layers::RepeatVector>(3);
  if (kind == "zeropad") return std::make_unique<eager::layers::ZeroPadding2D>(1, 2, 0, 3);
  if (kind == "crop") return std::make_unique<eager::layers::Cropping2D>(1, 0, 2, 1);
  throw eager::InvalidArgumentError("unknown layer kind '" + kind +
                                    "'; expected bn, ln, embedding, dropout, seq, softmax, " +
                                    "reshape, permute, repeat, zeropad or crop");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "restore" && argc == 7) || (mode == "save" && argc == 6))) {
    std::cerr << "usage: keras_layers_driver restore LAYOUT KIND FEEDS CKPT OUT | "
                 "save LAYOUT KIND FEEDS DIR\n";
    return 2;
  }
  try {
    const eager::KerasLayout layout = ParseLayout(argv[2]);
    const std::string kind = argv[3];
    const eager::BundleReader feeds(argv[4]);
    const eager::Tensor x = feeds.Read("x");
    std::unique_ptr<eager::Layer> layer = MakeLayer(kind);
    eager::Checkpoint checkpoint({{"layer", layer.get()}});
    eager::SetKerasLayout(checkpoint, layout);
    if (mode == "save") {
      (*layer)(x);
      const std::vector<eager::Variable*> variables = layer->Variables();
      for (size_t i = 0; i < variables.size(); ++i) {
        variables[i]->Assign(feeds.Read(eager::StrCat("w", i)));
      }
      std::cout << "wrote " << checkpoint.Save(std::string(argv[5]) + "/ckpt") << " (" << kind
                << ", " << eager::KerasLayoutName(layout) << ")\n";
      return 0;
    }
    eager::CheckpointLoadStatus status = checkpoint.Restore(argv[5]);
    const eager::Tensor infer = (*layer)(x);
    status.AssertConsumed();
    const eager::Tensor train = (*layer)(x, /*training=*/true);
    eager::BundleWriter out(argv[6]);
    out.Add("infer", infer);
    out.Add("train", train);
    auto* bn = dynamic_cast<eager::layers::BatchNormalization*>(layer.get());
    if (auto* model = dynamic_cast<eager::Sequential*>(layer.get())) {
      bn = dynamic_cast<eager::layers::BatchNormalization*>(model->layers()[1]);
    }
    if (bn != nullptr) {
      out.Add("moving_mean", bn->moving_mean().value());
      out.Add("moving_variance", bn->moving_variance().value());
    }
    out.Finish();
    std::cout << "restored " << argv[5] << " (" << kind << ", " << eager::KerasLayoutName(layout)
              << ")\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_layers_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
