"""The speed gate: a candidate's benchmark repetitions against a baseline's.

Per benchmark: the ratio of medians (candidate / baseline, > 1 is slower), a two-sided
Mann-Whitney U test (scipy.stats.mannwhitneyu) with Holm's correction over the benchmarks
tested, and an absolute floor. Outcome:
  SAME       the medians differ by less than the policy's ratio or by less than the floor;
  SLOWER     beyond the ratio and the floor, and significant after the correction;
  FASTER     the same, the other way;
  AMBIGUOUS  beyond the ratio and the floor but not significant: rerun with more repetitions.
Holm rather than Benjamini-Hochberg: the gate fails a build when any one benchmark is SLOWER, so
what must stay below alpha is the chance of one false alarm in the whole run (the family-wise
error rate, which Holm controls), not the share of false ones among the alarms (BH's FDR).
The test is exact where the two samples hold no tied time (scipy's 'auto' switches to the normal
approximation above 8 a side, which wastes power), and the tie-corrected normal approximation
where they do (the exact null distribution assumes no ties).
Power: Holm multiplies the smallest p by the number of gated tests N, and with n repetitions a
side the test cannot give a p below that of perfectly separated samples. Every gated benchmark
must be able to be SLOWER on its own (N x its smallest p < alpha, and >= min_reps repetitions);
one that cannot makes the gate fail closed instead of passing blind.
"""
from __future__ import annotations

import functools
import math
import statistics
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple


from torchplace.gate.speed_input import repetitions  # noqa: F401  (calibrate's reader too)
from torchplace.schema import InputError, JsonObject

if TYPE_CHECKING:
    from torchplace.gate.policy import Policy

SAME, FASTER, SLOWER, AMBIGUOUS = "SAME", "FASTER", "SLOWER", "AMBIGUOUS"
TEST = "mann-whitney-u two-sided, exact without ties, normal approximation with ties"


def holm(pvalues: Mapping[str, float]) -> Dict[str, float]:
    """Holm's step-down adjusted p-values, {name: p} -> {name: p_adjusted}; refuses a p that is
    not a number in [0, 1] (a NaN would sort anywhere and poison the running maximum)."""
    for name, p in pvalues.items():
        if not (isinstance(p, (int, float)) and 0.0 <= p <= 1.0):
            raise InputError(f"benchmark {name}: p-value {p!r} is not in [0, 1]")
    ordered = sorted(pvalues.items(), key=lambda item: item[1])
    adjusted, running_max, count = {}, 0.0, len(ordered)
    for rank, (name, p) in enumerate(ordered):
        running_max = max(running_max, min(1.0, (count - rank) * p))
        adjusted[name] = running_max
    return adjusted


def test_method(cand: Sequence[float], base: Sequence[float]) -> str:
    """'exact' when no time appears twice across both samples, else 'asymptotic'."""
    values = list(cand) + list(base)
    return "exact" if len(set(values)) == len(values) else "asymptotic"


def mann_whitney_p(cand: Sequence[float], base: Sequence[float]) -> float:
    """The gate's test: two-sided Mann-Whitney U, exact unless there are ties."""
    from scipy.stats import mannwhitneyu  # Debian's python3-scipy; 1-3 s to import, so here

    p = float(
        mannwhitneyu(cand, base, alternative="two-sided", method=test_method(cand, base)).pvalue
    )
    if not math.isfinite(p):
        raise InputError(
            f"the test gave p = {p} for {len(base)} baseline and {len(cand)} " "candidate times"
        )
    return p


@functools.lru_cache(maxsize=None)
def min_p(n_base: int, n_cand: int) -> float:
    """The smallest p the test can give for these sample sizes: every candidate time above every
    baseline time, exact test (2 / C(n_base + n_cand, n_base), capped at 1)."""
    return mann_whitney_p(
        [float(n_base + i) for i in range(n_cand)], [float(i) for i in range(n_base)]
    )


def reps_needed(gated: int, alpha: float, min_reps: float = 2, limit: int = 200) -> Optional[int]:
    """The smallest n >= min_reps with gated x min_p(n, n) < alpha (min_p falls with n);
    None when not even limit."""
    for n in range(max(int(min_reps), 2), limit + 1):
        if gated * min_p(n, n) < alpha:
            return n
    return None


