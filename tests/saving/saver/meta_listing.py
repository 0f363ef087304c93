"""Prints what tfckpt.py (the independent decoder) reads from a .meta or
saved_model.pb, one line per fact, for meta_graph_def_test.cc to compare with
eager's ReadMetaGraph:

  G <tensorflow_version> <producer> <min_consumer>
  N <name>|<op>|<inputs,...>|<device>|<sorted attr keys,...>
  S <filename_tensor_name>|<save_tensor_name>|<restore_op_name>|<max_to_keep>|<version>
  C <collection name>|<kind>
"""
import json
import subprocess
import sys

tfckpt, path = sys.argv[1], sys.argv[2]
doc = json.loads(subprocess.run([sys.executable, tfckpt, "meta", "--json", path],
                                check=True, capture_output=True, text=True).stdout)
for mg in doc.get("meta_graphs", [doc]):
    v = mg.get("graph_versions") or {}
    print("G %s %d %d" % (mg.get("tensorflow_version") or "", v.get("producer", 0),
                          v.get("min_consumer", 0)))
    for n in mg["nodes"]:
        print("N %s|%s|%s|%s|%s" % (n["name"], n["op"], ",".join(n["input"]), n["device"],
                                    ",".join(sorted(n["attr_keys"]))))
    s = mg.get("saver_def")
    if s:
        print("S %s|%s|%s|%d|%d" % (s["filename_tensor_name"], s["save_tensor_name"],
                                    s["restore_op_name"], s["max_to_keep"], s["version"]))
    for name, kinds in sorted((mg.get("collections") or {}).items()):
        print("C %s|%s" % (name, kinds[0] if kinds else ""))
