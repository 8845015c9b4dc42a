"""Programs that ``dpcore app`` and ``dpcore serve`` start, and stop with themselves.

Both pass SIGTERM, SIGINT and SIGHUP on to what they started and exit once it has stopped: no
server is left running without the command that started it. Each child runs in a process group
of its own (a Ctrl-C at the terminal reaches this process only, which then stops the children
in order) and, on Linux, is sent SIGTERM by the kernel if this process dies without a chance to
stop it (SIGKILL).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Child", "ServeError", "free_port", "on_signals", "run_app", "start", "stop"]

POSIX = os.name == "posix"  # process groups; elsewhere (Windows) the child alone is signalled
SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n))
STOP_SECONDS = 10.0  # a child's time to stop after SIGTERM before its group gets SIGKILL


class ServeError(Exception):
    """Something ``dpcore serve`` could not start, in words for the user."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """SIGTERM to this child when its parent dies (Linux's PR_SET_PDEATHSIG; kept across exec)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def start(command: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``Popen`` in a process group of its own, stopped with its parent."""
    if POSIX:
        kwargs.update(process_group=0, preexec_fn=_die_with_parent)
    return subprocess.Popen(list(command), **kwargs)


def stop(children: Sequence[subprocess.Popen[bytes]], seconds: float = STOP_SECONDS) -> None:
    """SIGTERM each child's process group, wait up to ``seconds``, then SIGKILL what is left.

    The whole group: a Streamlit server's pool of simulation processes or a Dask worker's
    nanny processes go with it."""
    for child in children:
        _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=max(deadline - time.monotonic(), 0.0))
    for child in children:
        _signal_group(child, None)  # a straggler, or a grandchild left in the group
        if child.poll() is None:
            child.wait()


def _signal_group(child: subprocess.Popen[bytes], signum: int | None) -> None:
    """Send ``signum`` (None: kill) to the child's process group, or to the child alone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if POSIX:
            os.killpg(child.pid, signal.SIGKILL if signum is None else signum)
        elif signum is None:
            child.kill()
        else:
            child.terminate()


@contextlib.contextmanager
def on_signals(handler: Callable[[int], None]) -> Iterator[None]:
    """Call ``handler(signum)`` on SIGTERM, SIGINT and SIGHUP inside the block."""
    previous = {s: signal.signal(s, lambda signum, frame: handler(signum)) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _exit_code(code: int) -> int:
    """A shell's exit code for a child's return code (-N: killed by signal N)."""
    return 128 - code if code < 0 else code


def run_app(command: Sequence[str], cwd: Path) -> int:
    """Run one Streamlit server (``dpcore app``) until it exits; forward stop signals to it."""
    child = start(command, cwd=cwd)
    try:
        # The server stops itself on SIGTERM or SIGINT (Streamlit's own handlers).
        with on_signals(lambda signum: _signal_group(child, signum)):
            code = child.wait()
    finally:
        stop([child])  # after an error here, or whatever it left in its group
    return _exit_code(code)


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now (the OS's pick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass
class Child:
    """A started program, with the name the messages give it and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace") if self.log.is_file() else ""
        return "\n".join(text.splitlines()[-lines:])
