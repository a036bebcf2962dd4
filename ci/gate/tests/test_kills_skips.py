#!/usr/bin/env python3
"""Tests that kill generated mutants of the behaviour gate's skip rules (skips.py: the closed set
of skip codes, each true only where the run and the cell's device make it so) which survived
every other test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each
names the mutant it was seen to kill. Input files are made here and say that they are synthetic."""
import itertools
import unittest

from gate_inputs import Gate, CPU_HOST, FIX_CPU, FIX_CUDA, expectations, passing, results, skipping
from torchplace.gate import report, skips
from torchplace.schema import InputError

DEVICES = ("cpu", "sim:0", "cuda:0", "cuda:1", "cuda:2", "cuda:0+cuda:1")
HOSTS = ((False, 0), (True, 0), (True, 1), (True, 2))  # (built_with_cuda, device_count)
GLOO = ({}, {"c10d_gloo": True}, {"c10d_gloo": False})  # what the fingerprint says of c10d Gloo
# The codes of harness/skip_code.h, written here, not read from skips.py: a code dropped there
# must turn these tests red (a held-out mutant dropped no_c10d_gloo from NEED_CODES unseen).
DEVICE_ABSENT = ("no_cuda_build", "no_cuda_device", "too_few_gpus")
NEED_CODES = ("needs_cuda", "needs_no_cuda", "not_on_sim", "no_c10d_gloo")
CODES = DEVICE_ABSENT + NEED_CODES


def contradiction(code, device, built, count, gloo):
    """The oracle, from the rules as skips.py's docstring states them: why the run contradicts
    `code` on a cell on `device` (the first reason, as text the problem must hold), or None."""
    needed = max([int(part[5:]) + 1 for part in device.split("+") if part[:5] == "cuda:"] or [0])
    if code in DEVICE_ABSENT and needed == 0:
        return f"{device} is no CUDA device"
    return {
        "no_cuda_build": built and "this LibTorch is built with CUDA",
        "no_cuda_device": (not built and "that is no_cuda_build")
        or (count > 0 and f"the run saw {count} CUDA device(s)"),
        "too_few_gpus": count >= needed and f"the run saw {count} CUDA device(s)",
        "needs_cuda": count > 0 and f"the run saw {count} CUDA device(s)",
        "needs_no_cuda": (needed > 0 and "is a CUDA cell") or (count == 0 and "has no CUDA"),
        "not_on_sim": not device.startswith("sim") and "is not the simulated device",
        "no_c10d_gloo": gloo.get("c10d_gloo") is not False and "does not say c10d Gloo",
    }[code] or None


class EveryCodeOnEveryDeviceAndHost(unittest.TestCase):
    def test_a_skip_is_accepted_exactly_where_its_code_is_true(self):
        # kills reports/torchplace/gate/skips.py:_untrue:25be78:const_plus:0 (a cuda:0 cell's
        # true too_few_gpus refused) and :const_minus:0 (a CPU cell's too_few_gpus refused for
        # another reason than the one that holds)
        allowing = {"outcome": "success", "skip_codes": list(NEED_CODES)}
        wrong, accepted = [], 0  # one failure, not one per case
        for device, (built, count), gloo, code in itertools.product(DEVICES, HOSTS, GLOO, CODES):
            fingerprint = dict(gloo, cuda={"built_with_cuda": built, "device_count": count})
            cell = {"device": device, "skip_code": code, "reason": "synthetic skip"}
            problem = skips.skip_problem(cell, allowing, fingerprint)
            why = contradiction(code, device, built, count, gloo)
            accepted += why is None
            said = f"skip_code {code!r} contradicts the run: "
            if (
                (problem is None) != (why is None)
                or why
                and not (said in problem and why in problem)
            ):
                wrong.append(f"{code} on {device}, {built=} {count=} {gloo}: {problem}")
        # the first few only: a runner that reads the output at the end must not block on it
        self.assertEqual(len(wrong), 0, "against the rules:\n" + "\n".join(wrong[:5]))
        self.assertTrue(0 < accepted < len(DEVICES) * len(HOSTS) * len(GLOO) * len(CODES))


class SkipWithoutCode(unittest.TestCase):
    # A results.json from before skip codes has no skip_code field ("absent" leaves it out).
    def test_the_problem_named_is_the_missing_code(self):
        # kills reports/torchplace/gate/skips.py:skip_problem:2c3a8b:delete_stmt:0 (a missing
        # code reported as the unknown code None)
        cell = skipping(FIX_CPU, "absent", reason="synthetic: skipped by hand")
        problem = skips.skip_problem(cell, passing(FIX_CPU)["expected"], CPU_HOST)
        self.assertIn("skipped with no skip_code", problem)
        self.assertIn("'synthetic: skipped by hand'", problem)
        self.assertNotIn("None", problem)

    def test_the_gate_exits_2_naming_it(self):
        gate = Gate()
        run = results([skipping(FIX_CPU, "absent", reason="synthetic: skipped by hand")])
        code = gate.run(run, expectations([passing(FIX_CPU)]))
        self.assertEqual(code, report.EXIT_BEHAVIOUR, gate.output)
        (found,) = gate.verdict["behaviour"]["regressions"]
        self.assertEqual(found["kind"], "unexplained_skip")
        self.assertIn("no skip_code", found["detail"])


