#!/usr/bin/env python3
"""Tests of the generated-mutant engine (torchplace.mutation.generated, issue 26), without
building anything: every operator fires on a small synthetic source, ids are unique and the same
on every generation, each mutant changes its file and applies to the file in scope it names (a
Python mutant still parses), comments and strings are never mutated, a changed line refuses its
mutant, the equivalents file names only generated mutants, and the sample order depends on the
seed alone; the shards split the set; the shards' records make the ledger. Standard library
only."""
import ast
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

from torchplace.mutation import (
    generated,
    ledger,
    operators_cpp,
    operators_py,
    pytests,
    scratch,
)
from torchplace.mutation.run import CannotJudge
from torchplace.schema import EXIT_ENV, EXIT_USAGE, ROOT

# Synthetic sources written for this test, one site of each operator at least.
CPP = """// a comment with a < b and true
int f(int a, int b, bool c) {
  const char* text = "a < b && true";
  if (a < b && !c) return std::min(a, 2);
  if (a == b) {
    a += 1;
    b -= a;
  }
  for (int i = 0; i < b; ++i) g(i, a);
  bool d = false;
  return a >= b || d;
}
"""
PY = '''"""Docstring: a < b."""


def f(a, b, c):
    """Not mutated: 1 < 2."""
    if a < b and not c:
        return min(a, 2)
    x = f"{a == b}"
    a += 1
    b -= a
    for i in range(a, b):
        g(i, a)
    return a is None or True
'''


class Operators(unittest.TestCase):
    def test_every_cpp_operator_fires_outside_comments_and_strings(self):
        mutants = operators_cpp.mutants_of("x.cpp", CPP)
        operators = {m.operator for m in mutants}
        self.assertEqual(
            operators,
            {
                "rel_flip",
                "eq_flip",
                "logic_swap",
                "not_drop",
                "bool_flip",
                "negate_if",
                "delete_branch",
                "unguard",
                "const_plus",
                "const_minus",
                "minmax_swap",
                "delete_stmt",
                "return_value",
                "arg_swap",
                "loop_start",
                "loop_bound",
                "aug_assign",
                "dup_stmt",
            },
        )
        self.assertFalse([m for m in mutants if m.line in (1, 3)], "comment or string mutated")
        unguard = [m for m in mutants if m.operator == "unguard"]
        self.assertEqual([m.new.strip() for m in unguard], ["return std::min(a, 2);"])

    def test_no_return_value_mutant_returns_what_was_returned(self):
        for value in ("false", "nullptr", "std::nullopt", "c10::nullopt", "{}"):
            text = f"bool f() {{\n  return {value};  // a note\n}}\n"
            operators = [m.operator for m in operators_cpp.mutants_of("x.cpp", text)]
            self.assertNotIn("return_value", operators, value)
        for value in ("0", "true", "x"):  # `return 0;` may build a class type from an int
            operators = [
                m.operator
                for m in operators_cpp.mutants_of("x.cpp", f"int f() {{\n  return {value};\n}}\n")
            ]
            self.assertIn("return_value", operators, value)

    def test_every_python_operator_fires_outside_docstrings_and_fstrings(self):
        mutants = operators_py.mutants_of("x.py", PY)
        operators = {m.operator for m in mutants}
        self.assertEqual(
            operators,
            {
                "rel_flip",
                "eq_flip",
                "logic_swap",
                "not_drop",
                "bool_flip",
                "negate_if",
                "delete_branch",
                "const_plus",
                "const_minus",
                "minmax_swap",
                "delete_stmt",
                "return_value",
                "arg_swap",
                "loop_start",
                "loop_bound",
                "aug_assign",
                "dup_stmt",
            },
        )
        self.assertFalse(
            [
                m
                for m in mutants
                if m.line in (1, 5, 8) and m.operator not in ("delete_stmt", "dup_stmt")
            ]
        )
        for mutant in mutants:
            ast.parse(operators_py.apply(PY, mutant))

    def test_a_changed_line_refuses_its_mutant(self):
        mutant = operators_cpp.mutants_of("x.cpp", CPP)[0]
        with self.assertRaises(ValueError):
            operators_cpp.apply(CPP.replace(mutant.old, mutant.old + " "), mutant)
        py = [m for m in operators_py.mutants_of("x.py", PY) if m.operator == "rel_flip"][0]
        with self.assertRaises(ValueError):
            operators_py.apply(PY.replace("a < b and", "a  < b and", 1), py)

    def test_ids_survive_lines_added_elsewhere(self):
        shifts = (
            (operators_cpp, CPP, lambda t: "// synthetic: a line added above\n" + t),
            (operators_py, PY, lambda t: t.replace("\n\ndef f", "\nX = 1\n\n\ndef f", 1)),
        )
        for module, text, shift in shifts:
            before = {m.id: m for m in module.mutants_of("x", text)}
            after = {m.id: m for m in module.mutants_of("x", shift(text))}
            self.assertEqual(set(before), set(after) & set(before))
            moved = [i for i in before if after[i].line != before[i].line]
            self.assertTrue(moved, "the shift moved no mutant: the test shows nothing")
            for ident in before:
                mutated = module.apply(shift(text), after[ident])
                self.assertEqual(mutated, shift(module.apply(text, before[ident])), ident)
        ids = [m.id for m in operators_py.mutants_of("x.py", PY)]
        self.assertTrue(all(":f:" in i for i in ids if "delete_stmt" in i), ids)

    def test_a_python_mutant_runs_only_the_tests_that_execute_its_statement(self):
        test = pytests.PyTest  # synthetic tests: names, seconds and lines made up here
        kill_set = pytests.KillSet(
            [
                test("slow", [], {}, "", 9.0, {"x.py": {4, 5}}, True),
                test("fast", [], {}, "", 1.0, {"x.py": {5}}, True),
                test("other", [], {}, "", 1.0, {"y.py": {5}}, True),
                test("untraced", [], {}, "", 5.0, {}, False),
            ],
            verified=True,
        )
        self.assertEqual(
            [t.name for t in kill_set.candidates("x.py", 5, 6)], ["fast", "untraced", "slow"]
        )
        self.assertEqual([t.name for t in kill_set.candidates("x.py", 4, 4)], ["untraced", "slow"])
        kill_set.kills["slow"] = 9
        self.assertEqual([t.name for t in kill_set.candidates("x.py", 4, 4)], ["slow", "untraced"])
        self.assertEqual(pytests.KillSet([], True).try_mutant("x.py", 1, 1, 1)[0], "survived")


