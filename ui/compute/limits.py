"""Limits that keep the app responsive for everyone: work per view, and one sweep at a time.

A link can ask for any repetitions and sizes the controls allow; a view's Monte-Carlo work
(repetitions × patients summed over the sizes shown) is capped, with a notice. Uncached
sweeps from all sessions run one at a time (each already uses both cores), so memory stays
that of one sweep whatever the number of users; the others wait, and their pages say so.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass

MAX_WORK = 2_000_000  # repetitions x patients per view; the default DP-OWL view is 840,000
MIN_REPS = 20


@dataclass(frozen=True)
class Workload:
    """What a view will simulate, and a notice when that is less than it asked for."""

    reps: int
    sizes: tuple
    notice: str | None = None


def cap_work(reps, sizes, keep, max_work=None):
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
    return Workload(reps, sizes, "To keep the app quick for everyone, this view simulates "
                    + " and ".join(parts) + " (at most "
                    + f"{max_work:,} patient-repetitions per view).")


class _Gate:
    """A semaphore that can also say whether a caller would have to wait."""

    def __init__(self, slots):
        self._slots = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._capacity, self._running = slots, 0

    def busy(self):
        with self._lock:
            return self._running >= self._capacity

    @contextmanager
    def slot(self):
        with self._slots:
            with self._lock:
                self._running += 1
            try:
                yield
            finally:
                with self._lock:
                    self._running -= 1


SIMULATIONS = _Gate(1)
