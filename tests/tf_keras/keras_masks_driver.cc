// keras_masks_driver: eager's side of keras_masks_test.py. Builds the model
// of KIND, sets Keras's weights, and writes its prediction and the gradients
// of mean((pred - y)^2), or Dropout's training outputs.
//
//   keras_masks_driver KIND FEEDS OUT
//
// FEEDS is a bundle with "x" (int32 ids [batch, time] for the recurrent and
// "mha-embedded" kinds, else float [batch, time, features]), "y" (the
// target, the prediction's shape), "mask" (mha-mask: [batch, time, time]) and
// the weights "w0", "w1", ... in Keras's model.weights order.
//
// KIND:
//   simple|lstm|gru, then any of "-seq" (return_sequences), "-back"
//     (go_backwards), "-drop" (dropout 0.3, recurrent_dropout 0.2, seed 7,
//     and the training call): Sequential(Embedding(10, 4, mask_zero=True),
//     the layer with 3 units, Dense(2)); the Embedding's mask reaches the
//     layer.
//   mha-causal:   MultiHeadAttention(2, 3) on x, use_causal_mask.
//   mha-mask:     the same with attention_mask "mask".
//   mha-embedded: Embedding(10, 4, mask_zero=True) then self-attention with
//                 the ids' mask as query and value mask (Keras's input masks).
//   dropout:      Dropout(0.3, seed=1234) called three times in training on
//                 x; OUT gets "d0", "d1", "d2" (no weights, no gradients).
//
// OUT gets "pred" and "g0", "g1", ... (the weights' gradients, in order).
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "eager.h"

namespace {

std::unique_ptr<eager::Layer> MakeRecurrent(const std::string& kind) {
  std::stringstream parts(kind);
  std::string type, flag;
  std::getline(parts, type, '-');
  eager::layers::RecurrentConfig config;
  while (std::getline(parts, flag, '-')) {
    if (flag == "seq") {
      config.return_sequences = true;
    } else if (flag == "back") {
      config.go_backwards = true;
    } else if (flag == "drop") {
      config.dropout = 0.3;
      config.recurrent_dropout = 0.2;
      config.seed = 7;
    } else {
      throw eager::InvalidArgumentError(eager::StrCat("unknown flag '", flag, "' in kind '", kind,
                                                      "'; expected seq, back or drop"));
    }
  }
  if (type == "simple") return std::make_unique<eager::layers::SimpleRNN>(3, config);
  if (type == "lstm") return std::make_unique<eager::layers::LSTM>(3, config);
  if (type == "gru") return std::make_unique<eager::layers::GRU>(3, config);
  throw eager::InvalidArgumentError(eager::StrCat("unknown layer '", type, "' in kind '", kind,
                                                  "'; expected simple, lstm or gru"));
}

// The module holding the weights and its forward pass on the feeds.
struct Model {
  std::vector<std::unique_ptr<eager::Module>> parts;
  std::function<eager::Tensor()> forward;
};

Model MakeModel(const std::string& kind, const eager::BundleReader& feeds) {
  const eager::Tensor x = feeds.Read("x");
  Model model;
  if (kind.rfind("mha", 0) == 0) {
    auto mha = std::make_unique<eager::layers::MultiHeadAttention>(2, 3);
    eager::layers::MultiHeadAttention* layer = mha.get();
    if (kind == "mha-embedded") {
      auto embed = std::make_unique<eager::layers::Embedding>(10, 4, /*mask_zero=*/true);
      eager::layers::Embedding* table = embed.get();
      model.parts.push_back(std::move(embed));
      model.forward = [layer, table, x] {
        const eager::Tensor e = (*table)(x);
        const std::optional<eager::Tensor> mask = table->ComputeMask(x);
        return layer->Attend(e, e, std::nullopt, {.query_mask = mask, .value_mask = mask});
      };
    } else if (kind == "mha-causal") {
      model.forward = [layer, x] {
        return layer->Attend(x, x, std::nullopt, {.use_causal_mask = true});
      };
    } else if (kind == "mha-mask") {
      const eager::Tensor mask = feeds.Read("mask");
      model.forward = [layer, x, mask] {
        return layer->Attend(x, x, std::nullopt, {.attention_mask = mask});
      };
    } else {
      throw eager::InvalidArgumentError(eager::StrCat(
          "unknown kind '", kind, "'; expected mha-causal, mha-mask or mha-embedded"));
    }
    model.parts.push_back(std::move(mha));
    return model;
  }
  auto seq = std::make_unique<eager::Sequential>();
  seq->Add(std::make_unique<eager::layers::Embedding>(10, 4, /*mask_zero=*/true));
  seq->Add(MakeRecurrent(kind));
  seq->Add(std::make_unique<eager::Dense>(2));
  eager::Sequential* s = seq.get();
  model.parts.push_back(std::move(seq));
  // "-drop": the training call with Keras's first dropout masks (seeds
  // [7, 0], [7, 1], ...); the building call before counted its draws.
  const bool training = kind.find("-drop") != std::string::npos;
  model.forward = [s, x, training] {
    if (!training) return (*s)(x);
    auto& rnn = static_cast<eager::layers::Recurrent&>(*s->layers()[1]);
    rnn.set_dropout_step(0);
    return (*s)(x, true);
  };
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: keras_masks_driver KIND FEEDS OUT\n";
    return 2;
  }
  try {
    const std::string kind = argv[1];
    const eager::BundleReader feeds(argv[2]);
    eager::BundleWriter out(argv[3]);
    if (kind == "dropout") {
      eager::layers::Dropout dropout(0.3, /*seed=*/1234);
      const eager::Tensor x = feeds.Read("x");
      for (int call = 0; call < 3; ++call) out.Add(eager::StrCat("d", call), dropout(x, true));
      out.Finish();
      std::cout << "dropout: 3 training calls\n";
      return 0;
    }
    Model model = MakeModel(kind, feeds);
    model.forward();  // builds
    std::vector<eager::Variable*> variables;
    for (auto& part : model.parts) {
      for (eager::Variable* v : part->Variables()) variables.push_back(v);
    }
    for (size_t i = 0; i < variables.size(); ++i) {
      variables[i]->Assign(feeds.Read(eager::StrCat("w", i)));
    }
    const eager::Tensor y = feeds.Read("y");
    eager::GradientTape tape;
    const eager::Tensor pred = model.forward();
    const eager::Tensor loss = eager::ReduceMean(eager::Square(eager::Sub(pred, y)));
    const std::vector<const eager::Variable*> watched(variables.begin(), variables.end());
    const std::vector<std::optional<eager::Tensor>> grads = tape.Gradient(loss, watched);
    out.Add("pred", pred);
    for (size_t i = 0; i < grads.size(); ++i) {
      out.Add(eager::StrCat("g", i),
              grads[i] ? *grads[i] : eager::ZerosLike(variables[i]->value()));
    }
    out.Finish();
    std::cout << kind << ": prediction and " << grads.size() << " gradients\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_masks_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
