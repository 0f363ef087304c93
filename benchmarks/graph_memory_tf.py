"""TensorFlow's peak memory importing the graph files graph_memory measures.

    /tmp/tfvenv/bin/python benchmarks/graph_memory_tf.py /tmp/chain.meta
    /tmp/tfvenv/bin/python benchmarks/graph_memory_tf.py export/1   # saved_model.pb

Each step runs in a fresh interpreter that has imported TensorFlow already;
the growth of its peak RSS over that start is TF's cost for the step:
tf.compat.v1.train.import_meta_graph for a .meta, the SavedModel's first
MetaGraphDef through import_graph_def for a directory (parsing the file's
protobuf included in both).
"""

import os
import subprocess
import sys

CHILD = r"""
import os, resource, sys
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE") // 1024

path = sys.argv[1]
start = rss_kb()
graph = tf.Graph()
with graph.as_default():
    if path.endswith(".meta"):
        tf.compat.v1.train.import_meta_graph(path)
    else:
        model = saved_model_pb2.SavedModel()
        with open(os.path.join(path, "saved_model.pb"), "rb") as f:
            model.ParseFromString(f.read())
        tf.compat.v1.import_graph_def(model.meta_graphs[0].graph_def, name="")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(graph.get_operations()), peak - start)
"""


def main():
    path = sys.argv[1]
    file = path if path.endswith(".meta") else os.path.join(path, "saved_model.pb")
    file_mb = os.path.getsize(file) / (1 << 20)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-c", CHILD, path], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    nodes, kb = int(out[-2]), int(out[-1])
    print(f"{file}: {file_mb:.1f} MB, {nodes} nodes")
    print(f"TF {__import__('importlib.metadata').metadata.version('tensorflow-cpu')} import "
          f"{kb / 1024:8.1f} MB  {kb / 1024 / file_mb:5.2f}x the file")


if __name__ == "__main__":
    main()
