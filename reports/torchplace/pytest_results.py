"""A pytest run as the suite's results.json (schema torchplace.results/1), for the gate and the
report: each test is a cell, `scenario/case=NAME/device=D` (devices=D0+D1 for a pair).

A test marked `@pytest.mark.torchplace_broken("DeviceMismatch")` is a broken variant: on a
device it must raise that class (the suite's classifier, tp::classify, names what it raised);
where `latent(device)` holds (default: the CPU) it runs silently, as the mistake is latent
there. An unmarked test must pass. A test's AssertionError is classed "AssertionError": the
test's own check caught it. The cell passes when what happened is what was expected. A skip's
reason starts with its code, one of the gate's (torchplace.gate.skips.SKIP_CODES): pytest.skip(
"not_on_sim: why"); one without is "unlisted", which the gate refuses.
"""
from __future__ import annotations

import json
import os
import platform
import re
import time
from typing import Any, Callable, Dict, List, Optional

from torchplace import schema

MARKER = "torchplace_broken"


def device_name(device: Any) -> str:
    """cuda:0, sim:1 (privateuseone on torch 1.13 is the sim), cpu."""
    text = str(device)
    return "sim" + text[len("privateuseone") :] if text.startswith("privateuseone") else text


def devices_of(item: Any) -> Optional[str]:
    """The cell's device part, from the test's fixtures; None for a test without one."""
    arguments = getattr(item, "funcargs", {})
    if "device_pair" in arguments:
        return "devices=" + "+".join(device_name(d) for d in arguments["device_pair"])
    if "device" in arguments:
        return "device=" + device_name(arguments["device"])
    return None


def expectation(item: Any) -> Dict[str, Any]:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return {"outcome": "success", "error_class": None, "category": "passed"}
    latent: Callable[[Any], bool] = marker.kwargs.get("latent", lambda d: d.type == "cpu")
    arguments = item.funcargs
    first = arguments["device_pair"][0] if "device_pair" in arguments else arguments["device"]
    if latent(first):
        return {"outcome": "success", "error_class": None, "category": "latent_unexercised"}
    return {"outcome": "error", "error_class": marker.args[0], "category": "expected_error"}


# A child process's traceback inside the message (torch.multiprocessing's ProcessRaisedException):
# its last "SomeError: text" line is what the child raised.
RAISED_LINE = re.compile(r"^\w+(?:Error|Exception): .*$", re.MULTILINE)


def observed_class(error: BaseException, classify: Callable[[str], str]) -> str:
    if isinstance(error, AssertionError):
        return "AssertionError"
    message = str(error)
    if "Traceback (most recent call last)" in message:
        raised = RAISED_LINE.findall(message)
        message = raised[-1] if raised else message
    return classify(message)


def cell(item: Any, report: Any, error: Optional[BaseException], classify: Callable) -> Dict:
    """One test's cell; `report` is its call phase's (or the setup's, when setup skipped)."""
    devices = devices_of(item) or "device=cpu"
    scenario = item.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    case = item.originalname.removeprefix("test_")
    expected = expectation(item)
    if report.skipped:
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        reason = reason.removeprefix("Skipped: ")
        code = reason.split(":", 1)[0] if ":" in reason else "unlisted"
        if code == "covered_by_other_cell":
            expected = {"outcome": "skip", "error_class": None, "category": "skipped"}
        observed: Dict[str, Any] = {"outcome": "not_run", "error_class": None}
        status, category = "skip", "skipped"
    else:
        raised = error is not None
        observed = {
            "outcome": "error" if raised else "success",
            "error_class": observed_class(error, classify) if error is not None else None,
            "message": str(error)[:2000] if raised else "",
        }
        matched = (observed["outcome"], observed["error_class"]) == (
            expected["outcome"],
            expected["error_class"],
        )
        status = "pass" if matched else "fail"
        category = expected["category"] if matched else "failed"
        reason = "" if matched else f"expected {expected['outcome']} {expected['error_class']}"
    skipped = {"skip_code": code} if report.skipped else {}
    return {
        **skipped,
        "id": f"{scenario}/case={case}/{devices}",
        "scenario": scenario,
        "axes": {"case": case},
        "device": devices.split("=", 1)[1],
        "expected": expected,
        "observed": observed,
        "status": status,
        "reason": reason,
        "category": category,
        "duration_ms": round(report.duration * 1000, 3),
        "notes": [],
    }


def fingerprint() -> Dict[str, Any]:
    import torch

    return {
        "libtorch_version": torch.__version__,
        "cuda": {
            "built_with_cuda": torch.version.cuda is not None,
            "device_count": torch.cuda.device_count() if torch.version.cuda else 0,
        },
        "runner": "pytest (torchplace.pytest_plugin)",
        "os": platform.freedesktop_os_release().get("PRETTY_NAME") if _has_os_release() else None,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _has_os_release() -> bool:
    try:
        platform.freedesktop_os_release()
    except OSError:
        return False
    return True


def write(path: str, cells: List[Dict[str, Any]]) -> None:
    document = {"schema": schema.RESULTS_SCHEMA, "fingerprint": fingerprint(), "cells": cells}
    for index, one in enumerate(cells):
        schema.check_cell(one, f"{path}: cells[{index}]")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    schema.write_atomically(path, json.dumps(document, indent=1) + "\n")
