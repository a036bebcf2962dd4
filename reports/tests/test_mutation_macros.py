#!/usr/bin/env python3
"""Tests of what the generated-mutant engine reads of a build (issue 45): a mutant in `#if NAME`
code needs NAME, which macros.py reads from the compile command of the target that compiles the
file (its unity batch, another target's included), else from the preprocessor. Synthetic files
made here; standard library only."""
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from torchplace.mutation import generated, macros, operators_cpp, scope, scratch
from torchplace.mutation.run import CannotJudge


class ConditionalCode(unittest.TestCase):
    """A mutant in `#if NAME` code needs NAME: a build without it cannot judge it (synthetic)."""

    SOURCE = (
        "#if WITH_X\nint f(int a) { return a < 1; }\n#else\nint g(int a) { return a < 2; }\n"
        "#endif\n"
    )

    def test_a_mutant_in_the_first_branch_needs_its_macro(self):
        needs = {m.line: m.needs for m in operators_cpp.mutants_of("x.h", self.SOURCE)}
        self.assertEqual(needs, {2: "WITH_X", 4: operators_cpp.BRANCH})

    def test_a_build_without_the_macro_judges_none_of_them(self):
        with tempfile.TemporaryDirectory() as folder:
            made = scratch.Scratch.__new__(scratch.Scratch)
            made.build_dir = Path(folder)
            flags = Path(folder, "harness", "CMakeFiles", "torchplace_harness_tests.dir")
            flags.mkdir(parents=True)
            for text, on in (("-DWITH_X=0 -DY=1", False), ("-DY -DWITH_X=1", True)):
                (flags / "flags.make").write_text(f"CXX_DEFINES = {text}\n")
                self.assertEqual(made.defines("WITH_X"), on, text)
        records = [{"status": "not_built"}, {"status": "killed"}, {"status": "survived"}]
        summary = generated.summarise(records, 0)
        self.assertEqual((summary["judged"], summary["kill_ratio"]), (2, 0.5))

    def test_a_macro_a_header_defines_is_read_by_the_preprocessor(self):
        # compat.h's TP_HAS_C10D_GLOO is on in a Gloo build, in no flags.make: ddp.cpp's 107
        # mutants were listed not_built and never judged. Files made here (synthetic).
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "on.h").write_text("#define FROM_HEADER 1\n")
            (root / "a.cpp").write_text('#include "on.h"\n#if FROM_HEADER\nint a;\n#endif\n')
            (root / "off.cpp").write_text("#define OWN 0\n#if OWN\nint b;\n#endif\n")
            unity = root / "CMakeFiles" / "t.dir" / "Unity" / "unity_0_cxx.cxx"
            unity.parent.mkdir(parents=True)
            unity.write_text(f'#include "{root}/a.cpp"\n#include "{root}/off.cpp"\n')
            command = f"c++ -I{root} -DGIVEN=0 -o CMakeFiles/t.dir/u.o -c {unity}"
            entry = {"file": str(unity), "output": "CMakeFiles/t.dir/u.o", "command": command}
            (root / "compile_commands.json").write_text(json.dumps([entry]))
            cases = (("a.cpp", "FROM_HEADER", True), ("off.cpp", "OWN", False))
            cases += (("a.cpp", "GIVEN", False), ("a.cpp", "ABSENT", False))
            for name, macro, on in cases:
                with self.subTest(file=name, macro=macro):
                    found = macros.macro_on(root, root / name, "t", macro)
                    self.assertEqual(found, on)
            # what it cannot read is an error, not "not built" (its mutants silently skipped)
            (root / "broken.cpp").write_text('#include "absent.h"\n')
            unity.write_text(unity.read_text() + f'#include "{root}/broken.cpp"\n')
            macros._text.cache_clear()
            for name, binary in (("broken.cpp", "t"), ("nowhere.h", "other")):
                with self.subTest(file=name), self.assertRaises(CannotJudge):
                    macros.macro_on(root, root / name, binary, "ANY")

    def test_a_file_another_targets_unity_batch_compiles_takes_that_targets_flags(self):
        # symbolize.cpp's TP_SIM_HAVE_LIBDW is a flag of torchplace_sim, whose unity batch
        # compiles it, not of its kill-set binary. Files made here (synthetic).
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "lib.cpp").write_text("#if LIB_FLAG\nint a;\n#endif\n")
            (root / "test.cpp").write_text("int b;\n")
            unity = root / "CMakeFiles" / "lib.dir" / "Unity" / "unity_0_cxx.cxx"
            unity.parent.mkdir(parents=True)
            unity.write_text(f'#include "{root}/lib.cpp"\n')
            entries = [
                (unity, "CMakeFiles/lib.dir/u.o", "-DLIB_FLAG=1"),
                (root / "test.cpp", "CMakeFiles/t.dir/test.cpp.o", "-DOTHER=1"),
            ]
            listed = [
                {"file": str(f), "output": out, "command": f"c++ {flag} -o {out} -c {f}"}
                for f, out, flag in entries
            ]
            (root / "compile_commands.json").write_text(json.dumps(listed))
            self.assertTrue(macros.macro_on(root, root / "lib.cpp", "t", "LIB_FLAG"))
            self.assertFalse(macros.macro_on(root, root / "test.cpp", "t", "LIB_FLAG"))


