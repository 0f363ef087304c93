#!/usr/bin/env bash
# Distributed checkpoints (issue 29), end to end with separate processes:
#   bash distributed_checkpoint_test.sh write-restore WORKDIR DRIVER TFCKPT MPIRUN...
#     3 ranks save one bundle (one data file per rank); it restores on 1, 2
#     and 3 ranks and in a plain process (no mpirun) with the ordinary
#     Checkpoint::Restore; tfckpt.py verify reads it as one bundle.
#   bash distributed_checkpoint_test.sh kill WORKDIR DRIVER RANKS KILLED MPIRUN...
#     RANKS ranks overwrite generation 1 with generation 2 (CheckpointManager,
#     max_to_keep 1: ckpt-2 written, the state file, then ckpt-1 deleted);
#     each rank of KILLED (comma-separated) in turn is SIGKILLed before its
#     1st, 2nd, ... file step until the save completes. After every kill the
#     directory's latest checkpoint restores whole, to generation 1 or 2, and
#     (every 4th kill) the next save succeeds and leaves no temporary file.
#     Each kill costs a whole mpirun job (~1.4 s here, four run at once): CI
#     kills every rank of 2 and the last of 3 (ranks but 0 run the same code).
# MPIRUN... is the launcher up to its rank-count flag: `mpiexec --oversubscribe -n`.
set -euo pipefail
mode=$1 work=$2 driver=$3
shift 3
rm -rf "$work"
mkdir -p "$work"

case "$mode" in
  write-restore)
    tfckpt=$1
    shift
    "$@" 3 "$driver" save "$work/d" 1
    ls "$work/d"
    for f in ckpt-1.index ckpt-1.data-00000-of-00003 ckpt-1.data-00001-of-00003 \
             ckpt-1.data-00002-of-00003 checkpoint; do
      [ -s "$work/d/$f" ] || { echo "FAIL: $f missing or empty"; exit 1; }
    done
    for ranks in 1 2 3; do "$@" "$ranks" "$driver" restore "$work/d" 1; done
    "$driver" restore "$work/d" 1   # no mpirun: one ordinary process
    # Saved again by 2 ranks: 2 files, and the manager deleted ckpt-1.
    "$@" 2 "$driver" save "$work/d" 2
    [ -s "$work/d/ckpt-2.data-00001-of-00002" ] && [ ! -e "$work/d/ckpt-1.index" ] ||
      { echo "FAIL: the 2-rank save's files"; ls "$work/d"; exit 1; }
    "$@" 3 "$driver" restore "$work/d" 2
    # Overwritten by 2 ranks: the new data in 3 files (the old index never
    # names a new file), the old layout's files gone.
    "$@" 2 "$driver" save "$work/d" 2
    [ -e "$work/d/ckpt-2.data-00002-of-00003" ] && [ ! -e "$work/d/ckpt-2.data-00000-of-00002" ] ||
      { echo "FAIL: the overwrite's files"; ls "$work/d"; exit 1; }
    "$driver" restore "$work/d" 2
    if [ -f "$tfckpt" ] && command -v python3 >/dev/null; then
      python3 "$tfckpt" verify "$work/d/ckpt-2"
    else
      echo "[ SKIPPED  ] tfckpt.py verify: $tfckpt or python3 missing"
    fi
    echo "write-restore: ok"
    ;;
  kill)
    ranks=$1 killed=${2//,/ }
    shift 2
    "$@" "$ranks" "$driver" save "$work/base" 1 >/dev/null
    # trial RANK STEP: a copy of base, the save killed there, then the checks;
    # its outcome in DIR.outcome: "killed", "completed" or "FAIL ...".
    trial() {
      local d=$work/r$1-s$2
      cp -r "$work/base" "$d"
      if "${launcher[@]}" "$ranks" "$driver" save "$d" 2 "$1" "$2" >"$d.log" 2>&1; then
        "$driver" check "$d" | grep -q "generation 2" && echo completed >"$d.outcome" ||
          echo "FAIL: the completed save did not leave generation 2" >"$d.outcome"
        return
      fi
      if ! "$driver" check "$d" >"$d.check" 2>&1; then
        echo "FAIL: $(cat "$d.check"; ls "$d")" >"$d.outcome"
        return
      fi
      if [ $(($2 % 4)) -eq 0 ]; then  # the next save cleans up and succeeds
        if ! "${launcher[@]}" "$ranks" "$driver" save "$d" 2 >/dev/null 2>&1 ||
           ! "$driver" check "$d" | grep -q "generation 2" || ls "$d" | grep -q tempstate; then
          echo "FAIL: the next save after the kill: $(ls "$d")" >"$d.outcome"
          return
        fi
      fi
      echo killed >"$d.outcome"
    }
    launcher=("$@")
    kills=0
    for rank in $killed; do
      done_at=0
      # Each trial is a whole mpirun job that mostly waits (~1.4 s when a rank
      # is killed): four at a time.
      for batch in $(seq 1 4 97); do
        for step in $(seq "$batch" $((batch + 3))); do trial "$rank" "$step" & done
        wait
        for step in $(seq "$batch" $((batch + 3))); do
          outcome=$(cat "$work/r$rank-s$step.outcome")
          case "$outcome" in
            killed) kills=$((kills + 1)) ;;
            completed) done_at=$step; break ;;
            *) echo "rank $rank killed before file step $step: $outcome"; exit 1 ;;
          esac
        done
        [ "$done_at" -eq 0 ] || break
      done
      echo "rank $rank: the save completed before file step $done_at"
      [ "$done_at" -gt 3 ] || { echo "FAIL: too few file steps on rank $rank"; exit 1; }
    done
    echo "kill: $kills kills on $ranks ranks, every one left a whole checkpoint"
    ;;
  *)
    echo "usage: see the top of $0" >&2
    exit 2
    ;;
esac
