#pragma once

// eager's data parallelism over MPI, in one include (issue 29):
//
//   #include "distributed/distributed.h"   // or "eager.h", which includes this
//                                          // when the program links eager::distributed
//
//   eager::distributed::World world(argc, argv);                  // world.h
//   eager::distributed::BroadcastVariables(model.Variables(), 0);  // broadcast_variables.h
//   eager::distributed::DistributedOptimizer optimizer(adam);     // distributed_optimizer.h
//   auto mean = eager::distributed::AverageAcrossRanks(world, grads);  // gradient_averaging.h
//   checkpoint.Save(prefix, {.distributed = true});  // every rank writes its own data file
//
// Link eager::distributed (find_package(eager) defines it when eager was
// built with MPI; docs/distributed.md says what it does).

#include "distributed/broadcast_variables.h"
#include "distributed/distributed_optimizer.h"
#include "distributed/gradient_averaging.h"
#include "distributed/world.h"
