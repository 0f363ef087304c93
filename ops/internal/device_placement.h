#pragma once

// TF's placement check on the nodes a Session runs: eager computes every
// node on this process's one CPU, "/job:localhost/replica:0/task:0/device:CPU:0",
// and a node whose device names another (a GPU, "/cpu:1", "/job:worker")
// is refused at run time as TF's placer refuses it, unless soft placement
// lets it run there anyway. Not part of the public API.

#include "runtime/graph.h"

namespace eager::internal {

// Checks `node.device`. "" and any spelling of this process's CPU
// ("/cpu:0", "/device:CPU:0", "/device:CPU:*", "/job:localhost/replica:0/
// task:0/device:CPU:0") pass. Another device type or CPU index throws
// InvalidArgumentError in TF's words ("Cannot assign a device for operation
// NODE: {{node NODE}} was explicitly assigned to /device:GPU:0 but available
// devices are [ ... ]") unless `allow_soft_placement`; a job other than
// "localhost", a replica or task other than 0 always throw (no other
// process exists to run the node), as does a device string TF cannot parse
// ("Malformed device specification").
void CheckDevice(const Node& node, bool allow_soft_placement);

}  // namespace eager::internal