class OtherBranches(unittest.TestCase):
    """Code in any other branch (a version test, #elif, #else) is compiled when the preprocessor
    keeps a line of its branch: hooks.cpp's `#if TP_SIM_AT_LEAST(2, 1)` on 1.13.1 is not, and
    its 36 mutants were judged survivors. Files made here (synthetic)."""

    SOURCE = (
        "#define V 3\n"  # 1
        "#define ADD(a, b) ((a) + (b))\n"  # 2
        "#if V >= 2 && defined(V)\n"  # 3
        "int a(int x) {\n  return ADD(x,\n             1);\n}\n"  # 4-7: a macro call over two lines
        "#elif V == 1\n"  # 8
        "int b(int x) { return x - 1; }\n"  # 9
        "#else\n"  # 10
        "#if V\n"  # 11
        "int c(int x) { return x * 2; }\n"  # 12
        "#endif\n"  # 13
        "#endif\n"  # 14
        "int d(int x) { return x / 2; }\n"  # 15
        "#ifndef V\n"  # 16
        "#define W 1\n"  # 17: a branch with no code of its own
        "#endif\n"  # 18
        "#if V > 2 || \\\n    V == 1\n"  # 19-20: the condition goes on
        "int e(int x) { return x + 4; }\n"  # 21
        "#endif\n"  # 22
    )

    def test_each_branch_is_judged_by_the_preprocessor(self):
        needs = {m.line: m.needs for m in operators_cpp.mutants_of("b.cpp", self.SOURCE)}
        self.assertEqual(needs[6], operators_cpp.BRANCH)
        self.assertEqual((needs[9], needs[12], needs[15]), (operators_cpp.BRANCH, "V", ""))
        self.assertEqual(macros.branch_lines(self.SOURCE, 6), range(4, 8))
        self.assertEqual(macros.branch_lines(self.SOURCE, 12), range(12, 13))
        self.assertEqual(macros.branch_lines(self.SOURCE, 15), range(15, 16))
        # a continued directive's condition is evaluated where the directive is
        self.assertEqual((needs[20], needs[21]), ("", operators_cpp.BRANCH))
        self.assertEqual(macros.branch_lines(self.SOURCE, 21), range(21, 22))
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            source = root / "b.cpp"
            source.write_text(self.SOURCE)
            entry = {"file": str(source), "output": "CMakeFiles/t.dir/b.o"}
            entry["command"] = f"c++ -o CMakeFiles/t.dir/b.o -c {source}"
            (root / "compile_commands.json").write_text(json.dumps([entry]))
            compiled = {n: macros.line_compiled(root, source, "t", n) for n in (6, 9, 12, 15, 21)}
            self.assertEqual(compiled, {6: True, 9: False, 12: False, 15: True, 21: True})
            self.assertTrue(macros.line_compiled(root, source, "t", 17), "no code: judged")
            made = scratch.Scratch.__new__(scratch.Scratch)
            made.build_dir, made.tree = root, root
            mutants = {m.line: m for m in operators_cpp.mutants_of("b.cpp", self.SOURCE)}
            with mock.patch.dict(scope.CPP, {"b.cpp": ("t", "*")}):
                records = {n: generated.skipped(made, mutants[n], False, {}) for n in (6, 9)}
            self.assertIsNone(records[6], "compiled: run")
            self.assertEqual((records[9] or {}).get("status"), "not_built")


if __name__ == "__main__":
    unittest.main()
