// momentum_build_driver: eager's side of momentum_meta_test.py (eager -> TF).
//
//   momentum_build_driver DIR NESTEROV
//
// Builds a TF1 training graph with eager's graph-mode API: placeholders
// x [?, 3] and y [?, 2], variables W [3, 2] and b [2], loss
// mean(square(x W + b - y)) and SGD (tf1_compatible: TF1's
// MomentumOptimizer, lr 0.1, momentum 0.9, use_nesterov NESTEROV 0/1)
// Minimize; initializes, saves DIR/model.ckpt and DIR/model.ckpt.meta with
// eager's Saver, then runs the train op once per batch of DIR/feeds (a
// bundle "x0:0", "y0:0", "x1:0", ... read until missing) and writes
//   DIR/eager        a bundle: W, b and their slots W/Momentum, b/Momentum
//   DIR/train_op     the train op's name
// for TF to import the .meta, restore and train the same steps.
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "eager.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: momentum_build_driver DIR NESTEROV\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    eager::Graph graph;
    eager::Graph::AsDefault in(graph);
    const eager::Tensor x =
        eager::Placeholder(eager::DType::kFloat32, eager::Shape::Partial({-1, 3}), "x");
    const eager::Tensor y =
        eager::Placeholder(eager::DType::kFloat32, eager::Shape::Partial({-1, 2}), "y");
    eager::Variable w(eager::Tensor::FromVector<float>({0.5f, -0.3f, 0.2f, 0.8f, -0.6f, 0.1f},
                                                       eager::Shape{3, 2}),
                      "W");
    eager::Variable b(eager::Tensor::FromVector<float>({0.05f, -0.2f}), "b");
    const eager::Tensor loss = eager::ReduceMean(
        eager::Square(eager::Sub(eager::Add(eager::MatMul(x, w.value()), b.value()), y)));
    eager::SGDOptions options;
    options.learning_rate = 0.1;
    options.momentum = 0.9;
    options.nesterov = std::string(argv[2]) == "1";
    options.tf1_compatible = true;
    eager::SGD sgd(options);
    const eager::Operation train = sgd.Minimize(loss, {&w, &b});
    eager::Session sess(graph);
    sess.Run(eager::GlobalVariablesInitializer());
    eager::Saver saver;
    saver.Save(sess, dir + "/model.ckpt");
    const eager::BundleReader feeds(dir + "/feeds");
    for (int i = 0;; ++i) {
      const std::string xi = eager::StrCat("x", i, ":0");
      const std::string yi = eager::StrCat("y", i, ":0");
      if (!feeds.Contains(xi)) break;
      sess.Run(train, {{x, feeds.Read(xi)}, {y, feeds.Read(yi)}});
    }
    eager::BundleWriter out(dir + "/eager");
    for (const char* name : {"W", "b", "W/Momentum", "b/Momentum"}) {
      out.Add(name, sess.Run(graph.TensorByName(eager::StrCat(name, ":0"))));
    }
    out.Finish();
    std::ofstream(dir + "/train_op") << graph.node(train.index()).name << "\n";
  } catch (const std::exception& e) {
    std::cerr << "momentum_build_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
