#pragma once

// The bundle keys of an object-based checkpoint (FORMAT.md 4.2), e.g.
//   model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE
//   model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE
//   _CHECKPOINTABLE_OBJECT_GRAPH

#include <string>
#include <string_view>
#include <vector>

namespace eager {

// The key of the serialised TrackableObjectGraph (a scalar string tensor).
inline constexpr std::string_view kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";

// TF's escaping of one local name: every "." becomes "..", then every "/"
// becomes ".S" ("de/n.se" -> "de.Sn..se"), so keys split unambiguously.
std::string EscapeLocalName(std::string_view name);

// The object path: escaped local names joined by "/" ("" for the root).
std::string ObjectPath(const std::vector<std::string>& local_names);

// "<object path>/.ATTRIBUTES/<escaped attribute>".
std::string AttributeKey(std::string_view object_path, std::string_view attribute);

// The object path of an optimizer slot:
// "<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<escaped slot name>".
std::string SlotVariablePath(std::string_view variable_path, std::string_view optimizer_path,
                             std::string_view slot_name);

// TF's pretty name of an object path, for messages: "(root).model.dense.kernel".
std::string PrettyObjectName(const std::vector<std::string>& local_names);

}  // namespace eager
