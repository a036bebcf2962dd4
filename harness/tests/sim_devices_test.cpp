// tp::sim's devices: N of them (2 by default), each tensor keeping its index, a current device
// per thread, and an index past the count refused, never aliased to another device.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdlib>
#include <thread>

#include <torchplace/compat.h>
#if TP_TORCH_AT_LEAST(2, 1)
#include <ATen/detail/PrivateUse1HooksInterface.h>
#endif

#include <torchplace/sim/sim.h>
#include "child_run.h"
#include "devices.h"
#include "error_class.h"
#include "internal/expected_error.h"
#include "raised_message.h"

namespace sim_devices_test {  // unity-built with the other harness tests
namespace {

using tp_test::message_of;

c10::DeviceIndex current_index() {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->getDevice().index();
}

// The count the process was started with: TORCHPLACE_SIM_DEVICES, else 2 (sim.h).
TEST(SimDevices, CountFollowsTheEnvironment) {
  const char* text = std::getenv("TORCHPLACE_SIM_DEVICES");
  EXPECT_EQ(tp::sim::device_count(), text == nullptr ? 2 : std::atoi(text));
  EXPECT_EQ(c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->deviceCount(),
            tp::sim::device_count());
  EXPECT_EQ(tp::sim::device(), tp::sim::device(0));
}

// The count's bounds (sim.h): 1 and 16 are taken, 0 is refused by name; a child each, as the
// count is read once.
TEST(SimDevices, TheCountsBoundsAreTakenAndZeroIsNot) {
  for (const char* count : {"1", "16"}) {
    const auto [status, output] = tp_test::run_child(std::string("TORCHPLACE_SIM_DEVICES=") + count,
                                                     "SimDevices.CountFollowsTheEnvironment");
    EXPECT_EQ(status, 0) << count << ": " << output;
    EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << count << ": " << output;
  }
  const auto [status, output] =
      tp_test::run_child("TORCHPLACE_SIM_DEVICES=0", "SimDevices.CountFollowsTheEnvironment");
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("TORCHPLACE_SIM_DEVICES must be a whole number from 1 to 16; got '0'"),
            std::string::npos)
      << output;
}

// A cell list names sim:0 without enabling the sim (sim.h listed()), so that a process of CUDA
// cells never registers it (README.md "Beside a GPU"). CTest sim.listed_without_enable runs it
// alone with a count the sim refuses: listing must not raise, and only enabling does.
TEST(SimLazy, ListingCellsDoesNotEnableTheSim) {
  const char* text = std::getenv("TORCHPLACE_SIM_DEVICES");
  if (text == nullptr || std::string(text) != "17") {
    GTEST_SKIP()
        << "CTest sim.listed_without_enable runs it, alone, with TORCHPLACE_SIM_DEVICES=17";
  }
  const std::vector<tp::Placement> placements = tp::expand(tp::DeviceAxis::kEach);
  EXPECT_TRUE(tp::sim::is_sim(placements.at(1).primary()));
  EXPECT_THROW(tp::sim::device_count(), c10::Error);
}

TEST(SimDevices, EachAllocationKeepsItsIndex) {
  const torch::Device second = tp::sim::device(1);
  EXPECT_EQ(tp::sim::label(second), "sim:1");
  const torch::Tensor host = torch::arange(6, torch::kFloat);
  EXPECT_EQ(host.to(second).device(), second) << "tensor.to(sim:1)";
  EXPECT_EQ(torch::empty({3}, torch::TensorOptions().device(second)).device(), second);
  EXPECT_EQ(host.to(second).to(tp::sim::device(0)).device(), tp::sim::device(0));
  torch::nn::Linear model(3, 2);
  model->to(second);
  EXPECT_EQ(model->weight.device(), second) << "Module::to(sim:1)";
  const torch::Tensor output = model(torch::ones({1, 3}).to(second));
  EXPECT_EQ(output.device(), second) << "the fallback's outputs on the inputs' device";
  EXPECT_TRUE(torch::equal(host.to(second).cpu(), host));
  EXPECT_EQ(current_index(), 0) << "allocating on sim:1 left the current device changed";
}

TEST(SimDevices, AnIndexPastTheCountIsRefusedByName) {
  const int past = tp::sim::device_count();
  const std::string named = "sim:" + std::to_string(past);
  const std::string refused = message_of([&] { tp::sim::device(past); });
  EXPECT_NE(refused.find(named + "; there are " + std::to_string(past) +
                         " (sim:0 .. sim:" + std::to_string(past - 1) + "; "),
            std::string::npos)
      << refused;
  const torch::Device beyond(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(past));
  const std::string to = message_of([&] { torch::ones({2}).to(beyond); });
  EXPECT_NE(to.find(named), std::string::npos) << "tensor.to: '" << to << "'";
  const std::string empty = message_of([&] { torch::empty({2}, beyond); });
  EXPECT_NE(empty.find(named), std::string::npos) << "torch::empty: '" << empty << "'";
  EXPECT_NE(message_of([&] { tp::sim::device(-1); }), "");
}

TEST(SimDevices, TheGuardKeepsACurrentDevicePerThread) {
  auto* guard_impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
  ASSERT_EQ(current_index(), 0);
  {
    const c10::DeviceGuard guard(tp::sim::device(1));
    EXPECT_EQ(current_index(), 1);
    EXPECT_EQ(
        torch::empty({2}, torch::TensorOptions().device(c10::DeviceType::PrivateUse1)).device(),
        tp::sim::device(1))
        << "a device without an index is the current one";
    c10::DeviceIndex other_thread = -1;
    std::thread([&] { other_thread = current_index(); }).join();
    EXPECT_EQ(other_thread, 0) << "the current device leaked into another thread";
    EXPECT_EQ(guard_impl->exchangeDevice(tp::sim::device(0)), tp::sim::device(1));
    EXPECT_EQ(current_index(), 0);
    guard_impl->setDevice(tp::sim::device(1));
  }
  EXPECT_EQ(current_index(), 0) << "the guard did not restore the device";
  const std::string refused =
      message_of([&] { guard_impl->setDevice(c10::Device(c10::DeviceType::PrivateUse1, 9)); });
  EXPECT_NE(refused.find("sim:9"), std::string::npos) << refused;
  for (const int index : {-1, tp::sim::device_count()}) {  // unchecked: ignored, never thrown
    guard_impl->uncheckedSetDevice(
        c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index)));
    EXPECT_EQ(current_index(), 0) << "uncheckedSetDevice took sim:" << index;
  }
}

