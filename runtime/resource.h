#pragma once

// Resource: what a graph's DT_RESOURCE tensor stands for, TF's ResourceBase.
// A Session carries a resource handle as the object itself, along the edges
// TF declares `resource` (ops/resource_variable_ops.h says how), so a
// consumer reaches the object, never a copy of its state. Two kinds exist:
// a resource variable (runtime/variable.h) and a lookup table
// (ops/lookup_ops.h). Who owns one: the Graph owns its Variables; a table
// is owned by the Session running its HashTableV2 node, as TF keeps tables
// in each Session's resource manager.

#include <string_view>

namespace eager {

class Resource {
 public:
  virtual ~Resource() = default;
  // What it is, for messages: "variable", "lookup table".
  virtual std::string_view resource_kind() const = 0;
  // Its name, for messages: TF's shared_name (a variable's op name).
  virtual std::string_view resource_name() const = 0;

 protected:
  Resource() = default;
  Resource(const Resource&) = default;
  Resource& operator=(const Resource&) = default;
};

}  // namespace eager
