#!/usr/bin/env bash
# Fails when a C++ source or header is not formatted as .clang-format says
# (clang-format --dry-run -Werror), so style is a check, not a review comment.
# Fix with: clang-format -i FILE...
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
if ! command -v clang-format >/dev/null; then
  echo "format: clang-format not found (bash .ci/quickstart test installs it)" >&2
  exit 1
fi
mapfile -d '' files < <(find runtime ops autodiff saving distributed tests benchmarks examples \
  \( -name '*.h' -o -name '*.cc' \) -not -path '*/build*' -print0 | sort -z)
if [ ${#files[@]} -lt 50 ]; then
  echo "format: found only ${#files[@]} sources under $root; wrong root?" >&2
  exit 1
fi
if ! clang-format --dry-run -Werror "${files[@]}"; then
  echo "format: the files above differ from .clang-format; run clang-format -i on them" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted"
