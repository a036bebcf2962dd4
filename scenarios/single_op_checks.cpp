// single_op_checks: the device and dtype checks that single operators make themselves, before
// or instead of the dispatcher's common one, each with its own sentence
// (harness/message_families.cpp): advanced indexing ("indices should be either on cpu or on the
// same device as the indexed tensor"), an RNN's input against its hidden state or parameters
// ("Input and hidden tensors are not at the same device"), convolution's type check ("Input type
// (float) and bias type (double) should be the same") and an in-place result of a narrower dtype
// ("result type Float can't be cast to the desired output type Long"). Each broken case must raise
// its class, each fix must run and give the right values. The other device is the meta device on
// the CPU (every build has it; seen 1.13.1: the same checks fire) and the GPU in a GPU's cell
// (the CPU table or GRU, the cell's device for the second tensor). sim:0 is
// left out: these are the operators' own checks, which the simulated device does not reproduce one
// for one.
#include <torchplace/numeric.h>
#include <torchplace/placement.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>

namespace scenarios::single_op_checks {
namespace {

using E = tp::ErrorClass;
constexpr int kRows = 4;
constexpr int kHidden = 3;

// Where the mistake puts its second tensor, beside a first one on the CPU: the meta device in the
// cpu cell, the cell's GPU in a GPU's (the CPU there made both CPU tensors: no mistake, seen on
// an H200).
torch::Device other_device(const torch::Device& device) {
  return device.is_cpu() ? tp::kMeta : device;
}

// A CPU table indexed by indices on another device (the CPU allows only CPU or same-device ones).
void indices_on_another_device(tp::Cell& cell) {
  const torch::Tensor table = torch::arange(kRows, torch::kFloat);
  const torch::Tensor indices = torch::tensor({2, 0}, torch::kLong).to(other_device(cell.device()));
  cell.under_test("index", [&] { return table.index({indices}); });
}

void indices_on_the_tables_device(tp::Cell& cell) {
  const torch::Tensor table = torch::arange(kRows, torch::kFloat).to(cell.device());
  const torch::Tensor indices = torch::tensor({2, 0}, torch::kLong).to(cell.device());
  const torch::Tensor rows = cell.under_test("index", [&] { return table.index({indices}); });
  EXPECT_TRUE(torch::equal(rows.cpu(), torch::tensor({2.0F, 0.0F})));
}

// The input with the GRU, its initial hidden state elsewhere.
void hidden_on_another_device(tp::Cell& cell) {
  torch::nn::GRU gru(2, kHidden);  // on the CPU
  const torch::Tensor hidden = torch::zeros({1, 1, kHidden}).to(other_device(cell.device()));
  cell.under_test("gru", [&] { return gru->forward(torch::ones({1, 1, 2}), hidden); });
}

// The input elsewhere than the GRU's parameters.
void input_on_another_device(tp::Cell& cell) {
  torch::nn::GRU gru(2, kHidden);  // on the CPU
  const torch::Tensor input = torch::ones({1, 1, 2}).to(other_device(cell.device()));
  cell.under_test("gru", [&] { return gru->forward(input); });
}

void hidden_with_the_input(tp::Cell& cell) {
  torch::nn::GRU twin(2, kHidden);  // the reference: the same weights on the CPU
  torch::nn::GRU gru(std::dynamic_pointer_cast<torch::nn::GRUImpl>(twin->clone(cell.device())));
  const torch::Tensor input = torch::ones({1, 1, 2}, cell.device());
  const torch::Tensor hidden = torch::zeros({1, 1, kHidden}, cell.device());
  const auto out = cell.under_test("gru", [&] { return gru->forward(input, hidden); });
  EXPECT_EQ(std::get<0>(out).device(), cell.device());
  TP_EXPECT_CLOSE(std::get<0>(out), std::get<0>(twin->forward(input.cpu(), hidden.cpu())),
                  tp::Rtol{1e-5}, tp::Atol{1e-6});
}

torch::nn::Conv2d conv_in(torch::Dtype dtype, const torch::Device& device) {
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 1, 1));
  conv->to(device, dtype);
  return conv;
}

