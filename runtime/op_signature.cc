#include "runtime/op_signature.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>

#include "runtime/dtype.h"
#include "runtime/errors.h"

namespace eager {
namespace {

struct OpSpec {
  const char* name;
  std::vector<const char*> inputs;
  std::vector<const char*> outputs;
  std::vector<const char*> attrs;
  unsigned flags = 0;
};
constexpr unsigned kStateful = 1, kCommutative = 2, kAggregate = 4, kUninitializedInput = 8;

// TF 1.14's type sets, in TF's order.
#define NUMBER_TYPES                                                                     \
  "{float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, " \
  "bfloat16, uint16, complex128, half, uint32, uint64}"
#define FLOAT_COMPLEX "{bfloat16, half, float, double, complex64, complex128}"
#define BINARY_ARITH                                                                      \
  "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, " \
  "complex128}"
#define MATMUL_TYPES "{bfloat16, half, float, double, int32, int64, complex64, complex128}"
#define INDEX_TYPE(name, default) name ": {int32, int64} = " default
#define REAL_NUMBER_TYPES \
  "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
#define FLOAT_INT_COMPLEX "{bfloat16, half, float, double, int32, int64, complex64, complex128}"
// Conv2D and its two gradients (explicit padding is TF 1.14's).
#define CONV2D_ATTRS                                                                           \
  "T: {half, bfloat16, float, double}", "strides: list(int)", "use_cudnn_on_gpu: bool = true", \
      "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",           \
      "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "dilations: list(int) = [1, 1, 1, 1]"
// DepthwiseConv2dNative and its two gradients, TF 1.14's as the table is
// (explicit padding came to them later: ops/internal/node_check.cc accepts
// TF 2.x's explicit_paddings = []).
#define DEPTHWISE_ATTRS                                                                     \
  "T: {half, bfloat16, float, double}", "strides: list(int)", "padding: {'SAME', 'VALID'}", \
      "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "dilations: list(int) = [1, 1, 1, 1]"

// Attributes whose text is joined from pieces (named, so that the lists
// below hold one literal per element).
constexpr const char* kMaxPoolT =
    "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8} = "
    "DT_FLOAT";
constexpr const char* kBatchNormFormat = "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'";
constexpr const char* kMaxPoolGradT = "T: " REAL_NUMBER_TYPES " = DT_FLOAT";
constexpr const char* kBatchMatMulV2T =
    "T: {bfloat16, half, float, double, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "complex64, complex128}";

const std::vector<OpSpec>& Specs() {
  static const std::vector<OpSpec> specs = {
      {"Add",
       {"x: T", "y: T"},
       {"z: T"},
       {"T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
        "complex128, string}"}},
      {"AddV2",
       {"x: T", "y: T"},
       {"z: T"},
       {"T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, "
        "int64, complex64, complex128}"},
       kCommutative | kAggregate},
      {"ApplyAdam",
       {"var: Ref(T)", "m: Ref(T)", "v: Ref(T)", "beta1_power: T", "beta2_power: T", "lr: T",
        "beta1: T", "beta2: T", "epsilon: T", "grad: T"},
       {"out: Ref(T)"},
       {"T: " NUMBER_TYPES, "use_locking: bool = false", "use_nesterov: bool = false"}},
      {"ApplyGradientDescent",
       {"var: Ref(T)", "alpha: T", "delta: T"},
       {"out: Ref(T)"},
       {"T: " NUMBER_TYPES, "use_locking: bool = false"}},
      {"ApplyMomentum",
       {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "momentum: T"},
       {"out: Ref(T)"},
       {"T: " NUMBER_TYPES, "use_locking: bool = false", "use_nesterov: bool = false"}},
      {"ArgMax",
       {"input: T", "dimension: Tidx"},
       {"output: output_type"},
       {"T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, uint16, complex128, half, uint32, uint64}",
        INDEX_TYPE("Tidx", "DT_INT32"), INDEX_TYPE("output_type", "DT_INT64")}},
      {"Assign",
       {"ref: Ref(T)", "value: T"},
       {"output_ref: Ref(T)"},
       {"T: type", "validate_shape: bool = true", "use_locking: bool = true"},
       kUninitializedInput},
      {"AssignAdd",
       {"ref: Ref(T)", "value: T"},
       {"output_ref: Ref(T)"},
       {"T: {float, double, int64, int32, uint8, uint16, int16, int8, complex64, complex128, "
        "qint8, quint8, qint32, half}",
        "use_locking: bool = false"}},
      {"AssignSub",
       {"ref: Ref(T)", "value: T"},
       {"output_ref: Ref(T)"},
       {"T: {float, double, int64, int32, uint8, uint16, int16, int8, complex64, complex128, "
        "qint8, quint8, qint32, half}",
        "use_locking: bool = false"}},
      {"AvgPool",
       {"value: T"},
       {"output: T"},
       {"ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "T: {half, bfloat16, float, double}"}},
      {"AvgPoolGrad",
       {"orig_input_shape: int32", "grad: T"},
       {"output: T"},
       {"ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "T: {half, bfloat16, float, double}"}},
      {"BiasAdd",
       {"value: T", "bias: T"},
       {"output: T"},
       {"T: " NUMBER_TYPES, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"}},
      {"BroadcastGradientArgs",
       {"s0: T", "s1: T"},
       {"r0: T", "r1: T"},
       {INDEX_TYPE("T", "DT_INT32")}},
      {"BroadcastTo",
       {"input: T", "shape: Tidx"},
       {"output: T"},
       {"T: type", INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Cast", {"x: SrcT"}, {"y: DstT"}, {"SrcT: type", "DstT: type", "Truncate: bool = false"}},
      {"ConcatV2",
       {"values: N * T", "axis: Tidx"},
       {"output: T"},
       {"N: int >= 2", "T: type", INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Const", {}, {"output: dtype"}, {"value: tensor", "dtype: type"}},
      {"Conv2D", {"input: T", "filter: T"}, {"output: T"}, {CONV2D_ATTRS}},
      {"Conv2DBackpropFilter",
       {"input: T", "filter_sizes: int32", "out_backprop: T"},
       {"output: T"},
       {CONV2D_ATTRS}},
      {"Conv2DBackpropInput",
       {"input_sizes: int32", "filter: T", "out_backprop: T"},
       {"output: T"},
       {CONV2D_ATTRS}},
      {"Cumprod",
       {"x: T", "axis: Tidx"},
       {"out: T"},
       {"exclusive: bool = false", "reverse: bool = false", "T: " NUMBER_TYPES,
        INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Cumsum",
       {"x: T", "axis: Tidx"},
       {"out: T"},
       {"exclusive: bool = false", "reverse: bool = false", "T: " NUMBER_TYPES,
        INDEX_TYPE("Tidx", "DT_INT32")}},
      {"DepthwiseConv2dNative", {"input: T", "filter: T"}, {"output: T"}, {DEPTHWISE_ATTRS}},
      {"DepthwiseConv2dNativeBackpropFilter",
       {"input: T", "filter_sizes: int32", "out_backprop: T"},
       {"output: T"},
       {DEPTHWISE_ATTRS}},
      {"DepthwiseConv2dNativeBackpropInput",
       {"input_sizes: int32", "filter: T", "out_backprop: T"},
       {"output: T"},
       {DEPTHWISE_ATTRS}},
      {"Elu", {"features: T"}, {"activations: T"}, {"T: {half, bfloat16, float, double}"}},
      {"EluGrad",
       {"gradients: T", "outputs: T"},
       {"backprops: T"},
       {"T: {half, bfloat16, float, double}"}},
      {"Equal",
       {"x: T", "y: T"},
       {"z: bool"},
       {"T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, quint8, "
        "qint8, qint32, string, bool, complex128}"},
       kCommutative},
      {"Exp", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"Floor", {"x: T"}, {"y: T"}, {"T: {bfloat16, half, float, double}"}},
      {"GatherV2",
       {"params: Tparams", "indices: Tindices", "axis: Taxis"},
       {"output: Tparams"},
       {"batch_dims: int = 0", "Tparams: type", "Tindices: {int32, int64}",
        "Taxis: {int32, int64}"}},
      {"GreaterEqual", {"x: T", "y: T"}, {"z: bool"}, {"T: " REAL_NUMBER_TYPES}},
      {"Identity", {"input: T"}, {"output: T"}, {"T: type"}},
      {"IdentityN", {"input: T"}, {"output: T"}, {"T: list(type) >= 1"}},
      {"Log", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"LogSoftmax", {"logits: T"}, {"logsoftmax: T"}, {"T: {half, bfloat16, float, double}"}},
      {"MatMul",
       {"a: T", "b: T"},
       {"product: T"},
       {"transpose_a: bool = false", "transpose_b: bool = false", "T: " MATMUL_TYPES}},
      {"Max",
       {"input: T", "reduction_indices: Tidx"},
       {"output: T"},
       {"keep_dims: bool = false", "T: " NUMBER_TYPES, INDEX_TYPE("Tidx", "DT_INT32")}},
      {"MaxPool",
       {"input: T"},
       {"output: T"},
       {kMaxPoolT, "ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
        "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"}},
      {"MaxPoolGrad",
       {"orig_input: T", "orig_output: T", "grad: T"},
       {"output: T"},
       {"ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'", kMaxPoolGradT}},
      {"FusedBatchNormV3",
       {"x: T", "scale: U", "offset: U", "mean: U", "variance: U"},
       {"y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U", "reserve_space_2: U",
        "reserve_space_3: U"},
       {"T: {half, bfloat16, float}", "U: {bfloat16, float}", "epsilon: float = 0.0001",
        "exponential_avg_factor: float = 1", kBatchNormFormat, "is_training: bool = true"}},
      {"FusedBatchNormGradV3",
       {"y_backprop: T", "x: T", "scale: float", "reserve_space_1: U", "reserve_space_2: U",
        "reserve_space_3: U"},
       {"x_backprop: T", "scale_backprop: U", "offset_backprop: U", "reserve_space_4: U",
        "reserve_space_5: U"},
       {"T: {half, bfloat16, float}", "U: {float}", "epsilon: float = 0.0001", kBatchNormFormat,
        "is_training: bool = true"}},
      {"Maximum", {"x: T", "y: T"}, {"z: T"}, {"T: {bfloat16, half, float, double, int32, int64}"}},
      {"Mean",
       {"input: T", "reduction_indices: Tidx"},
       {"output: T"},
       {"keep_dims: bool = false", "T: " NUMBER_TYPES, INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Merge", {"inputs: N * T"}, {"output: T", "value_index: int32"}, {"T: type", "N: int >= 1"}},
      {"Min",
       {"input: T", "reduction_indices: Tidx"},
       {"output: T"},
       {"keep_dims: bool = false", "T: " NUMBER_TYPES, INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Minimum", {"x: T", "y: T"}, {"z: T"}, {"T: {bfloat16, half, float, double, int32, int64}"}},
      {"Mul", {"x: T", "y: T"}, {"z: T"}, {"T: " BINARY_ARITH}, kCommutative},
      {"Neg", {"x: T"}, {"y: T"}, {"T: " MATMUL_TYPES}},
      {"NoOp", {}, {}, {}},
      {"OneHot",
       {"indices: TI", "depth: int32", "on_value: T", "off_value: T"},
       {"output: T"},
       {"axis: int = -1", "T: type", "TI: {uint8, int32, int64} = DT_INT64"}},
      {"TopKV2",
       {"input: T", "k: Tk"},
       {"values: T", "indices: index_type"},
       {"sorted: bool = true", "T: " REAL_NUMBER_TYPES, "Tk: {int16, int32, int64} = DT_INT32",
        "index_type: {int16, int32, int64} = DT_INT32"}},
      {"GatherNd",
       {"params: Tparams", "indices: Tindices"},
       {"output: Tparams"},
       {"Tparams: type", "Tindices: {int16, int32, int64}", "bad_indices_policy: string = ''"}},
      {"ScatterNd",
       {"indices: Tindices", "updates: T", "shape: Tindices"},
       {"output: T"},
       {"T: type", "Tindices: {int16, int32, int64}", "bad_indices_policy: string = ''"}},
      {"Size",
       {"input: T"},
       {"output: out_type"},
       {"T: type", "out_type: {int32, int64} = DT_INT32"}},
      {"Placeholder", {}, {"output: dtype"}, {"dtype: type", "shape: shape = <unknown>"}},
      {"PlaceholderWithDefault",
       {"input: dtype"},
       {"output: dtype"},
       {"dtype: type", "shape: shape"}},
      {"Pow", {"x: T", "y: T"}, {"z: T"}, {"T: " FLOAT_INT_COMPLEX}},
      {"Prod",
       {"input: T", "reduction_indices: Tidx"},
       {"output: T"},
       {"keep_dims: bool = false", "T: " NUMBER_TYPES, INDEX_TYPE("Tidx", "DT_INT32")}},
      {"RandomUniform",
       {"shape: T"},
       {"output: dtype"},
       {"seed: int = 0", "seed2: int = 0", "dtype: {half, bfloat16, float, double}",
        "T: {int32, int64}"},
       kStateful},
      {"RealDiv", {"x: T", "y: T"}, {"z: T"}, {"T: " BINARY_ARITH}},
      {"RefSwitch",
       {"data: Ref(T)", "pred: bool"},
       {"output_false: Ref(T)", "output_true: Ref(T)"},
       {"T: type"},
       kUninitializedInput},
      {"Relu",
       {"features: T"},
       {"activations: T"},
       {"T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64, qint8}"}},
      {"ReluGrad", {"gradients: T", "features: T"}, {"backprops: T"}, {"T: " REAL_NUMBER_TYPES}},
      {"Reshape",
       {"tensor: T", "shape: Tshape"},
       {"output: T"},
       {"T: type", INDEX_TYPE("Tshape", "DT_INT32")}},
      {"RestoreV2",
       {"prefix: string", "tensor_names: string", "shape_and_slices: string"},
       {"tensors: dtypes"},
       {"dtypes: list(type) >= 1"},
       kStateful},
      {"Rsqrt", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"RsqrtGrad", {"y: T", "dy: T"}, {"z: T"}, {"T: " FLOAT_COMPLEX}},
      {"SaveV2",
       {"prefix: string", "tensor_names: string", "shape_and_slices: string", "tensors: dtypes"},
       {},
       {"dtypes: list(type) >= 1"},
       kStateful},
      {"SelectV2", {"condition: bool", "t: T", "e: T"}, {"output: T"}, {"T: type"}},
      {"Shape",
       {"input: T"},
       {"output: out_type"},
       {"T: type", INDEX_TYPE("out_type", "DT_INT32")}},
      {"Sigmoid", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"Slice",
       {"input: T", "begin: Index", "size: Index"},
       {"output: T"},
       {"T: type", "Index: {int32, int64}"}},
      {"Softmax", {"logits: T"}, {"softmax: T"}, {"T: {half, bfloat16, float, double}"}},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {"features: T", "labels: Tlabels"},
       {"loss: T", "backprop: T"},
       {"T: {half, bfloat16, float, double}", INDEX_TYPE("Tlabels", "DT_INT64")}},
      {"Sqrt", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"Square", {"x: T"}, {"y: T"}, {"T: " FLOAT_INT_COMPLEX}},
      {"SquaredDifference", {"x: T", "y: T"}, {"z: T"}, {"T: " FLOAT_INT_COMPLEX}, kCommutative},
      {"Squeeze", {"input: T"}, {"output: T"}, {"T: type", "squeeze_dims: list(int) >= 0 = []"}},
      {"StopGradient", {"input: T"}, {"output: T"}, {"T: type"}},
      {"PreventGradient", {"input: T"}, {"output: T"}, {"T: type", "message: string = ''"}},
      {"Sub", {"x: T", "y: T"}, {"z: T"}, {"T: " BINARY_ARITH}},
      {"Sum",
       {"input: T", "reduction_indices: Tidx"},
       {"output: T"},
       {"keep_dims: bool = false", "T: " NUMBER_TYPES, INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Switch", {"data: T", "pred: bool"}, {"output_false: T", "output_true: T"}, {"T: type"}},
      {"Tanh", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"ReverseV2",
       {"tensor: T", "axis: Tidx"},
       {"output: T"},
       {INDEX_TYPE("Tidx", "DT_INT32"),
        "T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, "
        "float, double, complex64, complex128, string}"}},
      {"Transpose",
       {"x: T", "perm: Tperm"},
       {"y: T"},
       {"T: type", INDEX_TYPE("Tperm", "DT_INT32")}},
      {"UnsortedSegmentSum",
       {"data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"},
       {"output: T"},
       {"T: " NUMBER_TYPES, "Tindices: {int32, int64}", INDEX_TYPE("Tnumsegments", "DT_INT32")}},
      {"VariableV2",
       {},
       {"ref: Ref(dtype)"},
       {"shape: shape", "dtype: type", "container: string = ''", "shared_name: string = ''"},
       kStateful},
      // Ops of TF 2.21's graphs of common layers (issue 39), TF 2.21's signatures.
      {"Abs",
       {"x: T"},
       {"y: T"},
       {"T: {bfloat16, half, float, double, int8, int16, int32, int64}"}},
      {"Sign",
       {"x: T"},
       {"y: T"},
       {"T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}"}},
      {"Relu6", {"features: T"}, {"activations: T"}, {"T: " REAL_NUMBER_TYPES}},
      {"Relu6Grad", {"gradients: T", "features: T"}, {"backprops: T"}, {"T: " REAL_NUMBER_TYPES}},
      {"LeakyRelu",
       {"features: T"},
       {"activations: T"},
       {"alpha: float = 0.20000000298023224", "T: {half, bfloat16, float, double} = DT_FLOAT"}},
      {"LeakyReluGrad",
       {"gradients: T", "features: T"},
       {"backprops: T"},
       {"alpha: float = 0.20000000298023224", "T: {half, bfloat16, float, double} = DT_FLOAT"}},
      {"LogicalNot", {"x: bool"}, {"y: bool"}, {}},
      // Smooth activations (ops/activation_ops.h), TF 2.21's signatures.
      {"Selu", {"features: T"}, {"activations: T"}, {"T: {half, bfloat16, float, double}"}},
      {"SeluGrad",
       {"gradients: T", "outputs: T"},
       {"backprops: T"},
       {"T: {half, bfloat16, float, double}"}},
      {"Softplus", {"features: T"}, {"activations: T"}, {"T: {half, bfloat16, float, double}"}},
      {"SoftplusGrad",
       {"gradients: T", "features: T"},
       {"backprops: T"},
       {"T: {half, bfloat16, float, double}"}},
      {"Softsign", {"features: T"}, {"activations: T"}, {"T: {half, bfloat16, float, double}"}},
      {"SoftsignGrad",
       {"gradients: T", "features: T"},
       {"backprops: T"},
       {"T: {half, bfloat16, float, double}"}},
      {"Erf", {"x: T"}, {"y: T"}, {"T: {bfloat16, half, float, double}"}},
      {"SigmoidGrad", {"y: T", "dy: T"}, {"z: T"}, {"T: " FLOAT_COMPLEX}},
      {"TanhGrad", {"y: T", "dy: T"}, {"z: T"}, {"T: " FLOAT_COMPLEX}},
      {"Select", {"condition: bool", "t: T", "e: T"}, {"output: T"}, {"T: type"}},
      {"Greater", {"x: T", "y: T"}, {"z: bool"}, {"T: " REAL_NUMBER_TYPES}},
      {"Less", {"x: T", "y: T"}, {"z: bool"}, {"T: " REAL_NUMBER_TYPES}},
      {"LessEqual", {"x: T", "y: T"}, {"z: bool"}, {"T: " REAL_NUMBER_TYPES}},
      {"NotEqual",
       {"x: T", "y: T"},
       {"z: bool"},
       {"T: type", "incompatible_shape_error: bool = true"},
       kCommutative},
      {"LogicalAnd", {"x: bool", "y: bool"}, {"z: bool"}, {}, kCommutative},
      {"LogicalOr", {"x: bool", "y: bool"}, {"z: bool"}, {}, kCommutative},
      {"FloorDiv", {"x: T", "y: T"}, {"z: T"}, {"T: " BINARY_ARITH}},
      {"FloorMod",
       {"x: T", "y: T"},
       {"z: T"},
       {"T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, float, "
        "double}"}},
      {"AddN",
       {"inputs: N * T"},
       {"sum: T"},
       {"N: int >= 1",
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64, variant}"},
       kCommutative | kAggregate},
      {"ExpandDims",
       {"input: T", "dim: Tdim"},
       {"output: T"},
       {"T: type", INDEX_TYPE("Tdim", "DT_INT32")}},
      {"Fill",
       {"dims: index_type", "value: T"},
       {"output: T"},
       {"T: type", INDEX_TYPE("index_type", "DT_INT32")}},
      {"ZerosLike", {"x: T"}, {"y: T"}, {"T: type"}},
      {"OnesLike",
       {"x: T"},
       {"y: T"},
       {"T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
        "uint64, complex64, complex128, bool}"}},
      // TF 1.14's type sets where TF 1.14's files hold the op (Range,
      // StridedSlice, FloorDiv; tests/saving/saver/tf_op_defs_test.cc).
      {"Range",
       {"start: Tidx", "limit: Tidx", "delta: Tidx"},
       {"output: Tidx"},
       {"Tidx: {bfloat16, float, double, int32, int64} = DT_INT32"}},
      {"Tile",
       {"input: T", "multiples: Tmultiples"},
       {"output: T"},
       {"T: type", INDEX_TYPE("Tmultiples", "DT_INT32")}},
      {"Pack", {"values: N * T"}, {"output: T"}, {"N: int >= 1", "T: type", "axis: int = 0"}},
      {"BiasAddGrad",
       {"out_backprop: T"},
       {"output: T"},
       {"T: " NUMBER_TYPES, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"}},
      {"Rank", {"input: T"}, {"output: int32"}, {"T: type"}},
      {"InvertPermutation", {"x: T"}, {"y: T"}, {"T: {int32, int64} = DT_INT32"}},
      {"ConcatOffset",
       {"concat_dim: int32", "shape: N * shape_type"},
       {"offset: N * shape_type"},
       {"N: int >= 2", "shape_type: {int32, int64} = DT_INT32"}},
      {"ShapeN",
       {"input: N * T"},
       {"output: N * out_type"},
       {"N: int >= 1", "T: type", "out_type: {int32, int64} = DT_INT32"}},
      {"Split",
       {"split_dim: int32", "value: T"},
       {"output: num_split * T"},
       {"num_split: int >= 1", "T: type"}},
      {"SplitV",
       {"value: T", "size_splits: Tlen", "split_dim: int32"},
       {"output: num_split * T"},
       {"num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = DT_INT64"}},
      {"Unpack", {"value: T"}, {"output: num * T"}, {"num: int >= 0", "T: type", "axis: int = 0"}},
      {"Pad",
       {"input: T", "paddings: Tpaddings"},
       {"output: T"},
       {"T: type", INDEX_TYPE("Tpaddings", "DT_INT32")}},
      {"PadV2",
       {"input: T", "paddings: Tpaddings", "constant_values: T"},
       {"output: T"},
       {"T: type", INDEX_TYPE("Tpaddings", "DT_INT32")}},
      {"StridedSlice",
       {"input: T", "begin: Index", "end: Index", "strides: Index"},
       {"output: T"},
       {"T: type", "Index: {int32, int64}", "begin_mask: int = 0", "end_mask: int = 0",
        "ellipsis_mask: int = 0", "new_axis_mask: int = 0", "shrink_axis_mask: int = 0"}},
      {"BatchMatMulV2",
       {"x: T", "y: T"},
       {"output: T"},
       {kBatchMatMulV2T, "adj_x: bool = false", "adj_y: bool = false", "grad_x: bool = false",
        "grad_y: bool = false"}},
      {"Einsum", {"inputs: N * T"}, {"output: T"}, {"equation: string", "N: int >= 1", "T: type"}},
      {"DynamicStitch",
       {"indices: N * int32", "data: N * T"},
       {"merged: T"},
       {"N: int >= 1", "T: type"}},
      {"ParallelDynamicStitch",
       {"indices: N * int32", "data: N * T"},
       {"merged: T"},
       {"N: int >= 1", "T: type"}},
      {"StridedSliceGrad",
       {"shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"},
       {"output: T"},
       {"T: type", "Index: {int32, int64}", "begin_mask: int = 0", "end_mask: int = 0",
        "ellipsis_mask: int = 0", "new_axis_mask: int = 0", "shrink_axis_mask: int = 0"}},
      // Resource variables (issue 39), TF 2.21's signatures.
      {"VarHandleOp",
       {},
       {"resource: resource"},
       {"container: string = ''", "shared_name: string = ''", "debug_name: string = ''",
        "dtype: type", "shape: shape", "allowed_devices: list(string) = []"},
       kStateful},
      // TensorLists (ops/list_ops.h), TF 2.21's signatures.
      {"EmptyTensorList",
       {"element_shape: shape_type", "max_num_elements: int32"},
       {"handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListReserve",
       {"element_shape: shape_type", "num_elements: int32"},
       {"handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListFromTensor",
       {"tensor: element_dtype", "element_shape: shape_type"},
       {"output_handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListStack",
       {"input_handle: variant", "element_shape: int32"},
       {"tensor: element_dtype"},
       {"element_dtype: type", "num_elements: int = -1"}},
      {"TensorListGather",
       {"input_handle: variant", "indices: int32", "element_shape: int32"},
       {"values: element_dtype"},
       {"element_dtype: type"}},
      {"TensorListGetItem",
       {"input_handle: variant", "index: int32", "element_shape: Tshape"},
       {"item: element_dtype"},
       {"element_dtype: type", "Tshape: {int32, int64} = DT_INT32"}},
      {"TensorListSetItem",
       {"input_handle: variant", "index: int32", "item: element_dtype"},
       {"output_handle: variant"},
       {"element_dtype: type", "resize_if_index_out_of_bounds: bool = false"}},
      {"TensorListPushBack",
       {"input_handle: variant", "tensor: element_dtype"},
       {"output_handle: variant"},
       {"element_dtype: type"}},
      {"TensorListPopBack",
       {"input_handle: variant", "element_shape: int32"},
       {"output_handle: variant", "tensor: element_dtype"},
       {"element_dtype: type"}},
      {"TensorListLength", {"input_handle: variant"}, {"length: int32"}, {}},
      {"TensorListElementShape",
       {"input_handle: variant"},
       {"element_shape: shape_type"},
       {"shape_type: {int32, int64}"}},
      {"TensorListScatterIntoExistingList",
       {"input_handle: variant", "tensor: element_dtype", "indices: int32"},
       {"output_handle: variant"},
       {"element_dtype: type"}},
      {"TensorListScatterV2",
       {"tensor: element_dtype", "indices: int32", "element_shape: shape_type",
        "num_elements: int32"},
       {"output_handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListResize",
       {"input_handle: variant", "size: int32"},
       {"output_handle: variant"},
       {}},
      {"TensorListConcatV2",
       {"input_handle: variant", "element_shape: shape_type", "leading_dims: int64"},
       {"tensor: element_dtype", "lengths: int64"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      {"TensorListSplit",
       {"tensor: element_dtype", "element_shape: shape_type", "lengths: int64"},
       {"output_handle: variant"},
       {"element_dtype: type", "shape_type: {int32, int64}"}},
      // Lookup tables (issue 39), TF 2.21's signatures.
      {"HashTableV2",
       {},
       {"table_handle: resource"},
       {"container: string = ''", "shared_name: string = ''", "use_node_name_sharing: bool = false",
        "key_dtype: type", "value_dtype: type"},
       kStateful},
      {"InitializeTableV2",
       {"table_handle: resource", "keys: Tkey", "values: Tval"},
       {},
       {"Tkey: type", "Tval: type"},
       kStateful},
      {"LookupTableImportV2",
       {"table_handle: resource", "keys: Tin", "values: Tout"},
       {},
       {"Tin: type", "Tout: type"},
       kStateful},
      {"LookupTableFindV2",
       {"table_handle: resource", "keys: Tin", "default_value: Tout"},
       {"values: Tout"},
       {"Tin: type", "Tout: type"},
       kStateful},
      {"LookupTableSizeV2", {"table_handle: resource"}, {"size: int64"}, {}, kStateful},
      {"ReadVariableOp", {"resource: resource"}, {"value: dtype"}, {"dtype: type"}, kStateful},
      {"AssignVariableOp",
       {"resource: resource", "value: dtype"},
       {},
       {"dtype: type", "validate_shape: bool = false"},
       kStateful},
      {"AssignAddVariableOp",
       {"resource: resource", "value: dtype"},
       {},
       {"dtype: type"},
       kStateful},
      {"AssignSubVariableOp",
       {"resource: resource", "value: dtype"},
       {},
       {"dtype: type"},
       kStateful},
      {"ResourceGather",
       {"resource: resource", "indices: Tindices"},
       {"output: dtype"},
       {"batch_dims: int = 0", "validate_indices: bool = true", "dtype: type",
        "Tindices: {int32, int64}"},
       kStateful},
      {"VariableShape",
       {"input: resource"},
       {"output: out_type"},
       {INDEX_TYPE("out_type", "DT_INT32")},
       kStateful},
      {"VarIsInitializedOp", {"resource: resource"}, {"is_initialized: bool"}, {}, kStateful},
      {"DestroyResourceOp",
       {"resource: resource"},
       {},
       {"ignore_lookup_error: bool = true"},
       kStateful},
      {"ResourceApplyGradientDescent",
       {"var: resource", "alpha: T", "delta: T"},
       {},
       {"T: " NUMBER_TYPES, "use_locking: bool = false"},
       kStateful},
      {"ResourceApplyMomentum",
       {"var: resource", "accum: resource", "lr: T", "grad: T", "momentum: T"},
       {},
       {"T: " NUMBER_TYPES, "use_locking: bool = false", "use_nesterov: bool = false"},
       kStateful},
      {"ResourceApplyKerasMomentum",
       {"var: resource", "accum: resource", "lr: T", "grad: T", "momentum: T"},
       {},
       {"T: " NUMBER_TYPES, "use_locking: bool = false", "use_nesterov: bool = false"},
       kStateful},
      {"ResourceApplyAdam",
       {"var: resource", "m: resource", "v: resource", "beta1_power: T", "beta2_power: T", "lr: T",
        "beta1: T", "beta2: T", "epsilon: T", "grad: T"},
       {},
       {"T: " NUMBER_TYPES, "use_locking: bool = false", "use_nesterov: bool = false"},
       kStateful},
      {"ResourceApplyRMSProp",
       {"var: resource", "ms: resource", "mom: resource", "lr: T", "rho: T", "momentum: T",
        "epsilon: T", "grad: T"},
       {},
       {"T: " NUMBER_TYPES, "use_locking: bool = false"},
       kStateful},
      {"ResourceApplyAdagradV2",
       {"var: resource", "accum: resource", "lr: T", "epsilon: T", "grad: T"},
       {},
       {"T: " NUMBER_TYPES, "use_locking: bool = false", "update_slots: bool = true"},
       kStateful},
      // Stacks (ops/stack_ops.h), TF 2.21's signatures.
      {"StackV2",
       {"max_size: int32"},
       {"handle: resource"},
       {"elem_type: type", "stack_name: string = ''"},
       kStateful},
      {"StackPushV2",
       {"handle: resource", "elem: T"},
       {"output: T"},
       {"T: type", "swap_memory: bool = false"},
       kStateful},
      {"StackPopV2", {"handle: resource"}, {"elem: elem_type"}, {"elem_type: type"}, kStateful},
      {"ControlTrigger", {}, {}, {}},
      // TensorArrays (ops/tensor_array_ops.h), TF 2.21's signatures.
      {"TensorArrayV3",
       {"size: int32"},
       {"handle: resource", "flow: float"},
       {"dtype: type", "element_shape: shape = <unknown>", "dynamic_size: bool = false",
        "clear_after_read: bool = true", "identical_element_shapes: bool = false",
        "tensor_array_name: string = ''"},
       kStateful},
      {"TensorArrayWriteV3",
       {"handle: resource", "index: int32", "value: T", "flow_in: float"},
       {"flow_out: float"},
       {"T: type"},
       kStateful},
      {"TensorArrayReadV3",
       {"handle: resource", "index: int32", "flow_in: float"},
       {"value: dtype"},
       {"dtype: type"},
       kStateful},
      {"TensorArrayGatherV3",
       {"handle: resource", "indices: int32", "flow_in: float"},
       {"value: dtype"},
       {"dtype: type", "element_shape: shape = <unknown>"},
       kStateful},
      {"TensorArrayScatterV3",
       {"handle: resource", "indices: int32", "value: T", "flow_in: float"},
       {"flow_out: float"},
       {"T: type"},
       kStateful},
      {"TensorArraySizeV3", {"handle: resource", "flow_in: float"}, {"size: int32"}, {}, kStateful},
      {"TensorArrayCloseV3", {"handle: resource"}, {}, {}, kStateful},
      // TF1 while loops (control flow v1; ops/while_loop_ops.h), TF 2.21's signatures.
      {"Enter",
       {"data: T"},
       {"output: T"},
       {"T: type", "frame_name: string", "is_constant: bool = false",
        "parallel_iterations: int = 10"}},
      {"RefEnter",
       {"data: Ref(T)"},
       {"output: Ref(T)"},
       {"T: type", "frame_name: string", "is_constant: bool = false",
        "parallel_iterations: int = 10"}},
      {"Exit", {"data: T"}, {"output: T"}, {"T: type"}},
      {"RefExit", {"data: Ref(T)"}, {"output: Ref(T)"}, {"T: type"}},
      {"NextIteration", {"data: T"}, {"output: T"}, {"T: type"}},
      {"RefNextIteration", {"data: Ref(T)"}, {"output: Ref(T)"}, {"T: type"}},
      {"LoopCond", {"input: bool"}, {"output: bool"}, {}},
      {"RefMerge",
       {"inputs: Ref(N * T)"},
       {"output: Ref(T)", "value_index: int32"},
       {"T: type", "N: int >= 1"}},
      // Function calls (issue 39), TF 2.21's signatures.
      {"_Arg", {}, {"output: T"}, {"T: type", "index: int >= 0"}, kStateful},
      {"PartitionedCall",
       {"args: Tin"},
       {"output: Tout"},
       {"Tin: list(type) >= 0", "Tout: list(type) >= 0", "f: func", "config: string = ''",
        "config_proto: string = ''", "executor_type: string = ''"}},
      {"StatefulPartitionedCall",
       {"args: Tin"},
       {"output: Tout"},
       {"Tin: list(type) >= 0", "Tout: list(type) >= 0", "f: func", "config: string = ''",
        "config_proto: string = ''", "executor_type: string = ''"},
       kStateful},
      {"If",
       {"cond: Tcond", "input: Tin"},
       {"output: Tout"},
       {"Tcond: type", "Tin: list(type) >= 0", "Tout: list(type) >= 0", "then_branch: func",
        "else_branch: func", "output_shapes: list(shape) = []"},
       kStateful},
      {"StatelessIf",
       {"cond: Tcond", "input: Tin"},
       {"output: Tout"},
       {"Tcond: type", "Tin: list(type) >= 0", "Tout: list(type) >= 0", "then_branch: func",
        "else_branch: func", "output_shapes: list(shape) = []"}},
      {"Case",
       {"branch_index: int32", "input: Tin"},
       {"output: Tout"},
       {"Tin: list(type) >= 0", "Tout: list(type) >= 0", "branches: list(func) >= 1",
        "output_shapes: list(shape) = []"},
       kStateful},
      {"StatelessCase",
       {"branch_index: int32", "input: Tin"},
       {"output: Tout"},
       {"Tin: list(type) >= 0", "Tout: list(type) >= 0", "branches: list(func) >= 1",
        "output_shapes: list(shape) = []"}},
      {"While",
       {"input: T"},
       {"output: T"},
       {"T: list(type) >= 0", "cond: func", "body: func", "output_shapes: list(shape) = []",
        "parallel_iterations: int = 10"},
       kStateful},
      {"StatelessWhile",
       {"input: T"},
       {"output: T"},
       {"T: list(type) >= 0", "cond: func", "body: func", "output_shapes: list(shape) = []",
        "parallel_iterations: int = 10"}},
      // Ops of TF's own TF1 graphs (issue 39's op-coverage report), TF 2.21's.
      {"Reciprocal",
       {"x: T"},
       {"y: T"},
       {"T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}"}},
      {"ReciprocalGrad", {"y: T", "dy: T"}, {"z: T"}, {"T: " FLOAT_COMPLEX}},
      {"Log1p", {"x: T"}, {"y: T"}, {"T: " FLOAT_COMPLEX}},
      {"DivNoNan",
       {"x: T", "y: T"},
       {"z: T"},
       {"T: {half, float, bfloat16, double, complex64, complex128}"}},
      {"L2Loss", {"t: T"}, {"output: T"}, {"T: {half, bfloat16, float, double}"}},
      {"All",
       {"input: bool", "reduction_indices: Tidx"},
       {"output: bool"},
       {"keep_dims: bool = false", INDEX_TYPE("Tidx", "DT_INT32")}},
      {"Any",
       {"input: bool", "reduction_indices: Tidx"},
       {"output: bool"},
       {"keep_dims: bool = false", INDEX_TYPE("Tidx", "DT_INT32")}},
      {"IsVariableInitialized",
       {"ref: Ref(dtype)"},
       {"is_initialized: bool"},
       {"dtype: type"},
       kUninitializedInput},
      {"Assert",
       {"condition: bool", "data: T"},
       {},
       {"T: list(type) >= 1", "summarize: int = 3"},
       kStateful},
      {"RandomStandardNormal",
       {"shape: T"},
       {"output: dtype"},
       {"seed: int = 0", "seed2: int = 0", "dtype: {half, bfloat16, float, double}",
        "T: {int32, int64}"},
       kStateful},
      {"Gather",
       {"params: Tparams", "indices: Tindices"},
       {"output: Tparams"},
       {"validate_indices: bool = true", "Tparams: type", "Tindices: {int32, int64}"}},
      {"SoftmaxCrossEntropyWithLogits",
       {"features: T", "labels: T"},
       {"loss: T", "backprop: T"},
       {"T: {half, bfloat16, float, double}"}},
      {"Where",
       {"input: T"},
       {"index: int64"},
       // TF 1.14's list (later versions add qint16 and quint16).
       {"T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, uint16, complex128, half, uint32, uint64, bool} = DT_BOOL"}},
      {"FusedBatchNorm",
       {"x: T", "scale: T", "offset: T", "mean: T", "variance: T"},
       {"y: T", "batch_mean: T", "batch_variance: T", "reserve_space_1: T", "reserve_space_2: T"},
       // TF 2.x's: exponential_avg_factor (default 1) came after TF 1.14.
       {"T: {float}", "epsilon: float = 0.0001", "exponential_avg_factor: float = 1",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "is_training: bool = true"}},
      {"FusedBatchNormGrad",
       {"y_backprop: T", "x: T", "scale: T", "reserve_space_1: T", "reserve_space_2: T"},
       {"x_backprop: T", "scale_backprop: T", "offset_backprop: T", "reserve_space_3: T",
        "reserve_space_4: T"},
       {"T: {float}", "epsilon: float = 0.0001", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
        "is_training: bool = true"}},
      {"TruncatedNormal",
       {"shape: T"},
       {"output: dtype"},
       {"seed: int = 0", "seed2: int = 0", "dtype: {half, bfloat16, float, double}",
        "T: {int32, int64}"},
       kStateful},
  };
  return specs;
}

#undef NUMBER_TYPES
#undef FLOAT_COMPLEX
#undef BINARY_ARITH
#undef MATMUL_TYPES
#undef INDEX_TYPE
#undef REAL_NUMBER_TYPES
#undef FLOAT_INT_COMPLEX
#undef CONV2D_ATTRS
#undef DEPTHWISE_ATTRS

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

int TypeNumber(std::string_view name) {
  if (name.starts_with("DT_")) {
    std::string lower(name.substr(3));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return TypeNumber(lower);
  }
  const std::optional<int> number = TfDataTypeFromOpDefName(name);  // runtime/dtype.h's table
  EAGER_INTERNAL_CHECK(number.has_value());
  return *number;
}

std::vector<std::string_view> SplitList(std::string_view braces) {  // "{a, b}" -> a, b
  std::vector<std::string_view> out;
  braces = Trim(braces.substr(1, braces.size() - 2));
  while (!braces.empty()) {
    const size_t comma = braces.find(',');
    out.push_back(Trim(braces.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    braces.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view Unquote(std::string_view s) {
  return s.size() >= 2 && s.front() == '\'' ? s.substr(1, s.size() - 2) : s;
}

// "name: T", "name: Ref(T)", "name: N * T", "name: string", "name: dtypes".
OpArgSignature ParseArg(std::string_view spec, const std::vector<OpAttrSignature>& attrs) {
  const size_t colon = spec.find(':');
  OpArgSignature arg;
  arg.name = std::string(Trim(spec.substr(0, colon)));
  std::string_view type = Trim(spec.substr(colon + 1));
  if (type.starts_with("Ref(")) {
    arg.is_ref = true;
    type = type.substr(4, type.size() - 5);
  }
  if (const size_t star = type.find('*'); star != std::string_view::npos) {
    arg.number_attr = std::string(Trim(type.substr(0, star)));
    type = Trim(type.substr(star + 1));
  }
  auto attr =
      std::find_if(attrs.begin(), attrs.end(), [&](const auto& a) { return a.name == type; });
  if (attr == attrs.end()) {
    arg.tf_type = TypeNumber(type);
  } else if (attr->type == "list(type)") {
    arg.type_list_attr = std::string(type);
  } else {
    arg.type_attr = std::string(type);
  }
  return arg;
}

// "T: type", "T: {float, double}", "x: bool = true", "dtypes: list(type) >= 1",
// "Tidx: {int32, int64} = DT_INT32", "data_format: {'NHWC', 'NCHW'} = 'NHWC'".
OpAttrSignature ParseAttr(std::string_view spec) {
  const size_t colon = spec.find(':');
  OpAttrSignature attr;
  attr.name = std::string(Trim(spec.substr(0, colon)));
  std::string_view rest = Trim(spec.substr(colon + 1));
  std::string_view default_text;
  if (const size_t eq = rest.find(" = "); eq != std::string_view::npos) {
    default_text = Trim(rest.substr(eq + 3));
    rest = Trim(rest.substr(0, eq));
  }
  if (const size_t ge = rest.find(" >= "); ge != std::string_view::npos) {
    attr.has_minimum = true;
    attr.minimum = std::stoll(std::string(rest.substr(ge + 4)));
    rest = Trim(rest.substr(0, ge));
  }
  if (rest.starts_with("{")) {
    const std::vector<std::string_view> items = SplitList(rest);
    const bool strings = items.front().starts_with("'");
    for (std::string_view item : items) {
      if (strings) {
        attr.allowed_strings.emplace_back(Unquote(item));
      } else {
        attr.allowed_types.push_back(TypeNumber(item));
      }
    }
    attr.type = strings ? "string" : "type";
  } else {
    attr.type = std::string(rest);
  }
  if (!default_text.empty()) {
    if (attr.type == "bool") {
      attr.default_value = default_text == "true";
    } else if (attr.type == "int") {
      attr.default_value = static_cast<int64_t>(std::stoll(std::string(default_text)));
    } else if (attr.type == "float") {  // TF's float default as a double: 0.20000000298023224
      attr.default_value = std::stod(std::string(default_text));
    } else if (attr.type == "type") {
      const std::optional<DType> dtype = DTypeFromTfDataType(TypeNumber(default_text));
      EAGER_INTERNAL_CHECK(dtype.has_value());
      attr.default_value = *dtype;
    } else if (attr.type == "string") {
      attr.default_value = std::string(Unquote(default_text));
    } else if (attr.type == "shape") {
      attr.default_value = Shape::UnknownRank();  // "<unknown>"
    } else if (attr.type == "list(int)") {        // "[]", "[1, 1, 1, 1]"
      std::vector<int64_t> list;
      for (std::string_view item : SplitList(default_text)) {
        list.push_back(std::stoll(std::string(item)));
      }
      attr.default_value = list;
    } else if (attr.type == "list(shape)") {  // "[]" (If's and While's output_shapes)
      attr.default_value = std::vector<Shape>{};
    } else if (attr.type == "list(string)") {  // "[]" (VarHandleOp's allowed_devices)
      std::vector<std::string> list;
      for (std::string_view item : SplitList(default_text)) list.emplace_back(Unquote(item));
      attr.default_value = list;
    }
  }
  return attr;
}

OpSignature Build(const OpSpec& spec) {
  OpSignature op;
  op.name = spec.name;
  for (const char* a : spec.attrs) op.attrs.push_back(ParseAttr(a));
  for (const char* a : spec.inputs) op.inputs.push_back(ParseArg(a, op.attrs));
  for (const char* a : spec.outputs) op.outputs.push_back(ParseArg(a, op.attrs));
  op.is_stateful = spec.flags & kStateful;
  op.is_commutative = spec.flags & kCommutative;
  op.is_aggregate = spec.flags & kAggregate;
  op.allows_uninitialized_input = spec.flags & kUninitializedInput;
  return op;
}

const std::map<std::string, OpSignature, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, OpSignature, std::less<>>;
    for (const OpSpec& spec : Specs()) t->emplace(spec.name, Build(spec));
    return t;
  }();
  return *table;
}

}  // namespace

const OpAttrSignature* OpSignature::FindAttr(std::string_view attr_name) const {
  for (const OpAttrSignature& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

const OpSignature* FindOpSignature(std::string_view type) {
  auto it = Table().find(type);
  return it == Table().end() ? nullptr : &it->second;
}

std::vector<std::string_view> OpSignatureTypes() {
  std::vector<std::string_view> out;
  for (const auto& [name, op] : Table()) out.push_back(name);
  return out;
}

void SetAttrDefaults(const OpSignature& op, Attrs& attrs) {
  for (const OpAttrSignature& a : op.attrs) {
    if (a.default_value) attrs.SetDefault(a.name, *a.default_value);
  }
}

std::optional<std::vector<DType>> OutputDTypes(const OpSignature& op, const Attrs& attrs) {
  std::vector<DType> out;
  for (const OpArgSignature& arg : op.outputs) {
    if (!arg.type_list_attr.empty()) {
      const auto* list = std::get_if<std::vector<DType>>(attrs.Find(arg.type_list_attr));
      if (list == nullptr) return std::nullopt;
      out.insert(out.end(), list->begin(), list->end());
      continue;
    }
    std::optional<DType> dtype;
    if (!arg.type_attr.empty()) {
      const auto* t = std::get_if<DType>(attrs.Find(arg.type_attr));
      if (t == nullptr) return std::nullopt;
      dtype = *t;
    } else {
      dtype = DTypeFromTfDataType(arg.tf_type);
      if (!dtype) return std::nullopt;
    }
    int64_t count = 1;
    if (!arg.number_attr.empty()) {
      const auto* n = std::get_if<int64_t>(attrs.Find(arg.number_attr));
      if (n == nullptr) return std::nullopt;
      count = *n;
    }
    out.insert(out.end(), static_cast<size_t>(std::max<int64_t>(count, 0)), *dtype);
  }
  return out;
}

}  // namespace eager
