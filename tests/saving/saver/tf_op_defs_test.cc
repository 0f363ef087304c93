#include "saving/saver/internal/tf_op_defs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tests/saving/saving_test_util.h"

namespace eager::internal {
namespace {

namespace fs = std::filesystem;
using ::eager::testing::RealdataDir;

// A readable rendering of an OpDef (allowed values optional), for comparing.
std::string Value(const std::optional<MetaAttrValue>& v) {
  if (!v) return "-";
  std::ostringstream out;
  std::visit(
      [&](const auto& x) {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, bool> || std::is_same_v<V, int64_t> ||
                      std::is_same_v<V, std::string>) {
          out << x;
        } else if constexpr (std::is_same_v<V, MetaType>) {
          out << "type " << x.tf_dtype;
        } else if constexpr (std::is_same_v<V, MetaShape>) {
          out << "shape rank " << (x.unknown_rank ? -1 : static_cast<int>(x.dims.size()));
        } else if constexpr (std::is_same_v<V, MetaListBox>) {
          out << "list";
          for (int t : x->type) out << " " << t;
          for (const auto& s : x->s) out << " " << s;
          for (int64_t i : x->i) out << " " << i;
        } else {
          out << "other";
        }
      },
      *v);
  return out.str();
}

std::string Render(const MetaOpDef& op, bool with_allowed) {
  std::ostringstream out;
  out << op.name << " stateful=" << op.is_stateful << " commutative=" << op.is_commutative
      << " aggregate=" << op.is_aggregate << " uninit=" << op.allows_uninitialized_input << "\n";
  auto args = [&](const char* kind, const std::vector<MetaArgDef>& list) {
    for (const MetaArgDef& a : list) {
      out << " " << kind << " " << a.name << " type=" << a.type << " attr=" << a.type_attr
          << " n=" << a.number_attr << " list=" << a.type_list_attr << " ref=" << a.is_ref << "\n";
    }
  };
  args("in", op.inputs);
  args("out", op.outputs);
  for (const MetaAttrDef& a : op.attrs) {
    out << " attr " << a.name << ": " << a.type << " default=" << Value(a.default_value);
    if (a.has_minimum) out << " min=" << a.minimum;
    if (with_allowed) out << " allowed=" << Value(a.allowed_values);
    out << "\n";
  }
  return out.str();
}

// {major, minor} of "1.14.0", "2.7.0", "1.12.0-rc0".
std::pair<int, int> Version(const std::string& v) {
  int major = 0, minor = 0;
  std::sscanf(v.c_str(), "%d.%d", &major, &minor);
  return {major, minor};
}

// The table's TopKV2 is TF 2.21's, whose k and indices are typed by attrs
// Tk and index_type (int32 by default); older TF (1.14) had them int32. In
// a file without Tk, `ours` becomes that older OpDef (which TF 2.21 reads
// through the defaults), so the rest still compares exactly.
void AsOlderTopKV2(MetaOpDef& ours, const MetaOpDef& file) {
  const auto has = [](const MetaOpDef& op, const char* attr) {
    return std::any_of(op.attrs.begin(), op.attrs.end(),
                       [&](const MetaAttrDef& a) { return a.name == attr; });
  };
  if (has(file, "Tk") || !has(ours, "Tk")) return;
  for (std::vector<MetaArgDef>* args : {&ours.inputs, &ours.outputs}) {
    for (MetaArgDef& a : *args) {
      if (a.type_attr == "Tk" || a.type_attr == "index_type") {
        a.type_attr.clear();
        a.type = 3;  // DT_INT32
      }
    }
  }
  std::erase_if(ours.attrs,
                [](const MetaAttrDef& a) { return a.name == "Tk" || a.name == "index_type"; });
}

// The table is TF 1.14's (AddV2: TF 2.7's, the first real file that has it):
// every OpDef equals the one in the real TF 1.14 .meta files exactly,
// allowed type lists included; in files of later versions all but those
// lists and the attributes with defaults TF added since (TF adds types and
// defaulted attributes over the versions: Equal's incompatible_shape_error).
TEST(TfOpDefsTest, MatchTheOpDefsInRealMetaFiles) {
  EAGER_SKIP_WITHOUT_REALDATA();
  int exact = 0;
  std::set<std::string> checked;
  for (const auto& e : fs::recursive_directory_iterator(RealdataDir())) {
    if (e.path().extension() != ".meta") continue;
    const MetaGraph meta = ReadMetaGraph(e.path().string());
    const auto version = Version(meta.tensorflow_version);
    if (version < std::pair{1, 14}) continue;
    for (const MetaOpDef& op : meta.stripped_op_list) {
      const MetaOpDef* ours = FindTfOpDef(op.name);
      if (ours == nullptr) continue;
      SCOPED_TRACE(e.path().string() + " (TF " + meta.tensorflow_version + ")");
      checked.insert(op.name);
      const bool reference = version == std::pair{1, 14} || op.name == "AddV2";
      MetaOpDef theirs = op;
      MetaOpDef mine = *ours;
      if (op.name == "TopKV2") AsOlderTopKV2(mine, op);
      if (op.name == "FusedBatchNorm" && version < std::pair{2, 2}) {
        // The table's is TF 2.x's, which added exponential_avg_factor
        // (default 1, what older graphs mean): without it, TF 1.14's.
        std::erase_if(mine.attrs,
                      [](const MetaAttrDef& a) { return a.name == "exponential_avg_factor"; });
      }
      if (!reference) {
        // An attribute with a default that only one side has came with
        // another TF version (TF 2.21's VarHandleOp has debug_name, TF
        // 2.7's not): both read the other's NodeDefs.
        const auto only_in = [](MetaOpDef& a, const MetaOpDef& b) {
          std::erase_if(a.attrs, [&](const MetaAttrDef& x) {
            return x.default_value &&
                   std::none_of(b.attrs.begin(), b.attrs.end(),
                                [&](const MetaAttrDef& y) { return y.name == x.name; });
          });
        };
        only_in(theirs, *ours);
        only_in(mine, op);
      }
      EXPECT_EQ(Render(mine, reference), Render(theirs, reference));
      exact += reference;
    }
  }
  EXPECT_GE(checked.size(), 25u);
  EXPECT_GE(exact, 25);
}

// Ops no TF >= 1.14 file here uses (Elu, Rsqrt, ApplyAdam, ...): TF 1.12's
// OpDefs, allowed type lists aside, equal ours.
TEST(TfOpDefsTest, OpsWithoutATf114FileMatchTf112Files) {
  EAGER_SKIP_WITHOUT_REALDATA();
  std::set<std::string> newer;  // op types with a TF >= 1.14 reference
  std::map<std::string, MetaOpDef> tf112;
  for (const auto& e : fs::recursive_directory_iterator(RealdataDir())) {
    if (e.path().extension() != ".meta") continue;
    const MetaGraph meta = ReadMetaGraph(e.path().string());
    const auto version = Version(meta.tensorflow_version);
    for (const MetaOpDef& op : meta.stripped_op_list) {
      if (version >= std::pair{1, 14}) newer.insert(op.name);
      if (version == std::pair{1, 12}) tf112[op.name] = op;
    }
  }
  std::set<std::string> checked;
  for (const auto& [name, op] : tf112) {
    const MetaOpDef* ours = FindTfOpDef(name);
    if (ours == nullptr || newer.contains(name)) continue;
    checked.insert(name);
    EXPECT_EQ(Render(*ours, false), Render(op, false));
  }
  for (const char* name : {"ApplyAdam", "Elu", "EluGrad", "Rsqrt", "RsqrtGrad",
                           "SparseSoftmaxCrossEntropyWithLogits", "SquaredDifference"}) {
    EXPECT_TRUE(checked.contains(name)) << name;
  }
}

TEST(TfOpDefsTest, StrippedOpListIsSortedAndKeepsUnknownTypesByName) {
  MetaGraphNodes nodes = {{.name = "b", .op = "VariableV2"},
                          {.name = "a", .op = "Frobnicate"},
                          {.name = "c", .op = "VariableV2"},
                          {.name = "d", .op = "Const"}};
  std::vector<std::string> names;
  for (const MetaOpDef& op : StrippedOpList(nodes)) names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Const", "Frobnicate", "VariableV2"}));
  EXPECT_EQ(FindTfOpDef("Frobnicate"), nullptr);
  EXPECT_TRUE(FindTfOpDef("VariableV2")->is_stateful);
}

}  // namespace
}  // namespace eager::internal
