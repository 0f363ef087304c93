#include "saving/saver/internal/closest_keys.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace eager::internal {
namespace {

std::vector<std::string_view> ScopeParts(std::string_view key) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t slash = key.find('/', start);
    parts.push_back(key.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

bool SameDTypeAndShape(const KeySpec& a, const KeySpec& b) {
  return a.dtype.has_value() && a.dtype == b.dtype && a.dims == b.dims;
}

// The order of the file comment, smaller is better.
using Rank = std::tuple<double, bool, int, std::string>;

Rank RankOf(const KeySpec& wanted, const KeySpec& candidate) {
  return {ScopeDistance(wanted.key, candidate.key), !SameDTypeAndShape(wanted, candidate),
          CharEditDistance(wanted.key, candidate.key), candidate.key};
}

std::vector<std::pair<Rank, const KeySpec*>> Ranked(const KeySpec& wanted,
                                                    const std::vector<KeySpec>& present,
                                                    const std::set<std::string>& taken) {
  std::vector<std::pair<Rank, const KeySpec*>> ranked;
  for (const KeySpec& p : present) {
    if (taken.count(p.key) != 0) continue;
    ranked.emplace_back(RankOf(wanted, p), &p);
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return ranked;
}

}  // namespace

int CharEditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

double ScopeDistance(std::string_view a, std::string_view b) {
  const std::vector<std::string_view> x = ScopeParts(a);
  const std::vector<std::string_view> y = ScopeParts(b);
  std::vector<double> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = static_cast<double>(j);
  for (size_t i = 1; i <= x.size(); ++i) {
    double diagonal = row[0];
    row[0] = static_cast<double>(i);
    for (size_t j = 1; j <= y.size(); ++j) {
      const double above = row[j];
      const size_t longer = std::max(x[i - 1].size(), y[j - 1].size());
      const double replace = longer == 0
                                 ? 0.0
                                 : static_cast<double>(CharEditDistance(x[i - 1], y[j - 1])) /
                                       static_cast<double>(longer);
      row[j] = std::min({row[j] + 1.0, row[j - 1] + 1.0, diagonal + replace});
      diagonal = above;
    }
  }
  return row[y.size()];
}

std::vector<KeyCandidate> ClosestKeys(const KeySpec& wanted, const std::vector<KeySpec>& present,
                                      const std::set<std::string>& taken, size_t limit) {
  std::vector<KeyCandidate> out;
  for (const auto& [rank, spec] : Ranked(wanted, present, taken)) {
    if (out.size() == limit) break;
    out.push_back({spec->key, std::get<0>(rank), !std::get<1>(rank)});
  }
  return out;
}

std::map<std::string, std::string> ProposeRenames(const std::vector<KeySpec>& missing,
                                                  const std::vector<KeySpec>& present,
                                                  const std::set<std::string>& taken) {
  // Candidates of equal dtype and shape per missing key, best first.
  struct Wish {
    const KeySpec* wanted;
    std::vector<std::pair<Rank, const KeySpec*>> candidates;
  };
  std::vector<Wish> wishes;
  for (const KeySpec& m : missing) {
    Wish wish{&m, Ranked(m, present, taken)};
    std::erase_if(wish.candidates, [&](const auto& c) { return std::get<1>(c.first); });
    if (!wish.candidates.empty()) wishes.push_back(std::move(wish));
  }
  std::stable_sort(wishes.begin(), wishes.end(), [](const Wish& a, const Wish& b) {
    return a.candidates.front().first < b.candidates.front().first;
  });
  std::map<std::string, std::string> renames;  // missing key -> present key
  std::set<std::string> used = taken;
  for (const Wish& wish : wishes) {
    for (const auto& [rank, spec] : wish.candidates) {
      if (used.insert(spec->key).second) {
        renames.emplace(wish.wanted->key, spec->key);
        break;
      }
    }
  }
  return renames;
}

}  // namespace eager::internal
