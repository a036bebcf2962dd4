"""The pytest plugin: a project's device-parameterised tests on the simulated GPU.

    pytest --torchplace-sim          # the `device` fixture is sim:0, `device_pair` sim:0 and sim:1
    pytest --torchplace-results R    # and each test as a cell of R (results.json) for the gate:
                                     # torchplace gate --results R --expectations E
    @pytest.mark.torchplace_broken("DeviceMismatch")   # a broken variant (pytest_results.py)

Without the option, `device` is cuda:0 where a GPU is present and the CPU otherwise, and
`device_pair` two GPUs (skipped, saying why, with fewer). Installed with the package (the pytest11
entry point in pyproject.toml); from a source tree, `pytest -p torchplace.pytest_plugin`.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from torchplace import pytest_results

OPTION = "--torchplace-sim"
RESULTS = "--torchplace-results"
_cells: List[Dict[str, Any]] = []


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("torchplace")
    group.addoption(
        OPTION,
        action="store_true",
        help="give tests' `device` fixture the simulated GPU, sim:0 (torchplace.sim)",
    )
    group.addoption(RESULTS, metavar="PATH", help="write each test as a cell of PATH")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers",
        f"{pytest_results.MARKER}(error_class, latent=callable): a broken variant that must "
        "raise error_class on a device (latent(device): runs silently there; default the CPU)",
    )


def _classify(message: str) -> str:
    # the library alone: registering the sim here would break CUDA backwards (torch 2.8+)
    from torchplace import sim_library

    return sim_library.classify(message)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if not item.config.getoption(RESULTS) or pytest_results.devices_of(item) is None:
        return
    if call.when == "call" or (call.when == "setup" and report.skipped):
        error = call.excinfo.value if call.excinfo is not None and not report.skipped else None
        _cells.append(pytest_results.cell(item, report, error, _classify))


def pytest_sessionfinish(session: Any) -> None:
    path = session.config.getoption(RESULTS)
    if path:
        pytest_results.write(path, _cells)


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
