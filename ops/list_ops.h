#pragma once

// TensorFlow's TensorList ops (TF's list_ops.cc, list_kernels.h): the ops TF 2
// writes for tf.TensorArray inside a tf.function, for Keras RNN layers' time
// loops (TensorListFromTensor of the inputs, GetItem per step, SetItem of
// each output, Stack after the While) and for tf.while_loop accumulators.
// A list is a DT_VARIANT scalar holding a TensorList (runtime/tensor_list.h);
// it travels like any tensor: through function calls, While loop variables,
// Identity nodes, Session feeds and fetches.
//
//   EmptyTensorList         element_shape, max_num_elements -> handle
//   TensorListReserve       element_shape, num_elements -> handle (unset elements)
//   TensorListFromTensor    tensor, element_shape -> handle (tensor's rows)
//   TensorListStack         handle, element_shape -> tensor (num_elements attr)
//   TensorListGather        handle, indices, element_shape -> tensor
//   TensorListGetItem       handle, index, element_shape -> item
//   TensorListSetItem       handle, index, item -> handle
//   TensorListPushBack      handle, tensor -> handle
//   TensorListPopBack       handle, element_shape -> handle, tensor
//   TensorListLength        handle -> int32 length
//   TensorListElementShape  handle -> its element shape (-1: unknown)
//   TensorListScatterIntoExistingList  handle, tensor, indices -> handle
//   TensorListScatterV2     tensor, indices, element_shape, num_elements -> handle
//   TensorListResize        handle, size -> handle
//   TensorListConcatV2      handle, element_shape, leading_dims -> tensor, lengths
//   TensorListSplit         tensor, element_shape, lengths -> handle
//
// An element_shape input is a shape as TF's: an int32/int64 vector with -1
// for an unknown dimension, or the scalar -1 for an unknown rank. Reading an
// unset element (GetItem, Stack, Gather) gives zeros when the element shape
// (the list's merged with the node's and with the set elements') is fully
// known, else InvalidArgumentError, as TF.
//
// Errors name the node and what was expected: a list of another element
// dtype than the node's element_dtype, an index out of range, an element of
// a shape incompatible with the list's, stacking elements of different
// shapes. Sizes read from tensors are bounded (kMaxListElements elements per
// list; a tensor made, from stacked elements or as the zeros of an unset
// one, within SessionOptions::memory_limit_bytes) so a crafted graph cannot
// make eager allocate without limit.
//
// Each op returns a new list value; an input list nobody else can see is
// changed in place instead (TensorList::TryMutable), as TF forwards it.
// No gradients yet: TF's list gradients (list_ops.py) produce and consume
// lists of gradients, which eager's graph gradients do not carry.

#include <cstdint>

namespace eager {

struct OpDef;

// The most elements a list may hold (TensorListReserve's num_elements,
// SetItem's resize, Resize's size, ScatterV2's num_elements).
// An element slot takes about 150 bytes, so a full list's slots take 150 MB.
inline constexpr int64_t kMaxListElements = int64_t{1} << 20;

extern const OpDef kEmptyTensorListOp;
extern const OpDef kTensorListReserveOp;
extern const OpDef kTensorListFromTensorOp;
extern const OpDef kTensorListStackOp;
extern const OpDef kTensorListGatherOp;
extern const OpDef kTensorListGetItemOp;
extern const OpDef kTensorListSetItemOp;
extern const OpDef kTensorListPushBackOp;
extern const OpDef kTensorListPopBackOp;
extern const OpDef kTensorListLengthOp;
extern const OpDef kTensorListElementShapeOp;
extern const OpDef kTensorListScatterIntoExistingListOp;
extern const OpDef kTensorListScatterV2Op;
extern const OpDef kTensorListResizeOp;
extern const OpDef kTensorListConcatV2Op;
extern const OpDef kTensorListSplitOp;

}  // namespace eager
