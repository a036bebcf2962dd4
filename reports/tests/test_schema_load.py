#!/usr/bin/env python3
"""torchplace.schema's readers, in process on synthetic files: load_json (missing, a folder, not
UTF-8, empty, malformed: each named with the file), load_results, merge_results, load_run and
load_benchmarks: a valid document comes back, a document of another schema or with a missing or
mistyped field is refused naming the file and the field (load_matrix: test_schema_matrix.py).

  test_schema_load.py [CLASS]      (CTest: report.schema_load)
"""
import unittest

from schema_cases import SYNTHETIC, SchemaCase, cell, fingerprint
from torchplace import schema


class LoadJson(SchemaCase):
    def test_a_valid_document_comes_back(self) -> None:
        path = self.write("doc.json", ' {"a": [1, "\u00e9"]}\n')
        self.assertEqual(schema.load_json(path, "synthetic doc"), {"a": [1, "\u00e9"]})

    def test_each_unreadable_file_is_named_with_its_problem(self) -> None:
        missing = self.path("missing.json")
        message = self.refuses("", schema.load_json, missing, "synthetic doc")
        self.assertEqual(message, f"synthetic doc: {missing} does not exist")
        self.refuses(
            f"W: {self.dir} cannot be read (Is a directory)", schema.load_json, self.dir, "W"
        )
        cases = [
            (b'{"a": "\xff"}', "is not UTF-8 text (byte 0xff at offset 7: invalid start byte)"),
            (b" \n\t", "is empty"),
            (b"", "is empty"),
            (b'{"a": }', "is not valid JSON (Expecting value: line 1 column 7 (char 6))"),
        ]
        for content, problem in cases:
            path = self.write("bad.json", content)
            self.refuses(
                f"synthetic doc: {path} {problem}", schema.load_json, path, "synthetic doc"
            )


class Results(SchemaCase):
    def doc(self, **fields: object) -> str:
        doc = {"schema": schema.RESULTS_SCHEMA, "fingerprint": fingerprint(), "cells": [cell()]}
        doc.update(fields)
        return self.write("results.json", doc)

    def test_a_valid_document_comes_back(self) -> None:
        path = self.doc(cells=[cell(), cell(id="synthetic/two")])
        self.assertEqual(schema.load_results(path)["cells"][1]["id"], "synthetic/two")
        self.assertEqual(schema.load_results(path)["fingerprint"], fingerprint())

    def test_each_problem_is_named_with_the_file(self) -> None:
        path = self.path("results.json")
        cases = [
            (
                {"schema": schema.MATRIX_SCHEMA},
                f"{path}: schema is 'torchplace.matrix/1', expected 'torchplace.results/1'",
            ),
            ({"cells": {}}, f"{path}: cells must be a list of objects, found dict"),
            ({"cells": [cell(), cell(id="")]}, f"{path}: cells[1]: id is empty"),
            ({"fingerprint": {}}, f"{path}: fingerprint: missing field(s) libtorch_version"),
        ]
        for fields, fragment in cases:
            self.refuses(fragment, schema.load_results, self.doc(**fields))
        for key in ("schema", "fingerprint", "cells"):
            doc = {"schema": schema.RESULTS_SCHEMA, "fingerprint": fingerprint(), "cells": []}
            del doc[key]
            self.refuses(
                f"{path}: missing field(s) {key}",
                schema.load_results,
                self.write("results.json", doc),
            )
        self.refuses("scenario results: ", schema.load_results, self.path("absent.json"))


class MergeResults(SchemaCase):
    """The records one binary wrote into a folder, one a process (test_own_cells, cells_gate)."""

    def record(self, name: str, *cells: dict, **print_fields: object) -> None:
        mark = dict(fingerprint(), **print_fields)
        self.write(name, {"schema": schema.RESULTS_SCHEMA, "fingerprint": mark, "cells": [*cells]})

    def test_the_records_merge_into_one_document(self) -> None:
        self.record("a.json", cell())
        self.record("b.json", cell(id="synthetic/two"))
        doc = schema.merge_results(self.dir)
        self.assertEqual([c["id"] for c in doc["cells"]], [cell()["id"], "synthetic/two"])
        self.assertEqual(doc["fingerprint"], fingerprint())

    def test_one_record_alone_and_a_fingerprint_in_another_key_order(self) -> None:
        self.record("a.json", cell())
        self.assertEqual(len(schema.merge_results(self.dir)["cells"]), 1)
        reordered = dict(reversed(list(fingerprint().items())))  # the same JSON object
        self.write(
            "b.json",
            {
                "schema": schema.RESULTS_SCHEMA,
                "fingerprint": reordered,
                "cells": [cell(id="synthetic/two")],
            },
        )
        self.assertEqual(len(schema.merge_results(self.dir)["cells"]), 2)

    def test_each_problem_is_refused_naming_the_folder(self) -> None:
        self.refuses(f"{self.dir}: no cell record was written", schema.merge_results, self.dir)
        self.record("a.json", cell())
        self.record("b.json", cell(), libtorch_version="2.4.0")
        self.refuses("fingerprints differ", schema.merge_results, self.dir)
        self.record("b.json", cell())
        self.refuses(f"recorded twice: {cell()['id']}", schema.merge_results, self.dir)
        self.write("b.json", "{}")
        self.refuses("b.json: missing field(s)", schema.merge_results, self.dir)


