#include "ranks.h"

#include <future>
#include <thread>

namespace tp {
namespace {

bool timed_out(const std::optional<ErrorClass>& error_class) {
  return error_class == ErrorClass::kCollectiveTimeout;
}

}  // namespace

std::vector<int> late_ranks(int world, const std::function<void(int)>& body,
                            std::chrono::milliseconds watchdog) {
  std::vector<std::thread> threads;
  std::vector<std::future<void>> finished;
  for (int rank = 0; rank < world; ++rank) {
    std::packaged_task<void()> task([body, rank] { body(rank); });
    finished.push_back(task.get_future());
    threads.emplace_back(std::move(task));
  }
  const auto deadline = std::chrono::steady_clock::now() + watchdog;
  std::vector<int> late;
  for (int rank = 0; rank < world; ++rank) {
    const bool done = finished[rank].wait_until(deadline) == std::future_status::ready;
    done ? threads[rank].join() : threads[rank].detach();
    if (!done) late.push_back(rank);
  }
  return late;
}

std::optional<int> cause_of(const RankClasses& failed) {
  std::optional<int> cause;
  for (int rank = 0; rank < static_cast<int>(failed.size()); ++rank) {
    if (!failed[rank]) continue;
    if (!cause || (timed_out(failed[*cause]) && !timed_out(failed[rank]))) cause = rank;
  }
  return cause;
}

std::vector<int> peers_of(const RankClasses& failed, int cause) {
  std::vector<int> peers;
  for (int rank = 0; rank < static_cast<int>(failed.size()); ++rank) {
    if (rank != cause && failed[rank]) peers.push_back(rank);
  }
  return peers;
}

bool explained(const RankClasses& failed, int cause, int peer) {
  return timed_out(failed[peer]) || failed[peer] == failed[cause];
}

}  // namespace tp
