#pragma once

// TensorFlow's lookup tables in graph mode (tf.lookup.StaticHashTable,
// TF1's tf.contrib.lookup.HashTable / index_table_from_tensor): what TF
// Serving's classify signatures initialize in a TF1 SavedModel's
// legacy_init_op and then look string keys up in.
//
//   HashTableV2           -> the table's handle (DT_RESOURCE)
//   InitializeTableV2     handle, keys, values: fills the table once
//   LookupTableImportV2   handle, keys, values: the same, for a hash table
//   LookupTableFindV2     handle, keys, default_value -> values (keys' shape)
//   LookupTableSizeV2     handle -> int64 scalar, the number of entries
//
// Keys are string, int64 or int32; values any dtype (string -> int64,
// int64 -> string, string -> string, int64 -> int64, int64 -> float, ...).
//
// The table is a Resource (runtime/resource.h) and travels as resource
// variables do (ops/resource_variable_ops.h): a Session carries its handle
// as the object along the edges TF declares `resource`. It lives in the
// Session running its HashTableV2 node, as TF keeps a table in each
// Session's resource manager: a new Session starts with an uninitialized
// table, so its init op (legacy_init_op, tables_initializer) runs once per
// Session. Nodes share tables as TF's resource manager makes them: two
// HashTableV2 nodes with one shared_name and container are one table in a
// Session (NodeContext::shared_resources), with use_node_name_sharing a
// node without a shared_name is named by its node name, and a node with
// neither has a table of its own. A node sharing a table of other dtypes is
// InvalidArgumentError "Conflicting key/value dtypes ...". (A function
// body's nodes run in a Session of their own: they share among
// themselves, not with the calling graph's.)
//
// Errors, as TF's kernels raise them, plus the node and the table:
// initializing a table again with other entries is FailedPreconditionError
// "Table was already initialized with different data." (with the same
// entries it is a no-op, as TF's); looking up in an uninitialized table is
// FailedPreconditionError "Table not initialized." (its size is 0); keys or values of another dtype
// than the table's is InvalidArgumentError naming both dtypes; keys and values of different sizes,
// one key given two values, a default_value that is not a scalar are InvalidArgumentError.

namespace eager {

struct OpDef;

extern const OpDef kHashTableV2Op;
extern const OpDef kInitializeTableV2Op;
extern const OpDef kLookupTableImportV2Op;
extern const OpDef kLookupTableFindV2Op;
extern const OpDef kLookupTableSizeV2Op;

}  // namespace eager
