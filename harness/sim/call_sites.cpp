// TransferLog's call sites (transfer_log.h): each event's stack, recorded as addresses, here
// symbolized to the user's frame (user_frame.cpp) and named as the user's call.
#include <map>
#include <string>
#include <vector>

#include "sim_internal.h"
#include "transfer_log.h"

namespace tp::sim::detail {
namespace {

// An event as a user writes what causes it (README "Transfer budget" says which CUDA kernel
// waits). A copy's own call is not seen: .to(device), .cuda(), copy_() all reach _copy_from.
std::string user_call(const std::string& event) {
  static const auto* calls = new std::map<std::string, std::string>{
      {"_local_scalar_dense", ".item()"},
      {"h2d", ".to(device)"},
      {"copy_to_device", ".to(device)"},
      {"d2h", ".cpu()"},
      {"copy_to_host", ".cpu()"},
      {"d2d", ".to()/.clone()"},
      {"nonzero", "x[mask] or .nonzero()"},
      {"masked_select", ".masked_select()"},
      {"index_put_bool_mask", "x[mask] = ..."},
      {"unique", "unique()"},
  };
  const auto found = calls->find(event);
  return found == calls->end() ? event : found->second;
}

}  // namespace

std::vector<CallSite> call_sites_of(const EventStacks& stacks) {
  std::vector<CallSite> sites;
  for (const auto& [event, by_stack] : stacks) {
    std::map<std::string, std::int64_t> by_place;  // stacks that differ deeper share a place
    for (const auto& [stack, count] : by_stack) by_place[user_frame(stack)] += count;
    for (const auto& [where, count] : by_place)
      sites.push_back(CallSite{event, user_call(event), where, count});
  }
  return sites;
}

// "<call> at f.cpp:3 in g" for one place; "<call> x2 at f.cpp:3 in g; <call> x1 (no user frame)"
// for several; "" when none of the event's has a user frame. After `lead` when not empty.
std::string sites_text(const std::vector<CallSite>& sites, const std::string& event,
                       const std::string& lead) {
  std::vector<const CallSite*> of_event;
  bool placed = false;
  for (const CallSite& site : sites) {
    if (site.event != event) continue;
    of_event.push_back(&site);
    placed = placed || !site.where.empty();
  }
  if (!placed) return "";
  std::string text;
  for (const CallSite* site : of_event) {
    text += text.empty() ? lead : "; ";
    text += site->call;
    if (of_event.size() > 1) text += " x" + std::to_string(site->count);
    text += " " + (site->where.empty() ? std::string("(no user frame)") : site->where);
  }
  return text;
}

}  // namespace tp::sim::detail
