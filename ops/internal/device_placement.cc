#include "ops/internal/device_placement.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/errors.h"

namespace eager::internal {
namespace {

constexpr std::string_view kThisCpu = "/job:localhost/replica:0/task:0/device:CPU:0";

// A device name's parts, as TF's DeviceNameUtils parses them; an absent
// part is "any".
struct DeviceName {
  std::optional<std::string> job;
  std::optional<int64_t> replica, task;
  std::optional<std::string> type;
  std::optional<int64_t> id;  // nullopt: "*" or absent
};

std::optional<int64_t> Number(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < 0) return std::nullopt;
  return v;
}

bool IsName(std::string_view s) {
  if (s.empty() || std::isalpha(static_cast<unsigned char>(s[0])) == 0) return false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

// "TYPE:ID" or "TYPE:*"; TF's legacy "cpu:0" / "gpu:0" are upper-cased.
bool ParseTypeAndId(std::string_view part, DeviceName& name) {
  const size_t colon = part.find(':');
  if (colon == std::string_view::npos) return false;
  std::string type(part.substr(0, colon));
  const std::string_view id = part.substr(colon + 1);
  if (!IsName(type)) return false;
  if (type == "cpu" || type == "gpu") {
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  name.type = type;
  if (id != "*") {
    name.id = Number(id);
    if (!name.id) return false;
  }
  return true;
}

std::optional<DeviceName> Parse(std::string_view device) {
  DeviceName name;
  std::string_view rest = device;
  if (!rest.empty() && rest[0] == '/') rest.remove_prefix(1);
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    const auto value_of = [&](std::string_view key) -> std::optional<std::string_view> {
      if (part.size() > key.size() && part.substr(0, key.size()) == key) {
        return part.substr(key.size());
      }
      return std::nullopt;
    };
    if (const auto job = value_of("job:")) {
      if (!IsName(*job)) return std::nullopt;
      name.job = std::string(*job);
    } else if (const auto replica = value_of("replica:")) {
      if (!(name.replica = Number(*replica))) return std::nullopt;
    } else if (const auto task = value_of("task:")) {
      if (!(name.task = Number(*task))) return std::nullopt;
    } else if (const auto typed = value_of("device:")) {
      if (!ParseTypeAndId(*typed, name)) return std::nullopt;
    } else if (!ParseTypeAndId(part, name)) {
      return std::nullopt;
    }
  }
  return name;
}

// TF's canonical spelling of the parts given ("/gpu:0" -> "/device:GPU:0").
std::string Canonical(const DeviceName& name) {
  std::string out;
  if (name.job) out += "/job:" + *name.job;
  if (name.replica) out += "/replica:" + std::to_string(*name.replica);
  if (name.task) out += "/task:" + std::to_string(*name.task);
  if (name.type) out += "/device:" + *name.type + ":" + (name.id ? std::to_string(*name.id) : "*");
  return out;
}

}  // namespace

void CheckDevice(const Node& node, bool allow_soft_placement) {
  if (node.device.empty()) return;
  const std::optional<DeviceName> name = Parse(node.device);
  if (!name) {
    throw InvalidArgumentError(StrCat("Malformed device specification '", node.device,
                                      "' in node '", node.name, "' (", node.op, ")"));
  }
  const bool other_process = (name->job && *name->job != "localhost") ||
                             (name->replica && *name->replica != 0) ||
                             (name->task && *name->task != 0);
  const bool other_device = (name->type && *name->type != "CPU") || (name->id && *name->id != 0);
  if (!other_process && (!other_device || allow_soft_placement)) return;
  std::string message =
      StrCat("Cannot assign a device for operation ", node.name, ": {{node ", node.name,
             "}} was explicitly assigned to ", Canonical(*name), " but available devices are [ ",
             kThisCpu, " ]. Make sure the device specification refers to a valid device.");
  if (name->type && *name->type == "GPU") {
    message += " The requested device appears to be a GPU, but eager computes on the CPU only.";
  }
  if (!other_process) {
    message +=
        " (SessionOptions::allow_soft_placement runs it on the CPU; importing with "
        "clear_devices drops the devices.)";
  }
  throw InvalidArgumentError(message);
}

}  // namespace eager::internal
