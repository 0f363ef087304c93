// Execute(op, x[, y]): kernels read the caller's tensors through views that
// own nothing (ops/execute.h). Nothing that outlives the call may be a view.

#include <gtest/gtest.h>

#include <vector>

#include "ops/array_ops.h"
#include "ops/binary_ops.h"
#include "ops/random_generator.h"
#include "ops/recorder.h"
#include "ops/unary_ops.h"
#include "runtime/tensor_access.h"

namespace eager {
namespace {

using internal::TensorAccess;

long Owners(const Tensor& t) { return TensorAccess::BufferOf(t).use_count(); }

TEST(ExecuteInPlaceTest, AnOutputThatSharesAnInputsBufferOwnsIt) {
  // Reshape passes its input's buffer on; the input here is a temporary,
  // gone when the statement ends, so a view would dangle.
  const Tensor reshaped = Reshape(RandomUniform(Shape{6}, 5), {2, 3});
  EXPECT_EQ(Owners(reshaped), 1);
  EXPECT_EQ(reshaped.shape(), (Shape{2, 3}));
  EXPECT_EQ(reshaped.ToVector<float>(), RandomUniform(Shape{6}, 5).ToVector<float>());

  // An input that lives on: the output shares its buffer as an owner.
  const Tensor x = RandomUniform(Shape{4}, 6);
  const Tensor flat = Reshape(x, {2, 2});
  EXPECT_FALSE(TensorAccess::IsBorrowed(flat));
  EXPECT_EQ(TensorAccess::BufferOf(flat).get(), TensorAccess::BufferOf(x).get());
  EXPECT_EQ(Owners(x), 2);
}

// Keeps every call it is shown, as a tape does.
class KeepingRecorder : public OpRecorder {
 public:
  bool ShouldRecord(const OpDef&, std::span<const Tensor>) override { return true; }
  void Record(const OpCall& call) override { calls.push_back(call); }
  std::vector<OpCall> calls;
};

TEST(ExecuteInPlaceTest, RecordersGetOwningCopiesOfTheInputs) {
  KeepingRecorder recorder;
  {
    ScopedRecording recording(&recorder);
    const Tensor a = RandomUniform(Shape{5}, 3);
    const Tensor b = Exp(a);
    const Tensor c = Mul(a, b);
    EXPECT_EQ(Owners(a), 3);  // a, and the recorded Exp and Mul inputs
  }  // a, b and c are gone; the recorder's copies must still hold the values
  ASSERT_EQ(recorder.calls.size(), 2u);
  const OpCall& mul = recorder.calls[1];
  ASSERT_EQ(mul.inputs.size(), 2u);
  for (const Tensor& input : mul.inputs) {
    EXPECT_FALSE(TensorAccess::IsBorrowed(input));
    EXPECT_EQ(Owners(input), 2);  // this input of Mul, and the same tensor in Exp's call or output
  }
  const std::vector<float> a = mul.inputs[0].ToVector<float>();
  const std::vector<float> b = mul.inputs[1].ToVector<float>();
  const std::vector<float> want_a = RandomUniform(Shape{5}, 3).ToVector<float>();
  const std::vector<float> c = mul.output.ToVector<float>();
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(a[i], want_a[i]);
    EXPECT_EQ(c[i], a[i] * b[i]);
  }
}

TEST(ExecuteInPlaceTest, ErrorsStillNameTheOpAndShapes) {
  const Tensor x = RandomUniform(Shape{2, 3}, 1);
  const Tensor y = RandomUniform(Shape{4}, 2);
  try {
    Add(x, y);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("AddV2: Incompatible shapes: [2,3] vs. [4]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eager