class SkipWithoutReason(unittest.TestCase):
    def test_a_true_code_without_a_stated_reason_is_refused(self):
        # kills reports/torchplace/gate/skips.py:skip_problem:295b07:delete_stmt:0 (and its
        # delete_branch:0, :b56ebb:delete_stmt:0): a skip that says nothing was accepted
        for reason in ("", " \n"):
            with self.subTest(reason=reason):
                gate = Gate()
                run = results(
                    [passing(FIX_CPU), skipping(FIX_CUDA, "no_cuda_build", reason=reason)]
                )
                code = gate.run(run, expectations([passing(FIX_CPU), passing(FIX_CUDA)]))
                self.assertEqual(code, report.EXIT_BEHAVIOUR, gate.output)
                (found,) = gate.verdict["behaviour"]["regressions"]
                self.assertEqual((found["id"], found["kind"]), (FIX_CUDA, "unexplained_skip"))
                self.assertIn("without a stated reason", found["detail"])


class AcceptedSkip(unittest.TestCase):
    def test_a_gpu_cell_skipped_on_a_host_without_cuda_passes(self):
        gate = Gate()
        run = results([passing(FIX_CPU), skipping(FIX_CUDA, "no_cuda_build")])
        code = gate.run(run, expectations([passing(FIX_CPU), passing(FIX_CUDA)]))
        self.assertEqual(code, report.EXIT_PASS, gate.output)
        self.assertEqual([row["id"] for row in gate.verdict["behaviour"]["skipped"]], [FIX_CUDA])


class CoveredByOtherCell(unittest.TestCase):
    CELL = {"device": "cpu", "skip_code": "covered_by_other_cell", "reason": "synthetic skip"}

    def test_accepted_only_where_the_expectation_is_a_skip(self):
        # kills reports/torchplace/gate/skips.py:skip_problem:4db274:delete_stmt:0 (a NameError:
        # exit 3 for every such skip) and :4db274:logic_swap:0 (the code's own expectation read
        # where the committed one decides; a TypeError for a new cell)
        skip = {"outcome": "skip", "error_class": None, "category": "skipped"}
        success = {"outcome": "success", "error_class": None, "category": "passed"}
        for committed, own, accepted, whose in (
            (skip, success, True, None),
            (success, skip, False, "committed"),
            (None, skip, True, None),
            (None, success, False, "code's"),
        ):
            with self.subTest(committed=committed, own=own):
                cell = dict(self.CELL, expected=own)
                problem = skips.skip_problem(cell, committed, CPU_HOST)
                if accepted:
                    self.assertIsNone(problem)
                else:
                    self.assertIn(f"the {whose} expectation is 'success', not a skip", problem)


class NeedCodeNotListed(unittest.TestCase):
    def test_a_need_code_its_entry_does_not_list_is_refused_naming_what_it_allows(self):
        # kills reports/torchplace/gate/skips.py:skip_problem:96ac5a:delete_stmt:0 (a NameError:
        # exit 3 instead of the regression)
        cell = {"device": "cpu", "skip_code": "needs_cuda", "reason": "synthetic: needs CUDA"}
        listed = {"outcome": "success", "skip_codes": ["needs_no_cuda"]}
        for committed, says in (
            (listed, "its committed entry allows ['needs_no_cuda']"),
            ({"outcome": "success"}, "its committed entry allows no need code"),
            (None, "a new cell has no committed entry and allows no need code"),
        ):
            with self.subTest(committed=committed):
                problem = skips.skip_problem(cell, committed, CPU_HOST)
                self.assertIn(f"skip_code 'needs_cuda' on cpu: {says}", problem)
                self.assertIn("synthetic: needs CUDA", problem)
        self.assertIsNone(skips.skip_problem(cell, {"skip_codes": ["needs_cuda"]}, CPU_HOST))

    def test_each_need_code_true_of_the_run_needs_its_entry_to_list_it(self):
        # held out: NEED_CODES without no_c10d_gloo accepted that skip on a new cell unlisted
        gpu_host = dict(CPU_HOST, cuda={"built_with_cuda": True, "device_count": 1})
        for code, device, fingerprint in (
            ("needs_cuda", "cpu", CPU_HOST),
            ("needs_no_cuda", "cpu", gpu_host),
            ("not_on_sim", "sim:0", CPU_HOST),
            ("no_c10d_gloo", "cpu", dict(CPU_HOST, c10d_gloo=False)),
        ):
            cell = {"device": device, "skip_code": code, "reason": "synthetic skip"}
            with self.subTest(code=code):
                self.assertIn("allows no need code", skips.skip_problem(cell, None, fingerprint))
                listed = {"outcome": "success", "skip_codes": [code]}
                self.assertIsNone(skips.skip_problem(cell, listed, fingerprint))