// A float input into a conv converted to float64.
void conv_of_another_dtype(tp::Cell& cell) {
  torch::nn::Conv2d conv = conv_in(torch::kFloat64, cell.device());
  const torch::Tensor input = torch::ones({1, 1, 2, 2}, cell.device());
  cell.under_test("conv2d", [&] { return conv->forward(input); });
}

void conv_input_in_its_dtype(tp::Cell& cell) {
  torch::nn::Conv2d conv = conv_in(torch::kFloat64, cell.device());
  const torch::Tensor input = torch::ones({1, 1, 2, 2}, cell.device()).to(torch::kFloat64);
  const torch::Tensor out = cell.under_test("conv2d", [&] { return conv->forward(input); });
  // A 1x1 kernel on ones: w * 1 + b, one rounding of w + b, on every backend: exact.
  const torch::Tensor expected = conv->weight.sum() + conv->bias;
  EXPECT_TRUE(torch::equal(out.cpu(), expected.expand({1, 1, 2, 2}).cpu()));
}

// add_ of a float into a long tensor: the float result cannot be written there.
void inplace_into_a_narrower_dtype(tp::Cell& cell) {
  torch::Tensor counts = torch::zeros({2}, torch::TensorOptions(cell.device()).dtype(torch::kLong));
  cell.under_test("add_", [&] { return counts.add_(torch::full({2}, 0.5, cell.device())); });
}

void out_of_place_promotes(tp::Cell& cell) {
  const torch::Tensor counts =
      torch::zeros({2}, torch::TensorOptions(cell.device()).dtype(torch::kLong));
  const torch::Tensor sum =
      cell.under_test("add", [&] { return counts.add(torch::full({2}, 0.5, cell.device())); });
  EXPECT_EQ(sum.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(sum.cpu(), torch::full({2}, 0.5)));
}

tp::ExpectFn error_of(E error_class) {
  return [error_class](const tp::CellSpec&) { return tp::Expect::error(error_class); };
}
tp::Expect succeeds(const tp::CellSpec&) { return tp::Expect::success(); }

std::optional<tp::Unmet> not_on_sim(const tp::CellSpec& cell) {
  if (!tp::sim::is_sim(cell.device())) return std::nullopt;
  return tp::Unmet{tp::SkipCode::kNotOnSim,
                   "these are single operators' own checks, which sim:0 does not reproduce one "
                   "for one; the cpu cell raises them with the meta device"};
}

}  // namespace

TP_SCENARIO(single_op_checks)
    .cases("case",
           {{"indices_on_another_device", indices_on_another_device, error_of(E::kDeviceMismatch),
             not_on_sim},
            {"indices_on_the_tables_device", indices_on_the_tables_device, succeeds, not_on_sim},
            {"hidden_on_another_device", hidden_on_another_device, error_of(E::kDeviceMismatch),
             not_on_sim},
            {"input_on_another_device", input_on_another_device, error_of(E::kDeviceMismatch),
             not_on_sim},
            {"hidden_with_the_input", hidden_with_the_input, succeeds, not_on_sim},
            {"conv_of_another_dtype", conv_of_another_dtype, error_of(E::kDtypeMismatch),
             not_on_sim},
            {"conv_input_in_its_dtype", conv_input_in_its_dtype, succeeds, not_on_sim},
            {"inplace_into_a_narrower_dtype", inplace_into_a_narrower_dtype,
             error_of(E::kDtypeMismatch), not_on_sim},
            {"out_of_place_promotes", out_of_place_promotes, succeeds, not_on_sim}})
    .on(tp::DeviceAxis::kEach);

}  // namespace scenarios::single_op_checks
