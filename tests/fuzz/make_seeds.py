#!/usr/bin/env python3
"""Seed corpus for bundle_fuzzer (layout in bundle_fuzzer.cc): every
PREFIX.index found under the given folders with the head of its first data
file, every `checkpoint` state file, every .meta, saved_model.pb and bare
GraphDef .pb file up to 1 MiB (each .meta also as
'R', imported and run; each saved_model.pb also as 'F', loaded with its
function library and run), every Keras .weights.h5/.h5 ('H') and .keras ('K',
and its config.json as 'J') up to 1 MiB, and a few object graphs encoded
here."""
import os
import struct
import sys
import zipfile

MAX_DATA = 64 << 10  # keep seeds small: the reader checks sizes, not contents, first

def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def field(number, payload):  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def int_field(number, value):
    return varint(number << 3) + varint(value)


def node(children=(), attributes=(), slots=()):
    """A TrackableObjectGraph.TrackableObject (trackable_object_graph.proto)."""
    out = b""
    for node_id, name in children:
        out += field(1, int_field(1, node_id) + field(2, name.encode()))
    for name, key in attributes:
        out += field(2, field(1, name.encode()) + field(3, key.encode()))
    for original, slot_name, slot in slots:
        out += field(3, int_field(1, original) + field(2, slot_name.encode()) + int_field(3, slot))
    return field(1, out)


def object_graphs():
    value = ("VARIABLE_VALUE", "v")
    yield node([(1, "a"), (2, "b")]) + node(attributes=[value]) + node(attributes=[value])
    # A chain, a cycle back to the root, a shared child, an optimizer's slot.
    yield b"".join(node([(i + 1, "a")], [value]) for i in range(50)) + node(attributes=[value])
    yield node([(1, "a"), (1, "b")]) + node([(0, "up")], [value])
    yield (node([(1, "a"), (2, "opt")]) + node(attributes=[value]) +
           node(slots=[(1, "m", 3)]) + node(attributes=[value]))


out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
count = 0
for graph in object_graphs():
    count += 1
    with open(os.path.join(out_dir, "seed%04d" % count), "wb") as f:
        f.write(b"G" + graph)
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
            elif name.endswith(".meta") or name.endswith(".pb"):
                if os.path.getsize(path) > (1 << 20) or name == "fingerprint.pb":
                    continue
                mode = b"M" if name.endswith(".meta") else b"P" if name == "saved_model.pb" else b"D"
                try:
                    seeds = [mode + open(path, "rb").read()]
                    if mode == b"M":  # also imported and run ('R')
                        seeds.append(b"R" + seeds[0][1:])
                    if mode == b"P":  # also loaded with its functions and run ('F')
                        seeds.append(b"F" + seeds[0][1:])
                except OSError:
                    continue
            elif name.endswith(".h5") or name.endswith(".keras"):
                if os.path.getsize(path) > (1 << 20):
                    continue
                try:
                    raw = open(path, "rb").read()
                    seeds = [(b"H" if name.endswith(".h5") else b"K") + raw]
                    if name.endswith(".keras"):
                        with zipfile.ZipFile(path) as z:
                            seeds.append(b"J" + z.read("config.json"))
                except (OSError, KeyError, zipfile.BadZipFile):
                    pass
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
