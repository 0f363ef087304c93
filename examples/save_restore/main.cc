// Seed 004 in graph mode: v1 + v2 built as a TF1 graph, initialized and run
// in a Session (3.0), saved with a Saver (bundle, model.ckpt.meta and the
// `checkpoint` file), then in a fresh graph rebuilt from the .meta with
// ImportMetaGraph, restored, and "add:0" fetched by name: 3.0 again.
//
//   save_restore [DIR [save|restore]]   # DIR defaults to ./model; both phases
//
// "restore" alone imports and restores whatever DIR's latest checkpoint is,
// such as the one TensorFlow's run of the seed wrote (tests/tf/seed_004.py).

#include <filesystem>
#include <iostream>

#include "eager.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "model";
  const std::string phase = argc > 2 ? argv[2] : "both";
  if (phase != "both" && phase != "save" && phase != "restore") {
    std::cerr << "usage: save_restore [DIR [save|restore]]\n";
    return 2;
  }
  try {
    if (phase != "restore") {
      std::filesystem::remove_all(dir);
      eager::Graph graph;
      eager::Graph::AsDefault in(graph);
      eager::Variable v1(1.0f, "v1"), v2(2.0f, "v2");  // scalars, as the seed's
      eager::Tensor result = v1 + v2;                  // node "add"
      eager::Saver saver;                              // the graph's global variables
      eager::Session sess(graph);
      sess.Run(eager::GlobalVariablesInitializer());
      std::cout << result.name() << " = " << sess.Run(result).ValuesString() << "\n";
      const std::string prefix = saver.Save(sess, dir + "/model.ckpt");
      std::cout << "saved " << prefix << " and " << prefix << ".meta\n";
    }
    if (phase != "save") {
      eager::Graph graph;
      eager::Graph::AsDefault in(graph);
      const std::optional<std::string> prefix = eager::LatestCheckpoint(dir);
      if (!prefix) throw eager::NotFoundError("no `checkpoint` state file in " + dir);
      std::unique_ptr<eager::Saver> saver = eager::ImportMetaGraph(*prefix + ".meta");
      eager::Session sess(graph);
      saver->Restore(sess, *prefix);
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
