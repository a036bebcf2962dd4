// unregistered_buffers: a module keeps a constant tensor (a fixed random projection) as a plain
// member instead of calling register_buffer; the fix registers it. Module::to() and
// torch::save only see what is registered, so the plain member stays behind:
//   check=to_device   on CUDA the member stays on the CPU and forward raises DeviceMismatch
//                     (about mm's mat2); the registered buffer moves and matches the CPU
//                     reference. Then, on every device, the same module goes to meta: the
//                     buffer must follow, the plain member stays on the CPU (placement.h).
//   check=to_float64  on any host the member stays float32 and forward raises DtypeMismatch.
//   check=save_load   on any host the member's value is not saved: the loaded module keeps its
//                     own random projection and its output differs; a buffer round-trips exactly.
#include <torchplace/numeric.h>
#include <torchplace/placement.h>
#include <torchplace/scenario.h>
#include <torchplace/temp_dir.h>

namespace scenarios::unregistered_buffers {
namespace {

constexpr int kFeatures = 8;
constexpr int kProjected = 4;
constexpr int kOutputs = 3;
constexpr int kSamples = 16;
constexpr tp::Rtol kRtol{1e-4};  // float32 on the device against float32 on the CPU
constexpr tp::Atol kAtol{1e-5};

struct ProjectorImpl : torch::nn::Module {
  explicit ProjectorImpl(bool register_projection)
      : head(register_module("head", torch::nn::Linear(kProjected, kOutputs))),
        projection(torch::randn({kFeatures, kProjected})) {
    if (register_projection) projection = register_buffer("projection", projection);
  }

  torch::Tensor forward(const torch::Tensor& input) { return head(torch::mm(input, projection)); }

  torch::nn::Linear head;
  torch::Tensor projection;  // constant; a buffer only when registered
};
TORCH_MODULE(Projector);

bool registers(const tp::CellSpec& cell) { return cell.axis("variant") == "registered_buffer"; }

void check_to_device(tp::Cell& cell) {
  const torch::Tensor input = torch::randn({kSamples, kFeatures});
  Projector model(registers(cell));
  const torch::Tensor cpu_reference = model(input);  // before the move
  model->to(cell.device());
  cell.note("projection on " + model->projection.device().str() + " after to(" +
            cell.device().str() + ")");
  const torch::Tensor device_input = input.to(cell.device());
  const torch::Tensor output = cell.under_test("forward", [&] { return model(device_input); });
  EXPECT_EQ(output.device(), cell.device());
  TP_EXPECT_CLOSE(output, cpu_reference, kRtol, kAtol);
  // The same module to meta: a registered buffer follows, a plain member stays on the CPU.
  tp::move_to_meta(*model);
  tp::expect_placement(cell, {{"projection", model->projection,
                               registers(cell) ? tp::kMeta : torch::Device(torch::kCPU)}});
}

void check_to_float64(tp::Cell& cell) {
  Projector model(registers(cell));
  const torch::Tensor input = torch::randn({kSamples, kFeatures}, torch::kFloat64);
  const torch::Tensor float32_reference = model(input.to(torch::kFloat));  // before the cast
  model->to(torch::kFloat64);
  cell.note(std::string("projection dtype after to(kFloat64): ") +
            c10::toString(model->projection.scalar_type()));
  const torch::Tensor output = cell.under_test("forward", [&] { return model(input); });
  EXPECT_EQ(output.scalar_type(), torch::kFloat64);
  TP_EXPECT_CLOSE(output, float32_reference, kRtol, kAtol);
}

void check_save_load(tp::Cell& cell) {
  const tp::TempDir dir(cell.id());
  const torch::Tensor input = torch::randn({kSamples, kFeatures});
  Projector saved(registers(cell));
  torch::save(saved, dir.file("projector.pt"));
  Projector loaded(registers(cell));  // a fresh module: its own random projection
  torch::load(loaded, dir.file("projector.pt"));
  const torch::Tensor difference = (loaded(input) - saved(input)).abs().max();
  cell.metric("max_output_difference", difference.item<double>());
  if (registers(cell)) {
    EXPECT_TRUE(torch::equal(loaded(input), saved(input))) << "a registered buffer must round-trip";
  } else {
    EXPECT_GT(difference.item<double>(), 0.0)
        << "the plain member came back from a checkpoint that cannot hold it";
  }
}

void run(tp::Cell& cell) {
  const std::string& check = cell.axis("check");
  if (check == "to_device") return check_to_device(cell);
  if (check == "to_float64") return check_to_float64(cell);
  check_save_load(cell);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  const std::string& check = cell.axis("check");
  const bool plain = !registers(cell);
  if (check != "to_device" && !cell.device().is_cpu()) {
    return tp::Expect::skip("runs in the cpu cell: " + check +
                            " involves no device, and on a device (CUDA, sim) the member left on "
                            "the CPU is covered by check=to_device");
  }
  if (check == "to_device" && plain) {
    return tp::cross_device_mistake(cell, "the member already sits on the target device")
        .naming("mat2");
  }
  if (check == "to_float64" && plain) return tp::Expect::error(tp::ErrorClass::kDtypeMismatch);
  if (check == "save_load" && plain) {
    return tp::Expect::success("silent: no error; the loaded output differs (asserted)");
  }
  return tp::Expect::success();
}

}  // namespace

TP_SCENARIO(unregistered_buffers)
    .axis("check", {"to_device", "to_float64", "save_load"})
    .axis("variant", {"plain_member", "registered_buffer"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .run(run);

}  // namespace scenarios::unregistered_buffers
