"""torchplace.sim in a Python process (issue 42's API), run by CTest's sim.python in the venv
over this build's torch with this build's sim library (TORCHPLACE_SIM_LIBRARY):
  - the device, its name per torch version, the count and TORCHPLACE_SIM_DEVICES, an index past
    the count refused by name;
  - CUDA's device check: labels left on the CPU raise LibTorch's own mismatch, naming the target;
  - TransferLog: a blocking copy, a non_blocking one and an .item() counted exactly;
  - the classifier the pytest plugin names classes with, which registers no device;
  - a library built for another torch refused before it is loaded;
  - only its C entry points exported.
Each child is a fresh process: the device count is read once, when the sim is enabled."""
import os
import subprocess
import sys
import tempfile
import unittest

import torch

import torchplace.sim as sim


def child(code, **env):
    done = subprocess.run(
        [sys.executable, "-c", "import torch, torchplace.sim as sim\n" + code],
        capture_output=True,
        text=True,
        env=dict(os.environ, **env),
        timeout=120,
    )
    return done.returncode, done.stdout.strip(), done.stderr


class Device(unittest.TestCase):
    def test_name_and_index(self):
        expected = "sim" if int(torch.__version__.split(".")[0]) >= 2 else "privateuseone"
        self.assertEqual(sim.device(1), torch.device(expected, 1))
        self.assertEqual(sim.device_count(), 2)
        with self.assertRaisesRegex(ValueError, "no simulated device sim:2; there are 2"):
            sim.device(2)

    def test_count_from_the_environment(self):
        code, out, err = child("print(sim.device_count())", TORCHPLACE_SIM_DEVICES="3")
        self.assertEqual((code, out), (0, "3"), err)

    def test_labels_left_on_the_cpu_raise_cudas_mismatch(self):
        model = torch.nn.Linear(3, 2).to(sim.device(0))
        inputs = torch.randn(4, 3).to(sim.device(0))
        # 1.13: "... (when checking argument for argument target ...)"; 2.13: "but got target
        # is on cpu, different from other tensors on sim:0"
        with self.assertRaisesRegex(RuntimeError, "same device.*(argument target|got target)"):
            torch.nn.functional.cross_entropy(model(inputs), torch.tensor([0, 1, 1, 0]))


class Counting(unittest.TestCase):
    def test_copies_and_syncs(self):
        with sim.TransferLog() as log:
            on_device = torch.ones(8).to(sim.device(0))
            torch.ones(4).to(sim.device(0), non_blocking=True)
            on_device.sum().item()
        counts = log.counts()
        self.assertEqual(counts["host_to_device"], {"copies": 2, "bytes": 48, "non_blocking": 1})
        self.assertEqual(log.syncs(), {"copy_to_device": 1, "_local_scalar_dense": 1})

    def test_classifier(self):
        classify = sim.library().torchplace_classify
        try:
            torch.ones(2).to(sim.device(0)) + torch.ones(2)
        except RuntimeError as error:
            self.assertEqual(classify(str(error).encode()), b"DeviceMismatch")
        else:
            self.fail("a sim tensor plus a CPU tensor did not raise")
        self.assertEqual(classify(b"all good, 12 tests passed"), b"Unclassified")


class Plugin(unittest.TestCase):
    def test_classifying_registers_no_device(self):
        # Beside a GPU, torch 2.8+ takes a registered sim for its accelerator and every CUDA
        # backward then fails (harness/sim/README.md): the plugin's classifier loads the library
        # only. The message: 1.13's TensorIterator, with a GPU's name.
        code = (
            "import sys, torch\nfrom torchplace import pytest_plugin\n"
            "print(pytest_plugin._classify('Expected all tensors to be on the same device, but "
            "found at least two devices, cuda:0 and cpu!'))\n"
            "print('torchplace.sim' in sys.modules)\n"
            "print(getattr(torch._C, '_get_privateuse1_backend_name', lambda: 'none')())\n"
            "accelerator = getattr(torch, 'accelerator', None)\n"  # torch 2.6+: what autograd asks
            "print(accelerator.current_accelerator() if accelerator else None)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        name = "privateuseone" if int(torch.__version__.split(".")[0]) >= 2 else "none"
        self.assertEqual(done.stdout.split(), ["DeviceMismatch", "False", name, "None"])


class Exports(unittest.TestCase):
    def test_only_the_c_entry_points(self):
        # A C++ symbol it exported (a std::regex instantiation) bound to pip's libtorch copy,
        # built by another compiler: classifying died of SIGSEGV (harness/sim/python_exports.map)
        done = subprocess.run(
            ["nm", "-D", "--defined-only", str(sim.library_path())],
            capture_output=True,
            text=True,
            check=True,
        )
        names = [line.split()[-1] for line in done.stdout.splitlines() if line.strip()]
        self.assertIn("torchplace_classify", names)
        others = [name for name in names if not name.startswith("torchplace_")]
        self.assertEqual(others[:5], [], f"{len(others)} other symbols exported")


class Refusal(unittest.TestCase):
    def test_a_library_for_another_torch(self):
        with tempfile.TemporaryDirectory() as folder:
            fake = os.path.join(folder, "libtorchplace_sim_python.so")
            with open(fake, "wb") as handle:
                handle.write(b"\0torchplace-sim-torch-version=0.9.0;\0")
            code, _, err = child("", TORCHPLACE_SIM_LIBRARY=fake)
        self.assertNotEqual(code, 0)
        self.assertIn("built against LibTorch 0.9.0", err)
        # the traceback's last line, as `torchplace explain` reads it, names its class
        last = err.strip().splitlines()[-1]
        self.assertEqual(sim.library().torchplace_classify(last.encode()), b"BackendUnavailable")

    def test_a_library_cut_short(self):
        # An interrupted copy: the real library's bytes up to just past its version mark. Loaded,
        # dlopen mapped its segments past the file's end and the process died of SIGBUS.
        whole = sim.library_path().read_bytes()
        mark = whole.index(b"torchplace-sim-torch-version=")
        with tempfile.TemporaryDirectory() as folder:
            cut = os.path.join(folder, "libtorchplace_sim_python.so")
            with open(cut, "wb") as handle:
                handle.write(whole[: mark + 64])
            code, _, err = child("", TORCHPLACE_SIM_LIBRARY=cut)
        self.assertEqual(code, 1, err[-2000:])  # an exception, not a signal
        last = err.strip().splitlines()[-1]
        self.assertIn(f"cannot load {cut}: cut short, {mark + 64} bytes where its ELF", last)
        self.assertEqual(sim.library().torchplace_classify(last.encode()), b"BackendUnavailable")


if __name__ == "__main__":
    unittest.main(verbosity=2)
