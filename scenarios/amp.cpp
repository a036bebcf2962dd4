// amp: autocast moves nothing. It changes the dtype an op computes in, never the device.
//   variant=targets_on_cpu  on CUDA, under fp16 autocast, targets left on the CPU still raise
//                           DeviceMismatch; on the CPU the mistake is latent.
//   variant=grad_scaler     the fix: everything on the device, autocast (bf16 on the CPU, fp16
//                           on CUDA and sim:0), loss scaling with tp::fixes::GradScaler; autocast
//                           outputs are in the low dtype on the cell's device, the first loss is
//                           close to the fp32 reference, and the loss falls. In fp16 it starts at a
//                           scale of 2^24, which overflows fp16: at least one step must be skipped
//                           and the scale backed off. On the CPU (bf16 cannot overflow) it starts
//                           at 2^16 and the first step's gradients must be the fp32 reference's
//                           times the scale before unscale() and equal after it.
//   variant=fp16_underflow  fp16 gradients of 2^-26 flush to zero without loss scaling and
//                           survive with tp::fixes::GradScaler, equal to the fp32 gradient.
//                           Plain fp16 casts and multiplies: it runs on every device, the CPU too.
#include <cmath>

#include <torchplace/compat.h>
#include <torchplace/fixes/grad_scaler.h>
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/training.h>

