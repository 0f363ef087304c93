#!/usr/bin/env python3
"""Checks the TensorBoard event file that `fashion_mnist --logdir DIR` wrote,
with a decoder written here from the formats (TFRecord framing, masked
CRC-32C, protobuf wire format), independent of eager's writer.

    check_event_file.py LOGDIR EPOCHS
"""
import glob
import os
import re
import socket
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(blob):
    at = 0
    while at < len(blob):
        header = blob[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", blob[at + 8:at + 12])
        assert length_crc == masked(header), f"length CRC at {at}"
        data = blob[at + 12:at + 12 + length]
        assert len(data) == length, f"truncated record at {at}"
        (data_crc,) = struct.unpack("<I", blob[at + 12 + length:at + 16 + length])
        assert data_crc == masked(data), f"data CRC at {at}"
        yield data
        at += 16 + length


def varint(m, at):
    v = shift = 0
    while True:
        b = m[at]
        at += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, at


def fields(m):
    at = 0
    while at < len(m):
        tag, at = varint(m, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            v, at = varint(m, at)
        elif wire == 1:
            v, at = m[at:at + 8], at + 8
        elif wire == 5:
            v, at = m[at:at + 4], at + 4
        elif wire == 2:
            n, at = varint(m, at)
            v, at = m[at:at + n], at + n
        else:
            raise AssertionError(f"wire type {wire}")
        yield number, wire, v


def main():
    logdir, epochs = sys.argv[1], int(sys.argv[2])
    files = glob.glob(os.path.join(logdir, "*tfevents*"))
    assert len(files) == 1, f"expected one event file in {logdir}, found {files}"
    name = os.path.basename(files[0])
    pattern = r"events\.out\.tfevents\.\d{10}\.(.+)\.(\d+)\.\d+"
    match = re.fullmatch(pattern, name)
    assert match and match.group(1) == socket.gethostname(), name
    with open(files[0], "rb") as f:
        blob = f.read()
    scalars = {}
    versions = []
    for record in records(blob):
        step = 0
        for number, wire, v in fields(record):
            if number == 2:
                step = v
            elif number == 3:
                versions.append(v.decode())
            elif number == 5:
                for _, _, value in fields(v):
                    tag, x = None, None
                    for n, w, vv in fields(value):
                        if n == 1:
                            tag = vv.decode()
                        elif n == 2 and w == 5:
                            (x,) = struct.unpack("<f", vv)
                    scalars.setdefault(tag, []).append((step, x))
    assert versions == ["brain.Event:2"], versions
    loss = scalars["loss"]
    steps = len(loss)
    assert [s for s, _ in loss] == list(range(1, steps + 1)), "loss steps 1..N"
    assert all(0 < x < 10 for _, x in loss), "loss values"
    assert sum(x for _, x in loss[-50:]) < sum(x for _, x in loss[:50]), "loss goes down"
    assert len(scalars["examples_per_second"]) == steps
    assert all(x > 0 for _, x in scalars["examples_per_second"])
    for tag in ("accuracy/raw", "accuracy/ema"):
        points = scalars[tag]
        assert len(points) == epochs, (tag, points)
        assert points[-1][0] == steps, (tag, points)
        assert all(0.5 < x <= 1 for _, x in points), (tag, points)
    print(f"event file ok: {name}: {steps} steps; final test accuracy "
          f"{scalars['accuracy/raw'][-1][1]:.4f} raw, {scalars['accuracy/ema'][-1][1]:.4f} EMA")


if __name__ == "__main__":
    main()