def power(rows: List[JsonObject], alpha: float) -> Optional[JsonObject]:
    """Whether every gated benchmark could be SLOWER on its own:
    {gated, min_p (the worst one's), alpha, enough, reps_needed, without: [names]}.
    None when nothing is gated (informational benchmarks never fail the gate)."""
    family = [row for row in rows if not row["informational"]]
    if not family:
        return None
    gated, worst_p, without = len(family), 0.0, []
    for row in family:
        reps = min(row["reps_baseline"], row["reps_candidate"])
        smallest = min_p(row["reps_baseline"], row["reps_candidate"])
        worst_p = max(worst_p, smallest)
        if reps < row["rule"]["min_reps"] or gated * smallest >= alpha:
            without.append(row["name"])
    needed = reps_needed(gated, alpha, max(row["rule"]["min_reps"] for row in family))
    return {
        "gated": gated,
        "min_p": worst_p,
        "alpha": alpha,
        "enough": not without,
        "reps_needed": needed,
        "without": without,
    }


def measure(
    name: str, base: Sequence[float], cand: Sequence[float], rule: Mapping[str, Any]
) -> JsonObject:
    """The figures of one benchmark before the decision: medians, ratio, raw p."""
    median_base, median_cand = statistics.median(base), statistics.median(cand)
    row = {
        "name": name,
        "reps_baseline": len(base),
        "reps_candidate": len(cand),
        "median_baseline_s": median_base,
        "median_candidate_s": median_cand,
        "ratio": median_cand / median_base,
        "delta_s": median_cand - median_base,
        "p": None,
        "p_adjusted": None,
        "informational": rule["informational"],
        "rule": {k: v for k, v in rule.items()},
        "note": "",
    }
    try:
        row["p"] = mann_whitney_p(cand, base)
    except InputError as error:
        raise InputError(f"benchmark {name}: {error}") from None
    row["method"] = test_method(cand, base)
    return row


def decide(row: JsonObject, alpha: float) -> None:
    """Sets row['outcome'] from the ratio, the floor and the adjusted p-value."""
    rule = row["rule"]
    outside = row["ratio"] > rule["max_ratio"] or row["ratio"] < 1.0 / rule["max_ratio"]
    above_floor = abs(row["delta_s"]) * 1e9 >= rule["min_abs_ns"]
    if not (outside and above_floor):
        row["outcome"] = SAME
    elif row["p_adjusted"] < alpha:
        row["outcome"] = SLOWER if row["ratio"] > 1 else FASTER
    else:
        row["outcome"] = AMBIGUOUS
        row["note"] = "not significant: rerun with more repetitions"


def _pair(
    base_groups: Dict[str, JsonObject], cand_groups: Dict[str, JsonObject], section: JsonObject
) -> Dict[str, Tuple[List[float], List[float]]]:
    """Sorts names into compared pairs and the lists of skipped, missing, new and failed ones."""
    pairs = {}
    for name in sorted(set(base_groups) | set(cand_groups)):
        base, cand = base_groups.get(name), cand_groups.get(name)
        if cand is None:
            section["missing"].append(
                {"name": name, "why": "in the baseline, not in the candidate"}
            )
        elif base is None:
            section["new"].append(
                {"name": name, "why": "in the candidate only: nothing to compare"}
            )
        elif base["error"] or cand["error"]:
            section["errors"].append(
                {"name": name, "baseline": base["error"], "candidate": cand["error"]}
            )
        elif base["skip"] is None and cand["skip"]:
            section["missing"].append(
                {
                    "name": name,
                    "why": "measured in the baseline, skipped in "
                    f"the candidate ({cand['skip']}): nothing to compare",
                }
            )
        elif base["skip"] or cand["skip"]:
            section["skipped"].append(
                {
                    "name": name,
                    "reason": cand["skip"] or base["skip"],
                    "side": "candidate" if cand["skip"] else "baseline",
                }
            )
        else:
            pairs[name] = (base["times"], cand["times"])
    return pairs


MUST_MATCH = ("num_cpus", "gpu", "library_build_type")  # another machine or a debug build
NOTED = ("host_name", "driver", "libtorch_version", "mhz_per_cpu")  # may be what is measured


