#pragma once

// Fashion-MNIST as tensors: images [n, 784] float32 scaled to [0, 1] and
// labels [n] int32 in [0, 10).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace fashion_mnist {

inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int64_t kImageSize = 28 * 28;
inline constexpr int kNumClasses = 10;

struct Dataset {
  eager::Tensor images;  // [n, 784] float32
  eager::Tensor labels;  // [n] int32
  int64_t size() const { return labels.num_elements(); }
};

// Reads "<dir>/<split>-images-idx3-ubyte.gz" and "<dir>/<split>-labels-idx1-ubyte.gz"
// (split "train" or "t10k"). Errors as ReadIdxFile, plus eager::DataLossError
// when the images are not 28x28, the counts differ, or a label is >= 10.
Dataset LoadSplit(const std::string& dir, const std::string& split);

// Images and labels from already-read IDX arrays (checked as LoadSplit).
Dataset MakeDataset(const std::string& what, const std::vector<int64_t>& image_dims,
                    const std::vector<uint8_t>& image_bytes, const std::vector<int64_t>& label_dims,
                    const std::vector<uint8_t>& label_bytes);

// Rows `order[begin, begin + count)` of the dataset, as one batch.
Dataset Batch(const Dataset& data, const std::vector<int64_t>& order, int64_t begin, int64_t count);

}  // namespace fashion_mnist
