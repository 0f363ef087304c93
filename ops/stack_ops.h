#pragma once

// TF1's stacks, which tf.gradients puts around a v1 while loop (the forward
// loop pushes each iteration's values, the gradient loop pops them), run by
// a Session:
//
//   StackV2(max_size)         -> handle  (elem_type; a new, empty stack per run)
//   StackPushV2(handle, elem) -> elem    (pushes elem)
//   StackPopV2(handle)        -> elem    (the last pushed, removed)
//   ControlTrigger                       (does nothing: TF's gradient loops order by it)
//
// A stack is a Resource (runtime/resource.h) carried along the handle edges
// as TensorArrays are (ops/tensor_array_ops.h), owned by the Session that
// runs its StackV2 node. TF's errors, InvalidArgumentError naming the node
// and the stack: pushing an element of another dtype than elem_type,
// pushing onto a stack holding max_size elements (max_size >= 0; -1 is no
// bound), popping an empty stack.

namespace eager {

struct OpDef;

extern const OpDef kStackV2Op;
extern const OpDef kStackPushV2Op;
extern const OpDef kStackPopV2Op;
extern const OpDef kControlTriggerOp;

}  // namespace eager
