// toy_train [cpu|cuda]: the team's production entry point. Trains a few steps and exits 1 unless
// the loss fell. Links LibTorch and torchplace::fixes only (no test framework).
#include <iostream>
#include <string>

#include "toy/model.h"

int main(int argc, char** argv) {
  const std::string where = argc > 1 ? argv[1] : "cpu";
  if (argc > 2 || (where != "cpu" && where != "cuda")) {
    std::cerr << "usage: toy_train [cpu|cuda]\n";
    return 64;
  }
  torch::manual_seed(0);
  const torch::Device device(where == "cuda" ? torch::kCUDA : torch::kCPU);
  toy::Net net;
  net->to(device);
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.5));
  const toy::Batch batch = toy::make_batch(64);
  const double first = toy::train_step(net, optimizer, batch, device);
  double last = first;
  for (int step = 1; step < 20; ++step) last = toy::train_step(net, optimizer, batch, device);
  std::cout << "loss " << first << " -> " << last << " on " << device << "\n";
  return last < first ? 0 : 1;
}
