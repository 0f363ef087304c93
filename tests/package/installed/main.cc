// A user program against an installed eager: every layer once (a Dense layer
// trained one Adam step under a GradientTape, then a checkpoint written and
// read back), so a missing header, library or usage requirement fails here.
//
//   consumer DIR     writes DIR/model.ckpt.{index,data-00000-of-00001}

#include <cmath>
#include <cstdio>
#include <string>

#include "eager.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer DIR\n");
    return 2;
  }
  eager::Dense dense(3);
  eager::RandomGenerator rng(/*seed=*/1);
  const eager::Tensor x = rng.Normal(eager::Shape{4, 5});
  const eager::Tensor labels = eager::Tensor::Vector<int32_t>({0, 1, 2, 1});
  eager::GradientTape tape;
  const eager::Tensor loss =
      eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, dense(x)));
  std::vector<eager::Variable*> variables = dense.TrainableVariables();
  eager::Adam optimizer;
  optimizer.ApplyGradients(tape.Gradient(loss, variables), variables);

  const std::string prefix = std::string(argv[1]) + "/model.ckpt";
  eager::BundleWriter writer(prefix);
  writer.Add("kernel", variables[0]->value());
  writer.Finish();
  const eager::Tensor back = eager::BundleReader(prefix).Read("kernel");
  const float a = variables[0]->value().data<float>()[0];
  const float b = back.data<float>()[0];
  if (!std::isfinite(loss.scalar<float>()) || a != b) {
    std::fprintf(stderr, "consumer: wrong result (loss %f, kernel %f vs %f)\n",
                 loss.scalar<float>(), a, b);
    return 1;
  }
  std::printf("consumer: loss %.4f, kernel %s restored from %s\n", loss.scalar<float>(),
              back.shape().ToString().c_str(), prefix.c_str());
  return 0;
}
