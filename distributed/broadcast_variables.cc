#include "distributed/broadcast_variables.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/errors.h"
#include "runtime/tensor_access.h"

namespace eager::distributed {
namespace {

constexpr size_t kPieceBytes = size_t{4} << 20;

// What must agree across ranks: per variable its dtype, shape and whether
// it holds a value.
std::string Layout(std::span<Variable* const> variables) {
  std::string layout = StrCat(variables.size(), " variables");
  for (const Variable* v : variables) {
    EAGER_CHECK(v != nullptr, "BroadcastVariables: a variable is null");
    layout +=
        StrCat("\n", v->dtype(), " ", v->shape(), v->is_initialized() ? "" : " uninitialized");
  }
  return layout;
}

// The first line where `a` and `b` differ (0-based), for the message.
size_t FirstDifferentLine(const std::string& a, const std::string& b) {
  size_t line = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()) && a[i] == b[i]; ++i) line += a[i] == '\n';
  return line;
}

}  // namespace

void BroadcastVariables(std::span<Variable* const> variables, int root) {
  const World* world = World::Current();
  if (world == nullptr) {
    throw FailedPreconditionError(
        "BroadcastVariables: no eager::distributed::World is alive; make one first (in main)");
  }
  BroadcastVariables(*world, variables, root);
}

void BroadcastVariables(const World& world, std::span<Variable* const> variables, int root) {
  EAGER_CHECK(root >= 0 && root < world.size(), "BroadcastVariables: root ", root,
              " is not a rank of ", world.size());
  const std::vector<std::string> layouts = world.AllGather(Layout(variables));
  const std::string& expected = layouts[static_cast<size_t>(root)];
  for (size_t r = 0; r < layouts.size(); ++r) {
    if (layouts[r] == expected) continue;
    const size_t line = FirstDifferentLine(layouts[r], expected);
    throw InvalidArgumentError(
        StrCat("BroadcastVariables: rank ", r, " passes different variables than root ", root,
               line == 0 ? " (a different count)" : StrCat(" (first at variable ", line - 1, ")"),
               ": every rank must pass the same list, in the same order"));
  }
  size_t total = 0;
  for (const Variable* v : variables) {
    if (v->dtype() == DType::kString) {
      throw UnimplementedError(StrCat("BroadcastVariables: variable '", v->shared_name(),
                                      "' holds strings; only numeric values are broadcast"));
    }
    if (!v->is_initialized()) {
      throw FailedPreconditionError(StrCat("BroadcastVariables: variable '", v->shared_name(),
                                           "' is uninitialized (build the model first)"));
    }
    total += v->value().bytes().size();
  }
  if (world.size() == 1) return;
  std::vector<std::byte> buffer(total);
  if (world.rank() == root) {
    size_t offset = 0;
    for (const Variable* v : variables) {
      const std::span<const std::byte> bytes = v->value().bytes();
      std::memcpy(buffer.data() + offset, bytes.data(), bytes.size());
      offset += bytes.size();
    }
  }
  for (size_t begin = 0; begin < total; begin += kPieceBytes) {
    world.Broadcast(
        std::span<std::byte>(buffer).subspan(begin, std::min(kPieceBytes, total - begin)), root);
  }
  if (world.rank() == root) return;
  size_t offset = 0;
  for (Variable* v : variables) {
    Tensor value = internal::NewTensor(v->shape(), v->dtype());
    const size_t n = value.bytes().size();
    std::memcpy(internal::TensorAccess::MutableRawData(value), buffer.data() + offset, n);
    offset += n;
    v->Assign(value);
  }
}

}  // namespace eager::distributed
