#pragma once

// SaveGroup: the processes that write one checkpoint together, for
// distributed saves (CheckpointOptions{.distributed = true}): each member
// writes its own data file of one bundle, and member 0 writes the merged
// index and commits it (BundleWriterOptions::group, bundle_writer.h).
// saving/ knows no transport: eager::distributed::World (distributed/world.h)
// is a SaveGroup over MPI and installs itself as the current one while it
// lives; with none installed, a distributed save is this process alone.
//
// Every member calls the collectives in the same order. A step that fails on
// some members must still reach the next collective on every member, which
// AgreeOnOutcome below turns into the same error thrown everywhere.

#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace eager {

class SaveGroup {
 public:
  virtual ~SaveGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every member's `bytes`, in rank order, on every member. Collective.
  virtual std::vector<std::string> AllGather(std::string_view bytes) const = 0;
};

// The group distributed saves use, or nullptr (this process alone). Not
// thread-safe: set it before saving (World's constructor does).
SaveGroup* CurrentSaveGroup();
void SetCurrentSaveGroup(SaveGroup* group);

// Collective: every member passes what its step threw (nullptr: it
// succeeded). When any member failed, every member throws the same error:
// the kind of the lowest failing rank's error, its message prefixed with
// "<what> failed on rank R: ". Otherwise returns on every member.
void AgreeOnOutcome(const SaveGroup& group, const std::exception_ptr& error, std::string_view what);

}  // namespace eager
