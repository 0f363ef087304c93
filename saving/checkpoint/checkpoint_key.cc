#include "saving/checkpoint/checkpoint_key.h"

namespace eager {

std::string EscapeLocalName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '.') {
      out += "..";
    } else if (c == '/') {
      out += ".S";
    } else {
      out += c;
    }
  }
  return out;
}

std::string ObjectPath(const std::vector<std::string>& local_names) {
  std::string out;
  for (const std::string& name : local_names) {
    if (!out.empty()) out += '/';
    out += EscapeLocalName(name);
  }
  return out;
}

std::string AttributeKey(std::string_view object_path, std::string_view attribute) {
  // TF's checkpoint_key: the root's attributes start with "/".
  return std::string(object_path) + "/.ATTRIBUTES/" + EscapeLocalName(attribute);
}

std::string SlotVariablePath(std::string_view variable_path, std::string_view optimizer_path,
                             std::string_view slot_name) {
  return std::string(variable_path) + "/.OPTIMIZER_SLOT/" + std::string(optimizer_path) + "/" +
         EscapeLocalName(slot_name);
}

std::string PrettyObjectName(const std::vector<std::string>& local_names) {
  std::string out = "(root)";
  for (const std::string& name : local_names) out += "." + name;
  return out;
}

}  // namespace eager
