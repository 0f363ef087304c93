#!/usr/bin/env python3
"""Every system file the build reads comes from a package quickstart installs.

A green CI can hide a missing install step: CI runs on a machine where a
package installed by hand stays. This test finds what the build actually read
from the system and checks that .ci/quickstart would install it on a fresh
Debian 12 machine:

  - the headers every object was compiled against (`ninja -t deps`),
  - the libraries every link command names by path,
  - the files CMake's configure reads (`cmake --trace-expand`, json format,
    into a scratch build directory) and the files its cache found
    (CMakeCache.txt entries such as OpenCL_LIBRARY),

maps each file to its Debian package (`dpkg -S`) and fails, naming the
package and a file that needed it, for any package that is neither in
quickstart's `packages=(...)` list nor pulled in by one of them through
Depends/PreDepends (`apt-cache depends --recurse`, Recommends excluded: the
quickstart installs with --no-install-recommends) nor of priority required or
important (what every Debian install has: dpkg, apt, coreutils).

usage: package_deps_test.py SOURCE_DIR BUILD_DIR [--drop PKG ...]
  --drop PKG  check as if PKG were missing from quickstart's list (the test's
              own test: it must then fail naming PKG).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def quickstart_packages(source_dir):
    text = open(os.path.join(source_dir, ".ci", "quickstart")).read()
    m = re.search(r"^packages=\(([^)]*)\)", text, re.M)
    if not m:
        sys.exit("package_deps: no packages=(...) list in .ci/quickstart")
    return m.group(1).split()


def closure(packages):
    """The packages apt installs for `packages` without Recommends."""
    out = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
         "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + packages,
        capture_output=True, text=True, check=True).stdout
    names = set(packages)
    for line in out.splitlines():
        s = line.strip().lstrip("|")
        if not s:
            continue
        if ":" in s and s.split(":", 1)[0] in ("Depends", "PreDepends"):
            s = s.split(":", 1)[1].strip()
        elif ":" in s:
            continue  # another relation kind
        names.add(s.strip("<>").split(":")[0])
    return names


def base_system(package, _cache={}):
    """Priority required or important: on every Debian install (apt, dpkg, ...)."""
    if package not in _cache:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Priority}", package],
                             capture_output=True, text=True).stdout
        _cache[package] = out.strip() in ("required", "important")
    return _cache[package]


def under(path, roots):
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def system_file(path, own_roots):
    return (os.path.isabs(path) and not under(path, own_roots) and os.path.isfile(path)
            and not path.startswith(("/tmp/", "/proc/", "/dev/")))


def header_deps(build_dir, own_roots):
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], capture_output=True,
                         text=True, check=True).stdout
    files = set()
    for line in out.splitlines():
        if line.startswith("    "):
            p = os.path.normpath(os.path.join(build_dir, line.strip()))
            if system_file(p, own_roots):
                files.add(p)
    return files


def linked_libraries(build_dir, own_roots):
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "commands"], capture_output=True,
                         text=True, check=True).stdout
    files = set()
    for line in out.splitlines():
        if " -o " not in line or " -c " in line:
            continue  # a compile, not a link
        for tok in line.split():
            tok = tok.split("-Wl,")[-1]
            for part in tok.split(","):
                if re.search(r"\.(so(\.[0-9.]+)?|a)$", part) and system_file(part, own_roots):
                    files.add(part)
    return files


def configure_files(source_dir, build_dir, own_roots):
    """Files configure reads: the scripts it runs, and what its cache found."""
    files = set()
    cache = {}
    for line in open(os.path.join(build_dir, "CMakeCache.txt")):
        m = re.match(r"([A-Za-z0-9_.+-]+):[A-Z]+=(.*)$", line.strip())
        if m:
            cache[m.group(1)] = m.group(2)
    args = []
    for key in ("EAGER_TF_PYTHON", "EAGER_REALDATA_DIR", "CMAKE_BUILD_TYPE"):
        if key in cache:
            args.append(f"-D{key}={cache[key]}")
    with tempfile.TemporaryDirectory() as scratch:
        run = subprocess.run(["cmake", "-S", source_dir, "-B", scratch, "-G", "Ninja",
                              "--trace-expand", "--trace-format=json-v1"] + args,
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("package_deps: configure failed:\n" + run.stdout[-2000:] + run.stderr[-4000:])
        for line in run.stderr.splitlines():
            if not line.startswith("{"):
                continue
            try:
                f = json.loads(line).get("file")
            except ValueError:
                continue
            if f and system_file(f, own_roots):
                files.add(f)
        for line in open(os.path.join(scratch, "CMakeCache.txt")):
            m = re.match(r"[A-Za-z0-9_.+-]+:(FILEPATH|PATH|STRING|UNINITIALIZED)=(/.*)$",
                         line.strip())
            if m:
                for p in m.group(2).split(";"):
                    if system_file(p, own_roots):
                        files.add(p)
    return files


def packages_of(files):
    """file -> package, through dpkg -S (trying the path, then its real path)."""
    owner = {}
    files = sorted(files)

    def query(paths):
        found = {}
        for i in range(0, len(paths), 200):
            out = subprocess.run(["dpkg", "-S"] + paths[i:i + 200], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                pkgs, _, path = line.partition(": ")
                if path:
                    found[path] = [p.strip().split(":")[0] for p in pkgs.split(",")]
        return found

    direct = query(files)
    rest = [f for f in files if f not in direct]
    real = {f: os.path.realpath(f) for f in rest}
    alt = {}
    for f, r in real.items():
        alt[f] = [r, re.sub(r"^/usr/lib/", "/lib/", r), re.sub(r"^/lib/", "/usr/lib/", r)]
    second = query(sorted({p for v in alt.values() for p in v}))
    for f in files:
        if f in direct:
            owner[f] = direct[f]
        else:
            for p in alt[f]:
                if p in second:
                    owner[f] = second[p]
                    break
    return owner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source_dir")
    ap.add_argument("build_dir")
    ap.add_argument("--drop", action="append", default=[])
    a = ap.parse_args()
    source_dir = os.path.realpath(a.source_dir)
    build_dir = os.path.realpath(a.build_dir)
    own_roots = [source_dir, build_dir]

    listed = quickstart_packages(source_dir)
    for p in a.drop:
        if p not in listed:
            sys.exit(f"package_deps: --drop {p}: not in quickstart's list")
    listed = [p for p in listed if p not in a.drop]
    allowed = closure(listed)

    headers = header_deps(build_dir, own_roots)
    libs = linked_libraries(build_dir, own_roots)
    cmake_files = configure_files(source_dir, build_dir, own_roots)
    files = headers | libs | cmake_files
    owner = packages_of(files)
    print(f"package_deps: {len(headers)} system headers, {len(libs)} libraries linked, "
          f"{len(cmake_files)} files configure read; {len(listed)} packages listed, "
          f"{len(allowed)} with their dependencies")

    needed = {}
    unowned = []
    for f in sorted(files):
        pkgs = owner.get(f)
        if not pkgs:
            unowned.append(f)
            continue
        if not any(p in allowed or base_system(p) for p in pkgs):
            needed.setdefault(" or ".join(pkgs), []).append(f)
    for f in unowned:
        print(f"note: no Debian package owns {f} (a file made at install time)")
    if needed:
        for pkg, fs in sorted(needed.items()):
            more = f" (and {len(fs) - 1} more)" if len(fs) > 1 else ""
            print(f"MISSING {pkg}: {fs[0]}{more} is read by the build, and .ci/quickstart "
                  f"does not install {pkg}")
        return 1
    print("package_deps: every file the build reads comes from a package quickstart installs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