class InScope(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mutants = generated.generate()

    def test_ids_are_unique_and_stable(self):
        ids = [m.id for m in self.mutants]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(ids, [m.id for m in generated.generate()])

    def test_each_mutant_changes_its_file_and_python_still_parses(self):
        texts = {}
        for mutant in self.mutants:
            text = texts.setdefault(mutant.path, (ROOT / mutant.path).read_text())
            changed = scratch.apply(text, mutant)
            self.assertNotEqual(changed, text, mutant.id)
            if mutant.path.endswith(".py"):
                ast.parse(changed)

    def test_the_equivalents_name_generated_mutants(self):
        ledger.check_equivalents(self.mutants, ledger.load_equivalents())

    def test_the_sample_order_follows_the_seed(self):
        first = [m.id for m in generated.sample_order(self.mutants, "abc")]
        self.assertEqual(first, [m.id for m in generated.sample_order(self.mutants, "abc")])
        self.assertNotEqual(
            first[:20], [m.id for m in generated.sample_order(self.mutants, "abd")][:20]
        )
        self.assertEqual(sorted(first), sorted(m.id for m in self.mutants))

    def test_the_shards_hold_each_mutant_once(self):
        shards = [[m.id for m in generated.shard_of(self.mutants, f"{k}/3")] for k in range(3)]
        self.assertEqual(sorted(sum(shards, [])), sorted(m.id for m in self.mutants))
        self.assertTrue(all(len(shard) >= len(self.mutants) // 3 for shard in shards))
        for bad in ("3/3", "x/3", "1"):
            with self.subTest(shard=bad), self.assertRaises(SystemExit) as raised:
                generated.shard_of(self.mutants, bad)
            self.assertEqual(raised.exception.code, EXIT_USAGE)


class Environment(unittest.TestCase):
    def test_ctests_environment_modifications_reach_the_test(self):
        # report.explain finds its classifier through one (TORCHPLACE_CLASSIFY=set:...)
        env = {"A": "a", "P": "p"}
        for item in ("A=string_append:1", "P=path_list_prepend:q", "N=set:n", "A=string_prepend:0"):
            pytests.modify(env, item)
        self.assertEqual(env, {"A": "0a1", "P": f"q{os.pathsep}p", "N": "n"})
        pytests.modify(env, "N=unset:")
        self.assertNotIn("N", env)
        with self.assertRaises(ValueError):
            pytests.modify(env, "A=frobnicate:x")


class TestOutput(unittest.TestCase):
    def test_a_failing_test_that_writes_much_is_a_fail_not_a_timeout(self):
        # 1 MiB of output, then exit 1: a pipe read only at the end blocked it into a timeout
        writes = "import sys; sys.stdout.write('x' * (1 << 20)); sys.exit(1)"
        test = pytests.PyTest("loud", [sys.executable, "-c", writes], dict(os.environ), ".")
        (ended,) = pytests.run_tests([test], 1, lambda t: 20.0, False)
        self.assertEqual(ended[1], "fail", ended[3][-200:])
        self.assertEqual(len(ended[3]), 4000)


class Bytecode(unittest.TestCase):
    def test_a_mutant_of_the_same_size_and_mtime_is_not_run_as_stale_bytecode(self):
        with tempfile.TemporaryDirectory() as folder:
            module = Path(folder) / "m.py"
            check = [sys.executable, "-c", "import sys, m; sys.exit(m.X != int(sys.argv[1]))"]
            writes_bytecode = {
                k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"
            }
            for value in ("1", "2"):  # the same size, and the mtime set back (synthetic)
                module.write_text(f"X = {value}\n")
                os.utime(module, (1_000_000_000, 1_000_000_000))
                test = pytests.PyTest("m", check + [value], writes_bytecode, folder)
                (ended,) = pytests.run_tests([test], 1, lambda t: 60.0, False)
                self.assertEqual(ended[1], "pass", f"X = {value} ran as: {ended[3]}")


class FreshMtime(unittest.TestCase):
    def test_each_write_of_a_python_file_moves_its_mtime_on_a_second(self):
        with tempfile.TemporaryDirectory() as folder:
            module = Path(folder) / "m.py"
            module.write_text("X = 0\n")
            seconds = []
            for value in "12":  # the same size, in the same second (synthetic)
                scratch.write_fresh(module, f"X = {value}\n")
                seconds.append(int(module.stat().st_mtime))
            self.assertEqual(module.read_text(), "X = 2\n")
            self.assertGreater(seconds[1], seconds[0])


class Tracing(unittest.TestCase):
    """A traced test's lines are kept for every Python file of the tree in scope, not only the
    package's: ci/lint/docs.py's 374 mutants were "executed by no test" (synthetic tree)."""

    def test_the_lines_of_a_file_outside_the_package_are_kept(self):
        if not pytests.has_coverage():
            self.skipTest("python3-coverage is not installed: no test is traced")
        with tempfile.TemporaryDirectory() as folder:
            tree = Path(folder)
            (tree / "ci").mkdir()
            (tree / "ci" / "tool.py").write_text("def f():\n    return 1\n\n\nf()\n")
            code = f"import runpy; runpy.run_path({str(tree / 'ci' / 'tool.py')!r})"
            test = pytests.PyTest("tool", [sys.executable, "-c", code], dict(os.environ), ".")
            (ended,) = pytests.run_tests([test], 1, lambda t: 60.0, False, tree / "trace", tree)
            self.assertEqual(ended[1], "pass", ended[3])
            self.assertTrue(test.traced)
            self.assertEqual(test.lines.get("ci/tool.py"), {1, 2, 5})


class RecordFiles(unittest.TestCase):
    """--from-records: the weekly job's shards write one ledger (synthetic records)."""

    def test_arguments_that_exclude_each_other_are_a_usage_error(self):
        for argv in (["--from-records", "x.json"], ["--shard", "0/2", "--only", "x"]):
            with self.subTest(argv=argv), self.assertRaises(SystemExit) as raised:
                generated.parse_args(argv)
            self.assertEqual(raised.exception.code, EXIT_USAGE)

    def test_the_shards_records_make_the_ledger(self):
        mutants = generated.generate(("py",))[:4]
        ids = [m.id for m in mutants]
        with tempfile.TemporaryDirectory() as folder:
            shard = Path(folder, "shard.json")
            records = [
                {"id": ids[0], "status": "killed"},
                {"id": ids[1], "status": "survived"},
                {"id": ids[3], "status": "build_failure"},
            ]
            shard.write_text(json.dumps({"synthetic": "test", "mutants": records}))
            out = Path(folder, "ledger")
            ledger.write_ledger(out, ledger.records_of([str(shard)]), {}, mutants)
            lines = out.read_text().splitlines()
            states = dict(line.split() for line in lines if not line.startswith("#"))
        self.assertEqual(
            states,
            {ids[0]: "killed", ids[1]: "untriaged", ids[2]: "unrun", ids[3]: "build_failure"},
        )

    def test_a_kill_on_a_cuda_build_is_recorded_apart(self):
        # a GPU run's kill (its CUDA tests) would survive on a CPU host, whose CUDA tests skip
        cases = [
            ({"status": "killed", "cuda": True}, "killed_cuda"),
            ({"status": "timeout", "cuda": True}, "killed_cuda"),
            ({"status": "killed"}, "killed"),
            ({"status": "survived", "cuda": True}, "untriaged"),
            ({"status": "needs_cuda"}, "killed_cuda"),  # not run here: the ledger's state kept
        ]
        for record, state in cases:
            with self.subTest(record=record):
                self.assertEqual(ledger.ledger_state(record), state)
        self.assertIn("killed_cuda", ledger.LEDGER_STATES)
        summary = generated.summarise([{"status": "needs_cuda"}, {"status": "killed"}], 0)
        self.assertEqual((summary["judged"], summary["needs_cuda"]), (1, 1))
        # a timeout is detected: (killed + timeout) / judged (a helper's hand-made slip survived)
        states = [{"status": s} for s in ("timeout", "killed", "survived", "untriaged")]
        self.assertEqual(generated.summarise(states, 0)["kill_ratio"], 0.5)

    def test_a_kill_on_a_libtorch_2x_build_is_recorded_apart(self):
        # a 1.13.1 build never runs the sim's 2.x code and cells (autocast on sim:0): a kill on
        # a 2.x build would survive in a 1.x build's sample
        cases = [
            ({"status": "killed", "torch2": True}, "killed_2x"),
            ({"status": "timeout", "torch2": True}, "killed_2x"),
            ({"status": "survived", "torch2": True}, "untriaged"),
            ({"status": "killed", "torch2": True, "cuda": True}, "killed_cuda"),
            ({"status": "needs_2x"}, "killed_2x"),  # not run on 1.x: the ledger's state kept
        ]
        for record, state in cases:
            with self.subTest(record=record):
                self.assertEqual(ledger.ledger_state(record), state)
        self.assertIn("killed_2x", ledger.LEDGER_STATES)
        summary = generated.summarise([{"status": "needs_2x"}, {"status": "killed"}], 0)
        self.assertEqual((summary["judged"], summary["needs_2x"]), (1, 1))

    def test_a_builds_libtorch_major_is_its_torch_configs(self):
        # synthetic: a CMake cache naming a Torch_DIR that holds only the version file
        with tempfile.TemporaryDirectory() as folder:
            torch_dir = Path(folder, "torch")
            torch_dir.mkdir()
            Path(torch_dir, "TorchConfigVersion.cmake").write_text('set(PACKAGE_VERSION "2.13.0")')
            Path(folder, "CMakeCache.txt").write_text(f"X:BOOL=ON\nTorch_DIR:PATH={torch_dir}\n")
            build = object.__new__(scratch.Scratch)
            build.build_dir = Path(folder)
            self.assertEqual(build.libtorch_major(), 2)
            Path(folder, "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=Release\n")
            unknown = object.__new__(scratch.Scratch)
            unknown.build_dir = Path(folder)
            with self.assertRaises(CannotJudge):
                unknown.libtorch_major()

    def test_a_tests_skip_code_is_a_skip_not_a_kill(self):
        # CTest's SKIP_RETURN_CODE (messages.source_strings_data exits 77 without LibTorch's
        # sources): read as a fail, it "killed" a mutant and failed unmutated too (exit 3)
        skips = pytests.PyTest(
            "skips", ["sh", "-c", "exit 77"], dict(os.environ), "/", skip_code=77
        )
        fails = pytests.PyTest("fails", ["sh", "-c", "exit 77"], dict(os.environ), "/")
        ended = pytests.run_tests([skips, fails], 1, lambda t: 60.0, False)
        self.assertEqual(
            {t.name: verdict for t, verdict, _, _ in ended}, {"skips": "skip", "fails": "fail"}
        )
        # a test that fails on a mutant (an import crashing before its skip) and skips unmutated:
        # the failure is the mutant's, a kill, not "fails unmutated too" (cannot judge, exit 3)
        kills = pytests.KillSet([skips, fails], verified=False)
        self.assertEqual(kills.verify("skips", 1)[0], True)
        self.assertIn("skips", kills.verified)
        self.assertEqual(kills.verify("fails", 1)[0], False)

    def test_a_file_that_holds_no_records_cannot_be_judged(self):
        with tempfile.TemporaryDirectory() as folder:
            for text in ("{}", "not json", '{"mutants": [{"id": "x"}]}'):
                Path(folder, "bad.json").write_text(text)
                with self.subTest(text=text), self.assertRaises(CannotJudge) as raised:
                    ledger.records_of([str(Path(folder, "bad.json"))])
                self.assertEqual(raised.exception.code, EXIT_ENV)


if __name__ == "__main__":
    unittest.main()
