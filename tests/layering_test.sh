#!/usr/bin/env bash
# Fails when a module includes a header of a layer it may not depend on
# (DESIGN.md: runtime <- ops <- autodiff; saving <- runtime only), or when a
# public header includes Eigen, LevelDB or protobuf.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
status=0

check() {  # check MODULE ALLOWED...: every quoted include of MODULE names an allowed module
  local module=$1; shift
  local allowed="$*"
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    top=${inc%%/*}
    [[ "$inc" != */* ]] && continue             # a same-folder or generated header
    case " $allowed " in *" $top "*) continue ;; esac
    echo "layering: $file includes \"$inc\", but $module may include only: $allowed"
    status=1
  done < <(grep -rHE '^\s*#include "' "$module" --include='*.h' --include='*.cc' 2>/dev/null)
}

check runtime runtime
check ops runtime ops
check autodiff runtime ops autodiff
check saving runtime saving

# No third-party type in a public header (internal/ headers are private).
while IFS= read -r hit; do
  echo "layering: public header includes a private dependency: $hit"
  status=1
done < <(grep -rHE '#include [<"](Eigen|unsupported/Eigen|leveldb|google/protobuf|snappy)' \
           runtime ops autodiff saving --include='*.h' 2>/dev/null | grep -v '/internal/')

if [ "$status" -eq 0 ]; then echo "layering: ok"; fi
exit "$status"