class Run(SchemaCase):
    def doc(self, steps: object, kind: str = schema.RUN_SCHEMA) -> str:
        return self.write("run.json", {"schema": kind, "steps": steps})

    def test_a_valid_record_comes_back(self) -> None:
        steps = {
            "build": {"status": "ok", "exit": 0, "seconds": 1.5},
            "bench": {"status": "ran", "seconds": 2},
            "probe": {"status": "absent"},
        }
        self.assertEqual(schema.load_run(self.doc(steps))["steps"], steps)
        self.assertEqual(schema.load_run(self.doc({}))["steps"], {})

    def test_each_problem_is_named_with_the_file_and_step(self) -> None:
        where = f"{self.path('run.json')}: "
        self.refuses(
            where + "schema is 'torchplace.results/1', expected 'torchplace.run/1'",
            schema.load_run,
            self.doc({}, schema.RESULTS_SCHEMA),
        )
        self.refuses(
            where + "missing field(s) steps",
            schema.load_run,
            self.write("run.json", {"schema": schema.RUN_SCHEMA}),
        )
        self.refuses(
            where + "missing field(s) schema",
            schema.load_run,
            self.write("run.json", {"steps": {}}),
        )
        cases = [
            ([], "steps must be an object, found list"),
            ({"build": "ok"}, "steps.build: expected an object, found str"),
            ({"build": {}}, "steps.build: missing field(s) status"),
            ({"build": {"status": 0}}, "steps.build: status must be str, found int"),
            ({"build": {"status": "ok", "exit": "0"}}, "steps.build: exit must be int, found str"),
            (
                {"build": {"status": "ok", "exit": False}},
                "steps.build: exit must be int, found bool",
            ),
            (
                {"build": {"status": "ok", "seconds": "1"}},
                "steps.build: seconds must be int or float",
            ),
        ]
        for steps, fragment in cases:
            self.refuses(where + fragment, schema.load_run, self.doc(steps))


class Benchmarks(SchemaCase):
    def doc(self, **fields: object) -> str:
        doc = {
            "context": {"torchplace_synthetic": SYNTHETIC},
            "benchmarks": [{"name": "f", "run_type": "iteration"}],
        }
        doc.update(fields)
        return self.write("bench.json", doc)

    def test_a_valid_document_comes_back(self) -> None:
        self.assertEqual(schema.load_benchmarks(self.doc())["benchmarks"][0]["name"], "f")
        self.assertEqual(schema.load_benchmarks(self.doc(context={}))["context"], {})

    def test_each_problem_is_named_with_the_file(self) -> None:
        path = self.path("bench.json")
        not_gb = f"{path}: not Google Benchmark JSON (no 'context' and 'benchmarks')"
        self.refuses(not_gb, schema.load_benchmarks, self.write("bench.json", []))
        self.refuses(not_gb, schema.load_benchmarks, self.write("bench.json", {"context": {}}))
        self.refuses(not_gb, schema.load_benchmarks, self.write("bench.json", {"benchmarks": []}))
        cases = [
            (
                {"context": {"torchplace_synthetic": 1}},
                f"{path}: context: torchplace_synthetic must be str",
            ),
            ({"benchmarks": {}}, f"{path}: benchmarks must be a list of objects"),
            ({"benchmarks": [{"name": "f"}]}, f"{path}: benchmarks[0]: missing field(s) run_type"),
        ]
        for fields, fragment in cases:
            self.refuses(fragment, schema.load_benchmarks, self.doc(**fields))
        self.refuses("benchmark results: ", schema.load_benchmarks, self.path("absent.json"))


if __name__ == "__main__":
    unittest.main()