class NotAcceptedCode(unittest.TestCase):
    def test_the_refusal_says_what_the_code_means(self):
        # kills reports/torchplace/gate/skips.py:skip_problem:8ec08a:arg_swap:0 (every refused
        # code "explained" by its own name: device_unusable's sticky CUDA error went unsaid)
        for code, meaning in (
            ("device_unusable", "an earlier cell's sticky CUDA error broke the device"),
            ("unlisted", "a skip the harness did not code"),
            ("synthetic_bogus", "not a code the harness knows"),
        ):
            cell = {"device": "cpu", "skip_code": code, "reason": "synthetic skip"}
            with self.subTest(code=code):
                problem = skips.skip_problem(cell, None, CPU_HOST)
                self.assertIn(f"skip_code {code!r} ({meaning}", problem)
                self.assertIn("is not an accepted skip: synthetic skip", problem)


class DeviceLabels(unittest.TestCase):
    def test_a_cuda_label_without_an_index_is_no_cuda_device(self):
        # kills reports/torchplace/gate/skips.py:<module>:9004f2:regex_quantifier:0 (a synthetic,
        # malformed "cuda:" label crashed the gate with a ValueError instead of refusing the skip)
        for device in ("cuda:", "cuda:x"):
            cell = {"device": device, "skip_code": "no_cuda_build", "reason": "synthetic skip"}
            with self.subTest(device=device):
                problem = skips.skip_problem(cell, None, CPU_HOST)
                self.assertIn(f"contradicts the run: {device} is no CUDA device", problem)


class RequiredDevices(unittest.TestCase):
    def test_cuda_without_a_count_is_bad_input(self):
        # kills reports/torchplace/gate/skips.py:parse_required:7dbafe:regex_quantifier:0
        # ("cuda=" a ValueError, a crash, where a usage error is due)
        self.assertEqual(skips.parse_required("cuda=12"), {"cuda": 12})
        for text in ("cuda=", "cuda=x", "gpu=1", None):
            with self.subTest(text=text), self.assertRaises(InputError) as raised:
                skips.parse_required(text)
            self.assertIn("expected cuda=N", str(raised.exception))


class NewerLibTorchNeeded(unittest.TestCase):
    """needs_newer_libtorch: true only on a run older than the version the cell names (a 2.x run
    that skips a cell only 1.13 skips is a regression; found by a 2.14.1 mutation pass)."""

    def problem(self, ran, needs, committed_needs="same"):
        """The problem with a sim:0 cell skipped waiting for `needs` on a run of `ran`, whose
        committed entry lists the code and waits for committed_needs (by default the same)."""
        cell = {"device": "sim:0", "skip_code": "needs_newer_libtorch", "reason": "synthetic"}
        if needs is not None:
            cell["needs_libtorch"] = needs
        committed = {"outcome": "success", "skip_codes": ["needs_newer_libtorch"]}
        committed_needs = needs if committed_needs == "same" else committed_needs
        if committed_needs is not None:
            committed["needs_libtorch"] = committed_needs
        fingerprint = {
            "libtorch_version": ran,
            "cuda": {"built_with_cuda": False, "device_count": 0},
        }
        return skips.skip_problem(cell, committed, fingerprint)

    def test_accepted_only_below_the_named_version_compared_as_numbers(self):
        for ran, needs in (
            ("1.13.0", "2.0"),
            ("1.13.1", "2.4"),
            ("2.3.1", "2.4"),
            ("2.9.0", "2.10"),
        ):
            self.assertIsNone(self.problem(ran, needs), f"{ran} needs {needs}")
        for ran, needs in (
            ("2.0.0", "2.0"),
            ("2.14.1", "2.0"),
            ("2.14.1", "2.4"),
            ("2.10.0", "2.9"),
        ):
            problem = self.problem(ran, needs) or ""
            self.assertIn(f"the run's LibTorch {ran} is {needs} or newer", problem)

    def test_a_skip_that_names_no_version_is_refused(self):
        for needs in (None, "", "two", "2.0rc", ".0", "2."):
            self.assertIn("names no LibTorch version", self.problem("1.13.0", needs) or "")

    def test_a_version_other_than_the_committed_one_is_refused(self):
        # a needs_libtorch(3, 0) slipped for (2, 0) still skips truly on 1.13: the entry holds 2.0
        for needs, committed in (("3.0", "2.0"), ("2.1", "2.0"), ("2.0", None)):
            problem = self.problem("1.13.0", needs, committed) or ""
            self.assertIn(
                f"waits for LibTorch {needs}, its committed entry for {committed}", problem
            )

    def test_a_run_whose_version_reads_as_none_is_refused(self):
        self.assertIn("reads as no version", self.problem("unknown", "2.0") or "")

    def test_not_listed_by_the_committed_entry_is_refused(self):
        cell = {"device": "sim:0", "skip_code": "needs_newer_libtorch", "reason": "synthetic"}
        cell["needs_libtorch"] = "2.0"
        fingerprint = {
            "libtorch_version": "1.13.0",
            "cuda": {"built_with_cuda": False, "device_count": 0},
        }
        self.assertIn("allows", skips.skip_problem(cell, {"outcome": "success"}, fingerprint) or "")


if __name__ == "__main__":
    unittest.main()
