#include "examples/fashion_mnist/dataset.h"

#include <cstring>

#include "examples/fashion_mnist/idx_reader.h"
#include "runtime/tensor_access.h"

namespace fashion_mnist {

using eager::DataLossError;
using eager::StrCat;

Dataset MakeDataset(const std::string& what, const std::vector<int64_t>& image_dims,
                    const std::vector<uint8_t>& image_bytes, const std::vector<int64_t>& label_dims,
                    const std::vector<uint8_t>& label_bytes) {
  if (image_dims.size() != 3 || image_dims[1] != 28 || image_dims[2] != 28) {
    throw DataLossError(
        StrCat(what, ": images must be [n, 28, 28], got ", eager::Shape(image_dims)));
  }
  if (label_dims.size() != 1 || label_dims[0] != image_dims[0]) {
    throw DataLossError(StrCat(what, ": expected ", image_dims[0], " labels as [n], got ",
                               eager::Shape(label_dims)));
  }
  const int64_t n = image_dims[0];
  if (static_cast<int64_t>(image_bytes.size()) != n * kImageSize ||
      static_cast<int64_t>(label_bytes.size()) != n) {
    throw DataLossError(StrCat(what, ": ", image_bytes.size(), " image bytes and ",
                               label_bytes.size(), " label bytes for ", n, " examples"));
  }
  Dataset out;
  out.images = eager::internal::NewTensor(eager::Shape{n, kImageSize}, eager::DType::kFloat32);
  float* px = eager::internal::MutableData<float>(out.images);
  for (size_t i = 0; i < image_bytes.size(); ++i) px[i] = image_bytes[i] / 255.0f;
  out.labels = eager::internal::NewTensor(eager::Shape{n}, eager::DType::kInt32);
  int32_t* py = eager::internal::MutableData<int32_t>(out.labels);
  for (int64_t i = 0; i < n; ++i) {
    if (label_bytes[i] >= kNumClasses) {
      throw DataLossError(StrCat(what, ": label ", int(label_bytes[i]), " at index ", i,
                                 " is not a class in [0, ", kNumClasses, ")"));
    }
    py[i] = label_bytes[i];
  }
  return out;
}

Dataset LoadSplit(const std::string& dir, const std::string& split) {
  const std::string images_path = dir + "/" + split + "-images-idx3-ubyte.gz";
  const std::string labels_path = dir + "/" + split + "-labels-idx1-ubyte.gz";
  IdxArray images = ReadIdxFile(images_path);
  IdxArray labels = ReadIdxFile(labels_path);
  return MakeDataset(images_path + " with " + labels_path, images.dims, images.data, labels.dims,
                     labels.data);
}

Dataset Batch(const Dataset& data, const std::vector<int64_t>& order, int64_t begin,
              int64_t count) {
  Dataset out;
  out.images = eager::internal::NewTensor(eager::Shape{count, kImageSize}, eager::DType::kFloat32);
  out.labels = eager::internal::NewTensor(eager::Shape{count}, eager::DType::kInt32);
  const float* src = data.images.data<float>().data();
  const int32_t* labels = data.labels.data<int32_t>().data();
  float* dst = eager::internal::MutableData<float>(out.images);
  int32_t* dst_labels = eager::internal::MutableData<int32_t>(out.labels);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = order[static_cast<size_t>(begin + i)];
    std::memcpy(dst + i * kImageSize, src + row * kImageSize, sizeof(float) * kImageSize);
    dst_labels[i] = labels[row];
  }
  return out;
}

}  // namespace fashion_mnist
