// A user program linked against eager's shared libraries: writes a
// checkpoint with the saving layer and reads it back.

#include <cstdio>
#include <string>

#include "runtime/tensor.h"
#include "saving/bundle/bundle_reader.h"
#include "saving/bundle/bundle_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer PREFIX\n");
    return 2;
  }
  const std::string prefix = argv[1];
  {
    eager::BundleWriter writer(prefix);
    writer.Add("w", eager::Tensor::Vector<float>({1.5f, -2.0f}));
    writer.Finish();
  }
  const eager::Tensor back = eager::BundleReader(prefix).Read("w");
  std::printf("consumer (shared): w = %s\n", back.ValuesString().c_str());
  return back.ValuesString() == "[1.5, -2.0]" ? 0 : 1;
}
