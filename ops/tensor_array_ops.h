#pragma once

// TF1's TensorArray ops (tf.TensorArray in a tf.compat.v1.while_loop, as
// dynamic_rnn uses them), graph-only, run by a Session:
//
//   TensorArrayV3(size)                        -> handle, flow
//   TensorArrayWriteV3(handle, index, value, flow_in)     -> flow_out
//   TensorArrayReadV3(handle, index, flow_in)             -> value
//   TensorArrayGatherV3(handle, indices, flow_in)         -> value (stacked)
//   TensorArrayScatterV3(handle, indices, value, flow_in) -> flow_out
//   TensorArraySizeV3(handle, flow_in)                    -> size (int32)
//   TensorArrayCloseV3(handle)
//
// A TensorArray is a Resource (runtime/resource.h) carried along the
// handle edges as variables and lookup tables are, also into a loop's
// frame (RefEnter / Enter of a resource); its float `flow` is a value that
// only orders the ops (a loop variable of the loop that writes it), passed
// on unchanged. The Session running a TensorArrayV3 node owns the array it
// makes; each run of the node makes a new, empty one, as TF's does.
//
// TF's rules, each an InvalidArgumentError naming the node and the array:
// a value of another dtype than the array's or of a shape incompatible
// with its element_shape (or, for Gather, with the other elements); an
// index below 0, or at or past the size of an array that is not
// dynamic_size; writing an element twice; reading one never written, or
// one already read from an array with clear_after_read. The size is never
// trusted: a negative size is refused, and elements are kept by index as
// written, so a huge size allocates nothing.

namespace eager {

struct OpDef;

extern const OpDef kTensorArrayV3Op;
extern const OpDef kTensorArrayWriteV3Op;
extern const OpDef kTensorArrayReadV3Op;
extern const OpDef kTensorArrayGatherV3Op;
extern const OpDef kTensorArrayScatterV3Op;
extern const OpDef kTensorArraySizeV3Op;
extern const OpDef kTensorArrayCloseV3Op;

}  // namespace eager
