#!/usr/bin/env python3
"""Fails unless every autodiff/ source compiles with -ffp-contract=off.

The optimizers and the EMA match TensorFlow's float32 rounding only without
fused multiply-adds; autodiff/CMakeLists.txt sets the flag on the target, and
this reads the build's compile_commands.json to prove each file gets it.
Usage: autodiff_flags_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import sys

build_dir, source_dir = sys.argv[1], os.path.realpath(sys.argv[2])
with open(os.path.join(build_dir, "compile_commands.json")) as f:
    commands = json.load(f)
autodiff = os.path.join(source_dir, "autodiff") + os.sep
checked, missing = 0, []
for entry in commands:
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    if not path.startswith(autodiff):
        continue
    checked += 1
    args = entry.get("command", " ".join(entry.get("arguments", [])))
    if "-ffp-contract=off" not in args.split():
        missing.append(path)
if checked == 0:
    sys.exit(f"no autodiff/ sources in {build_dir}/compile_commands.json")
if missing:
    sys.exit("compiled without -ffp-contract=off: " + ", ".join(missing))
print(f"autodiff flags: ok ({checked} files with -ffp-contract=off)")
