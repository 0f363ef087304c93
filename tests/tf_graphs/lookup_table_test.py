"""Lookup tables in SavedModels written by TF 2.21, run by eager (issue 39).

  lookup_table_test.py driver=build/tests/tf_graphs/saved_model_tf2_driver work=DIR

(1) A TF1 SavedModel as TF Serving's classify exports make them: tables
(HashTableV2) initialized from constants by the legacy_init_op
(tables_initializer: InitializeTableV2), and a "serving_default" signature
that looks string keys up (LookupTableFindV2, with a default value) and
int64 keys the other way, and reports a table's size (LookupTableSizeV2).
eager's driver loads it with LoadSavedModel, runs the main op, then the
signature; every output must equal TF's own (tf1 loader + Session) bit for
bit. Without the init op, eager refuses as TF does ("Table not
initialized."). Tables shared by name (shared_name, container,
use_node_name_sharing) must be shared as TF shares them. (2) A TF 2 tf.Module holding a tf.lookup.StaticHashTable,
saved with tf.saved_model.save: eager's TF2 loader must give TF's outputs.
There the table's HashTableV2 is a node of the top-level graph, its
initializer a library function (LookupTableImportV2) that the
saved_model_main_op calls with the table's handle, and the lookup another
function the signature calls with it.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, read_bundle, tf, tf1, write_bundle

WORDS = ["cat", "dog", "emu", "gnu", "yak"]


def tf1_classify_model(export_dir, init=True):
    g = tf.Graph()
    with g.as_default():
        keys = tf1.placeholder(tf.string, [None], name="keys")
        codes = tf1.placeholder(tf.int64, [None], name="codes")
        ids = tf1.lookup.StaticHashTable(
            tf1.lookup.KeyValueTensorInitializer(WORDS, np.arange(5, dtype=np.int64) * 3 + 1),
            default_value=-1)
        names = tf1.lookup.StaticHashTable(
            tf1.lookup.KeyValueTensorInitializer(np.arange(5, dtype=np.int64) + 100, WORDS),
            default_value="UNK")
        scores = tf1.lookup.StaticHashTable(
            tf1.lookup.KeyValueTensorInitializer(np.array([100, 104], np.int64),
                                                 np.array([0.25, -1.5], np.float32)),
            default_value=0.0)
        # TF 2.21's initializers write LookupTableImportV2; TF 1.x's (and
        # older Serving exports) InitializeTableV2, made here by hand.
        old = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.string,
                                     shared_name="old_vocab")
        old_init = tf.raw_ops.InitializeTableV2(table_handle=old, keys=WORDS[:3],
                                                values=["C", "D", "E"])
        outputs = {"ids": ids.lookup(keys), "names": names.lookup(codes),
                   "scores": scores.lookup(codes), "size": ids.size(),
                   "old": tf.raw_ops.LookupTableFindV2(table_handle=old, keys=keys,
                                                       default_value="?")}
        signature = tf1.saved_model.signature_def_utils.predict_signature_def(
            inputs={"keys": keys, "codes": codes}, outputs=outputs)
        with tf1.Session(graph=g) as sess:
            builder = tf1.saved_model.Builder(export_dir)
            builder.add_meta_graph_and_variables(
                sess, [tf1.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": signature},
                legacy_init_op=tf.group(tf1.tables_initializer(), old_init,
                                        name="legacy_init_op") if init else None)
            builder.save()
    return {o.type for o in g.get_operations()}


def tf1_shared_tables_model(export_dir):
    """Tables shared by name, as TF's resource manager shares them: "alias"
    names the table "vocab" initializes; "other_vocab" (use_node_name_sharing,
    no shared_name) is the table "other" initializes; "boxed" has vocab's
    shared_name in another container, a table of its own."""
    g = tf.Graph()
    with g.as_default():
        keys = tf1.placeholder(tf.string, [None], name="keys")
        table = lambda name, **kw: tf.raw_ops.HashTableV2(key_dtype=tf.string,
                                                          value_dtype=tf.int64, name=name, **kw)
        vocab = table("vocab", shared_name="shared_vocab")
        alias = table("alias", shared_name="shared_vocab")
        other = table("other", shared_name="other_vocab")
        by_node = table("other_vocab", use_node_name_sharing=True)
        boxed = table("boxed", shared_name="shared_vocab", container="box")
        inits = [tf.raw_ops.InitializeTableV2(table_handle=t, keys=WORDS[:3], values=v)
                 for t, v in ((vocab, np.array([1, 2, 3], np.int64)),
                              (other, np.array([10, 20, 30], np.int64)),
                              (boxed, np.array([7, 7, 7], np.int64)))]
        find = lambda t: tf.raw_ops.LookupTableFindV2(table_handle=t, keys=keys,
                                                      default_value=np.int64(-1))
        outputs = {"alias": find(alias), "by_node": find(by_node), "boxed": find(boxed),
                   "alias_size": tf.raw_ops.LookupTableSizeV2(table_handle=alias)}
        signature = tf1.saved_model.signature_def_utils.predict_signature_def(
            inputs={"keys": keys}, outputs=outputs)
        with tf1.Session(graph=g) as sess:
            builder = tf1.saved_model.Builder(export_dir)
            builder.add_meta_graph_and_variables(
                sess, [tf1.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": signature},
                legacy_init_op=tf.group(*inits, name="legacy_init_op"))
            builder.save()


def tf1_outputs(export_dir, inputs):
    """The signature's outputs as TF computes them after its main op."""
    g = tf.Graph()
    with tf1.Session(graph=g) as sess:
        meta = tf1.saved_model.loader.load(sess, [tf1.saved_model.tag_constants.SERVING],
                                           export_dir)
        sig = meta.signature_def["serving_default"]
        feeds = {sig.inputs[k].name: v for k, v in inputs.items()}
        keys = sorted(sig.outputs)
        values = sess.run([sig.outputs[k].name for k in keys], feeds)
        return dict(zip(keys, values))


