// Driver of tests/tf_saved_model/saved_model.py: exports a graph built by hand
// with SavedModelBuilder (TF1's way), and prints what eager's Session computes
// for the same inputs so that TensorFlow's loaders can be compared with it.
//
//   saved_model_tool export DIR   # DIR/1: tags {serve}, two signatures, main op "init"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "eager.h"

namespace {

// Deterministic, not round values: y = x @ w + b must be computed, not guessed.
eager::Tensor Ramp(const eager::Shape& shape, float scale, float offset) {
  std::vector<float> values(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = offset + scale * static_cast<float>(i % 7);
  return eager::Tensor::FromVector<float>(values, shape);
}

void Print(const char* label, const eager::Tensor& t) {
  std::printf("%s", label);
  for (float v : t.data<float>()) std::printf(" %.9g", v);
  std::printf("\n");
}

int Export(const std::string& dir) {
  eager::Graph graph;
  eager::Graph::AsDefault in(graph);
  eager::Tensor x = eager::Placeholder(eager::DType::kFloat32, eager::Shape::Partial({-1, 3}), "x");
  eager::Variable w(Ramp(eager::Shape({3, 2}), 0.37f, -1.1f), "dense/kernel");
  eager::Variable b(Ramp(eager::Shape({2}), 0.5f, 0.125f), "dense/bias");
  eager::Tensor logits = eager::MatMul(x, w.value()) + b.value();
  eager::Tensor scaled = logits * eager::Tensor(0.5f);
  eager::Session sess(graph);
  sess.Run(eager::GlobalVariablesInitializer());
  eager::SavedModelBuilder builder(dir);
  builder.AddMetaGraphAndVariables(
      sess, {eager::kServingTag},
      {{eager::kDefaultServingSignature, {{{"x", x}}, {{"logits", logits}}}},
       {"scaled", {{{"x", x}}, {{"logits", logits}, {"half", scaled}}}}},
      /*main_op=*/"init");
  std::printf("saved %s\n", builder.Save().c_str());
  const eager::Tensor probe = Ramp(eager::Shape({4, 3}), 0.25f, -0.6f);
  Print("x", probe);
  auto out = sess.Run({logits, scaled}, {{x, probe}});
  Print("logits", *out[0]);
  Print("half", *out[1]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string(argv[1]) == "export") return Export(argv[2]);
    std::fprintf(stderr, "usage: saved_model_tool export DIR\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "saved_model_tool: %s\n", e.what());
    return 1;
  }
}