namespace scenarios::amp {
namespace {

constexpr int kSamples = 64;
constexpr int kFeatures = 32;
constexpr int kHidden = 32;
constexpr int kClasses = 5;
constexpr int kSteps = 30;  // enough for the loss to fall after the skipped (overflowed) steps
constexpr double kOverflowingScale = 16777216.0;  // 2^24: fp16 gradients overflow (max 65504)
// Below fp16's smallest subnormal (2^-24): a gradient this size flushes to zero in fp16.
constexpr double kTinyGradient = 1.0 / (1 << 26);
constexpr double kLearningRate = 0.5;
// Loss against the fp32 reference: bf16 keeps 8 bits of mantissa (2^-8 = 0.4% per rounding),
// fp16 keeps 11; the matmuls accumulate in fp32.
constexpr tp::Rtol kBf16Rtol{2e-2};
constexpr tp::Rtol kFp16Rtol{5e-3};
constexpr tp::Atol kAtol{1e-3};
constexpr double kInitScale = 65536.0;  // 2^16, the GradScaler's (and Python's) default
constexpr double kGradNormRtol = 5e-2;  // bf16 gradients' norm against fp32's

struct MlpImpl : torch::nn::Module {
  MlpImpl()
      : hidden(register_module("hidden", torch::nn::Linear(kFeatures, kHidden))),
        out(register_module("out", torch::nn::Linear(kHidden, kClasses))) {}
  torch::Tensor forward(const torch::Tensor& input) { return out(torch::relu(hidden(input))); }
  torch::nn::Linear hidden;
  torch::nn::Linear out;
};
TORCH_MODULE(Mlp);

// fp16 where autocast means fp16 (CUDA, and sim:0 with CUDA's cast policy); bf16 on the CPU.
at::ScalarType low_dtype(const torch::Device& device) {
  return device.is_cuda() || tp::sim::is_sim(device) ? torch::kHalf : torch::kBFloat16;
}

// One autocast forward; checks what autocast promises about its outputs.
torch::Tensor autocast_loss(tp::Cell& cell, Mlp& model, const torch::Tensor& input,
                            const torch::Tensor& target) {
  const tp::compat::AutocastGuard autocast(cell.device().type(), low_dtype(cell.device()));
  const torch::Tensor logits = model(input);
  EXPECT_EQ(logits.scalar_type(), low_dtype(cell.device())) << "autocast did not cast linear";
  EXPECT_EQ(logits.device(), cell.device()) << "autocast moved the output";
  return cell.under_test("cross_entropy",
                         [&] { return torch::nn::functional::cross_entropy(logits, target); });
}

// sqrt of the sum of every parameter's squared gradient, in float64.
double grad_norm(Mlp& model) {
  double sum = 0;
  for (const torch::Tensor& parameter : model->parameters()) {
    if (parameter.grad().defined())
      sum += parameter.grad().to(torch::kFloat64).pow(2).sum().item<double>();
  }
  return std::sqrt(sum);
}

// After the first scaled backward: the gradients are the fp32 ones times the scale, and
// unscale() brings them back.
void expect_scaled_gradients(tp::Cell& cell, Mlp& model, tp::fixes::GradScaler& scaler,
                             torch::optim::Optimizer& optimizer, double reference_norm) {
  const double scaled = grad_norm(model) / reference_norm;
  EXPECT_NEAR(scaled / kInitScale, 1.0, kGradNormRtol) << "the loss was not scaled by 2^16";
  scaler.unscale(optimizer);
  const double unscaled = grad_norm(model) / reference_norm;
  EXPECT_NEAR(unscaled, 1.0, kGradNormRtol) << "unscale() did not restore the gradients";
  cell.metric("first_grad_norm_scaled_ratio", scaled);
  cell.metric("first_grad_norm_unscaled_ratio", unscaled);
}

void targets_on_cpu(tp::Cell& cell, Mlp& model, const torch::Tensor& input,
                    const torch::Tensor& target) {
  model->to(cell.device());
  const torch::Tensor loss = autocast_loss(cell, model, input.to(cell.device()), target);
  cell.metric("loss", loss.item<double>());  // CUDA raised above
}

void grad_scaler(tp::Cell& cell, Mlp& model, const torch::Tensor& input,
                 const torch::Tensor& target) {
  model->to(cell.device());
  const torch::Tensor device_input = input.to(cell.device());
  const torch::Tensor device_target = target.to(cell.device());
  const torch::Tensor fp32_loss =
      torch::nn::functional::cross_entropy(model(device_input), device_target);
  fp32_loss.backward();
  const double reference_loss = fp32_loss.item<double>();
  const double reference_grad_norm = grad_norm(model);

  tp::fixes::GradScaler scaler(tp::fixes::GradScalerOptions{
      low_dtype(cell.device()) == torch::kHalf ? kOverflowingScale : kInitScale});
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(kLearningRate));
  std::vector<double> losses;
  int skipped_steps = 0;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    const torch::Tensor loss = autocast_loss(cell, model, device_input, device_target);
    scaler.scale(loss).backward();
    if (step == 0 && cell.device().is_cpu()) {
      expect_scaled_gradients(cell, model, scaler, optimizer, reference_grad_norm);
    }
    if (!scaler.step(optimizer)) ++skipped_steps;
    scaler.update();
    losses.push_back(loss.item<double>());
  }
  const tp::Rtol rtol = low_dtype(cell.device()) == torch::kHalf ? kFp16Rtol : kBf16Rtol;
  TP_EXPECT_CLOSE(torch::tensor(losses.front()), torch::tensor(reference_loss), rtol, kAtol);
  EXPECT_LT(losses.back(), losses.front()) << "the loss did not fall";
  EXPECT_LT(skipped_steps, kSteps) << "every step overflowed";
  if (low_dtype(cell.device()) == torch::kHalf) {  // fp16 overflows at 2^24; bf16 does not
    EXPECT_GE(skipped_steps, 1) << "no step overflowed at a scale of 2^24: scaling not exercised";
    EXPECT_LT(scaler.current_scale(), kOverflowingScale) << "the scale never backed off";
  }
  cell.metric("fp32_reference_loss", reference_loss);
  cell.metric("first_loss", losses.front());
  cell.metric("final_loss", losses.back());
  cell.metric("skipped_steps", skipped_steps);
  cell.metric("final_scale", scaler.current_scale());
}

