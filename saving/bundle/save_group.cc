#include "saving/bundle/save_group.h"

#include <new>
#include <utility>

#include "runtime/errors.h"

namespace eager {
namespace {

SaveGroup* g_group = nullptr;

// "<code digits> <message>", or "" for success.
std::string Encode(const std::exception_ptr& error) {
  if (error == nullptr) return "";
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return StrCat(static_cast<int>(e.code()), " ", e.what());
  } catch (const std::bad_alloc&) {
    return StrCat(static_cast<int>(ErrorCode::kResourceExhausted), " out of memory");
  } catch (const std::exception& e) {
    return StrCat(static_cast<int>(ErrorCode::kInternal), " ", e.what());
  } catch (...) {
    return StrCat(static_cast<int>(ErrorCode::kInternal), " unknown exception");
  }
}

}  // namespace

SaveGroup* CurrentSaveGroup() { return g_group; }
void SetCurrentSaveGroup(SaveGroup* group) { g_group = group; }

void AgreeOnOutcome(const SaveGroup& group, const std::exception_ptr& error,
                    std::string_view what) {
  const std::vector<std::string> outcomes = group.AllGather(Encode(error));
  for (size_t rank = 0; rank < outcomes.size(); ++rank) {
    const std::string& outcome = outcomes[rank];
    if (outcome.empty()) continue;
    const size_t space = outcome.find(' ');
    const int code = std::stoi(outcome.substr(0, space));
    ThrowError(static_cast<ErrorCode>(code),
               StrCat(what, " failed on rank ", rank, ": ", outcome.substr(space + 1)));
  }
}

}  // namespace eager
