"""Limits that keep the app responsive for everyone: work per view, and one sweep at a time.

A link can ask for any repetitions and sizes the controls allow; a view's Monte-Carlo work
(repetitions × patients summed over the sizes shown) is capped, with a notice. Uncached
sweeps from all sessions run one at a time (each already uses both cores), so memory stays
that of one sweep whatever the number of users; the others wait, and their pages say so.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dpcore.montecarlo import cluster_executor

MAX_WORK = 2_000_000  # repetitions x patients per view; the default DP-OWL view is 840,000
MIN_REPS = 20


@dataclass(frozen=True)
class Workload:
    """What a view will simulate, and a notice when that is less than it asked for."""

    reps: int
    sizes: tuple[int, ...]
    notice: str | None = None


def cap_work(reps: int, sizes: Iterable[int], keep: int, max_work: int | None = None) -> Workload:
    """Fit ``reps`` x sum(``sizes``) under ``max_work`` (default MAX_WORK): fewer repetitions
    first (not below MIN_REPS), then drop the largest sizes other than ``keep``."""
    max_work = MAX_WORK if max_work is None else max_work
    sizes = tuple(sorted(set(sizes)))
    asked = (int(reps), sizes)
    reps = int(min(reps, max(MIN_REPS, max_work // sum(sizes) // 10 * 10)))
    while reps * sum(sizes) > max_work and len(sizes) > 1:
        drop = max(s for s in sizes if s != keep)
        sizes = tuple(s for s in sizes if s != drop)
    if (reps, sizes) == asked:
        return Workload(reps, sizes)
    dropped = sorted(set(asked[1]) - set(sizes))
    parts = [f"{reps} repetitions instead of {asked[0]}"] if reps != asked[0] else []
    if dropped:
        parts.append("without n = " + ", ".join(map(str, dropped)))
    return Workload(
        reps,
        sizes,
        "To keep the app quick for everyone, this view simulates "
        + " and ".join(parts)
        + " (at most "
        + f"{max_work:,} patient-repetitions per view).",
    )


class _Gate:
    """A counting gate that can also say whether a caller would have to wait, and be widened
    (the warm-up, a process of its own, lets its threads through together)."""

    def __init__(self, slots: int) -> None:
        self._cond = threading.Condition()
        self.capacity, self._running = slots, 0

    def busy(self) -> bool:
        with self._cond:
            return self._running >= self.capacity

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: self._running < self.capacity)
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify()

    @contextmanager
    def widened(self, slots: int) -> Iterator[None]:
        """Let ``slots`` callers through at once inside the block."""
        with self._cond:
            old, self.capacity = self.capacity, max(self.capacity, int(slots))
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self.capacity = old


SIMULATIONS = _Gate(1)

_cluster: dict[str, Any] = {"address": None, "executor": None, "failed_at": -math.inf}
_cluster_lock = threading.Lock()
RETRY_SECONDS = 60  # after a failed connection, the local pool serves until then


def executor() -> Executor | None:
    """Where uncached sweeps run: the dask cluster named by ``DPCORE_SCHEDULER`` (one client
    per server process), or None for the local pool sized to the machine, also when the
    cluster cannot be reached (logged; tried again after RETRY_SECONDS)."""
    address = os.environ.get("DPCORE_SCHEDULER", "").strip()
    if not address:
        return None
    with _cluster_lock:
        if _cluster["address"] == address and _cluster["executor"] is not None:
            return _cluster["executor"]
        if time.monotonic() - _cluster["failed_at"] < RETRY_SECONDS:
            return None
        try:
            _cluster.update(address=address, executor=cluster_executor(address))
        except Exception as err:  # unreachable, or dask not installed: compute here
            logging.getLogger(__name__).warning(
                "DPCORE_SCHEDULER=%s unusable (%s); sweeps run on this machine", address, err
            )
            _cluster.update(executor=None, failed_at=time.monotonic())
        return _cluster["executor"]
