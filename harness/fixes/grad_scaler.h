// A C++ counterpart of Python's torch.amp.GradScaler, which LibTorch's C++ API lacks (1.13 to
// 2.14). Loss scaling keeps small fp16 gradients from flushing to zero: the loss is multiplied by
// a scale before backward, the gradients are divided by it before the step, a step whose
// gradients hold inf or NaN is skipped, and the scale shrinks after such a step and grows after
// `growth_interval` good steps in a row.
//
//   tp::fixes::GradScaler scaler;
//   scaler.scale(loss).backward();
//   scaler.step(optimizer);  // unscales, then steps unless a gradient is inf/NaN
//   scaler.update();         // adjusts the scale
//
// Written with plain tensor ops that exist on every device in every version (the fused
// at::_amp_foreach_non_finite_check_and_unscale_ is CUDA-only in 1.13). Not thread-safe.
#pragma once
#include <torch/torch.h>

#include <optional>

namespace tp::fixes {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16, as Python
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;  // good steps in a row before the scale grows
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {})
      : options_(options), scale_(options.init_scale) {
    TORCH_CHECK(options.init_scale > 0 && options.growth_factor > 1 && options.backoff_factor < 1 &&
                    options.backoff_factor > 0 && options.growth_interval > 0,
                "GradScaler: needs init_scale > 0, growth_factor > 1, 0 < backoff_factor < 1, "
                "growth_interval > 0");
  }

  // The loss times the current scale, in the loss's own dtype and device.
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }

  // Divides every gradient of the optimizer by the scale, in place, and records whether any of
  // them holds inf or NaN. Once per step: a second call before update() is refused.
  void unscale(torch::optim::Optimizer& optimizer) {
    TORCH_CHECK(!found_inf_.has_value(), "GradScaler: unscale() already called since update()");
    torch::NoGradGuard no_grad;
    bool found_inf = false;
    for (auto& group : optimizer.param_groups()) {
      for (auto& parameter : group.params()) {
        torch::Tensor& grad = parameter.mutable_grad();
        if (!grad.defined()) continue;
        grad.mul_(1.0 / scale_);
        // One host sync per tensor; a fused kernel would do it once per step.
        if (!found_inf) found_inf = !torch::isfinite(grad).all().item<bool>();
      }
    }
    found_inf_ = found_inf;
  }

  // Unscales if not done yet, then steps unless a gradient was inf/NaN. True if it stepped.
  // Once per update(), as Python's GradScaler: a second call would step on stale gradients.
  bool step(torch::optim::Optimizer& optimizer) {
    TORCH_CHECK(!stepped_, "GradScaler: step() already called since update()");
    stepped_ = true;
    if (!found_inf_.has_value()) unscale(optimizer);
    if (*found_inf_) return false;
    optimizer.step();
    return true;
  }

  // Backs off after a skipped step, grows after growth_interval good steps in a row.
  void update() {
    TORCH_CHECK(found_inf_.has_value(), "GradScaler: update() without step() or unscale()");
    if (*found_inf_) {
      scale_ *= options_.backoff_factor;
      good_steps_ = 0;
    } else if (++good_steps_ == options_.growth_interval) {
      scale_ *= options_.growth_factor;
      good_steps_ = 0;
    }
    found_inf_.reset();
    stepped_ = false;
  }

  double current_scale() const { return scale_; }
  int good_steps() const { return good_steps_; }

 private:
  GradScalerOptions options_;
  double scale_;
  int good_steps_ = 0;
  std::optional<bool> found_inf_;  // set by unscale(), cleared by update()
  bool stepped_ = false;           // set by step(), cleared by update()
};

}  // namespace tp::fixes
