"""DDP ranks on Gloo: two processes, rank r's replica on device r (sim:0 and sim:1 with
--torchplace-sim, two GPUs otherwise), gradients averaged with all_reduce over Gloo on
loopback. Broken: rank 1 leaves its batch on the CPU: DeviceMismatch in rank 1. Fix: each
rank's batch on its own device; the replicas stay equal and match one process training on the
whole batch. Gloo reduces CPU and CUDA tensors, not the sim's, so the gradients go through the
CPU explicitly, as the C++ scenario does (scenarios/ddp.cpp). Deadlines: the group's timeout
and the join's; a rank that hangs fails the test, named. A failed run reports the rank that
failed first, as torchrun names its root cause: rank 0's collective fails only after rank 1's
error ended it."""
import datetime
import os
import pathlib
import pickle
import socket
import time

import pytest
import torch
import torch.distributed as dist
import torch.distributed.nn  # noqa: F401 - before the group: see rank_main
import torch.multiprocessing as mp
from torch.multiprocessing.spawn import ProcessException, ProcessRaisedException
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
    try:
        train_rank(rank, devices, port, batch_left_on_cpu, out)
    except Exception:
        with open(os.path.join(out, f"rank{rank}.failed_ns"), "w") as record:
            record.write(str(time.monotonic_ns()))  # one clock for every process of the host
        raise


def train_rank(rank, devices, port, batch_left_on_cpu, out):
    # torch.distributed.nn (imported above; torch >= 2 imports it with the first optimizer) keeps
    # group.WORLD as its functions' default group, read at import. Imported after
    # init_process_group, it keeps the group, and Gloo's worker threads, alive past
    # destroy_process_group; a worker then releasing the last all_reduce's tensor during the
    # interpreter's exit aborts the rank (seen on 2.13.0: pytorch/pytorch PR 179291). The rank
    # checks that the group's threads are gone.
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
    left = gloo_threads()
    assert not left, f"destroy_process_group left Gloo's threads running: {left}"


def gloo_threads():
    """Gloo's threads in this process, by the names torch 2.x gives them (1.13 names none)."""
    names = []
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except FileNotFoundError:  # a thread that ended since the listing
            continue
    return sorted(name for name in names if name.startswith(("pt_gloo", "gloo_", "pt_tcpstore")))


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
    try:
        while not context.join(timeout=1):
            if datetime.datetime.now() > deadline:
                for process in context.processes:
                    process.kill()
                pytest.fail(f"a rank still ran after {3 * TIMEOUT_S} s")
    except ProcessException as reported:
        first = first_failed(tmp_path)
        if first is None or first == reported.error_index:
            raise
        with open(context.error_files[first], "rb") as trace:
            message = f"\n\n-- Process {first} terminated with the following error:\n"
            message += pickle.load(trace)
        raise ProcessRaisedException(message, first, context.processes[first].pid) from reported
    return [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(WORLD)]


def first_failed(out):
    """The rank whose error came first, or None when no rank raised."""
    times = {
        rank: int((out / f"rank{rank}.failed_ns").read_text())
        for rank in range(WORLD)
        if (out / f"rank{rank}.failed_ns").exists()
    }
    return min(times, key=times.get) if times else None


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