class Vocab(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(WORDS, np.arange(5, dtype=np.int64) * 3 + 1),
            default_value=-1)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="keys")])
    def __call__(self, keys):
        return {"ids": self.table.lookup(keys)}


def run_eager(driver, export_dir, inputs, work, name):
    feeds = os.path.join(work, name + ".feeds")
    out = os.path.join(work, name + ".out")
    write_bundle(feeds, inputs)
    proc = subprocess.run([driver, export_dir, "serving_default", feeds, out],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"driver failed ({proc.returncode}): {proc.stderr.strip()}")
    got = read_bundle(out)
    got.pop(".fused_nodes", None)  # the driver's count of fused graph nodes, not an output
    return got


def compare(tally, name, got, want):
    if ".error" in got:
        tally.check(name, "eager: " + got[".error"])
        return
    tally.check(f"{name} output keys", None if sorted(got) == sorted(want)
                else f"eager {sorted(got)}, TF {sorted(want)}")
    for key in sorted(want):
        if key in got:
            tally.check(f"{name} {key}", mismatch(key, got[key], want[key], 0))


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tally = Tally()

    tf1_dir = os.path.join(work, "tf1_classify")
    ops = tf1_classify_model(tf1_dir)
    want_ops = {"HashTableV2", "InitializeTableV2", "LookupTableImportV2", "LookupTableFindV2",
                "LookupTableSizeV2"}
    tally.check("TF writes the table ops", None if want_ops <= ops else f"the graph has {ops}")
    inputs = {"keys": np.array([b"emu", b"owl", b"cat", b"", b"yak"], dtype=object),
              "codes": np.array([104, 7, 100, 102], np.int64)}
    compare(tally, "TF1 classify", run_eager(driver, tf1_dir, inputs, work, "tf1"),
            tf1_outputs(tf1_dir, inputs))

    # No init op: TF's lookups refuse ("Table not initialized."), eager's too.
    bare_dir = os.path.join(work, "tf1_no_init")
    tf1_classify_model(bare_dir, init=False)
    try:
        tf1_outputs(bare_dir, inputs)
        tally.check("TF1 without init op", "TF ran it; the test expects a refusal")
    except tf.errors.FailedPreconditionError:
        got = run_eager(driver, bare_dir, inputs, work, "tf1_no_init")
        error = got.get(".error", "")
        tally.check("TF1 without init op", None if "Table not initialized." in error
                    else f"eager gave {got!r}")

    # Tables shared by shared_name / node name: eager's values must be TF's,
    # and TF's must show the sharing (alias finds vocab's entries).
    shared_dir = os.path.join(work, "tf1_shared")
    tf1_shared_tables_model(shared_dir)
    shared_inputs = {"keys": np.array([b"cat", b"emu", b"owl"], dtype=object)}
    want = tf1_outputs(shared_dir, shared_inputs)
    tally.check("TF shares tables by name",
                None if list(want["alias"]) == [1, 3, -1] and list(want["by_node"]) == [10, 30, -1]
                else f"TF gave {want}")
    compare(tally, "TF1 shared tables",
            run_eager(driver, shared_dir, shared_inputs, work, "tf1_shared"), want)

    tf2_dir = os.path.join(work, "tf2_vocab")
    tf.saved_model.save(Vocab(), tf2_dir)
    loaded = tf.saved_model.load(tf2_dir)
    keys = np.array([b"gnu", b"bat", b"cat", b"dog"], dtype=object)
    want = {k: v.numpy() for k, v in loaded.signatures["serving_default"](
        keys=tf.constant(keys)).items()}
    compare(tally, "TF2 StaticHashTable", run_eager(driver, tf2_dir, {"keys": keys}, work, "tf2"),
            want)
    sys.exit(tally.finish())


if __name__ == "__main__":
    main()