// The mistake two GPUs show: the model on one device, its input on the other.
TEST(SimDevices, ModelOnZeroInputOnOneRaisesDeviceMismatch) {
  torch::nn::Linear model(4, 2);
  model->to(tp::sim::device(0));
  const torch::Tensor input = torch::randn({3, 4}).to(tp::sim::device(1));
  const std::string message = message_of([&] { model(input); });
  EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  EXPECT_EQ(tp::named_argument(message), "mat1") << message;
}

// Issue 26: where the fallback puts what the CPU kernel returns, on every version: fresh outputs
// on the inputs' simulated device (also when the first argument is a CPU scalar), in-place
// results are the tensor given.
TEST(SimDevices, OutputsLandOnTheInputsDevice) {
  const torch::Device second = tp::sim::device(1);
  torch::Tensor x = torch::randn({3, 3}).to(second);
  EXPECT_EQ(torch::mm(x, x).device(), second);
  EXPECT_EQ((torch::tensor(2.0f) + x).device(), second) << "a CPU scalar as first argument";
  // where is no structured op: the CPU fallback runs it, and puts the output on its first tensor
  // argument's device (CPUFallback.cpp, compute_target_device), here the CPU condition. 2.x's
  // where moves a 0-dim CPU condition to the device (TensorCompare.cpp out_device, 2.6.0 line
  // 516) and answers there; 1.13.1's builds its iterator without allow_cpu_scalars
  // (TensorCompare.cpp line 418) and refuses it (scalar_rules.inc), as the sim does.
  const auto where = [&] { return torch::where(torch::tensor(true), x, x); };
#if TP_TORCH_AT_LEAST(2, 0)
  EXPECT_EQ(where().device(), second) << "a CPU condition first";
#else
  EXPECT_EQ(message_of([&] { where(); }),
            "Expected all tensors to be on the same device, but "
            "found at least two devices, " +
                c10::str(second) + " and cpu!");
#endif
  const auto [values, indices] = torch::max(x, 0);
  EXPECT_EQ(values.device(), second);
  EXPECT_EQ(indices.device(), second);
  const torch::Tensor& same = x.add_(1.0);
  EXPECT_TRUE(same.is_same(x)) << "in-place: not the tensor given";
  EXPECT_EQ(same.device(), second);
}

