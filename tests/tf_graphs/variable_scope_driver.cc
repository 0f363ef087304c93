// variable_scope_driver: eager's side of variable_scope_test.py (eager -> TF).
//
//   variable_scope_driver DIR
//
// Builds, in a graph, the TF1 program variable_scope_test.py builds in TF:
// get_variable under variable scopes (reuse, AUTO_REUSE, nested scopes,
// a scope entered twice) and ExponentialMovingAverages applied under a
// variable scope and under a name scope; initializes, saves DIR/model.ckpt
// with eager's Saver (every global variable by its name) and writes
// DIR/names: "variable NAME" per global variable, then "average LABEL NAME"
// for each average_name the test asks for, in order.
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "eager.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: variable_scope_driver DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    using eager::Shape;
    using eager::VariableReuse;
    using eager::VariableScope;
    eager::Graph graph;
    eager::Graph::AsDefault in(graph);
    std::ofstream names(dir + "/names");
    {
      VariableScope scope("layer");
      eager::GetVariable("w", Shape{3, 2});
      eager::GetVariable("b", Shape{2});
    }
    {
      VariableScope scope("layer", VariableReuse::kReuse);
      eager::GetVariable("w", Shape{3, 2});
      VariableScope inner("inner", VariableReuse::kAutoReuse);
      eager::GetVariable("k", Shape{2});
      eager::GetVariable("k", Shape{2});
    }
    {
      VariableScope scope("layer");
      VariableScope inner("deeper");
      eager::GetVariable("k", Shape{4}, {.dtype = eager::DType::kFloat64});
    }
    std::unique_ptr<eager::Variable> v0;
    {
      VariableScope scope("scope1");
      v0 = std::make_unique<eager::Variable>(10.0f, "v0");
    }
    eager::Variable& w = *graph.StoredVariable("layer/w");
    std::unique_ptr<eager::ExponentialMovingAverage> ema, ema2;
    {
      VariableScope scope("scope2");
      ema = std::make_unique<eager::ExponentialMovingAverage>(0.25, std::nullopt, false, "foo");
      names << "average scope2-before " << ema->AverageName(*v0) << "\n";
      ema->Apply({v0.get(), &w});
      names << "average scope2-after " << ema->AverageName(*v0) << "\n";
    }
    {
      eager::NameScope ns("ns");
      ema2 = std::make_unique<eager::ExponentialMovingAverage>(0.5);
      names << "average ns-before " << ema2->AverageName(*v0) << "\n";
      ema2->Apply({v0.get()});
      names << "average ns-after " << ema2->AverageName(*v0) << "\n";
    }
    for (eager::Variable* v : graph.GlobalVariables()) {
      names << "variable " << v->shared_name() << "\n";
    }
    eager::Session sess(graph);
    sess.Run(eager::GlobalVariablesInitializer());
    eager::Saver saver;
    saver.Save(sess, dir + "/model.ckpt");
  } catch (const std::exception& e) {
    std::cerr << "variable_scope_driver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
