"""The speed gate: a candidate's benchmark repetitions against a baseline's.

Per benchmark: the ratio of medians (candidate / baseline, > 1 is slower), a two-sided
Mann-Whitney U test (scipy.stats.mannwhitneyu) with Holm's correction over the benchmarks
tested, and an absolute floor. Outcome:
  SAME       the medians differ by less than the policy's ratio or by less than the floor;
  SLOWER     beyond the ratio and the floor, and significant after the correction;
  FASTER     the same, the other way;
  AMBIGUOUS  beyond the ratio and the floor but not significant, or too few repetitions:
             rerun with more repetitions.
Holm rather than Benjamini-Hochberg: the gate fails a build when any one benchmark is SLOWER, so
what must stay below alpha is the chance of one false alarm in the whole run (the family-wise
error rate, which Holm controls), not the share of false ones among the alarms (BH's FDR).
Power: Holm multiplies the smallest p by the number of gated tests N, and with n repetitions a
side the test cannot give a p below that of perfectly separated samples. When N x that p >=
alpha no benchmark can ever be SLOWER: the gate then fails closed instead of passing blind.
"""
import functools
import statistics

from policy import InputError
from torchplace_data import iteration_groups, load_benchmarks

SAME, FASTER, SLOWER, AMBIGUOUS = "SAME", "FASTER", "SLOWER", "AMBIGUOUS"


def repetitions(path, metric="real_time"):
    """run_name -> {'times': [s, ...], 'skip': reason or None, 'error': text or None}."""
    doc = load_benchmarks(path)
    groups = {name: {"times": group["times"], "skip": group["skip"],
                     "error": None if group["error"] is None
                     else group["error"] or "error without a message"}
              for name, group in iteration_groups(doc, path, metric).items()}
    if not groups:
        kinds = {entry["run_type"] for entry in doc["benchmarks"]}
        raise InputError(f"{path}: no repetitions (run_type 'iteration') found"
                         + (" - only aggregates; rerun without --benchmark_report_aggregates_only"
                            if "aggregate" in kinds else " - the document holds no benchmarks"))
    return doc["context"], groups


def holm(pvalues):
    """Holm's step-down adjusted p-values, {name: p} -> {name: p_adjusted}."""
    ordered = sorted(pvalues.items(), key=lambda item: item[1])
    adjusted, running_max, count = {}, 0.0, len(ordered)
    for rank, (name, p) in enumerate(ordered):
        running_max = max(running_max, min(1.0, (count - rank) * p))
        adjusted[name] = running_max
    return adjusted


def mann_whitney_p(cand, base):
    """The gate's test: two-sided Mann-Whitney U (scipy's default method, 'auto')."""
    from scipy.stats import mannwhitneyu  # Debian's python3-scipy; 1-3 s to import, so here

    return float(mannwhitneyu(cand, base, alternative="two-sided").pvalue)


@functools.lru_cache(maxsize=None)
def min_p(n_base, n_cand):
    """The smallest p the test can give for these sample sizes: every candidate time above every
    baseline time (distinct values, so 'auto' picks the exact test up to 8 a side)."""
    return mann_whitney_p([float(n_base + i) for i in range(n_cand)],
                          [float(i) for i in range(n_base)])


def reps_needed(gated, alpha, limit=200):
    """The smallest n such that every n..limit repetitions a side gives gated x min_p < alpha
    (min_p(n, n) is not monotonic: exact up to 8, asymptotic above); None when not even limit."""
    needed = None
    for n in range(limit, 1, -1):
        if gated * min_p(n, n) >= alpha:
            break
        needed = n
    return needed


def power(rows, alpha):
    """Whether any gated benchmark can be SLOWER: {gated, min_p, alpha, enough, reps_needed}.

    gated counts Holm's family (gated benchmarks with a p-value); min_p is the smallest p their
    sample sizes allow. None when the family is empty (too few repetitions: AMBIGUOUS rows)."""
    family = [row for row in rows if not row["informational"] and row["p"] is not None]
    if not family:
        return None
    best = min(min_p(row["reps_baseline"], row["reps_candidate"]) for row in family)
    enough = len(family) * best < alpha
    return {"gated": len(family), "min_p": best, "alpha": alpha, "enough": enough,
            "reps_needed": None if enough else reps_needed(len(family), alpha)}


def measure(name, base, cand, rule):
    """The figures of one benchmark before the decision: medians, ratio, raw p."""
    median_base, median_cand = statistics.median(base), statistics.median(cand)
    if median_base <= 0:
        raise InputError(f"benchmark {name}: baseline median time is {median_base} s")
    row = {"name": name, "reps_baseline": len(base), "reps_candidate": len(cand),
           "median_baseline_s": median_base, "median_candidate_s": median_cand,
           "ratio": median_cand / median_base, "delta_s": median_cand - median_base,
           "p": None, "p_adjusted": None, "informational": rule["informational"],
           "rule": {k: v for k, v in rule.items()}, "note": ""}
    if min(len(base), len(cand)) >= rule["min_reps"]:
        row["p"] = mann_whitney_p(cand, base)
    return row


