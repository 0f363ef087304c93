"""The main job (examples/fashion_mnist) written in pip torch, as the peer for its
memory and speed (issue 30; benchmarks/README.md, "Memory").

The same work as `fashion_mnist [--model cnn]`: Fashion-MNIST read from the
Debian package's IDX files into float32 tensors in [0, 1] (the whole training
and test sets, as eager does), the same network (784-256-10 ReLU MLP, or the
LeNet-style CNN of examples/fashion_mnist/cnn.h in NCHW), Keras's
initialisers (glorot-uniform kernels, zero biases), Adam (lr 1e-3, betas 0.9 /
0.999, eps 1e-7), batch 64 with the remainder dropped, a fresh shuffle every
epoch, an exponential moving average of the weights after every step (decay
min(0.999, (1 + step) / (10 + step)), tf.train's num_updates idiom), and test
accuracy with the raw and the averaged weights at the end. Two intra-op
threads, like eager's default on this machine.

  /tmp/torchvenv/bin/python benchmarks/fashion_mnist_torch.py [--model cnn] [--epochs N]

Prints the accuracies, examples/s, this process's RSS once torch is imported
(before any data) and its peak RSS (ru_maxrss).
"""

import argparse
import gzip
import resource
import struct
import time

import torch
from torch import nn


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return -1.0


RSS_AFTER_IMPORT = rss_mib()


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = bytearray(data[4 + 4 * ndim:])
    del data
    return torch.frombuffer(body, dtype=torch.uint8).reshape(dims)


def load_split(data_dir, split):
    images = read_idx(f"{data_dir}/{split}-images-idx3-ubyte.gz")
    labels = read_idx(f"{data_dir}/{split}-labels-idx1-ubyte.gz")
    images = images.reshape(images.shape[0], 784).to(torch.float32).div_(255.0)
    return images, labels.to(torch.int64)


def glorot(layer):
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = glorot(nn.Linear(784, 256))
        self.logits = glorot(nn.Linear(256, 10))

    def forward(self, x):
        return self.logits(torch.relu(self.hidden(x)))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = glorot(nn.Conv2d(1, 32, 5, padding=2))
        self.conv2 = glorot(nn.Conv2d(32, 64, 5, padding=2))
        self.hidden = glorot(nn.Linear(3136, 1024))
        self.logits = glorot(nn.Linear(1024, 10))

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.logits(torch.relu(self.hidden(x.flatten(1))))


@torch.no_grad()
def accuracy(model, images, labels):
    correct = 0
    for begin in range(0, images.shape[0], 1000):
        predicted = model(images[begin:begin + 1000]).argmax(1)
        correct += (predicted == labels[begin:begin + 1000]).sum().item()
    return correct / images.shape[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
    parser.add_argument("--epochs", type=int, default=0, help="0: 2 for mlp, 3 for cnn")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data_dir", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()
    epochs = args.epochs or (3 if args.model == "cnn" else 2)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    train_x, train_y = load_split(args.data_dir, "train")
    test_x, test_y = load_split(args.data_dir, "t10k")
    model = Mlp() if args.model == "mlp" else Cnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)
    params = list(model.parameters())
    shadows = [p.detach().clone() for p in params]

    steps_per_epoch = train_x.shape[0] // args.batch_size
    step = 0
    start = time.perf_counter()
    for _ in range(epochs):
        order = torch.randperm(train_x.shape[0])
        for i in range(steps_per_epoch):
            index = order[i * args.batch_size:(i + 1) * args.batch_size]
            x, y = train_x[index], train_y[index]
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            decay = min(0.999, (1 + step) / (10 + step))
            with torch.no_grad():
                torch._foreach_lerp_(shadows, [p.detach() for p in params], 1 - decay)
    seconds = time.perf_counter() - start

    raw = accuracy(model, test_x, test_y)
    with torch.no_grad():
        trained = [p.detach().clone() for p in params]
        for p, s in zip(params, shadows):
            p.copy_(s)
        ema = accuracy(model, test_x, test_y)
        for p, t in zip(params, trained):
            p.copy_(t)
    print(f"torch {torch.__version__}, {args.model}, {epochs} epochs, {args.threads} threads: "
          f"{step} steps in {seconds:.1f} s ({step * args.batch_size / seconds:.0f} examples/s), "
          f"last loss {loss.item():.4f}")
    print(f"test accuracy: {100 * raw:.2f}% (raw weights), {100 * ema:.2f}% (EMA weights)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"RSS after import torch: {RSS_AFTER_IMPORT:.1f} MiB; peak RSS: {peak:.1f} MiB")


if __name__ == "__main__":
    main()
