#!/usr/bin/env python3
"""torchplace explain on real logs (fixtures/explain/logs.json: a Python traceback and C++
programs' output from public reports, and one observed here), through the C++ classifier
($TORCHPLACE_CLASSIFY, set by CTest to the built torchplace_classify), and its exit codes; and
the scenario and fix each class is covered by (CoveredBy: in process, no classifier).
Which tensor is on which device: test_explain_placement.py."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from torchplace import schema

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "explain" / "logs.json"


def explain(*args, stdin=""):
    run = subprocess.run(
        [sys.executable, "-m", "torchplace.explain", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.returncode, run.stdout, run.stderr


class RealLogs(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("TORCHPLACE_CLASSIFY"):
            self.fail("TORCHPLACE_CLASSIFY is not set: run through CTest (report.explain)")
        self.logs = json.loads(FIXTURES.read_text(encoding="utf-8"))["logs"]

    def test_each_log_gets_its_class_fix_and_exit_code(self):
        for log in self.logs:
            with self.subTest(log=log["name"]):
                code, out, err = explain("--json", stdin=log["text"])
                self.assertEqual(code, log["exit"], out + err)
                doc = json.loads(out)
                self.assertEqual([e["class"] for e in doc["errors"]], log["classes"])
                first = doc["errors"][0]
                self.assertEqual(first["line"], log["line"])
                if log["fix_mentions"]:
                    self.assertIn(log["fix_mentions"], first["covered_by"][0]["fix"])
                    self.assertTrue(first["family"]["versions"])
                else:
                    self.assertIsNone(first["family"])

    def test_text_output_names_what_the_message_names(self):
        log = next(log for log in self.logs if log["name"] == "python_traceback")
        code, out, _ = explain(stdin=log["text"])
        self.assertEqual(code, schema.EXIT_OK)
        self.assertIn("devices cuda:0, cpu", out)
        self.assertIn("scenario: forgotten_labels (scenarios/forgotten_labels.cpp", out)

    def test_a_file_argument_reads_the_same(self):
        log = self.logs[1]
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as handle:
            handle.write(log["text"])
        try:
            code, out, _ = explain("--json", handle.name)
        finally:
            os.unlink(handle.name)
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out)["errors"][0]["class"], "CorruptArchive")

    def test_one_bare_message_without_any_marker(self):
        code, out, _ = explain(
            "--json", stdin="Input, output and indices must be on the current device\n"
        )
        self.assertEqual(code, 0, out)
        self.assertEqual(json.loads(out)["errors"][0]["covered_by"][0]["scenario"], "cpu_indices")

    def test_the_same_error_from_every_rank_is_reported_once(self):
        rank_lines = "".join(
            f"[rank{r}]: RuntimeError: CUDA error: invalid device ordinal\n\n" for r in range(3)
        )  # synthetic: torchrun's prefix on a real message
        code, out, _ = explain("--json", stdin=rank_lines)
        errors = json.loads(out)["errors"]
        self.assertEqual((code, len(errors), errors[0]["occurrences"]), (0, 1, 3))

    def test_one_unknown_error_beside_a_known_one_exits_1(self):
        # Two real logs, one after the other (a CI log holds many): one unknown error is enough.
        by_name = {log["name"]: log["text"] for log in self.logs}
        code, out, _ = explain(
            "--json", stdin=by_name["python_traceback"] + "\n" + by_name["python_shape_error"]
        )
        classes = sorted(error["class"] for error in json.loads(out)["errors"])
        self.assertEqual(code, 1, out)
        self.assertIn("Unclassified", classes)
        self.assertGreater(len(classes), 1, classes)


class WhatItKnows(unittest.TestCase):
    """Issue 44: the order of the operands, the sim's and sync-debug's messages, prefixes."""

    def first(self, text):
        code, out, err = explain("--json", stdin=text)
        self.assertEqual(code, schema.EXIT_OK, out + err)
        return json.loads(out)["errors"][0]

    def test_a_cpu_weight_with_device_indices_is_not_cpu_indices(self):
        # mlvlab/DAPT issue 2: the indexed tensor (in parentheses) is on the CPU.
        error = self.first(
            "RuntimeError: indices should be either on cpu or on the same device as the "
            "indexed tensor (cpu)\n"
        )
        self.assertEqual(
            error["names"]["where"][0], {"tensor": "the indexed tensor", "device": "cpu"}
        )
        self.assertEqual(error["covered_by"][0]["scenario"], "checkpoint_map_location")

    def test_the_wrapper_check_names_the_argument_second(self):
        # haoosz/ConceptExpress issue 5: the index (named) is on the CPU, the weight on cuda:0.
        error = self.first(
            "RuntimeError: Expected all tensors to be on the same device, but found at least two "
            "devices, cuda:0 and cpu! (when checking argument for argument index in method "
            "wrapper__index_select)\n"
        )
        self.assertEqual(
            error["names"]["where"],
            [
                {"tensor": "the other tensors", "device": "cuda:0"},
                {"tensor": "index", "device": "cpu"},
            ],
        )
        self.assertEqual(error["covered_by"][0]["scenario"], "cpu_indices")
        code, out, _ = explain(stdin="RuntimeError: " + error["message"] + "\n")
        self.assertIn("where:    the other tensors on cuda:0, index on cpu", out)

    def test_sync_debug_and_the_sims_refusal(self):
        # c10/cuda/CUDAFunctions.cpp warn_or_error_on_sync (1.13.1, 2.6.0), as Python shows it.
        sync = self.first("RuntimeError: called a synchronizing CUDA operation\n")
        self.assertEqual(
            (sync["class"], sync["covered_by"][0]["scenario"]), ("HostSync", "transfer_budget")
        )
        # This suite's own text (reports/torchplace/sim_library.py _check_version), filled in.
        refusal = self.first(
            "torchplace.sim.SimUnavailable: torchplace.sim: /x/libtorchplace_sim_python.so was "
            "built against LibTorch 2.6.0, but this torch is 2.14.1: build torchplace_sim_python "
            "against this torch\n"
        )
        self.assertEqual(refusal["class"], "BackendUnavailable")
        # The sim's TensorIterator check (harness/sim/cuda_rules.cpp, TensorIterator.cpp's words).
        scalars = self.first(
            "RuntimeError: Trying to pass too many CPU scalars to non-CPU kernel!\n"
        )
        self.assertEqual(scalars["class"], "DeviceMismatch")
        self.assertIn("torchplace_sim_python", refusal["covered_by"][0]["fix"])

    def test_launcher_prefixes_by_one_rule(self):
        # hiyouga/LlamaFactory issue 7396: torchrun's "[rank0]:", the logger's tag, c10d's.
        error = self.first(
            "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, "
            "NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 "
            "milliseconds before timing out.\n"
        )
        self.assertEqual(error["class"], "CollectiveTimeout")


class CoveredBy(unittest.TestCase):
    """Which scenario and fix covered_by names (torchplace.explain.coverage, in process, no
    classifier): each scenario a file of this tree, its fix in the fix field."""

    # PyTorch's wrapper check, as it names two GPUs (the devices are made up: synthetic)
    TWO_GPUS = (
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cuda:1! (when checking argument for argument mat1 in method wrapper_addmm)"
    )

    def covered(self, error_class, message):
        from torchplace.explain import coverage

        return coverage.covered_by(error_class, message, coverage.named(message))

    # kills reports/torchplace/explain/coverage.py:covered_by:a035ac:arg_swap:0 (the fix
    # given as the scenario, the scenario as the fix)
    def test_two_gpus_name_the_multi_gpu_scenario_and_its_fix(self):
        (entry,) = self.covered("DeviceMismatch", self.TWO_GPUS)
        self.assertEqual(entry["scenario"], "multi_gpu")
        self.assertEqual(entry["scenario_file"], "scenarios/multi_gpu.cpp")
        self.assertIn("data_parallel", entry["fix"])
        self.assertEqual(entry["why"], "two GPUs named")

    def test_every_scenario_named_is_a_file_of_this_tree(self):
        cases = [  # messages in PyTorch's words, cut short (synthetic)
            ("DeviceMismatch", self.TWO_GPUS),
            ("DeviceMismatch", self.TWO_GPUS.replace("cuda:1", "cpu")),
            ("DtypeMismatch", "expected scalar type Float but found Half"),
            ("HostSync", "called a synchronizing CUDA operation"),
            ("CollectiveTimeout", "Watchdog caught collective operation timeout"),
        ]
        for error_class, message in cases:
            entries = self.covered(error_class, message)
            self.assertTrue(entries, error_class)
            for entry in entries:
                with self.subTest(error_class=error_class, scenario=entry["scenario"]):
                    self.assertTrue((schema.ROOT / entry["scenario_file"]).is_file())
                    self.assertEqual(Path(entry["scenario_file"]).stem, entry["scenario"])


class ExitCodes(unittest.TestCase):
    def test_a_log_without_an_error_exits_3(self):
        # The issue's own example: one line that no family knows is no error found.
        code, _, err = explain(stdin="all good, 12 tests passed\n")
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn("no LibTorch error found", err)

    def test_no_error_in_the_input_exits_3(self):
        code, _, err = explain(stdin="synthetic log: epoch 1 loss 0.25\nepoch 2 loss 0.20\n")
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn("no LibTorch error found", err)

    def test_empty_input_exits_3(self):
        self.assertEqual(explain(stdin="")[0], schema.EXIT_INPUT)

    def test_unreadable_file_exits_3(self):
        code, _, err = explain("/nonexistent/torchplace-explain.log")
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn("cannot read", err)

    def test_bad_arguments_exit_64(self):
        self.assertEqual(explain("--nope")[0], schema.EXIT_USAGE)
        self.assertEqual(explain("a.log", "b.log")[0], schema.EXIT_USAGE)

    def test_a_missing_classifier_exits_3(self):
        env = dict(os.environ, TORCHPLACE_CLASSIFY="/nonexistent/torchplace_classify")
        run = subprocess.run(
            [sys.executable, "-m", "torchplace.explain"],
            input="x\n",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(run.returncode, schema.EXIT_INPUT)
        self.assertIn("no classifier", run.stderr)


if __name__ == "__main__":
    unittest.main()
