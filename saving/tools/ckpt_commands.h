#pragma once

// eager-ckpt's `state`, `diff`, `stats`, `graph`, `meta` and `convert` sub-commands (the command
// line side; what they compute is saving/tools/checkpoint_tools.h). Part of the eager-ckpt
// executable only.

#include <ostream>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace eager::ckpt_tool {

// Exit codes of every eager-ckpt command, for --help.
inline constexpr const char* kExitCodes =
    "Exit codes: 0 success (diff: no differences); 1 error: a path not found, a file "
    "unreadable or damaged (the message on stderr names it); 2 bad command line; "
    "3 diff: the checkpoints differ.";
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitDiffers = 3;

class ExtraCommands {
 public:
  // Adds the sub-commands to `app`.
  explicit ExtraCommands(CLI::App& app);
  // Whether one of them was given on the command line.
  bool parsed() const;
  // Runs it: output to `out`, errors ("eager-ckpt: <Kind> error: ...") to `err`;
  // returns the exit code.
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  CLI::App* state_;
  CLI::App* diff_;
  CLI::App* stats_;
  CLI::App* graph_;
  CLI::App* meta_;
  CLI::App* convert_;
  std::string path_a_;
  std::string path_b_;
  bool json_ = false;
  std::string template_;
  std::string mapping_;
  bool allow_partial_ = false;
  bool dry_run_ = false;
  std::string keras_model_;

  int RunConvert(std::ostream& out, std::ostream& err) const;
};

}  // namespace eager::ckpt_tool
