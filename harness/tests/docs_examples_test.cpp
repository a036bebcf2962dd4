// The examples of the headers' comments and of the documents (harness/TESTING_YOUR_CODE.md, the
// sim's), compiled and run (CTest docs.examples). `ci/lint/lint.py docs` holds each example to
// this file word for word: an example edited where it is shown must be edited here too, where it
// has to compile and pass.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>

#include <torchplace/fixes/grad_scaler.h>
#include <torchplace/placement.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>
#include <torchplace/transfer_metrics.h>

namespace docs_examples_test {
namespace {

using torch::nn::functional::cross_entropy;

struct Batch {
  torch::Tensor input, target;
};

// A training step that moves its batch with blocking copies, as most do.
void train_step(torch::nn::Linear& model, torch::optim::Optimizer& optimizer, const Batch& batch,
                torch::Device device) {
  optimizer.zero_grad();
  const torch::Tensor loss = cross_entropy(model(batch.input.to(device)), batch.target.to(device));
  loss.backward();
  optimizer.step();
}

torch::nn::Linear model_on(torch::Device device) {
  torch::nn::Linear model(4, 3);
  model->to(device);
  return model;
}

struct Step {
  explicit Step(torch::Device device)
      : model(model_on(device)), optimizer(model->parameters(), torch::optim::SGDOptions(0.1)) {}
  torch::nn::Linear model;
  torch::optim::SGD optimizer;
  Batch batch{torch::randn({8, 4}), torch::randint(3, {8})};  // 128 + 64 bytes to the device
};

// scenario.h
TP_SCENARIO(forgotten_labels)
    .axis("loss", {"cross_entropy", "nll"})
    .axis("variant", {"broken", "manual_to"})
    .on(tp::DeviceAxis::kEach)
    .expect([](const tp::CellSpec& cell) { return tp::Expect::success(); })
    .run([](tp::Cell& cell) { /* uses cell.axis("loss"), cell.device() */ });

// scenario.h: the statement under test; the target left on the CPU raises on sim:0.
void under_test(tp::Cell& cell) {
  torch::nn::Linear model(4, 3);
  model->to(cell.device());
  const torch::Tensor input = torch::randn({8, 4});
  const torch::Tensor target = torch::randint(3, {8});
  const torch::Tensor logits = model(input.to(cell.device()));  // preparing
  cell.under_test("cross_entropy", [&] { return cross_entropy(logits, target); });
}
TP_SCENARIO(header_under_test)
    .on(tp::DeviceAxis::kEach)
    .expect([](const tp::CellSpec& cell) {
      return tp::cross_device_mistake(cell, "the target and the model share the CPU");
    })
    .run(under_test);

// placement.h: the batch as a fix moves it for a model on the meta device.
void placement(tp::Cell& cell) {
  const Batch batch{torch::randn({8, 4}), torch::randint(3, {8})};
  const Batch moved{batch.input.to(tp::kMeta), batch.target.to(tp::kMeta)};
  tp::expect_placement(cell,
                       {{"input", moved.input, tp::kMeta}, {"target", moved.target, tp::kMeta}});
}
TP_SCENARIO(header_placement)
    .on(tp::DeviceAxis::kEach)
    .expect([](const tp::CellSpec&) { return tp::Expect::success(); })
    .run(placement);

// TESTING_YOUR_CODE.md: a fix-only cell, the shipped step under test.
void shipped_step(tp::Cell& cell) {
  Step step(cell.device());
  auto& [model, optimizer, batch] = step;
  cell.under_test("train_step", [&] { train_step(model, optimizer, batch, cell.device()); });
}
TP_SCENARIO(my_training_step)
    .on(tp::DeviceAxis::kEach)
    .expect([](const tp::CellSpec& cell) {
      return tp::cross_device_fix(cell, "on the CPU every tensor shares one device");
    })
    .run(shipped_step);

tp::Expect on_sim(const tp::CellSpec& cell) {
  return tp::sim::is_sim(cell.device()) ? tp::Expect::success()
                                        : tp::Expect::skip("counted on sim:0 only");
}

// transfer_metrics.h: a step's counts recorded for the gate.
void transfer_metrics(tp::Cell& cell) {
  Step step(tp::sim::device());
  auto& [model, optimizer, batch] = step;
  tp::sim::TransferLog log;
  train_step(model, optimizer, batch, tp::sim::device());
  log.stop();
  tp::record_transfers(cell, "step", log.counts());
}
TP_SCENARIO(header_transfer_metrics).on(tp::DeviceAxis::kEach).expect(on_sim).run(transfer_metrics);

// harness/sim/TRANSFER_LOG.md, TESTING_YOUR_CODE.md: a step's budget, checked and recorded.
void transfer_budget(tp::Cell& cell) {
  Step step(tp::sim::device());
  auto& [model, optimizer, batch] = step;
  train_step(model, optimizer, batch, tp::sim::device());  // warm-up: gradients allocated
  tp::sim::TransferLog log;                                // records until stop() or destruction
  train_step(model, optimizer, batch, tp::sim::device());
  log.stop();
  EXPECT_LE(log.host_to_device().bytes, 1024) << log.summary();
  EXPECT_EQ(log.syncs("_local_scalar_dense"), 0);    // no .item() in the step
  tp::record_transfers(cell, "step", log.counts());  // <torchplace/transfer_metrics.h>: gated
}
TP_SCENARIO(header_transfer_budget).on(tp::DeviceAxis::kEach).expect(on_sim).run(transfer_budget);

// sim/transfer_log.h: what the log counts of a step that moves its batch with blocking copies.
TEST(DocsExamples, TransferLog) {
  Step step(tp::sim::device());
  auto& [model, optimizer, batch] = step;
  tp::sim::TransferLog log;  // records from here ...
  train_step(model, optimizer, batch, tp::sim::device());
  log.stop();  // ... to here (or to its destruction)
  EXPECT_LE(log.host_to_device().bytes, 4096);
  EXPECT_EQ(log.syncs("_local_scalar_dense"), 0) << log.summary();  // no .item() in the step
  // Not 0 in all: each blocking .to(device) of the batch waits (the header's old example).
  EXPECT_EQ(log.syncs(), 2) << log.summary();
  EXPECT_EQ(log.syncs("copy_to_device"), 2) << log.summary();
  EXPECT_EQ(log.host_to_device().bytes, 8 * 4 * 4 + 8 * 8);
}

// sim/sim.h and harness/sim/README.md: a label left on the CPU raises on sim:0.
TEST(DocsExamples, Sim) {
  torch::nn::Linear model(4, 3);
  const torch::Tensor x = torch::randn({8, 4});
  const torch::Tensor y = torch::randint(3, {8});
  const auto header = [&] {
    tp::sim::enable();  // once per process; idempotent
    const torch::Device device = tp::sim::device();
    model->to(device);
    auto loss = torch::nll_loss(model(x.to(device)), y);  // raises: y was left on the CPU
  };
  const auto readme = [&] {
    tp::sim::enable();                                // once per process; idempotent
    const torch::Device device = tp::sim::device();   // privateuseone:0 ("sim:0" on 2.x)
    const torch::Device second = tp::sim::device(1);  // a second device: sim:1
    model->to(device);
    auto loss = torch::nn::functional::cross_entropy(model(x.to(device)), y);  // raises: y on CPU
  };
  for (const auto& example : {std::function<void()>(header), std::function<void()>(readme)}) {
    try {
      example();
      ADD_FAILURE() << "no device mismatch raised";
    } catch (const c10::Error& error) {
      EXPECT_NE(std::string(error.what()).find("Expected all tensors to be on the same device"),
                std::string::npos)
          << error.what();
    }
  }
}

// fixes/grad_scaler.h: a step scaled, unscaled and taken.
TEST(DocsExamples, GradScaler) {
  torch::nn::Linear model(4, 3);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  const torch::Tensor before = model->weight.detach().clone();
  const torch::Tensor loss = model(torch::randn({8, 4})).pow(2).mean();
  tp::fixes::GradScaler scaler;
  scaler.scale(loss).backward();
  scaler.step(optimizer);  // unscales, then steps unless a gradient is inf/NaN
  scaler.update();         // adjusts the scale
  EXPECT_FALSE(torch::equal(before, model->weight.detach()));
  EXPECT_EQ(scaler.current_scale(), 65536.0);  // one good step: not grown yet
}

}  // namespace
}  // namespace docs_examples_test
