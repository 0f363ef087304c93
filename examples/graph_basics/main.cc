// Seed 004's first program, TF1 graph mode, up to printing 3.0:
//
//   v1 = tf.Variable(1.0, name="v1"); v2 = tf.Variable(2.0, name="v2")
//   result = v1 + v2
//   with tf.Session() as sess:
//     sess.run(tf.global_variables_initializer())
//     print(sess.run(result))
//
// Prints the graph's nodes as TF names them, then 3.0.

#include <iostream>

#include "eager.h"

int main() {
  eager::Graph graph;
  eager::Graph::AsDefault in(graph);
  eager::Variable v1(1.0f, "v1"), v2(2.0f, "v2");  // VariableV2 nodes, not initialized yet
  eager::Tensor result = v1 + v2;                  // node "add"
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const eager::Node& node = graph.node(i);
    std::cout << node.name << " = " << node.op << "(";
    for (size_t k = 0; k < node.inputs.size(); ++k) std::cout << (k ? ", " : "") << node.inputs[k];
    std::cout << ")\n";
  }
  std::cout << result << "\n";  // Tensor("add:0", shape=(), dtype=float32)

  eager::Session sess(graph);
  try {
    sess.Run(result);
  } catch (const eager::FailedPreconditionError& e) {
    const std::string message = e.what();  // the first line; then TF's "[[{{node add}}]]"
    std::cout << "before initialization: " << message.substr(0, message.find('\n')) << "\n";
  }
  sess.Run(eager::GlobalVariablesInitializer());
  std::cout << sess.Run(result).ValuesString() << "\n";  // 3.0
  return 0;
}