// The gradient an fp32 weight gets through an fp16 multiply, of a loss whose gradient is
// kTinyGradient per element: 2^-26 flushes to zero when cast to fp16, unless the loss is scaled.
torch::Tensor fp16_weight_gradient(const torch::Device& device, tp::fixes::GradScaler* scaler) {
  const torch::Tensor weight =
      torch::ones({kFeatures}, torch::dtype(torch::kFloat).device(device).requires_grad(true));
  const torch::Tensor input = torch::linspace(1.0, 2.0, kFeatures).to(torch::kHalf).to(device);
  const torch::Tensor product = weight.to(torch::kHalf) * input;  // fp16, as autocast computes
  const torch::Tensor loss = (product.to(torch::kFloat) * kTinyGradient).sum();  // fp32 loss
  torch::optim::SGD optimizer({weight}, torch::optim::SGDOptions(0.0));          // only to unscale
  (scaler ? scaler->scale(loss) : loss).backward();
  if (scaler) scaler->unscale(optimizer);
  return weight.grad().detach().to(torch::kCPU, torch::kFloat64);
}

void fp16_underflow(tp::Cell& cell) {
  const torch::Tensor expected =  // d loss / d weight = input * 2^-26, exact in fp32 and fp64
      torch::linspace(1.0, 2.0, kFeatures).to(torch::kHalf).to(torch::kFloat64) * kTinyGradient;
  ASSERT_TRUE(expected.ne(0).all().item<bool>()) << "a zero gradient cannot show an underflow";
  const torch::Tensor unscaled = fp16_weight_gradient(cell.device(), nullptr);
  EXPECT_TRUE(torch::equal(unscaled, torch::zeros_like(unscaled)))
      << "fp16 did not flush 2^-26 to zero: the underflow this case shows did not happen";
  tp::fixes::GradScaler scaler;  // 2^16, as Python
  const torch::Tensor scaled = fp16_weight_gradient(cell.device(), &scaler);
  EXPECT_TRUE(torch::equal(scaled, expected)) << "scaled gradient " << scaled << " vs " << expected;
  cell.metric("unscaled_grad_abs_max", unscaled.abs().max().item<double>());
  cell.metric("scaled_grad_abs_max", scaled.abs().max().item<double>());
}

void run(tp::Cell& cell) {
  if (cell.axis("variant") == "fp16_underflow") return fp16_underflow(cell);
  const torch::Tensor input = torch::randn({kSamples, kFeatures});  // as a loader yields: CPU
  const torch::Tensor target = torch::randint(kClasses, {kSamples}, torch::kLong);
  Mlp model;
  if (cell.axis("variant") == "targets_on_cpu") return targets_on_cpu(cell, model, input, target);
  grad_scaler(cell, model, input, target);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  const std::string& variant = cell.axis("variant");
  if (variant == "grad_scaler" && low_dtype(cell.device()) != torch::kHalf) {
    return tp::Expect::unexercised(
        "bf16 autocast never overflows: only scale() and unscale() are "
        "checked here, not skipping and backing off (fp16 is)");
  }
  if (variant != "targets_on_cpu") return tp::Expect::success();
  return tp::cross_device_mistake(cell, "logits and targets already share a device")
      .naming("target");
}

// Autocast on sim:0 needs LibTorch 2.4+ (tp::sim registers CUDA's cast policy there);
// fp16_underflow casts by hand and runs everywhere.
std::optional<tp::Unmet> needs(const tp::CellSpec& cell) {
  if (!tp::sim::is_sim(cell.device()) || cell.axis("variant") == "fp16_underflow") {
    return std::nullopt;
  }
  return tp::needs_libtorch(2, 4,
                            "autocast on sim:0 needs LibTorch 2.4+: before it autocast has "
                            "switches for CPU and CUDA only (1.13: dispatch keys AutocastCPU, "
                            "AutocastXPU and AutocastCUDA; harness/sim/README.md)");
}

}  // namespace

TP_SCENARIO(amp)
    .axis("variant", {"targets_on_cpu", "grad_scaler", "fp16_underflow"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .needs(needs)
    .run(run);

}  // namespace scenarios::amp
