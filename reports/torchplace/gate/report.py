"""The verdict as Markdown (CI step summary, PR comment) and as JSON (other tools)."""
from __future__ import annotations

import json
from typing import List, Optional

from torchplace.schema import EXIT_FAIL, EXIT_INPUT, EXIT_OK, EXIT_REGRESSION, JsonObject

SCHEMA = "torchplace.gate/1"
EXIT_PASS, EXIT_SPEED, EXIT_BEHAVIOUR = EXIT_OK, EXIT_FAIL, EXIT_REGRESSION  # EXIT_INPUT: 3
VERDICTS = {
    EXIT_PASS: "PASS",
    EXIT_SPEED: "FAIL: speed regression",
    EXIT_BEHAVIOUR: "FAIL: behaviour regression",
    EXIT_INPUT: "ERROR: bad input or tool error",
}


def _duration(value_s: float) -> str:
    """A time in the unit that keeps it readable: '812 ns', '3.41 ms'."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(value_s) >= scale:
            return f"{value_s / scale:.3g} {unit}"
    return f"{value_s * 1e9:.3g} ns"


def _p(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.2g}"


def _behaviour_lines(section: JsonObject) -> List[str]:
    lines = [
        "### Behaviour",
        "",
        f"`{section['results']}` against `{section['expectations']}`: "
        f"{section['compared']} cells compared, {len(section['regressions'])} regression(s), "
        f"{len(section['skipped'])} skipped for a stated reason, {len(section['new'])} new.",
        "",
        "Outcome categories of the run (only passed, expected_error and race_shown are "
        "evidence): "
        + ", ".join(f"{k} {n}" for k, n in section.get("categories", {}).items())
        + ".",
        "",
    ]
    if section.get("synthetic"):
        lines[2:2] = [
            f"**SYNTHETIC input** (note, not a failure): the results are hand-made test "
            f"data, not a measurement: {section['synthetic']}",
            "",
        ]
    if section["regressions"]:
        lines += ["| cell | regression | committed | observed | detail |", "|---|---|---|---|---|"]
        for row in section["regressions"]:
            observed = row["observed"] and (
                f"{row['observed']['outcome']} "
                f"{row['observed']['error_class'] or ''} "
                f"({row['observed'].get('category', '?')})"
            )
            expected = f"{row['expected']['outcome']} {row['expected']['error_class'] or ''}"
            detail = row["detail"].replace("|", "\\|").replace("\n", " ")[:200]
            lines.append(
                f"| `{row['id']}` | {row['kind']} | {expected} | {observed or '-'} | {detail} |"
            )
        lines.append("")
    for title, rows, text in (
        (
            "New cells (not in the committed expectations)",
            section["new"],
            lambda r: f"expects {r['expected']['outcome']}, observed " f"{r.get('category', '?')}",
        ),
        ("Skipped cells", section["skipped"], lambda r: r["reason"]),
        (
            "Transfer counts below the committed budget (refresh to keep the gain)",
            section.get("transfers_below_budget", []),
            lambda r: r["detail"],
        ),
    ):
        if rows:
            lines += [f"<details><summary>{title}: {len(rows)}</summary>", ""]
            lines += [f"- `{row['id']}`: {text(row)}" for row in rows]
            lines += ["", "</details>", ""]
    return lines


def _power_lines(check: Optional[JsonObject]) -> List[str]:
    """The power check: can every gated benchmark be SLOWER on its own at these repetitions?"""
    if not check:
        return []
    verdict = (
        "every gated benchmark can be SLOWER"
        if check["enough"]
        else f"{len(check['without'])} gated benchmark(s) can NEVER be SLOWER"
    )
    return [
        f"Power: {check['gated']} gated x worst smallest attainable p {check['min_p']:.2g} = "
        f"{check['gated'] * check['min_p']:.2g} against alpha {check['alpha']:g}: {verdict}.",
        "",
    ]


def _speed_lines(section: JsonObject) -> List[str]:
    gated = sum(1 for row in section["benchmarks"] if not row["informational"])
    lines = [
        "### Speed",
        "",
        f"`{section['candidate']}` against `{section['baseline']}`; ratio = candidate median / "
        f"baseline median (> 1 is slower); two-sided Mann-Whitney U (exact without ties), "
        f"Holm-corrected over "
        f"{gated} gated benchmark(s), alpha {section['alpha']}; policy `{section['policy']}`.",
        "",
        *_power_lines(section.get("power")),
        "| benchmark | outcome | ratio | baseline | candidate | p (Holm) | reps (base/cand) "
        "| note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in section["benchmarks"]:
        outcome = row["outcome"] + (" (info)" if row["informational"] else "")
        lines.append(
            f"| `{row['name']}` | {outcome} | {row['ratio']:.3f} | "
            f"{_duration(row['median_baseline_s'])} | {_duration(row['median_candidate_s'])} | "
            f"{_p(row['p_adjusted'])} | {row['reps_baseline']}/{row['reps_candidate']} | "
            f"{row['note']} |"
        )
    lines.append("")
    if any(row["outcome"] == "AMBIGUOUS" for row in section["benchmarks"]):
        lines += [
            "AMBIGUOUS benchmarks do not fail the gate: rerun them with more repetitions.",
            "",
        ]
    listed = (
        [f"- skipped `{s['name']}` ({s['side']}): {s['reason']}" for s in section["skipped"]]
        + [f"- new `{n['name']}`: {n['why']}" for n in section["new"]]
        + [f"- note: {note}" for note in section["notes"]]
    )
    return lines + listed + ([""] if listed else [])


def markdown(verdict: JsonObject) -> str:
    """The whole summary.md text."""
    lines = [
        f"## torchplace gate: {VERDICTS[verdict['exit_code']]}",
        "",
        f"Exit code {verdict['exit_code']} (0 pass, 1 speed regression, 2 behaviour regression, "
        "3 bad input or tool error).",
        "",
    ]
    if verdict["problems"]:
        lines += ["### Problems (the gate fails closed on these)", ""]
        lines += [f"- {problem}" for problem in verdict["problems"]] + [""]
    if verdict.get("behaviour"):
        lines += _behaviour_lines(verdict["behaviour"])
    if verdict.get("speed"):
        lines += _speed_lines(verdict["speed"])
    return "\n".join(lines)


def as_json(verdict: JsonObject) -> str:
    return json.dumps({"schema": SCHEMA, **verdict}, indent=1) + "\n"
