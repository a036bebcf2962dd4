"""torchplace.sim in a Python process (issue 42's API), run by CTest's sim.python in the venv
over this build's torch with this build's sim library (TORCHPLACE_SIM_LIBRARY):
  - the device, its name per torch version, the count and TORCHPLACE_SIM_DEVICES, an index past
    the count refused by name;
  - CUDA's device check: labels left on the CPU raise LibTorch's own mismatch, naming the target;
  - TransferLog: a blocking copy, a non_blocking one and an .item() counted exactly;
  - the classifier the pytest plugin names classes with;
  - a library built for another torch refused before it is loaded.
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


class Refusal(unittest.TestCase):
    def test_a_library_for_another_torch(self):
        with tempfile.TemporaryDirectory() as folder:
            fake = os.path.join(folder, "libtorchplace_sim_python.so")
            with open(fake, "wb") as handle:
                handle.write(b"\0torchplace-sim-torch-version=0.9.0;\0")
            code, _, err = child("", TORCHPLACE_SIM_LIBRARY=fake)
        self.assertNotEqual(code, 0)
        self.assertIn("built against LibTorch 0.9.0", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
