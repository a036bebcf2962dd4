"""torchplace.sim.TransferLog: the host-device copies and the forced synchronisations of a piece
of code on the sim, counted exactly (harness/sim/TRANSFER_LOG.md; C++'s
tp::sim::TransferLog, which it wraps).

    with sim.TransferLog() as log:   # counts from here ...
        train_step()                 # ... to the end of the block (or stop())
    log.counts()["host_to_device"]["bytes"]
    log.syncs()                      # {"_local_scalar_dense": 1}: an .item() in the step
"""
from __future__ import annotations

import ctypes
import json
from typing import Any, Dict, Optional


class TransferLog:
    """Counts every copy and forced synchronisation of the process from its construction to
    stop() (or the end of its `with` block). Logs nest; see the C++ header for the scope."""

    def __init__(self) -> None:
        from torchplace import sim

        self._library = sim.library()
        self._handle: Optional[int] = self._library.torchplace_sim_log_start()
        if not self._handle:
            raise sim.SimUnavailable(self._library.torchplace_sim_error().decode())

    def __enter__(self) -> "TransferLog":
        return self

    def __exit__(self, *error: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Stops counting (idempotent); the counts stay readable."""
        if self._handle:
            self._library.torchplace_sim_log_stop(ctypes.c_void_p(self._handle))

    def counts(self) -> Dict[str, Any]:
        """{"host_to_device": {"copies", "bytes", "non_blocking"}, "device_to_host": ...,
        "device_to_device": ..., "syncs": {operator: count}}."""
        text = self._library.torchplace_sim_log_json(ctypes.c_void_p(self._handle))
        return dict(json.loads(text.decode()))

    def syncs(self) -> Dict[str, int]:
        """The forced synchronisations by operator (what CUDA's sync-debug mode reports)."""
        return dict(self.counts()["syncs"])

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._library.torchplace_sim_log_free(ctypes.c_void_p(self._handle))
            self._handle = None
