"""DDP ranks on Gloo: two processes, rank r's replica on device r (sim:0 and sim:1 with
--torchplace-sim, two GPUs otherwise), gradients averaged with all_reduce over Gloo on
loopback. Broken: rank 1 leaves its batch on the CPU: DeviceMismatch in rank 1. Fix: each
rank's batch on its own device; the replicas stay equal and match one process training on the
whole batch. Gloo reduces CPU and CUDA tensors, not the sim's, so the gradients go through the
CPU explicitly, as the C++ scenario does (scenarios/ddp.cpp). Deadlines: the group's timeout
and the join's; a rank that hangs fails the test, named."""
import datetime
import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from training import Classifier, classify_loss, data, train

WORLD, TIMEOUT_S = 2, 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def average_gradients(model: torch.nn.Module) -> None:
    for parameter in model.parameters():
        flat = parameter.grad.cpu()
        dist.all_reduce(flat)
        parameter.grad.copy_(flat / WORLD)


def rank_main(rank, devices, port, batch_left_on_cpu, out):
    if devices[0].startswith(("sim", "privateuseone")):
        import torchplace.sim  # noqa: F401 - the device, in this process too
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD,
        timeout=datetime.timedelta(seconds=TIMEOUT_S),
    )
    device = torch.device(devices[rank])
    inputs, labels = (t.chunk(WORLD)[rank] for t in data())
    batch_device = torch.device("cpu") if batch_left_on_cpu and rank == 1 else device
    model = Classifier().to(device)
    loss = classify_loss(inputs.to(batch_device), labels.to(batch_device))
    train(model, loss, before_step=average_gradients)  # as DDP's gradient hooks do
    flat = torch.cat([p.detach().cpu().flatten() for p in model.parameters()])
    torch.save(flat, os.path.join(out, f"rank{rank}.pt"))
    dist.destroy_process_group()


def run_ranks(devices, tmp_path, batch_left_on_cpu):
    names = [str(d) for d in devices]
    context = mp.start_processes(
        rank_main,
        args=(names, free_port(), batch_left_on_cpu, str(tmp_path)),
        nprocs=WORLD,
        join=False,
        start_method="spawn",
    )
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=3 * TIMEOUT_S)
    while not context.join(timeout=1):
        if datetime.datetime.now() > deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"a rank still ran after {3 * TIMEOUT_S} s")
    return [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(WORLD)]


@pytest.mark.torchplace_broken("DeviceMismatch")
def test_rank_batch_left_on_cpu(device_pair, tmp_path):
    run_ranks(device_pair, tmp_path, batch_left_on_cpu=True)


def test_each_rank_on_its_device(device_pair, tmp_path):
    rank0, rank1 = run_ranks(device_pair, tmp_path, batch_left_on_cpu=False)
    torch.testing.assert_close(rank0, rank1, rtol=0, atol=0)
    whole = Classifier()
    train(whole, classify_loss(*data()))
    reference = torch.cat([p.detach().flatten() for p in whole.parameters()])
    torch.testing.assert_close(rank0, reference, rtol=1e-4, atol=1e-5)
