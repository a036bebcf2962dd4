"""torchplace.conformance.isolate with a stand-in worker (synthetic: a Python one-liner speaking
worker.py's protocol, no torch): a worker that dies is its entry's named death, one that outlives
the timeout is a hang, and an entry started before the budget ran out keeps its whole timeout
(the budget stops starting entries; before, an entry running when it ended read as a hang)."""
import sys
import unittest

from torchplace.conformance import isolate

# Announces itself, then for each name: sleeps N seconds (name "sleep:N") or dies ("die").
WORKER = r"""
import json, os, sys, time
out = os.fdopen(int(os.environ["TORCHPLACE_RESULTS_FD"]), "w", buffering=1)
out.write(json.dumps({"ready": True}) + "\n")
for line in sys.stdin:
    name = line.strip()
    if name == "die":
        os._exit(7)
    time.sleep(float(name.split(":")[1]))
    out.write(json.dumps({"name": name, "agree": True}) + "\n")
"""


def run(names, timeout_s, budget_s):
    argv = [sys.executable, "-c", WORKER]
    return {r["name"]: r for r in isolate.run(argv, {}, names, 1, timeout_s, budget_s)}


class Isolate(unittest.TestCase):
    def test_an_entry_running_at_the_budget_keeps_its_timeout(self):
        results = run(["sleep:2", "sleep:0"], timeout_s=30, budget_s=0.5)
        self.assertEqual(results["sleep:2"].get("crashed"), None, results)
        self.assertTrue(results["sleep:2"]["agree"])
        self.assertNotIn("sleep:0", results, "started after the budget ran out")

    def test_a_hang_and_a_death_are_named(self):
        results = run(["sleep:5", "die", "sleep:0"], timeout_s=1, budget_s=60)
        self.assertEqual(results["sleep:5"]["crashed"], "hang")
        self.assertIn("7", results["die"]["crashed"])
        self.assertTrue(results["sleep:0"]["agree"], "a fresh worker takes the next entry")


if __name__ == "__main__":
    unittest.main(verbosity=2)
