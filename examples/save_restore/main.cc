// Seed 004 in graph mode: v1 + v2 built as a TF1 graph, initialized and run
// in a Session (3.0), saved with a Saver (bundle, model.ckpt.meta and the
// `checkpoint` file), then in a fresh graph rebuilt from the .meta with
// ImportMetaGraph, restored, and "add:0" fetched by name: 3.0 again.
//
//   save_restore [DIR]      # DIR defaults to ./model

#include <filesystem>
#include <iostream>

#include "eager.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "model";
  std::filesystem::remove_all(dir);
  try {
    std::string prefix;
    {
      eager::Graph graph;
      eager::Graph::AsDefault in(graph);
      eager::Variable v1(eager::Tensor::FromVector<float>({1.0f}, eager::Shape{1}), "v1");
      eager::Variable v2(eager::Tensor::FromVector<float>({2.0f}, eager::Shape{1}), "v2");
      eager::Tensor result = v1.value() + v2.value();  // node "add"
      eager::Saver saver;                              // the graph's global variables
      eager::Session sess(graph);
      sess.Run(eager::GlobalVariablesInitializer());
      std::cout << result.name() << " = " << sess.Run(result).ValuesString() << "\n";
      prefix = saver.Save(sess, dir + "/model.ckpt");
      std::cout << "saved " << prefix << " and " << prefix << ".meta\n";
    }
    {
      eager::Graph graph;
      eager::Graph::AsDefault in(graph);
      std::unique_ptr<eager::Saver> saver = eager::ImportMetaGraph(prefix + ".meta");
      eager::Session sess(graph);
      saver->Restore(sess, *eager::LatestCheckpoint(dir));
      std::cout << "imported " << graph.num_nodes()
                << " nodes; add:0 = " << sess.Run(graph.TensorByName("add:0")).ValuesString()
                << "\n";
    }
  } catch (const eager::Error& e) {
    std::cerr << "save_restore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
