// Peak memory of importing and running a big graph file (issue 27): how many
// times its size a .meta or a SavedModel costs eager. Each step runs in a
// forked child, whose peak resident set (getrusage) is its own; the growth
// over the child's start is printed with its ratio to the file's size.
//
//   build/benchmarks/graph_memory --make_chain 2000000 /tmp/chain.meta
//   build/benchmarks/graph_memory /tmp/chain.meta --fetch layer1999999/add
//   build/benchmarks/graph_memory export/1 --tags serve      # a SavedModel dir
//
// --make_chain N writes the worst case for the ratio: TF's smallest node
// records (x = Placeholder, then layer{i}/add = AddV2(previous, x), some 56
// bytes each), as a .meta, or as a SavedModel directory when the path does
// not end in ".meta". --fetch runs that node once after the import (feeding
// --feed, a scalar 1.0f, when given). The listing is the CLI's own:
// `/usr/bin/time -v build/saving/eager-ckpt meta FILE > /dev/null`.
// benchmarks/graph_memory_tf.py measures TensorFlow on the same file.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ops/session.h"
#include "runtime/graph.h"
#include "saving/saver/meta_graph_def.h"
#include "saving/saver/meta_graph_import_export.h"
#include "saving/saver/saved_model.h"
#include "saving/saver/saver.h"
#include "tests/saving/saver/chain_meta_graph.h"
#include "tests/testing/memory_measurement.h"

namespace {

// Runs `work` in a child; its peak RSS growth in KB, or -1 when it failed
// (the error printed).
long PeakGrowthKb(const std::function<void()>& work) {
  return eager::testing::ChildPeakGrowthKb(
      [&] {
        try {
          work();
        } catch (const std::exception& e) {
          std::cerr << "error: " << e.what() << "\n";
          throw;
        }
      },
      3600);
}

void MakeChain(int64_t n, const std::string& path) {
  const eager::MetaGraph meta = eager::testing::ChainMetaGraph(n);
  if (path.ends_with(".meta")) {
    eager::WriteMetaGraph(path, meta);
  } else {
    std::filesystem::create_directories(path);
    eager::WriteSavedModel(path + "/saved_model.pb", {meta});
  }
}

// Imports `path` (a .meta, else a SavedModel directory) and runs `fetch`.
void ImportAndRun(const std::string& path, const std::vector<std::string>& tags,
                  const std::string& fetch, const std::string& feed) {
  auto run = [&](eager::Graph& graph) {
    if (graph.num_nodes() < 1) throw eager::InvalidArgumentError(path + ": no nodes imported");
    if (fetch.empty()) return;
    eager::Session sess(graph);
    eager::Feeds feeds;
    if (!feed.empty()) feeds.emplace_back(feed + ":0", eager::Tensor(1.0f));
    sess.Run(std::vector<eager::Fetch>{fetch + ":0"}, feeds);
  };
  if (path.ends_with(".meta")) {
    eager::Graph graph;
    eager::Graph::AsDefault in(graph);
    eager::ImportMetaGraph(path);
    run(graph);
  } else {
    eager::SavedModelBundle bundle = eager::LoadSavedModel(path, tags);
    run(bundle.graph());
  }
}

int Main(int argc, char** argv) {
  CLI::App app{"Peak RSS of importing (and running) a graph file"};
  std::string path, fetch, feed;
  std::vector<std::string> tags = {"serve"};
  int64_t make_chain = 0;
  app.add_option("path", path, ".meta file or SavedModel directory")->required();
  app.add_option("--make_chain", make_chain, "write a chain of N AddV2 nodes to path first");
  app.add_option("--tags", tags, "the SavedModel's tag set");
  app.add_option("--fetch", fetch, "a node to run once after the import");
  app.add_option("--feed", feed, "a placeholder fed a scalar 1.0f");
  CLI11_PARSE(app, argc, argv);

  if (make_chain > 0) {
    // In a child too: memory the writer freed would stay resident here and
    // be reused by the measuring children without growing their peak.
    if (PeakGrowthKb([&] { MakeChain(make_chain, path); }) < 0) return 1;
    if (fetch.empty()) {
      fetch = "layer" + std::to_string(make_chain - 1) + "/add";
      feed = "x";
    }
  }
  const std::string file = path.ends_with(".meta") ? path : path + "/saved_model.pb";
  const double file_mb = static_cast<double>(std::filesystem::file_size(file)) / (1 << 20);
  std::printf("%s: %.1f MB\n", file.c_str(), file_mb);
  const auto report = [&](const char* step, long kb) {
    if (kb < 0) {
      std::printf("%-14s failed\n", step);
    } else {
      std::printf("%-14s %8.1f MB  %5.2fx the file\n", step, static_cast<double>(kb) / 1024,
                  static_cast<double>(kb) / 1024 / file_mb);
    }
  };
  report("import", PeakGrowthKb([&] { ImportAndRun(path, tags, "", ""); }));
  if (!fetch.empty()) {
    report("import + run", PeakGrowthKb([&] { ImportAndRun(path, tags, fetch, feed); }));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "graph_memory: " << e.what() << "\n";
    return 2;
  }
}
