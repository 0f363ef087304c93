#pragma once

// Keras's order of a model's operations (keras/src/ops/function.py
// map_graph; tf_keras's _map_graph_network is the same walk), shared by
// functional Models and Sequential, including the mask operations Keras 3
// records.
//
// Keras 3 computes masks with ops on its symbolic tensors when a model is
// built: an Embedding(mask_zero=True)'s NotEqual of the ids, a Masking's
// NotEqual and Any, a merge's LogicalOr, a Concatenate's OnesLike /
// ExpandDims / ZerosLike / LogicalOr / Concatenate / Any. Such an op
// becomes one of model.operations when a later call takes the mask as its
// `mask` argument (a recurrent layer, GlobalAveragePooling1D): it is then a
// parent of that call in the graph. Each takes an index in Keras 3's
// "_operations" list and in config.json, though it holds no variables. Which
// ops, on which tensors, and which calls take a mask, is each layer's
// Layer::KerasMasking(). tf_keras records none of them.
//
// The order: depths from the outputs (0) up, an operation's depth its
// deepest call's; ties in the order a depth-first walk from the outputs
// (each call's inputs in argument order, then its mask) first meets them.
// Inputs no output depends on come first, at depth 0.

#include <vector>

#include "autodiff/layer.h"

namespace eager::internal {

// One output of a call: calls[call]'s output `output`.
struct KerasTensorRef {
  int call = 0;
  int output = 0;
};

// One layer call. Calls come inputs first: a call's inputs are outputs of
// earlier calls; an InputLayer's call has none.
struct KerasCall {
  Layer* layer = nullptr;
  std::vector<KerasTensorRef> inputs;
  std::vector<int> input_ranks;  // per input; -1 unknown (only Concatenate's masks look)
};

// model.operations of the graph `calls` with these outputs; `model_inputs`
// are the calls of the model's InputLayers. With mask_operations (Keras 3)
// the mask ops above are listed too; without (tf_keras), only the layers.
std::vector<KerasOperation> KerasOperationOrder(const std::vector<KerasCall>& calls,
                                                const std::vector<KerasTensorRef>& outputs,
                                                const std::vector<int>& model_inputs,
                                                bool mask_operations);

}  // namespace eager::internal
