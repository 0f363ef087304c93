// A user program built with eager as a subdirectory: the runtime layer, in the
// parent's Debug build (run_subdirectory.cmake checks eager's own compile
// lines carry no Release flags).

#include <cstdio>

#include "runtime/tensor.h"
#include "runtime/variable.h"

int main() {
#ifdef NDEBUG
  std::fprintf(stderr, "consumer: built with NDEBUG, not in the parent's Debug build\n");
  return 1;
#endif
  eager::Variable v(eager::Tensor::Vector<float>({1.5f, -2.0f}), "v");
  std::printf("consumer: %s = %s\n", v.name().c_str(), v.value().ValuesString().c_str());
  return 0;
}
