"""The speed gate's policy: thresholds per benchmark, by glob pattern, with a default.

policy.json:
  {"schema": "torchplace.gate-policy/1",
   "alpha": 0.05,                       # family-wise error rate over the gated benchmarks (Holm)
   "default": {"max_ratio": 1.10, "min_abs_ns": 50, "min_reps": 8, "informational": false},
   "patterns": [{"match": "prefetch_overlap/*", "informational": true}],
   "benchmarks": {"cpu_copy/path:clone/bytes:4096": {"max_ratio": 1.15}}}

A benchmark's rule is the default, then every matching pattern in file order, then its exact
entry; later ones override the fields they name.
"""
from __future__ import annotations

import fnmatch
import math
from typing import Any, Dict, Union

from torchplace.schema import ROOT, InputError, JsonObject, load_json, require

POLICY_SCHEMA = "torchplace.gate-policy/1"
DEFAULT_POLICY = str(ROOT / "ci" / "gate" / "policy.json")
RULE_FIELDS: Dict[str, type] = {
    "max_ratio": float,
    "min_abs_ns": float,
    "min_reps": int,
    "informational": bool,
}


def _number(value: object, where: str, key: str) -> Union[int, float]:
    """value as a finite number; InputError for text, booleans, NaN and +-Infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {key} must be a number, found {value!r}")
    if not math.isfinite(value):
        raise InputError(f"{where}: {key} is {value!r}: thresholds must be finite numbers")
    return value


def _check_rule(rule: object, where: str) -> None:
    """Raises InputError for an unknown field or a value of the wrong type or range."""
    if not isinstance(rule, dict):
        raise InputError(f"{where}: expected an object")
    for key, value in rule.items():
        if key == "match" or key == "why":
            continue
        if key not in RULE_FIELDS:
            raise InputError(f"{where}: unknown field {key!r} (known: {', '.join(RULE_FIELDS)})")
        if RULE_FIELDS[key] is bool and not isinstance(value, bool):
            raise InputError(f"{where}: {key} must be true or false")
        if RULE_FIELDS[key] is not bool:
            _number(value, where, key)
    if "match" in rule and not isinstance(rule["match"], str):
        raise InputError(f"{where}: match must be a glob pattern (text)")
    if rule.get("max_ratio", 2.0) <= 1.0:
        raise InputError(f"{where}: max_ratio must be above 1.0 (1.10 = 10 % slower)")
    if rule.get("min_abs_ns", 0) < 0:
        raise InputError(f"{where}: min_abs_ns must be >= 0 (ns)")
    reps = rule.get("min_reps", 2)
    if reps != int(reps) or reps < 2:
        raise InputError(f"{where}: min_reps must be a whole number >= 2, found {reps!r}")


class Policy:
    """A loaded, validated policy; rule(name) gives the resolved thresholds of one benchmark."""

    def __init__(self, doc: JsonObject, path: str) -> None:
        require(doc, ("schema", "alpha", "default"), path)
        unknown = set(doc) - {"schema", "about", "alpha", "default", "patterns", "benchmarks"}
        if unknown:
            raise InputError(f"{path}: unknown top-level field(s) {', '.join(sorted(unknown))}")
        if doc["schema"] != POLICY_SCHEMA:
            raise InputError(f"{path}: schema is {doc['schema']!r}, expected {POLICY_SCHEMA!r}")
        if not 0 < _number(doc["alpha"], path, "alpha") < 1:
            raise InputError(f"{path}: alpha must lie between 0 and 1")
        require(doc["default"], tuple(RULE_FIELDS), f"{path}: default")
        _check_rule(doc["default"], f"{path}: default")
        if not isinstance(doc.get("patterns", []), list) or not isinstance(
            doc.get("benchmarks", {}), dict
        ):
            raise InputError(f"{path}: patterns must be a list and benchmarks an object")
        for index, pattern in enumerate(doc.get("patterns", [])):
            require(pattern, ("match",), f"{path}: patterns[{index}]")
            _check_rule(pattern, f"{path}: patterns[{index}]")
        for name, rule in doc.get("benchmarks", {}).items():
            _check_rule(rule, f"{path}: benchmarks[{name!r}]")
        self.path = path
        self.alpha = float(doc["alpha"])
        self._doc = doc

    def rule(self, name: str) -> Dict[str, Any]:
        """The thresholds for benchmark `name`, plus 'sources': which entries set them."""
        resolved = dict(self._doc["default"])
        sources = ["default"]
        for pattern in self._doc.get("patterns", []):
            if fnmatch.fnmatchcase(name, pattern["match"]):
                resolved.update({k: v for k, v in pattern.items() if k in RULE_FIELDS})
                sources.append(pattern["match"])
        exact = self._doc.get("benchmarks", {}).get(name)
        if exact:
            resolved.update({k: v for k, v in exact.items() if k in RULE_FIELDS})
            sources.append(name)
        resolved["sources"] = sources
        return resolved


def load_policy(path: str = DEFAULT_POLICY) -> Policy:
    return Policy(load_json(path, "gate policy"), path)
