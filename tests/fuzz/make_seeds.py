#!/usr/bin/env python3
"""Seed corpus for bundle_fuzzer (layout in bundle_fuzzer.cc): every
PREFIX.index found under the given folders with the head of its first data
file, and every `checkpoint` state file."""
import os
import struct
import sys

MAX_DATA = 64 << 10  # keep seeds small: the reader checks sizes, not contents, first

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
count = 0
for root_dir in sys.argv[2:]:
    for dirpath, dirs, names in os.walk(root_dir):
        dirs[:] = [d for d in dirs if d != "CMakeFiles"]  # build trees of package tests
        if count >= 2000:
            break
        for name in names:
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path):  # FIFOs, symlink loops: our own hostile tests' files
                continue
            seeds = []
            if name.endswith(".index"):
                prefix = path[: -len(".index")]
                try:
                    index = open(path, "rb").read()
                except OSError:
                    continue
                if len(index) > (1 << 20):
                    continue
                data = b""
                data_path = prefix + ".data-00000-of-00001"
                if os.path.exists(data_path):
                    with open(data_path, "rb") as f:
                        data = f.read(MAX_DATA)
                bundle = struct.pack("<I", len(index)) + index + data
                # Twice: 'B', the default chunking, and 'C', 32-byte chunks
                # read on two threads from 128 bytes (bundle_fuzzer.cc).
                seeds = [b"B" + bundle, b"C" + bundle]
            elif name == "checkpoint":
                try:
                    seeds = [b"S" + open(path, "rb").read(1 << 16)]
                except OSError:
                    continue
            for seed in seeds:
                if count < 2000:
                    count += 1
                    with open(os.path.join(out_dir, "seed%04d" % count), "wb") as f:
                        f.write(seed)
print("make_seeds: %d seeds in %s" % (count, out_dir))
