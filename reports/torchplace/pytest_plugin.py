"""The pytest plugin: a project's device-parameterised tests on the simulated GPU.

    pytest --torchplace-sim          # the `device` fixture is sim:0, `device_pair` sim:0 and sim:1

Without the option, `device` is cuda:0 where a GPU is present and the CPU otherwise, and
`device_pair` two GPUs (skipped, saying why, with fewer). Installed with the package (the pytest11
entry point in pyproject.toml); from a source tree, `pytest -p torchplace.pytest_plugin`.
"""
from __future__ import annotations

from typing import Any, Tuple

import pytest

OPTION = "--torchplace-sim"


def pytest_addoption(parser: Any) -> None:
    parser.getgroup("torchplace").addoption(
        OPTION,
        action="store_true",
        help="give tests' `device` fixture the simulated GPU, sim:0 (torchplace.sim)",
    )


def _on_sim(request: Any) -> bool:
    return bool(request.config.getoption(OPTION))


@pytest.fixture
def device(request: Any) -> Any:
    """sim:0 with --torchplace-sim; else cuda:0 when there is a GPU, else the CPU."""
    import torch

    if _on_sim(request):
        from torchplace import sim

        return sim.device(0)
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


@pytest.fixture
def device_pair(request: Any) -> Tuple[Any, Any]:
    """Two devices for two-device tests: sim:0 and sim:1 with --torchplace-sim, else two GPUs."""
    import torch

    if _on_sim(request):
        from torchplace import sim

        return sim.device(0), sim.device(1)
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs two GPUs ({torch.cuda.device_count()} here) or {OPTION}")
    return torch.device("cuda:0"), torch.device("cuda:1")