def _context_checks(
    base_context: JsonObject, cand_context: JsonObject
) -> Tuple[List[str], List[str]]:
    """(problems, notes): the two runs must come from the same kind of machine and build."""
    found: Dict[str, List[str]] = {"problems": [], "notes": []}
    for kind, keys in (("problems", MUST_MATCH), ("notes", NOTED)):
        for key in keys:
            if base_context.get(key) != cand_context.get(key):
                found[kind].append(
                    f"context {key} differs: baseline {base_context.get(key)!r}, "
                    f"candidate {cand_context.get(key)!r}"
                )
    return found["problems"], found["notes"]


def compare(baseline_path: str, candidate_path: str, policy: Policy) -> JsonObject:
    """The speed section of the verdict; raises InputError when the inputs cannot be compared."""
    base_context, base_groups = repetitions(baseline_path)
    cand_context, cand_groups = repetitions(candidate_path)
    section: JsonObject = {
        "baseline": baseline_path,
        "candidate": candidate_path,
        "policy": policy.path,
        "alpha": policy.alpha,
        "correction": "holm",
        "test": TEST,
        "benchmarks": [],
        "skipped": [],
        "missing": [],
        "new": [],
        "errors": [],
    }
    section["mismatch"], section["notes"] = _context_checks(base_context, cand_context)
    pairs = _pair(base_groups, cand_groups, section)
    for name, (base, cand) in pairs.items():
        if min(len(base), len(cand)) < 2:
            raise InputError(
                f"benchmark {name}: {len(base)} baseline and {len(cand)} candidate "
                "repetition(s); run with --benchmark_repetitions=N (N >= 8)"
            )
        section["benchmarks"].append(measure(name, base, cand, policy.rule(name)))
    rows = {row["name"]: row for row in section["benchmarks"]}
    for informational in (False, True):  # informational ones do not dilute the gated family
        family = {
            name: row["p"] for name, row in rows.items() if row["informational"] == informational
        }
        for name, p_adjusted in holm(family).items():
            rows[name]["p_adjusted"] = p_adjusted
    section["power"] = power(section["benchmarks"], policy.alpha)  # checked by input_problems
    for row in section["benchmarks"]:
        decide(row, policy.alpha)
    section["benchmarks"].sort(key=lambda row: -row["ratio"])
    return section


def regressed(section: JsonObject) -> bool:
    """True when a gated (not informational) benchmark is SLOWER."""
    return any(
        row["outcome"] == SLOWER and not row["informational"] for row in section["benchmarks"]
    )


def input_problems(section: JsonObject) -> List[str]:
    """What makes the speed comparison untrustworthy: fail closed on each."""
    problems = [f"{text}: the runs are not comparable" for text in section.get("mismatch", [])]
    problems += [f"benchmark {m['name']} is missing: {m['why']}" for m in section["missing"]]
    problems += [
        f"benchmark {e['name']} failed: baseline {e['baseline']!r}, "
        f"candidate {e['candidate']!r}"
        for e in section["errors"]
    ]
    if not section["benchmarks"]:
        problems.append("no benchmark was compared (all skipped, missing or failed)")
    elif all(row["informational"] for row in section["benchmarks"]):
        problems.append(
            "no gated benchmark was compared (every one is informational in the "
            "policy): nothing here could fail the gate"
        )
    power_check = section.get("power")
    if power_check and not power_check["enough"]:
        problems.append(no_power_message(power_check))
    return problems


def no_power_message(check: JsonObject) -> str:
    """Which gated benchmarks could never be SLOWER, and what to change."""
    needed = check["reps_needed"]
    more = f"add repetitions (>= {needed} a side)" if needed else "add repetitions"
    without = check["without"]
    names = ", ".join(without[:3]) + (f" and {len(without) - 3} more" if len(without) > 3 else "")
    return (
        f"no power: {len(without)} of {check['gated']} gated benchmarks could never be SLOWER "
        f"({names}): {check['gated']} gated x their smallest attainable p (worst "
        f"{check['min_p']:.2g}) must stay below alpha {check['alpha']:g}, with >= min_reps "
        f"repetitions a side; {more} or narrow the benchmarks with --filter"
    )
