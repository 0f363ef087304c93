#!/usr/bin/env python3
"""Fails unless the sources whose rounding must be TensorFlow's compile
without fused multiply-adds, and unless ops/fp_contract_off.h refuses a file
compiled without them.

The optimizers, the EMA and ApplyAdam match TensorFlow's float32 rounding only
with -ffp-contract=off. CMakeLists.txt passes it together with the macro
EAGER_FP_CONTRACT_OFF (EAGER_FP_CONTRACT_OFF_OPTIONS), set on the whole
autodiff target and on ops/training_ops.cc; the files that rely on it include
ops/fp_contract_off.h, which #errors without the macro. This reads the build's
compile_commands.json to prove every autodiff file and every file given the
macro ends up with -ffp-contract=off (the last -ffp-contract option wins), and
compiles the header alone both ways to prove the refusal.
Usage: autodiff_flags_test.py BUILD_DIR SOURCE_DIR CXX_COMPILER
"""
import json
import os
import shlex
import subprocess
import sys

build_dir, source_dir, cxx = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
with open(os.path.join(build_dir, "compile_commands.json")) as f:
    commands = json.load(f)
autodiff = os.path.join(source_dir, "autodiff") + os.sep
checked, with_macro, problems = 0, [], []
for entry in commands:
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    args = entry.get("arguments") or shlex.split(entry["command"])
    contract = [a for a in args if a.startswith("-ffp-contract=")]
    has_macro = "-DEAGER_FP_CONTRACT_OFF" in args
    if has_macro:
        with_macro.append(os.path.relpath(path, source_dir))
    if not (path.startswith(autodiff) or has_macro):
        continue
    checked += 1
    if not contract or contract[-1] != "-ffp-contract=off":
        problems.append(f"{path}: last -ffp-contract option is {contract[-1] if contract else 'none'}")
    elif not has_macro:
        problems.append(f"{path}: -ffp-contract=off without -DEAGER_FP_CONTRACT_OFF")
if checked == 0:
    sys.exit(f"no autodiff/ sources in {build_dir}/compile_commands.json")
if "ops/training_ops.cc" not in with_macro:
    problems.append("ops/training_ops.cc (the graph's ApplyAdam) is not given the options")
if problems:
    sys.exit("fused multiply-adds allowed:\n  " + "\n  ".join(problems))


def compiles(extra):
    result = subprocess.run(
        [cxx, "-std=c++20", "-fsyntax-only", "-x", "c++", "-I", source_dir, *extra, "-"],
        input='#include "ops/fp_contract_off.h"\n', capture_output=True, text=True)
    return result.returncode == 0, result.stderr


ok, err = compiles([])
if ok or "-ffp-contract=off" not in err:
    sys.exit("ops/fp_contract_off.h compiled without -DEAGER_FP_CONTRACT_OFF:\n" + err)
ok, err = compiles(["-ffp-contract=off", "-DEAGER_FP_CONTRACT_OFF"])
if not ok:
    sys.exit("ops/fp_contract_off.h refused the options it asks for:\n" + err)
print(f"fp-contract: ok ({checked} files with -ffp-contract=off; the header refuses without it)")
