#include "saving/bundle/checkpoint_state.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "runtime/c_escape.h"
#include "runtime/errors.h"
#include "saving/bundle/directory_lock.h"
#include "saving/bundle/posix_file.h"

namespace eager {
namespace {

// A quoted string as Python's text_format (as_utf8=False) writes it.
void AppendQuoted(std::string& out, std::string_view s) {
  out += '"';
  out += CEscape(s);
  out += '"';
}

// Shortest text that reads back to the same double, as Python's repr():
// 1673735799.685766, 2.0, inf.
void AppendDouble(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  const std::string_view text(buf, static_cast<size_t>(end - buf));
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

class TextParser {
 public:
  TextParser(std::string_view text, const std::string& filename)
      : text_(text), filename_(filename) {}

  CheckpointState Parse() {
    CheckpointState state;
    for (SkipSpace(); pos_ < text_.size(); SkipSpace()) {
      const std::string field = Identifier();
      SkipSpace();
      Expect(':');
      if (field == "model_checkpoint_path") {
        state.model_checkpoint_path = String();
      } else if (field == "all_model_checkpoint_paths") {
        Values([&] { state.all_model_checkpoint_paths.push_back(String()); });
      } else if (field == "all_model_checkpoint_timestamps") {
        Values([&] { state.all_model_checkpoint_timestamps.push_back(Number()); });
      } else if (field == "last_preserved_timestamp") {
        state.last_preserved_timestamp = Number();
      } else {
        Fail(StrCat("unknown field '", field,
                    "' (CheckpointState has model_checkpoint_path, "
                    "all_model_checkpoint_paths, all_model_checkpoint_timestamps, "
                    "last_preserved_timestamp)"));
      }
      SkipSpace();
      if (pos_ < text_.size() && (text_[pos_] == ';' || text_[pos_] == ',')) ++pos_;
    }
    return state;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    int line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    throw DataLossError(
        StrCat("Cannot parse checkpoint state ", filename_, " at line ", line, ": ", what));
  }

  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  void Expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) Fail(StrCat("expected '", c, "'"));
    ++pos_;
  }

  std::string Identifier() {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (pos_ == start) Fail("expected a field name");
    return std::string(text_.substr(start, pos_ - start));
  }

  // A repeated field's value, or a [v1, v2, ...] list of them.
  template <typename F>
  void Values(F&& one) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '[') {
      ++pos_;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return;
      }
      for (;;) {
        one();
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        Expect(']');
        return;
      }
    }
    one();
  }

  // One or more adjacent quoted strings, concatenated.
  std::string String() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
      Fail("expected a quoted string");
    }
    std::string out;
    while (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
      AppendUnquoted(out);
      SkipSpace();
    }
    // Every string here is a file path, and no file name holds a NUL: an
    // escaped one would silently cut the path short at the OS boundary.
    if (out.find('\0') != std::string::npos) Fail("a path containing a NUL byte");
    return out;
  }

  // One quoted string at pos_ (its quote is ' or "), unescaped onto `out`.
  void AppendUnquoted(std::string& out) {
    const char quote = text_[pos_++];
    for (;;) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') Fail("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return;
      if (c == '\\') {
        AppendEscaped(out);
      } else {
        out += c;
      }
    }
  }

  // The escape after a backslash, as text_format's CUnescape: named
  // characters, \xHH (one or two hex digits) and \OOO (one to three octal).
  void AppendEscaped(std::string& out) {
    if (pos_ >= text_.size()) Fail("unterminated escape");
    const char e = text_[pos_++];
    switch (e) {
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'a':
        out += '\a';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'v':
        out += '\v';
        return;
      case '?':
      case '\\':
      case '\'':
      case '"':
        out += e;
        return;
      case 'x':
        out += static_cast<char>(HexEscapeValue());
        return;
      default:
        if (e < '0' || e > '7') Fail(StrCat("unknown escape '\\", e, "'"));
        out += static_cast<char>(OctalEscapeValue(e));
    }
  }

  // The one or two hex digits after "\x".
  int HexEscapeValue() {
    int value = 0;
    int digits = 0;
    while (digits < 2 && pos_ < text_.size() &&
           std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
      const char h = text_[pos_++];
      value = value * 16 + (std::isdigit(static_cast<unsigned char>(h))
                                ? h - '0'
                                : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
      ++digits;
    }
    if (digits == 0) Fail("\\x escape without hex digits");
    return value;
  }

  // An octal escape whose first digit `first` was just read: up to two more.
  int OctalEscapeValue(char first) {
    int value = first - '0';
    for (int i = 0; i < 2 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7'; ++i) {
      value = value * 8 + (text_[pos_++] - '0');
    }
    if (value > 255) Fail("octal escape above \\377");
    return value;
  }

  double Number() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
            text_[pos_] == '-' || text_[pos_] == '+')) {
      ++pos_;
    }
    std::string token(text_.substr(start, pos_ - start));
    bool negative = false;
    std::string_view body(token);
    if (body.starts_with('-')) {
      negative = true;
      body.remove_prefix(1);
    }
    std::string lower;
    for (char c : body) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.ends_with('f') && !lower.starts_with("inf")) lower.pop_back();  // 1.5f
    double value = 0;
    if (lower == "inf" || lower == "infinity") {
      value = INFINITY;
    } else if (lower == "nan") {
      value = NAN;
    } else {
      const auto [end, ec] = std::from_chars(lower.data(), lower.data() + lower.size(), value);
      if (ec != std::errc() || end != lower.data() + lower.size() || lower.empty()) {
        Fail(StrCat("expected a number, got '", token, "'"));
      }
    }
    return negative ? -value : value;
  }

  std::string_view text_;
  const std::string& filename_;
  size_t pos_ = 0;
};

