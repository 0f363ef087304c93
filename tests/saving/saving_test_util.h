#pragma once

// Helpers shared by the saving tests: scratch directories, whole-file I/O,
// the realdata location, the independent tfckpt.py verifier, and who holds a
// variable's value.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/tensor_access.h"
#include "runtime/variable.h"

namespace eager::testing {

// How many hold `variable`'s buffer besides the variable itself (a save, an
// optimizer step's operand).
inline long OtherHolders(const Variable& variable) {
  const Tensor value = variable.value();
  return internal::BufferOf(value).use_count() - 2;  // the variable and `value`
}

inline std::string RealdataDir() { return EAGER_REALDATA_DIR; }
inline bool HasRealdata() { return std::filesystem::is_directory(RealdataDir()); }

#define EAGER_SKIP_WITHOUT_REALDATA()                                                    \
  if (!::eager::testing::HasRealdata())                                                  \
  GTEST_SKIP() << "TensorFlow realdata not found at " << ::eager::testing::RealdataDir() \
               << "; configure with -DEAGER_REALDATA_DIR=..."

// A fresh, empty directory for the running test.
inline std::string TempDir() {
  const char* base = std::getenv("EAGER_TEST_TMPDIR");
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(base ? base : "/tmp") /
                              (std::string("saving_") + info->test_suite_name() + "_" +
                               info->name() + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Bytes as lower-case hex pairs separated by spaces: "00 7f ff".
inline std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// Sorted file names in `dir`.
inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline bool HaveTfckpt() {
  return std::filesystem::exists(EAGER_TFCKPT) &&
         std::system("python3 --version >/dev/null 2>&1") == 0;
}

#define EAGER_SKIP_WITHOUT_TFCKPT()                                     \
  if (!::eager::testing::HaveTfckpt())                                  \
  GTEST_SKIP() << "python3 or the checkpoint verifier " << EAGER_TFCKPT \
               << " is missing; configure with -DEAGER_TFCKPT=... to run this check"

// Runs `python3 tfckpt.py ARGS` (ARGS already shell-quoted); returns its exit
// status and puts its output in *output.
inline int RunTfckpt(const std::string& args, const std::string& log, std::string* output) {
  const std::string command =
      std::string("python3 '") + EAGER_TFCKPT + "' " + args + " >'" + log + "' 2>&1";
  const int rc = std::system(command.c_str());
  *output = ReadFile(log);
  std::filesystem::remove(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// `tfckpt.py verify -q PREFIX`.
inline int TfckptVerify(const std::string& prefix, std::string* output) {
  return RunTfckpt("verify -q '" + prefix + "'", prefix + ".verify.log", output);
}

// Expects `tfckpt.py verify -q PREFIX` to accept the checkpoint. Without the
// verifier only this check is skipped, with a note; the test goes on.
inline void ExpectVerifies(const std::string& prefix) {
  if (!HaveTfckpt()) {
    std::printf("[ SKIPPED  ] tfckpt.py verify of %s: %s or python3 missing\n", prefix.c_str(),
                EAGER_TFCKPT);
    return;
  }
  std::string output;
  EXPECT_EQ(TfckptVerify(prefix, &output), 0) << output;
}

}  // namespace eager::testing
