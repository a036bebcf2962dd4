#!/usr/bin/env python3
"""C++ mutant schemata (torchplace.mutation.schemata, schema_runs): the function bodies found,
the mutants a schema holds, and, built with g++, each mutant chosen at run time behaves as the
same mutant built alone, line numbers included; a copy that does not compile is named and leaves
the schema. The C++ program below is synthetic, written for this test."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from collections import deque
from dataclasses import replace
from pathlib import Path
from unittest import mock

from torchplace.mutation import operators_cpp, schema_runs, schemata, scope

PROGRAM = r"""// synthetic { a brace in a comment
#include <cstdio>
#include <cstdlib>
#define TWICE(x) { (x) * 2 }
namespace demo {
constexpr int kBase = 3;
constexpr int scaled(int x) { return kBase * x; }
const int kTable[] = {1, 2, 3, 4};  // one past `count`: no mutant reads out of bounds
struct Acc {
  explicit Acc(int start) : total(start) {}
  void add(int x) {
    if (x > 1) total += x;
  }
  int get() const {
    return total;
  }
  int total;
};
int sum(int count,
        int start) {
  Acc acc(start);
  for (int i = 0; i < count; ++i) {
    acc.add(kTable[i]);
  }
  return acc.get() * 1000 + __LINE__;
}
const auto kLambda = [](int x) {
  const char* text = "}";
  return x + text[0];
};
}  // namespace demo
int main(int argc, char** argv) {
  const int got = demo::sum(3, 3) + demo::kLambda(2) + demo::scaled(1);
  std::printf("%d\n", got);
  return argc > 1 && got != std::atoi(argv[1]);
}
"""
BODIES = [11, 14, 20, 27, 32]  # the 1-based lines of the bodies' `{` (Acc's empty one: 10)


def g_plus_plus(source: Path, binary: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["g++", "-std=c++17", "-o", str(binary), str(source)], capture_output=True, text=True
    )


def output(binary: Path, number: int = -1) -> str:
    env = dict(os.environ, **({schemata.ENV: str(number)} if number >= 0 else {}))
    return subprocess.run([str(binary)], capture_output=True, text=True, env=env).stdout


class Bodies(unittest.TestCase):
    def test_the_outermost_bodies(self):
        found = [body.open_line + 1 for body in schemata.bodies(PROGRAM)]
        self.assertEqual(found, [10] + BODIES)

    def test_what_a_schema_holds(self):
        mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)
        held = schemata.placeable(PROGRAM, mutants)
        lines = {m.line for m in held}
        # constexpr bodies, namespace-scope tables and signatures are built one by one
        self.assertFalse(lines & {6, 7, 8, 10, 19, 20}, lines)  # 20: the line of `{`
        self.assertTrue({12, 15, 22, 23, 25, 29, 33, 34, 35} <= lines, lines)


class JudgedFirst(unittest.TestCase):
    def test_the_schemas_verdicts_come_before_the_builds_one_by_one(self):
        mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)[:5]
        judged = {mutants[1].id: {}, mutants[3].id: {}}
        order = list(schema_runs.judged_first(deque(mutants), judged))
        self.assertEqual(order, [mutants[1], mutants[3], mutants[0], mutants[2], mutants[4]])


class ByFile(unittest.TestCase):
    def test_a_file_with_too_few_mutants_is_built_one_by_one(self):
        mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)
        few = [replace(m, path="few.cpp") for m in mutants[: schema_runs.MIN_MUTANTS - 1]]
        groups = schema_runs.by_file(mutants + few)
        self.assertEqual(list(groups), ["demo.cpp"])
        self.assertEqual(groups["demo.cpp"], mutants)


@unittest.skipUnless(shutil.which("g++"), "g++ is not installed: nothing to build a schema with")
class Built(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)

    def build(self, name: str, text: str) -> subprocess.CompletedProcess:
        (self.dir / f"{name}.cpp").write_text(text)
        return g_plus_plus(self.dir / f"{name}.cpp", self.dir / name)

    def compiling(self) -> dict:
        held = schemata.placeable(PROGRAM, self.mutants)
        numbered = {k: m for k, m in enumerate(self.mutants) if m in held}
        for _ in range(3):
            done = self.build("numbered", schemata.schema(PROGRAM, numbered, by_number=True))
            if done.returncode == 0:
                return numbered
            named, outside = schemata.error_copies(done.stderr, "numbered.cpp")
            self.assertFalse(outside, done.stderr[-2000:])
            self.assertTrue(named, done.stderr[-2000:])
            for number in named:
                self.assertIsNotNone(numbered.pop(number, None), number)
        self.fail("the numbered schema still does not compile")

    def test_each_mutant_runs_as_if_built_alone(self):
        numbered = self.compiling()
        self.assertEqual(self.build("schema", schemata.schema(PROGRAM, numbered)).returncode, 0)
        self.assertEqual(self.build("original", PROGRAM).returncode, 0)
        self.assertEqual(output(self.dir / "schema"), output(self.dir / "original"))
        differ = 0
        for number, mutant in numbered.items():
            alone = self.build("alone", operators_cpp.apply(PROGRAM, mutant))
            self.assertEqual(alone.returncode, 0, mutant.id)
            chosen = output(self.dir / "schema", number)
            self.assertEqual(chosen, output(self.dir / "alone"), mutant.id)
            differ += chosen != output(self.dir / "original")
        self.assertGreater(differ, len(numbered) // 2)  # most of them change the answer

    def test_a_copy_that_does_not_compile_is_named(self):
        broken = [m for m in self.mutants if m.new.strip() == "return {};" and m.line == 29]
        self.assertEqual(len(broken), 1)  # a lambda cannot return `{}`: it does not compile
        self.assertNotEqual(self.build("alone", operators_cpp.apply(PROGRAM, broken[0])), 0)
        numbered = self.compiling()
        self.assertNotIn(broken[0], numbered.values())
        self.assertTrue(numbered)

    def test_a_header_copy_is_named_through_the_include_link(self):
        # as the build includes harness/ headers: <torchplace/...> through include/torchplace
        (self.dir / "harness").mkdir()
        (self.dir / "include").mkdir()
        (self.dir / "include" / "torchplace").symlink_to(self.dir / "harness")
        broken = [m for m in self.mutants if m.new.strip() == "return {};" and m.line == 29]
        numbered = {7: broken[0]}
        header = schemata.schema(PROGRAM, numbered, by_number=True)
        (self.dir / "harness" / "demo.h").write_text(header)
        (self.dir / "main.cpp").write_text("#include <torchplace/demo.h>\n")
        flags = ["-std=c++17", "-fsyntax-only", "-I", str(self.dir / "include")]
        done = subprocess.run(
            ["g++", *flags, str(self.dir / "main.cpp")], capture_output=True, text=True
        )
        self.assertIn("include/torchplace/demo.h", done.stderr)
        self.assertEqual(schemata.error_copies(done.stderr, "harness/demo.h"), ({7}, False))


@unittest.skipUnless(shutil.which("g++"), "g++ is not installed: nothing to build a schema with")
class RunFile(unittest.TestCase):
    """schema_runs.run_file with a stand-in Scratch: g++ builds, the program is its own test."""

    def setUp(self):
        self.tree = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tree)
        (self.tree / "demo.cpp").write_text(PROGRAM)
        build = self.tree / "build"
        build.mkdir()
        command = f"g++ -std=c++17 -o demo.dir/demo.cpp.o -c {self.tree / 'demo.cpp'}"
        entry = {"file": str(self.tree / "demo.cpp"), "output": "demo.dir/demo.cpp.o"}
        (build / "compile_commands.json").write_text(json.dumps([entry | {"command": command}]))
        self.scratch = mock.Mock(tree=self.tree, build=self.build, gtest=self.gtest, jobs=2)
        self.scratch.build_dir = build
        self.expected = output_of_original(self.tree)

    def build(self, binaries, tail=6000):
        done = g_plus_plus(self.tree / "demo.cpp", self.tree / "demo")
        return done.returncode == 0, (done.stdout + done.stderr)[-tail:]

    def gtest(self, binary, pattern, env=None):
        run = subprocess.run(
            [str(self.tree / "demo"), self.expected],
            env={**os.environ, **(env or {})},
            capture_output=True,
        )
        return ("pass", "1 test(s)") if run.returncode == 0 else ("fail", "Demo.Sum")

    def test_records_and_the_file_restored(self):
        mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)
        with mock.patch.dict(scope.CPP, {"demo.cpp": ("demo", "*")}):
            records = schema_runs.run_file(self.scratch, "demo.cpp", mutants)
        self.assertEqual((self.tree / "demo.cpp").read_text(), PROGRAM)
        held = schemata.placeable(PROGRAM, mutants)
        self.assertEqual(set(records), {m.id for m in held})
        statuses = {r["status"] for r in records.values()}
        self.assertEqual(statuses, {"killed", "survived", "build_failure"})
        for mutant in held:  # each verdict is the one of the mutant built alone
            (self.tree / "demo.cpp").write_text(operators_cpp.apply(PROGRAM, mutant))
            built = self.build(["demo"])[0]
            alone = "killed" if self.gtest("demo", "*")[0] == "fail" else "survived"
            self.assertEqual(records[mutant.id]["status"], alone if built else "build_failure")
        # the lambda's `return {}` (29) and printf's arguments swapped (34): dropped from the
        # schema, then compiled alone
        failed = [m.line for m in held if records[m.id]["status"] == "build_failure"]
        self.assertEqual(failed, [29, 34])

    def test_alone_only_what_does_not_compile_alone(self):
        mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)
        good = next(m for m in mutants if m.line == 25)  # any mutant of `acc.add(...)` compiles
        bad = next(m for m in mutants if m.line == 29 and m.new.strip() == "return {};")
        empty = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, empty)
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(empty)
        with mock.patch.dict(scope.CPP, {"demo.cpp": ("demo", "*")}):
            found = schema_runs.alone_failures(self.scratch, "demo.cpp", [good, bad])
            self.assertEqual(list(found), [bad.id])
            self.assertEqual(os.listdir(empty), [])  # checked, not compiled: nothing written
            self.assertEqual(found[bad.id]["status"], "build_failure")
            # flags under which even the unmutated file fails: no mutant is judged by them
            commands = self.scratch.build_dir / "compile_commands.json"
            entries = json.loads(commands.read_text())
            entries[0]["command"] = entries[0]["command"].replace("g++", "g++ -include none.h", 1)
            commands.write_text(json.dumps(entries))
            self.scratch.build_dir = self.scratch.build_dir.rename(self.tree / "other")
            self.assertEqual(schema_runs.alone_failures(self.scratch, "demo.cpp", [bad]), {})

    def test_a_schema_failing_unmutated_judges_nothing(self):
        self.expected = "-1"  # the kill set fails with no mutant chosen
        mutants = operators_cpp.mutants_of("demo.cpp", PROGRAM)
        with mock.patch.dict(scope.CPP, {"demo.cpp": ("demo", "*")}):
            self.assertEqual(schema_runs.run_file(self.scratch, "demo.cpp", mutants), {})
        self.assertEqual((self.tree / "demo.cpp").read_text(), PROGRAM)


def output_of_original(tree: Path) -> str:
    done = g_plus_plus(tree / "demo.cpp", tree / "original")
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    return output(tree / "original").strip()


if __name__ == "__main__":
    unittest.main()