def decide(row, alpha):
    """Sets row['outcome'] from the ratio, the floor and the adjusted p-value."""
    rule = row["rule"]
    outside = row["ratio"] > rule["max_ratio"] or row["ratio"] < 1.0 / rule["max_ratio"]
    above_floor = abs(row["delta_s"]) * 1e9 >= rule["min_abs_ns"]
    if not (outside and above_floor):
        row["outcome"] = SAME
    elif row["p_adjusted"] is None:
        row["outcome"] = AMBIGUOUS
        row["note"] = f"needs >= {rule['min_reps']} repetitions on each side"
    elif row["p_adjusted"] < alpha:
        row["outcome"] = SLOWER if row["ratio"] > 1 else FASTER
    else:
        row["outcome"] = AMBIGUOUS
        row["note"] = "not significant: rerun with more repetitions"


def _pair(base_groups, cand_groups, section):
    """Sorts names into compared pairs and the lists of skipped, missing, new and failed ones."""
    pairs = {}
    for name in sorted(set(base_groups) | set(cand_groups)):
        base, cand = base_groups.get(name), cand_groups.get(name)
        if cand is None:
            section["missing"].append({"name": name, "why": "in the baseline, not in the candidate"})
        elif base is None:
            section["new"].append({"name": name, "why": "in the candidate only: nothing to compare"})
        elif base["error"] or cand["error"]:
            section["errors"].append({"name": name, "baseline": base["error"],
                                      "candidate": cand["error"]})
        elif base["skip"] or cand["skip"]:
            section["skipped"].append({"name": name, "reason": cand["skip"] or base["skip"],
                                       "side": "candidate" if cand["skip"] else "baseline"})
        else:
            pairs[name] = (base["times"], cand["times"])
    return pairs


def _fingerprint_notes(base_context, cand_context):
    """Warnings when the two runs did not come from the same kind of machine."""
    notes = []
    for key in ("gpu", "driver", "host_name", "num_cpus"):
        if base_context.get(key) != cand_context.get(key):
            notes.append(f"{key} differs: baseline {base_context.get(key)!r}, "
                         f"candidate {cand_context.get(key)!r}")
    return notes


def compare(baseline_path, candidate_path, policy):
    """The speed section of the verdict; raises InputError when the inputs cannot be compared."""
    base_context, base_groups = repetitions(baseline_path)
    cand_context, cand_groups = repetitions(candidate_path)
    section = {"baseline": baseline_path, "candidate": candidate_path, "policy": policy.path,
               "alpha": policy.alpha, "correction": "holm", "test": "mann-whitney-u two-sided",
               "benchmarks": [], "skipped": [], "missing": [], "new": [], "errors": [],
               "notes": _fingerprint_notes(base_context, cand_context)}
    pairs = _pair(base_groups, cand_groups, section)
    for name, (base, cand) in pairs.items():
        if min(len(base), len(cand)) < 2:
            raise InputError(f"benchmark {name}: {len(base)} baseline and {len(cand)} candidate "
                             "repetition(s); run with --benchmark_repetitions=N (N >= 8)")
        section["benchmarks"].append(measure(name, base, cand, policy.rule(name)))
    rows = {row["name"]: row for row in section["benchmarks"]}
    for informational in (False, True):  # informational ones do not dilute the gated family
        family = {name: row["p"] for name, row in rows.items()
                  if row["informational"] == informational and row["p"] is not None}
        for name, p_adjusted in holm(family).items():
            rows[name]["p_adjusted"] = p_adjusted
    section["power"] = power(section["benchmarks"], policy.alpha)  # checked by input_problems
    for row in section["benchmarks"]:
        decide(row, policy.alpha)
    section["benchmarks"].sort(key=lambda row: -row["ratio"])
    return section


def regressed(section):
    """True when a gated (not informational) benchmark is SLOWER."""
    return any(row["outcome"] == SLOWER and not row["informational"] for row in section["benchmarks"])


def input_problems(section):
    """What makes the speed comparison untrustworthy: fail closed on each."""
    problems = [f"benchmark {m['name']} is missing: {m['why']}" for m in section["missing"]]
    problems += [f"benchmark {e['name']} failed: baseline {e['baseline']!r}, "
                 f"candidate {e['candidate']!r}" for e in section["errors"]]
    if not section["benchmarks"]:
        problems.append("no benchmark was compared (all skipped, missing or failed)")
    power_check = section.get("power")
    if power_check and not power_check["enough"]:
        problems.append(no_power_message(power_check))
    return problems


def no_power_message(check):
    """Why no benchmark can be SLOWER, and what to change."""
    needed = check["reps_needed"]
    more = f"add repetitions (>= {needed} a side)" if needed else "add repetitions"
    return (f"no power: {check['gated']} gated benchmarks x min p {check['min_p']:.2g} = "
            f"{check['gated'] * check['min_p']:.2g} >= alpha {check['alpha']:g}, so no benchmark "
            f"can be SLOWER; {more} or narrow the benchmarks with --filter")
