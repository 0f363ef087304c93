#!/usr/bin/env python3
"""pip torch (MKL + oneDNN) as the peer in issue 30's comparisons.

The same cases as anchors_benchmark.cc, under the same names with X = PipTorch,
so that they line up with eager's lines in one table:

  BM_PipTorchCNNStep/batch:B/threads:T   conv5x5x32-pool-conv5x5x64-pool-1024-10 step, Adam
  BM_PipTorchMLPStep/batch:B/threads:T   784-256-128-10 step, Adam
  BM_PipTorchMatmul/n:N/threads:T        float32 n x n matmul
  BM_PipTorchAdd/n:N                     a + b, the per-op floor
  BM_PipTorchLSTMStep/batch:64/seq:32/threads:T  LSTM(256) on [64, 32, 128], Linear(10)
                                         on the last output, Adam (layers_benchmark.cc)
  BM_PipTorchGRUStep/batch:64/seq:32/threads:T   the same with GRU(256)
  BM_PipTorchConvBNReLUStep/batch:64/threads:T   Conv2d(64, 3x3, same, no bias) + BatchNorm
                                         (training) + ReLU on 64 channels of 32x32,
                                         global average pooling, Linear(10), Adam

Not part of eager's build or tests; run it from a venv with `pip install torch`:

  /tmp/torchvenv/bin/python benchmarks/torch_peer.py [--reps 5] [--filter CNN]

Each case runs `reps` rounds of at least `min_time` seconds after warm-up and
prints the median (and min / max) time per iteration. torch's own best
settings: torch.set_num_threads(T), channels_last for the CNN when it is
faster (both are measured; the faster is the line, the other is printed too).
"""

import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def cnn_flop(batch):
    conv1 = 2.0 * 28 * 28 * 32 * 25 * 1
    forward = conv1 + 2.0 * 14 * 14 * 64 * 25 * 32 + 2.0 * 3136 * 1024 + 2.0 * 1024 * 10
    return batch * (3 * forward - conv1)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(3136, 1024)
        self.fc2 = nn.Linear(1024, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.h1 = nn.Linear(784, 256)
        self.h2 = nn.Linear(256, 128)
        self.out = nn.Linear(128, 10)

    def forward(self, x):
        return self.out(F.relu(self.h2(F.relu(self.h1(x)))))


class Recurrent(nn.Module):
    """LSTM or GRU(256) over [batch, time, 128], Linear(10) on the last step."""

    def __init__(self, kind):
        super().__init__()
        self.rnn = (nn.LSTM if kind == "LSTM" else nn.GRU)(128, 256, batch_first=True)
        self.out = nn.Linear(256, 10)

    def forward(self, x):
        return self.out(self.rnn(x)[0][:, -1])


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(64, eps=1e-3, momentum=0.01)  # Keras's defaults
        self.out = nn.Linear(64, 10)

    def forward(self, x):
        return self.out(F.relu(self.bn(self.conv(x))).mean((2, 3)))


# Process CPU time per iteration of the last timed() call, per round: on a
# loaded machine the one-thread cases compare by it (Google Benchmark's "CPU"
# column is the same measure for eager's and oneDNN's one-thread cases).
cpu_times = []


def timed(fn, reps, min_time):
    for _ in range(3):
        fn()
    times = []
    cpu_times.clear()
    for _ in range(reps):
        n, start, cpu = 0, time.perf_counter(), time.process_time()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        times.append(elapsed / n)
        cpu_times.append((time.process_time() - cpu) / n)
    return times


def report(name, times, extra=""):
    med = statistics.median(times)
    print(f"{name:48s} median {med * 1e3:9.3f} ms  (min {min(times) * 1e3:.3f}, "
          f"max {max(times) * 1e3:.3f}, {len(times)} reps; process CPU "
          f"{statistics.median(cpu_times) * 1e3:.3f} ms){extra}", flush=True)
    return med


def step_fn(model, images, labels):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--min_time", type=float, default=0.5)
    p.add_argument("--filter", default="")
    p.add_argument("--peak1", type=float, default=0, help="one-core FMA peak, GFLOP/s")
    p.add_argument("--peak2", type=float, default=0, help="two-core FMA peak, GFLOP/s")
    a = p.parse_args()
    print(f"torch {torch.__version__}, mkldnn {torch.backends.mkldnn.is_available()}, "
          f"mkl {torch.backends.mkl.is_available()}, cpu capability "
          f"{torch.backends.cpu.get_cpu_capability()}", flush=True)
    torch.manual_seed(0)
    for threads in (1, 2):
        torch.set_num_threads(threads)
        peak = a.peak1 if threads == 1 else a.peak2
        if "CNN" in a.filter or not a.filter:
            for batch in (64, 256):
                images = torch.rand(batch, 1, 28, 28)
                labels = torch.randint(0, 10, (batch,))
                best = None
                for fmt in (torch.contiguous_format, torch.channels_last):
                    model = Cnn().to(memory_format=fmt)
                    x = images.contiguous(memory_format=fmt)
                    times = timed(step_fn(model, x, labels), a.reps, a.min_time)
                    med = statistics.median(times)
                    tag = "nchw" if fmt == torch.contiguous_format else "channels_last"
                    share = f", {100 * cnn_flop(batch) / med / 1e9 / peak:.0f}% of peak" if peak else ""
                    report(f"BM_PipTorchCNNStep/batch:{batch}/threads:{threads} [{tag}]", times, share)
                    best = med if best is None else min(best, med)
        if "MLP" in a.filter or not a.filter:
            for batch in (64, 256):
                images = torch.rand(batch, 784)
                labels = torch.randint(0, 10, (batch,))
                report(f"BM_PipTorchMLPStep/batch:{batch}/threads:{threads}",
                       timed(step_fn(Mlp(), images, labels), a.reps, a.min_time))
        if "Matmul" in a.filter or not a.filter:
            for n in (64, 256, 1024, 2048):
                x, y = torch.rand(n, n), torch.rand(n, n)
                times = timed(lambda: torch.mm(x, y), a.reps, a.min_time)
                gflops = 2.0 * n ** 3 / statistics.median(times) / 1e9
                report(f"BM_PipTorchMatmul/n:{n}/threads:{threads}", times, f"  {gflops:.0f} GFLOP/s")
        for kind in ("LSTM", "GRU"):
            if kind in a.filter or not a.filter:
                x = torch.rand(64, 32, 128)
                labels = torch.randint(0, 10, (64,))
                report(f"BM_PipTorch{kind}Step/batch:64/seq:32/threads:{threads}",
                       timed(step_fn(Recurrent(kind), x, labels), a.reps, a.min_time))
        if "ConvBNReLU" in a.filter or not a.filter:
            labels = torch.randint(0, 10, (64,))
            for fmt in (torch.contiguous_format, torch.channels_last):
                x = torch.rand(64, 64, 32, 32).contiguous(memory_format=fmt)
                tag = "nchw" if fmt == torch.contiguous_format else "channels_last"
                report(f"BM_PipTorchConvBNReLUStep/batch:64/threads:{threads} [{tag}]",
                       timed(step_fn(ConvBnRelu().to(memory_format=fmt), x, labels), a.reps,
                             a.min_time))
    if "Add" in a.filter or not a.filter:
        torch.set_num_threads(1)
        for n in (1, 100):
            x, y = torch.rand(n), torch.rand(n)
            times = timed(lambda: torch.add(x, y), a.reps, a.min_time)
            report(f"BM_PipTorchAdd/n:{n}", times)


if __name__ == "__main__":
    main()
