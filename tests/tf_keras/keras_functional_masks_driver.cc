// keras_functional_masks_driver: eager's side of keras_functional_masks_test.py.
//
//   keras_functional_masks_driver KIND FEEDS CKPT KERAS OUT [keras2]
//
// Builds the model of KIND with eager's functional API (or Sequential) as
// the test builds it in Keras 3, restores tf.train.Checkpoint(model=) from
// CKPT in the Keras 3 layout (AssertConsumed: every index of Keras 3's
// "_operations" must match, mask ops counted), and writes to the bundle OUT:
//   "pred"       its prediction on the feeds,
//   "ops"        Keras 3's operations as eager numbers them, a string
//                "Input,Layer,NotEqual,Layer,..." (InputLayer "Input", a
//                layer "Layer", a mask op its Keras class),
//   "pred_keras" the prediction of the model LoadKerasModel builds from the
//                .keras file KERAS (config.json with Keras's mask ops),
//   "ops_keras"  that model's operations, as "ops".
// KERAS "-": no .keras file (no "pred_keras", "ops_keras").
// It also saves the restored model as OUT.keras, for Keras's load_model.
// keras2: CKPT is tf_keras's (the kKeras2 layout: "layer-<i>" edges, no
// mask ops); with KERAS "-".
// FEEDS has "x" (ids int32 [batch, time], or float [batch, time, 2] for
// masking) and "x2" for the two-input kinds.
//
// KIND (u = units 3, Dense(2) last unless said):
//   fn-emb-lstm        ids -> Embedding(10, 4, mask_zero) -> LSTM -> Dense
//   fn-emb-dense-gru   ids -> Embedding -> Dense(4) -> GRU(seq) -> GAP1D -> Dense
//   fn-add             (a, b) -> Embedding each -> Add -> LSTM -> Dense
//   fn-concat          (a, b) -> Embedding each -> Concatenate -> SimpleRNN -> Dense
//   fn-masking         x -> Masking(0) -> LSTM -> Dense
//   fn-mha             ids -> Embedding -> MultiHeadAttention(2, 3)(e, e) -> GAP1D -> Dense
//   seq-emb-dense-lstm Sequential: Embedding, Dense(4), LSTM, Dense
//   seq-emb-conv-lstm  Sequential: Embedding, Conv1D(4, 2), LSTM, Dense (the mask dropped)
//   seq-nested         Sequential: Embedding, Sequential([Dense(4)]), LSTM, Dense
//   fn-nested-in       ids -> Embedding -> Model(steps -> LSTM) -> Dense
//   fn-nested-out      ids -> Model(ids -> Embedding) -> LSTM -> Dense
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "eager.h"
#include "saving/keras/keras_model.h"

namespace {

using eager::DType;
using eager::KerasTensor;
namespace layers = eager::layers;

std::string Kinds(const std::vector<eager::KerasOperation>& ops) {
  std::string out;
  for (const eager::KerasOperation& op : ops) {
    if (!out.empty()) out += ",";
    if (op.layer == nullptr) {
      out += op.mask_op.empty() ? "Input" : std::string(op.mask_op);
    } else {
      out += dynamic_cast<eager::InputLayer*>(op.layer) != nullptr ? "Input" : "Layer";
    }
  }
  return out;
}

struct Built {
  std::vector<std::unique_ptr<eager::Layer>> layers;
  std::unique_ptr<eager::Model> functional;
  std::unique_ptr<eager::Sequential> sequential;
  int inputs = 1;