// index (NoCheck) takes each index on the CPU or on the indexed tensor's device, mixed in one call
// (TensorAdvancedIndexing.cpp, check_indices_on_cpu_or_selfdevice), and a full slice among them;
// any other device LibTorch refuses with its own words (the sim's check off too), a CPU tensor
// indexed with device indices included.
TEST(SimDevices, IndicesOnTheCpuOrTheIndexedTensorsDevice) {
  const torch::Device first = tp::sim::device(0);
  const torch::Tensor table = torch::arange(6).view({2, 3});
  const torch::Tensor rows = torch::tensor({1, 0});
  const torch::Tensor columns = torch::tensor({2, 0});
  const torch::Tensor picked = table.to(first).index({rows, columns.to(first)});
  EXPECT_EQ(picked.device(), first);
  EXPECT_TRUE(torch::equal(picked.cpu(), table.index({rows, columns})));
  using torch::indexing::Slice;  // a full slice is a None in the list of indices
  const torch::Tensor sliced = table.to(first).index({Slice(), columns.to(first)});
  EXPECT_TRUE(torch::equal(sliced.cpu(), table.index({Slice(), columns})));
  torch::Tensor written = table.to(first);  // index_put_ (its _index_put_impl_) as index
  written.index_put_({rows, columns}, torch::tensor({7, 8}).to(first));
  EXPECT_TRUE(torch::equal(written.cpu(),
                           table.clone().index_put_({rows, columns}, torch::tensor({7, 8}))));
  const std::string refusal = "indices should be either on cpu or on the same device as the ";
  for (const auto& [indexed, index] : {std::pair{table.to(first), rows.to(tp::sim::device(1))},
                                       std::pair{table, rows.to(first)}}) {
    const std::string message = message_of([&] { indexed.index({index}); });
    EXPECT_EQ(message.rfind(refusal + "indexed tensor (" + indexed.device().str() + ")", 0), 0u)
        << message;
    EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  }
}

// README: copies are synchronous whatever non_blocking says; each device has its default stream.
// On 2.x a non_blocking copy from the sim to the CPU pins its destination (_to_copy's pin_out
// names privateuseone beside cuda: TensorConversions.cpp, Debian's 2.6.0 source): the sim's
// pinned allocator (hooks.cpp) gives it a pinned tensor, as CUDA's does.
TEST(SimDevices, CopiesAreSynchronousAndStreamsDefault) {
  const torch::Device second = tp::sim::device(1);
  const torch::Tensor host = torch::arange(4096, torch::kFloat);
  const torch::Tensor there = host.to(second, /*non_blocking=*/true);
  const torch::Tensor back = there.to(torch::kCPU, /*non_blocking=*/true);
#if TP_TORCH_AT_LEAST(2, 6)
  EXPECT_TRUE(back.is_pinned()) << "a non_blocking copy to the host lands in pinned memory";
  EXPECT_FALSE(host.is_pinned());
#endif
  EXPECT_TRUE(torch::equal(back, host)) << "read back before any synchronize";
  auto* guard_impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
  EXPECT_EQ(guard_impl->getStream(second), c10::Stream(c10::Stream::DEFAULT, second));
  EXPECT_TRUE(guard_impl->queryEvent(nullptr)) << "synchronous: every event has completed";
}

// README: the 2.x hooks cannot tell where a pointer was made; they answer the current device.
TEST(SimDevices, DeviceFromPointerIsTheCurrentDevice) {
#if TP_TORCH_AT_LEAST(2, 1)
  const torch::Tensor on_second = torch::ones({2}).to(tp::sim::device(1));
#if TP_TORCH_AT_LEAST(2, 4)  // at::detail::getPrivateUse1Hooks(); 2.1-2.3 had a pointer getter
  const auto& hooks = at::detail::getPrivateUse1Hooks();
#else
  const auto& hooks = *at::GetPrivateUse1HooksInterface();
#endif
  EXPECT_EQ(hooks.getDeviceFromPtr(on_second.data_ptr()), tp::sim::device(0));
#else
  GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no PrivateUse1 hooks interface (2.1+)";
#endif
}

TEST(SimDevices, SetDeviceCount) {
  const int before = tp::sim::device_count();
  tp::sim::set_device_count(3);
  EXPECT_EQ(torch::ones({1}).to(tp::sim::device(2)).device().index(), 2);
  for (const int edge : {1, 16}) {  // the bounds are taken
    EXPECT_EQ(message_of([&] { tp::sim::set_device_count(edge); }), "") << edge;
    EXPECT_EQ(tp::sim::device_count(), edge);
  }
  tp::sim::set_device_count(before);
  EXPECT_NE(message_of([] { tp::sim::set_device_count(0); }), "");
  EXPECT_NE(message_of([] { tp::sim::set_device_count(17); }), "");
  EXPECT_EQ(tp::sim::device_count(), before);
}

}  // namespace
}  // namespace sim_devices_test
