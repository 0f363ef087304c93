#!/usr/bin/env bash
# eager-ckpt end to end: state, diff, stats, graph, meta and convert on every case of the realdata
# folder and on what eager writes; exit codes as --help documents them;
# errors on stderr only.
#   eager_ckpt_test.sh EAGER_CKPT QUICKSTART REALDATA_DIR WORK_DIR [SAVE_RESTORE]
set -u
ckpt=$1 quickstart=$2 realdata=$3 work=$4 save_restore=${5:-}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE CMD...: runs CMD, keeps stdout in $out and stderr in $err.
expect() {
  local want=$1; shift
  out=$("$@" 2>"$work/stderr"); local got=$?
  err=$(cat "$work/stderr")
  [ "$got" -eq "$want" ] || fail "exit $got, expected $want: $* (stderr: $err)"
}
json_count=0
json_ok() {  # kept, and checked to be one JSON document each by one python3 run at the end
  json_count=$((json_count + 1))
  printf '%s' "$out" >"$work/json/$json_count.json"
}

rm -rf "$work" && mkdir -p "$work/json"

# --help documents the exit codes; usage errors are 2.
expect 0 "$ckpt" --help
grep -q "Exit codes: 0 success" <<<"$out" || fail "--help lacks the exit codes"
expect 2 "$ckpt" diff only-one-path
expect 2 "$ckpt" no-such-command

# What eager writes: two checkpoints that differ in one tensor.
expect 0 "$quickstart" "$work/a"
expect 0 "$quickstart" "$work/b"
expect 0 "$ckpt" state "$work/a"
grep -q '^\* model.ckpt  ok  1 shard' <<<"$out" || fail "state of our checkpoint: $out"
expect 0 "$ckpt" diff "$work/a" "$work/b"   # deterministic: same values
grep -q '0 added, 0 removed, 0 changed, 3 same' <<<"$out" || fail "diff a b: $out"
expect 0 "$ckpt" stats "$work/a" --json; json_ok stats --json
grep -q '"key":"v/ExponentialMovingAverage","dtype":"float32","shape":\[\],"elements":1,"min":0.10989987' <<<"$out" \
  || fail "stats of the EMA shadow: $out"

# list and dump as JSON.
expect 0 "$ckpt" list "$work/a" --json; json_ok list --json
grep -q '{"key":"v/ExponentialMovingAverage","dtype":"float32","shape":\[\],"bytes":4,"slices":0}' <<<"$out" \
  || fail "list --json: $out"
expect 0 "$ckpt" dump "$work/a" v/ExponentialMovingAverage --json; json_ok dump --json
grep -q '^{"key":"v/ExponentialMovingAverage","dtype":"float32","shape":\[\],"elements":1,"values":\[0.10989987' <<<"$out" \
  || fail "dump --json: $out"

# meta on the .meta our graph-mode Saver writes (examples/save_restore).
if [ -n "$save_restore" ]; then
  expect 0 "$save_restore" "$work/graph"
  expect 0 "$ckpt" meta "$work/graph/model.ckpt"
  grep -q '^saver: version V2, filename save/Const:0, save save/control_dependency:0, restore save/restore_all' <<<"$out" \
    || fail "meta of our .meta: saver: $out"
  grep -q '^variable v1:0  initializer v1/Assign  snapshot v1/read:0  trainable$' <<<"$out" || fail "meta variable: $out"
  grep -q '^add  AddV2  <- v1/read, v2/read' <<<"$out" || fail "meta node add: $out"
  expect 0 "$ckpt" meta "$work/graph/model.ckpt.meta" --json; json_ok meta ours
fi

# Errors: on stderr, exit 1, nothing on stdout.
expect 1 "$ckpt" stats "$work/no/such/prefix"
[ -z "$out" ] || fail "stdout on error: $out"
grep -q "eager-ckpt: NotFound error: No checkpoint at $work/no/such/prefix" <<<"$err" || fail "stderr: $err"
expect 1 "$ckpt" state "$work"
grep -q "No \`checkpoint\` state file in $work" <<<"$err" || fail "state without a checkpoint file: $err"

if [ ! -d "$realdata" ]; then
  echo "realdata not found at $realdata: only eager's own checkpoints were checked"