  template <typename L, typename... Args>
  L& Make(Args&&... args) {
    layers.push_back(std::make_unique<L>(std::forward<Args>(args)...));
    return static_cast<L&>(*layers.back());
  }
  eager::Layer& root() {
    return functional ? static_cast<eager::Layer&>(*functional) : *sequential;
  }
  std::string Ops() const {
    return Kinds(functional ? functional->keras3_operations() : sequential->keras3_operations());
  }
};

Built MakeModel(const std::string& kind) {
  Built b;
  const layers::RecurrentConfig rnn{};
  if (kind.rfind("seq-", 0) == 0) {
    b.sequential = std::make_unique<eager::Sequential>();
    b.sequential->Add(std::make_unique<eager::InputLayer>(eager::Shape{6}));
    b.sequential->Add(std::make_unique<layers::Embedding>(10, 4, true));
    if (kind == "seq-emb-dense-lstm") {
      b.sequential->Add(std::make_unique<eager::Dense>(4));
    } else if (kind == "seq-nested") {
      auto inner = std::make_unique<eager::Sequential>();
      inner->Add(std::make_unique<eager::InputLayer>(eager::Shape{6, 4}));
      inner->Add(std::make_unique<eager::Dense>(4));
      b.sequential->Add(std::move(inner));
    } else if (kind == "seq-emb-conv-lstm") {
      b.sequential->Add(std::make_unique<layers::Conv1D>(4, 2));
    } else {
      throw eager::InvalidArgumentError("unknown kind '" + kind + "'");
    }
    b.sequential->Add(std::make_unique<layers::LSTM>(3, rnn));
    b.sequential->Add(std::make_unique<eager::Dense>(2));
    return b;
  }
  auto& out = b.Make<eager::Dense>(2);
  if (kind == "fn-add" || kind == "fn-concat") {
    const KerasTensor a = eager::Input({6}, DType::kInt32), c = eager::Input({6}, DType::kInt32);
    auto& e1 = b.Make<layers::Embedding>(10, 4, true);
    auto& e2 = b.Make<layers::Embedding>(10, 4, true);
    KerasTensor merged = kind == "fn-add" ? b.Make<layers::Add>()({e1(a), e2(c)})
                                          : b.Make<layers::Concatenate>()({e1(a), e2(c)});
    KerasTensor h = kind == "fn-add" ? b.Make<layers::LSTM>(3, rnn)(merged)
                                     : b.Make<layers::SimpleRNN>(3, rnn)(merged);
    b.functional = std::make_unique<eager::Model>(std::vector<KerasTensor>{a, c},
                                                  std::vector<KerasTensor>{out(h)});
    b.inputs = 2;
    return b;
  }
  if (kind == "fn-nested-in" || kind == "fn-nested-out") {
    const KerasTensor ids = eager::Input({6}, DType::kInt32);
    KerasTensor h = ids;
    if (kind == "fn-nested-in") {
      const KerasTensor steps = eager::Input({6, 4});
      auto& inner =
          b.Make<eager::Model>(std::vector<KerasTensor>{steps},
                               std::vector<KerasTensor>{b.Make<layers::LSTM>(3, rnn)(steps)});
      h = inner(b.Make<layers::Embedding>(10, 4, true)(ids));
    } else {
      const KerasTensor inner_ids = eager::Input({6}, DType::kInt32);
      auto& inner = b.Make<eager::Model>(
          std::vector<KerasTensor>{inner_ids},
          std::vector<KerasTensor>{b.Make<layers::Embedding>(10, 4, true)(inner_ids)});
      h = b.Make<layers::LSTM>(3, rnn)(inner(ids));
    }
    b.functional = std::make_unique<eager::Model>(std::vector<KerasTensor>{ids},
                                                  std::vector<KerasTensor>{out(h)});
    return b;
  }
  if (kind == "fn-masking") {
    const KerasTensor x = eager::Input({6, 2});
    const KerasTensor h = b.Make<layers::LSTM>(3, rnn)(b.Make<layers::Masking>(0.0)(x));
    b.functional = std::make_unique<eager::Model>(std::vector<KerasTensor>{x},
                                                  std::vector<KerasTensor>{out(h)});
    return b;
  }
  const KerasTensor ids = eager::Input({6}, DType::kInt32);
  const KerasTensor e = b.Make<layers::Embedding>(10, 4, true)(ids);
  KerasTensor h = e;
  if (kind == "fn-emb-lstm") {
    h = b.Make<layers::LSTM>(3, rnn)(e);
  } else if (kind == "fn-emb-dense-gru") {
    layers::RecurrentConfig seq;
    seq.return_sequences = true;
    h = b.Make<layers::GlobalAveragePooling1D>()(
        b.Make<layers::GRU>(3, seq)(b.Make<eager::Dense>(4)(e)));
  } else if (kind == "fn-mha") {
    h = b.Make<layers::GlobalAveragePooling1D>()(b.Make<layers::MultiHeadAttention>(2, 3)({e, e}));
  } else {
    throw eager::InvalidArgumentError("unknown kind '" + kind + "'");
  }
  b.functional = std::make_unique<eager::Model>(std::vector<KerasTensor>{ids},
                                                std::vector<KerasTensor>{out(h)});
  return b;
}

eager::Tensor Predict(eager::Layer& model, const std::vector<eager::Tensor>& x) {
  return model.CallMany(x, /*training=*/false).at(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::cerr << "usage: keras_functional_masks_driver KIND FEEDS CKPT KERAS OUT [keras2]\n";
    return 2;
  }
  try {
    const std::string kind = argv[1];
    const eager::BundleReader feeds(argv[2]);
    Built built = MakeModel(kind);
    std::vector<eager::Tensor> x = {feeds.Read("x")};
    if (built.inputs == 2) x.push_back(feeds.Read("x2"));
    Predict(built.root(), x);  // builds
    eager::Checkpoint checkpoint({{"model", &built.root()}});
    const bool keras2 = argc == 7 && std::string(argv[6]) == "keras2";
    eager::SetKerasLayout(checkpoint,
                          keras2 ? eager::KerasLayout::kKeras2 : eager::KerasLayout::kKeras3);
    checkpoint.Restore(argv[3]).AssertConsumed();
    eager::BundleWriter out(argv[5]);
    out.Add("pred", Predict(built.root(), x));
    out.Add("ops", eager::Tensor(built.Ops()));
    // Back to Keras: the restored model as a .keras file.
    if (built.functional) {
      eager::SaveKerasModel(std::string(argv[5]) + ".keras", *built.functional);
    } else {
      eager::SaveKerasModel(std::string(argv[5]) + ".keras", *built.sequential);
    }
    if (std::string(argv[4]) != "-") {
      const eager::KerasModel loaded = eager::LoadKerasModel(argv[4]);
      out.Add("pred_keras", Predict(loaded.root(), x));
      out.Add("ops_keras",
              eager::Tensor(loaded.functional ? Kinds(loaded.functional->keras3_operations())
                                              : Kinds(loaded.model->keras3_operations())));
    }
    out.Finish();
    std::cout << kind << ": " << built.Ops() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "keras_functional_masks_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
