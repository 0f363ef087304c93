// A user program against an installed eager built with MPI: "eager.h" brings
// the distributed API when the program links eager::distributed. Every rank
// takes one data-parallel Adam step on its share of a batch, then all write
// a distributed checkpoint (one data file per rank).
//
//   [mpirun -np N] distributed_consumer DIR    writes DIR/ckpt-1

#include <cstdio>
#include <string>

#include "eager.h"

#ifndef EAGER_HAS_DISTRIBUTED
#error "linking eager::distributed defines EAGER_HAS_DISTRIBUTED"
#endif

int main(int argc, char** argv) {
  eager::distributed::World world(argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: distributed_consumer DIR\n");
    return 2;
  }
  eager::Dense dense(3, nullptr, /*use_bias=*/true, /*seed=*/world.rank());
  eager::RandomGenerator rng(/*seed=*/10 + world.rank());  // this rank's share
  const eager::Tensor x = rng.Normal(eager::Shape{4, 5});
  const eager::Tensor labels = eager::Tensor::Vector<int32_t>({0, 1, 2, 1});
  dense(x);  // builds the variables, differently on each rank
  std::vector<eager::Variable*> variables = dense.TrainableVariables();
  eager::distributed::BroadcastVariables(variables, /*root=*/0);
  eager::Adam adam;
  eager::distributed::DistributedOptimizer optimizer(adam);
  eager::GradientTape tape;
  const eager::Tensor loss =
      eager::ReduceMean(eager::SparseSoftmaxCrossEntropyWithLogits(labels, dense(x)));
  optimizer.ApplyGradients(tape.Gradient(loss, variables), variables);

  eager::Checkpoint checkpoint({{"dense", &dense}, {"optimizer", &adam}});
  const std::string path = checkpoint.Save(std::string(argv[1]) + "/ckpt", {.distributed = true});
  // The replicas must still agree after the step.
  const std::string mine(reinterpret_cast<const char*>(variables[0]->value().bytes().data()),
                         variables[0]->value().bytes().size());
  for (const std::string& theirs : world.AllGather(mine)) {
    if (theirs != mine) {
      std::fprintf(stderr, "distributed_consumer: rank %d's kernel differs\n", world.rank());
      return 1;
    }
  }
  if (world.is_root()) {
    std::printf("distributed_consumer: %d rank(s), saved %s\n", world.size(), path.c_str());
  }
  return 0;
}