else
  # state: every checkpoint directory.
  n=0
  while IFS= read -r f; do
    dir=$(dirname "$f")
    expect 0 "$ckpt" state "$dir"
    grep -q "present, .* missing or damaged" <<<"$out" || fail "state $dir: $out"
    n=$((n + 1))
  done < <(find "$realdata" -name checkpoint -type f | sort)
  [ "$n" -ge 10 ] || fail "only $n checkpoint directories found"
  expect 0 "$ckpt" state "$realdata/tf1_estimator_linear_ftrl_tf27"
  grep -q '^\* model.ckpt-400  missing' <<<"$out" || fail "ftrl ckpt-400 should be missing: $out"
  expect 0 "$ckpt" state "$realdata/tf1_saver_ssd_mobilenet_v2_index_only"
  grep -q '^\* model.ckpt  incomplete  1 shard' <<<"$out" || fail "ssd should be incomplete: $out"
  expect 0 "$ckpt" state "$realdata/tf1_saver_mnist_mlp_ema"
  grep -q 'found as .*/tf1_saver_mnist_mlp_ema/model.ckpt-29001' <<<"$out" || fail "mnist ema: $out"

  # stats, diff (with itself) and graph: every bundle.
  n=0 objects=0
  while IFS= read -r idx; do
    prefix=${idx%.index}
    expect 0 "$ckpt" stats "$prefix" --json; json_ok stats "$prefix"
    expect 0 "$ckpt" diff "$prefix" "$prefix"
    grep -q '0 added, 0 removed, 0 changed' <<<"$out" || fail "diff $prefix with itself: $out"
    # graph: object-based checkpoints have one; name-based ones are told apart clearly.
    if "$ckpt" list "$prefix" | grep -q '^_CHECKPOINTABLE_OBJECT_GRAPH '; then
      expect 0 "$ckpt" graph "$prefix"
      grep -q '^(root)  #0$' <<<"$out" || fail "graph $prefix: $out"
      objects=$((objects + 1))
    else
      expect 1 "$ckpt" graph "$prefix"
      grep -q "has no _CHECKPOINTABLE_OBJECT_GRAPH: it is name-based" <<<"$err" || fail "graph $prefix: $err"
    fi
    n=$((n + 1))
  done < <(find "$realdata" -name '*.index' -type f | sort)
  [ "$n" -ge 25 ] || fail "only $n bundles found"
  [ "$objects" -ge 9 ] || fail "only $objects object-based bundles found"
  # TF's pretty paths, links to nodes seen before, slot variables.
  expect 0 "$ckpt" graph "$realdata/tf2_checkpoint_manager_tictactoe/tf_ckpts"
  grep -q '^    layer-0 -> (root).net.layer_with_weights-0  #5$' <<<"$out" || fail "graph link: $out"
  grep -q '^        .VARIABLE_VALUE = net/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE  float32\[9,9\]  (dense/kernel)$' <<<"$out" \
    || fail "graph attribute: $out"
  expect 0 "$ckpt" graph "$realdata/tf2_keras_sharded2_iris/model.ckpt"
  grep -q "^  (root).optimizer's state 'm' for (root).layer-2.kernel  #16$" <<<"$out" || fail "graph slot: $out"
  grep -q '^    .VARIABLE_VALUE = layer-2/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE  float32\[128,3\]' <<<"$out" \
    || fail "graph slot attribute: $out"
  expect 0 "$ckpt" graph "$realdata/tf2_keras_sharded2_iris/model.ckpt" --json; json_ok graph --json

  # Real differences: CheckpointManager's ckpt-17 and ckpt-19 (save_counter 17 -> 19).
  t=$realdata/tf2_checkpoint_manager_tictactoe/tf_ckpts
  expect 3 "$ckpt" diff "$t/ckpt-17" "$t/ckpt-19"
  grep -q '^~ save_counter/.ATTRIBUTES/VARIABLE_VALUE  int64\[\]  max_abs_diff 2  1 elements differ' <<<"$out" \
    || fail "diff ckpt-17 ckpt-19: $out"
  grep -q '0 added, 0 removed, 14 changed, 5 same' <<<"$out" || fail "diff counts: $out"
  expect 3 "$ckpt" diff "$t/ckpt-17" "$t/ckpt-19" --json; json_ok diff --json
  expect 0 "$ckpt" state "$t" --json; json_ok state --json
  expect 0 "$ckpt" stats "$t"
  grep -q '^save_counter/.ATTRIBUTES/VARIABLE_VALUE  int64  \[\]  19  19  19  0  0' <<<"$out" \
    || fail "stats of the latest tictactoe checkpoint: $out"
  # Different models: added and removed keys.
  expect 3 "$ckpt" diff "$realdata/tf1_saver_scopes_tiny/model.ckpt" "$realdata/tf1_saver_udacity_mlp/model.ckpt"
  grep -q '^- foo/bar/v  float32\[1\]' <<<"$out" || fail "removed key: $out"
  grep -q '^+ Variable_3  float32' <<<"$out" || fail "added key: $out"
  # Index only: stats says why values are not read, still exit 0.
  expect 0 "$ckpt" stats "$realdata/tf1_saver_ssd_mobilenet_v2_index_only/model.ckpt"
  grep -q 'global_step  int64  \[\]  (not read: data file .* is missing)' <<<"$out" || fail "ssd stats: $out"
  # meta: every .meta and saved_model.pb; node counts and stripped op lists
  # as the independent tfckpt.py reads them.
  tfckpt=$realdata/../tools/tfckpt.py
  n=0
  while IFS= read -r f; do
    expect 0 "$ckpt" meta "$f"
    if [ -f "$tfckpt" ]; then
      theirs=$(python3 "$tfckpt" meta "$f" 2>/dev/null | sed -n 's/^# graph_def: \([0-9]*\) nodes.*/\1/p' | head -1)
      ours=$(sed -n 's/^graph: \([0-9]*\) nodes.*/\1/p' <<<"$out" | head -1)
      [ -n "$theirs" ] && [ "$ours" = "$theirs" ] || fail "meta $f: $ours nodes, tfckpt.py says $theirs"
      theirs=$(python3 "$tfckpt" meta "$f" 2>/dev/null | sed -n 's/^# stripped_op_list: //p' | head -1)
      ours=$(sed -n 's/^stripped_op_list ([0-9]*): //p' <<<"$out" | head -1)
      [ "$ours" = "$theirs" ] || fail "meta $f: stripped_op_list '$ours', tfckpt.py says '$theirs'"
    fi
    n=$((n + 1))
  done < <(find "$realdata" \( -name '*.meta' -o -name saved_model.pb \) -type f | sort)
  [ "$n" -ge 14 ] || fail "only $n meta graphs found"
  expect 0 "$ckpt" meta "$realdata/tf1_saver_scopes_tiny/model.ckpt"   # a prefix: PREFIX.meta
  grep -q '^saver: version V2, filename save/Const:0, save save/control_dependency:0, restore save/restore_all, max_to_keep 5' <<<"$out" \
    || fail "meta saver: $out"
  grep -q '^variable v1_1:0  initializer v1_1/Assign  snapshot v1_1/read:0  trainable$' <<<"$out" || fail "meta variable: $out"
  grep -q '^v1_1/Assign  Assign  <- v1_1, Const  {T=DT_FLOAT .*validate_shape=true}$' <<<"$out" \
    || fail "meta node: $out"
  expect 0 "$ckpt" meta "$realdata/savedmodel_tf1_counter/00000123/saved_model.pb" --json; json_ok meta --json
  grep -q '"tags":\["serve"\]' <<<"$out" || fail "meta saved_model tags: $out"
  grep -q '"incr_counter_by":{"method_name":"tensorflow/serving/predict","inputs":{"delta":{"name":"delta:0","dtype":"DT_FLOAT","shape":"<unknown rank>"}}' <<<"$out" \
    || fail "meta saved_model signature (json): $out"
  # A SavedModel's signatures, as saved_model_cli lists them (TF Serving's half_plus_two).
  expect 0 "$ckpt" meta "$realdata/savedmodel_tf1_half_plus_two/00000123/saved_model.pb"
  grep -q '^signature serving_default (tensorflow/serving/predict)$' <<<"$out" || fail "meta signature: $out"
  grep -q '^  input x: x:0 DT_FLOAT \[?,1\]$' <<<"$out" || fail "meta signature input: $out"
  grep -q '^  output y: y:0 DT_FLOAT \[?,1\]$' <<<"$out" || fail "meta signature output: $out"
  grep -q '^  input inputs: tf_example:0 DT_STRING <unknown rank>$' <<<"$out" || fail "meta signature string input: $out"
  expect 1 "$ckpt" meta "$realdata/tf1_saver_scopes_tiny/model.ckpt.index"
  grep -q "eager-ckpt: DataLoss error: .*model.ckpt.index" <<<"$err" || fail "meta of an .index: $err"
  expect 1 "$ckpt" meta "$work/no/such.meta"
  grep -q "eager-ckpt: NotFound error: No meta graph at $work/no/such.meta" <<<"$err" || fail "meta missing: $err"

  # convert: object -> name on real Keras files (each variable under its
  # full_name, the same values), name -> object with a mapping file.
  c=$work/convert && mkdir -p "$c"
  expect 0 "$ckpt" convert "$realdata/tf2_keras_sharded2_iris/model.ckpt" "$c/iris"
  grep -q '^sequential/dense_1/kernel <- layer-2/kernel/.ATTRIBUTES/VARIABLE_VALUE  (full_name)$' <<<"$out" \
    || fail "convert iris: $out"
  expect 0 "$ckpt" verify "$c/iris"
  a=$("$ckpt" dump "$realdata/tf2_keras_sharded2_iris/model.ckpt" layer-2/kernel/.ATTRIBUTES/VARIABLE_VALUE --limit 0 | cut -d: -f2-)
  b=$("$ckpt" dump "$c/iris" sequential/dense_1/kernel --limit 0 | cut -d: -f2-)
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "converted values differ"
  printf 'v model/v\nv1_1 model/v1\nfoo/bar/v model/foo/bar/v\n' >"$c/map.txt"
  expect 0 "$ckpt" convert "$realdata/tf1_saver_scopes_tiny/model.ckpt" "$c/scopes" --mapping "$c/map.txt" --dry-run
  grep -q '^model/v1/.ATTRIBUTES/VARIABLE_VALUE <- v1_1  (mapping)$' <<<"$out" || fail "convert dry run: $out"
  grep -q '^unused: foo1/v$' <<<"$out" || fail "convert unused: $out"
  [ ! -e "$c/scopes.index" ] || fail "--dry-run wrote $c/scopes.index"
  expect 0 "$ckpt" convert "$realdata/tf1_saver_scopes_tiny/model.ckpt" "$c/scopes" --mapping "$c/map.txt"
  expect 0 "$ckpt" graph "$c/scopes"
  grep -q '^          .VARIABLE_VALUE = model/foo/bar/v/.ATTRIBUTES/VARIABLE_VALUE  float32\[1\]  (foo/bar/v)$' <<<"$out" \
    || fail "graph of the converted checkpoint: $out"
  if [ -f "$tfckpt" ]; then
    python3 "$tfckpt" verify "$c/iris" >/dev/null 2>&1 || fail "tfckpt.py verify $c/iris"
    python3 "$tfckpt" verify "$c/scopes" >/dev/null 2>&1 || fail "tfckpt.py verify $c/scopes"
  fi
  expect 1 "$ckpt" convert "$realdata/tf1_saver_scopes_tiny/model.ckpt" "$c/none"
  grep -q 'is name-based: converting it to object-based needs a template' <<<"$err" || fail "convert without mapping: $err"
  expect 2 "$ckpt" convert "$realdata/tf1_saver_scopes_tiny/model.ckpt"

  # The legacy V1 negative case is rejected clearly.
  expect 1 "$ckpt" stats "$realdata/legacy_v1_session_bundle_half_plus_two/00000123/export-00000-of-00001"
  grep -q 'legacy V1' <<<"$err" || fail "legacy V1: $err"
fi

if command -v python3 >/dev/null; then
  python3 - "$work/json" <<'PY' || fail "JSON output that does not parse"
import json, pathlib, sys
bad = 0
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    try:
        json.loads(f.read_text())
    except ValueError as e:
        print(f"not JSON ({e}): {f}")
        bad += 1
sys.exit(1 if bad else 0)
PY
else
  echo "python3 not found: the JSON outputs were not parsed"
fi

if [ "$failures" -eq 0 ]; then echo "eager-ckpt: all checks passed"; exit 0; fi
echo "$failures failures"; exit 1
