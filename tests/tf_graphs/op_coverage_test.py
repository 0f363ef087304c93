"""Op coverage: which TF ops in real TF1 graphs eager cannot run yet.

  op_coverage_test.py driver=build/tests/tf_graphs/graph_run_driver realdata=DIR work=DIR

Reads every TF1 .meta file (and TF1 SavedModel saved_model.pb) under the
realdata folder with TF's own protos, counts each op type's nodes outside the
Saver's subgraph (eager restores from the SaverDef and never runs SaveV2 /
RestoreV2), and prints, most used first, the op types eager's Session does not
run (graph_run_driver --ops). It also graphs a TF1 classifier trained with
AdamOptimizer.minimize (sparse softmax cross entropy, reduce_mean, bias_add).

What it asserts: eager imports every one of those graphs (an op it lacks must
import and fail only when run), and at least 8 real TF1 graphs were found.
The list of missing ops is the report, not a failure.
"""

import collections
import os
import subprocess
import sys

from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

from tfgraph import Tally, driver_arg, tf, tf1

SAVER_OPS = {"SaveV2", "RestoreV2", "SaveSlices", "RestoreSlice", "Restore", "ShardedFilename",
             "MergeV2Checkpoints", "StringJoin"}


def real_graphs(realdata):
    """(label, path of a .meta to import, MetaGraphDef) of every real TF1 graph."""
    for root, _, files in sorted(os.walk(realdata)):
        for name in sorted(files):
            path = os.path.join(root, name)
            label = os.path.relpath(path, realdata)
            if name.endswith(".meta") and "legacy_v1" not in root:
                meta = meta_graph_pb2.MetaGraphDef()
                with open(path, "rb") as f:
                    meta.ParseFromString(f.read())
                yield label, path, meta
            elif name == "saved_model.pb":
                sm = saved_model_pb2.SavedModel()
                with open(path, "rb") as f:
                    sm.ParseFromString(f.read())
                for meta in sm.meta_graphs:
                    # TF2 SavedModels hold their computation in functions.
                    if not meta.graph_def.library.function and meta.saver_def.filename_tensor_name:
                        yield label, None, meta


def saver_scope(meta):
    name = meta.saver_def.filename_tensor_name
    return name.rsplit("/", 1)[0] + "/" if "/" in name else None


def classifier_meta(work):
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [None, 4], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        w = tf1.Variable(tf.zeros([4, 3]), name="W")
        b = tf1.Variable(tf.zeros([3]), name="b")
        logits = tf.nn.bias_add(tf.matmul(x, w), b)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=logits))
        tf1.train.AdamOptimizer(0.01).minimize(loss)
        path = os.path.join(work, "classifier.meta")
        tf1.train.export_meta_graph(path, saver_def=tf1.train.Saver().as_saver_def())
    meta = meta_graph_pb2.MetaGraphDef()
    with open(path, "rb") as f:
        meta.ParseFromString(f.read())
    return path, meta


def main():
    driver = driver_arg("driver")
    realdata = driver_arg("realdata")
    work = driver_arg("work")
    os.makedirs(work, exist_ok=True)
    eager_ops = set(subprocess.run([driver, "--ops"], check=True, capture_output=True,
                                   text=True).stdout.split())
    tally = Tally()
    if os.path.isdir(realdata):
        graphs = list(real_graphs(realdata))
        tally.check("real TF1 graphs found", None if len(graphs) >= 8 else f"only {len(graphs)}")
    else:
        # A checkout without ../shared/realdata (EAGER_REALDATA_DIR): TF's own
        # graph below is still judged; the real ones are skipped, and said so.
        print(f"SKIP real TF1 graphs: no realdata folder at {realdata} "
              "(configure with -DEAGER_REALDATA_DIR=DIR)")
        graphs = []
    path, meta = classifier_meta(work)
    graphs.append(("TF 2.21 tf.compat.v1 classifier + AdamOptimizer.minimize", path, meta))
    nodes = collections.Counter()
    files = collections.defaultdict(set)
    for label, path, meta in graphs:
        scope = saver_scope(meta)
        types = collections.Counter(n.op for n in meta.graph_def.node
                                    if not (scope and n.name.startswith(scope))
                                    and n.op not in SAVER_OPS)
        missing = sorted(t for t in types if t not in eager_ops)
        print(f"{label}: {sum(types.values())} nodes, {len(types)} op types; eager lacks "
              f"{len(missing)}: {' '.join(missing) or '-'}", flush=True)
        for t, n in types.items():
            nodes[t] += n
            files[t].add(label)
        if path is not None:
            proc = subprocess.run([driver, path, "-", "-", os.devnull,
                                   os.path.join(work, "import_check")], capture_output=True,
                                  text=True)
            tally.check(f"eager imports {label}",
                        None if proc.returncode == 0 else proc.stderr.strip())
    lacking = sorted((t for t in nodes if t not in eager_ops), key=lambda t: (-len(files[t]), t))
    print(f"\nop types in these {len(graphs)} graphs that eager's Session does not run "
          f"({len(lacking)} of {len(nodes)}), by number of graphs, then nodes:")
    for t in lacking:
        print(f"  {t:32s} {len(files[t]):3d} graphs {nodes[t]:6d} nodes")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
