#pragma once

// The few pieces of JSON text eager-ckpt prints (--json): strings, numbers
// and dims, each in one place so that every sub-command escapes alike.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace eager::internal {

// Shortest text that reads back as the same double ("0.1", "200", "1e-05");
// "nan", "inf", "-inf" for the non-finite values.
std::string ShortestNumber(double v);
// The same for a float32 value: the shortest text that reads back as that
// float ("0.1", not 0.10000000149011612).
std::string ShortestNumber(float v);

// A JSON number; JSON has no NaN or Infinity, so those (and nullopt) are null.
std::string JsonNumber(std::optional<double> v);

// A JSON string literal: quotes, backslashes and control characters escaped,
// other bytes (UTF-8) passed through.
std::string JsonString(const std::string& s);

// A JSON array of strings.
std::string JsonStrings(const std::vector<std::string>& items);

// "[2,3]": a JSON array of the dims (also how eager prints a shape in text).
std::string JsonDims(std::span<const int64_t> dims);

}  // namespace eager::internal
