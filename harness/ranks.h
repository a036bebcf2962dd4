// A cell of several ranks (scenarios/ddp.cpp): each rank a thread of the cell, joined by a
// watchdog, and which rank's error is the cell's. Unit-tested with constructed outcomes
// (tests/ranks_test.cpp): in the cells the same rank always fails first, and none outlives the
// watchdog, so they cannot tell these rules apart.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "error_class.h"

namespace tp {

// Each rank's error class; none where the rank succeeded.
using RankClasses = std::vector<std::optional<ErrorClass>>;

// Runs body(rank) for ranks 0 .. world - 1, a thread each, and joins each by `watchdog`'s
// deadline; returns the ranks still running then, left to finish on their own (detached: `body`
// must own what it uses).
std::vector<int> late_ranks(int world, const std::function<void(int)>& body,
                            std::chrono::milliseconds watchdog);

// The cell's cause: the first failed rank whose error is not a CollectiveTimeout, else the first
// failed rank; none where every rank succeeded.
std::optional<int> cause_of(const RankClasses& failed);

// The failed ranks other than the cause.
std::vector<int> peers_of(const RankClasses& failed, int cause);

// Whether a peer's failure is explained: it timed out waiting for the cause, or raised the
// cause's class itself (the same mistake on each rank).
bool explained(const RankClasses& failed, int cause, int peer);

}  // namespace tp
