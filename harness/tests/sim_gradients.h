// The sim tests' check that leaves on the sim got the CPU twins' gradients, on the sim.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include <torchplace/sim/sim.h>

namespace tp_test {

inline void expect_same_gradients(const std::vector<torch::Tensor>& sim,
                                  const std::vector<torch::Tensor>& cpu, const char* const* names) {
  for (size_t index = 0; index < cpu.size(); ++index) {
    ASSERT_TRUE(sim[index].grad().defined()) << names[index];
    EXPECT_EQ(sim[index].grad().device(), tp::sim::device()) << names[index];
    EXPECT_TRUE(torch::allclose(sim[index].grad().cpu(), cpu[index].grad(), 1e-5, 1e-5))
        << names[index] << ": " << sim[index].grad().cpu() << " on the sim, " << cpu[index].grad()
        << " on the CPU";
  }
}

}  // namespace tp_test