std::string JoinPath(const std::string& dir, const std::string& path) {
  if (dir.empty() || path.starts_with('/')) return path;
  return dir.ends_with('/') ? dir + path : dir + "/" + path;
}

}  // namespace

std::string CheckpointStateToText(const CheckpointState& state) {
  std::string out;
  if (!state.model_checkpoint_path.empty()) {
    out += "model_checkpoint_path: ";
    AppendQuoted(out, state.model_checkpoint_path);
    out += '\n';
  }
  for (const std::string& path : state.all_model_checkpoint_paths) {
    out += "all_model_checkpoint_paths: ";
    AppendQuoted(out, path);
    out += '\n';
  }
  for (double t : state.all_model_checkpoint_timestamps) {
    out += "all_model_checkpoint_timestamps: ";
    AppendDouble(out, t);
    out += '\n';
  }
  // proto3 omits a zero double, as TF's printer does.
  if (state.last_preserved_timestamp && *state.last_preserved_timestamp != 0.0) {
    out += "last_preserved_timestamp: ";
    AppendDouble(out, *state.last_preserved_timestamp);
    out += '\n';
  }
  return out;
}

CheckpointState ParseCheckpointStateText(const std::string& text, const std::string& filename) {
  return TextParser(text, filename).Parse();
}

std::optional<CheckpointState> ReadCheckpointState(const std::string& dir,
                                                   const std::string& filename) {
  const std::string path = JoinPath(dir, filename);
  if (!internal::FileExists(path)) return std::nullopt;
  // A state file lists paths, ~100 bytes per checkpoint kept: 16 MiB is far
  // beyond any real one, and bounds what a hostile one can make us allocate.
  constexpr uint64_t kMaxStateFileSize = 16 << 20;
  return ParseCheckpointStateText(internal::ReadFileToString(path, kMaxStateFileSize), path);
}

void WriteCheckpointState(const std::string& dir, const CheckpointState& state,
                          const std::string& filename) {
  const std::string path = JoinPath(dir, filename);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx",
                static_cast<unsigned long long>(internal::RandomUint64()),
                static_cast<unsigned long long>(internal::RandomUint64()));
  const std::string temp = path + ".tmp" + hex;
  const std::string text = CheckpointStateToText(state);
  const internal::DirectoryLock lock(dir.empty() ? "." : dir);
  try {
    auto file = internal::WritableFile::Create(temp, text.size() + 1);
    file->Append(text.data(), text.size());
    file->Sync();
    file->Close();
    internal::RenameFile(temp, path);
    internal::SyncDirectory(dir.empty() ? "." : dir);
  } catch (...) {
    internal::RemoveFileNoThrow(temp);
    throw;
  }
}

std::optional<std::string> LatestCheckpoint(const std::string& dir, const std::string& filename) {
  const std::optional<CheckpointState> state = ReadCheckpointState(dir, filename);
  if (!state) return std::nullopt;
  if (state->model_checkpoint_path.empty()) {
    throw DataLossError(StrCat("Invalid checkpoint state loaded from ", JoinPath(dir, filename),
                               ": model_checkpoint_path is empty"));
  }
  const std::string prefix = JoinPath(dir, state->model_checkpoint_path);
  if (internal::FileExists(prefix + ".index")) return prefix;
  // A V1 checkpoint is the prefix itself; readers will reject it clearly.
  std::error_code ec;
  if (std::filesystem::is_regular_file(prefix, ec)) return prefix;
  return std::nullopt;
}

}  // namespace eager
