#!/usr/bin/env bash
# Fails when a module includes a header of a layer it may not depend on
# (DESIGN.md: runtime <- ops <- autodiff; saving <- runtime only;
# distributed <- autodiff and saving, never the other way), when a
# saving/ subsystem includes one it may not (bundle <- checkpoint, saver,
# summary <- tools; checkpoint and saver never include each other), when a
# file includes another folder's internal/ header, or when a public header
# includes Eigen, LevelDB or protobuf.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
status=0

# check FOLDER ALLOWED...: every quoted include of a file under FOLDER names a
# header under one of the ALLOWED folders (paths from the repository root).
check() {
  local folder=$1; shift
  local allowed="$*"
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    [[ "$inc" != */* ]] && continue             # a same-folder or generated header
    local ok=0
    for prefix in $allowed; do
      if [[ "$inc" == "$prefix"/* ]]; then ok=1; break; fi
    done
    [ "$ok" -eq 1 ] && continue
    echo "layering: $file includes \"$inc\", but $folder may include only: $allowed"
    status=1
  done < <(grep -rHE '^\s*#include "' "$folder" --include='*.h' --include='*.cc' 2>/dev/null)
}

check runtime runtime
check ops runtime ops
check autodiff runtime ops autodiff
# saving/ by subsystem; saving/proto is the generated protobuf code all share.
check saving/bundle runtime saving/bundle saving/proto
check saving/checkpoint runtime saving/bundle saving/checkpoint saving/proto
check saving/saver runtime saving/bundle saving/saver saving/proto
check saving/summary runtime saving/bundle saving/summary saving/proto
check saving/tools runtime saving/bundle saving/checkpoint saving/saver saving/summary saving/keras saving/tools
# keras/ builds models from a .keras config, so it alone sees autodiff (and ops below it).
check saving/keras runtime ops autodiff saving/bundle saving/keras
# distributed/ (MPI) sits on top: nothing below includes it.
check distributed runtime ops autodiff saving distributed

# Every saving source belongs to a subsystem folder.
while IFS= read -r file; do
  echo "layering: $file is not in a saving/ subsystem folder (bundle, checkpoint, saver, summary, tools, keras)"
  status=1
done < <(find saving -maxdepth 1 \( -name '*.h' -o -name '*.cc' \) 2>/dev/null)

# internal/ is private to its folder (STYLE.md): "A/internal/x.h" may be
# included only by files under A/. Tests and benchmarks may include the
# internal headers of the library they test (checked below).
# Known exception, removed by the op-table rewrite (branch optable), which
# deletes ops/internal/graph_builder.h:
exceptions=" autodiff/graph_gradients.cc:ops/internal/graph_builder.h "
while IFS= read -r line; do
  file=${line%%:*}
  inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
  owner=${inc%%/internal/*}
  [[ "$file" == "$owner"/* ]] && continue
  [[ "$exceptions" == *" $file:$inc "* ]] && continue
  echo "layering: $file includes \"$inc\", which is private to $owner/ (internal/)"
  status=1
done < <(grep -rHE '^\s*#include "[^"]*/internal/' runtime ops autodiff saving distributed examples eager.h \
           --include='*.h' --include='*.cc' 2>/dev/null)

# Tests may include the internal headers of the library they test
# (tests/DIR tests the library DIR; tests/blas ops, tests/fuzz saving);
# benchmarks/ may include those of the code they measure.
while IFS= read -r line; do
  file=${line%%:*}
  inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
  dir=${file#tests/}
  dir=${dir%%/*}
  case "$dir" in
    blas) tested=ops ;;
    fuzz) tested=saving ;;
    *) tested=$dir ;;
  esac
  [[ "$inc" == "$tested"/* ]] && continue
  echo "layering: $file includes \"$inc\", private to a library tests/$dir does not test (internal/)"
  status=1
done < <(grep -rHE '^\s*#include "[^"]*/internal/' tests --include='*.h' --include='*.cc' 2>/dev/null)

# No third-party type in a public header (internal/ headers are private).
while IFS= read -r hit; do
  echo "layering: public header includes a private dependency: $hit"
  status=1
done < <(grep -rHE '#include [<"](Eigen|unsupported/Eigen|leveldb|google/protobuf|snappy|mpi\.h)' \
           runtime ops autodiff saving distributed --include='*.h' 2>/dev/null | grep -v '/internal/')

if [ "$status" -eq 0 ]; then echo "layering: ok"; fi
exit "$status"
