// What ddp.cpp shares with its unit tests (ddp_test.cpp): the ranks' threads, and which rank's
// error is the cell's.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include <torchplace/error_class.h>

namespace scenarios::ddp {

// Each rank's error class; none where the rank succeeded.
using RankClasses = std::vector<std::optional<tp::ErrorClass>>;

// Runs body(rank) on a thread per rank and joins each by `watchdog`'s deadline; a rank still
// running then is left to finish on its own (`body` must hold what it uses) and the call raises
// CollectiveTimeout, naming it.
void run_ranks(const std::function<void(int)>& body, std::chrono::milliseconds watchdog);

// The first failed rank whose error is not a timeout, else the first failed rank; none if every
// rank succeeded.
std::optional<int> cause_of(const RankClasses& failed);

// The failed ranks other than the cause.
std::vector<int> peers_of(const RankClasses& failed, int cause);

// Whether a peer's failure is explained: it timed out waiting for the cause, or raised the
// cause's class itself (the same mistake on each rank).
bool explained(const RankClasses& failed, int cause, int peer);

}  // namespace scenarios::ddp
