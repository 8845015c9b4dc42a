"""A classroom through the real server: N students open the same DP-OWL link within 10 s,
then each makes 5 ε moves and 2 n moves with realistic pauses.

Each student is a small websocket client speaking Streamlit's own protocol (the BackMsg and
ForwardMsg protobufs that ship with streamlit), so the server does exactly the work a browser
session gives it, and the machine's cores go to the server rather than to browsers. A move is
the message a browser sends when a slider is released (the new value, inside the page's
fragment); its response time runs until the server reports the run finished (after any
refinement rerun).

    python benchmarks/classroom.py [--sessions 30] [--store warm|empty] [--store-dir DIR]
                                   [--classes 2] [--replicas N [--kill-at S]] [--url URL]
                                   [--lead 60]

``--store warm`` uses DIR as it is (warm it first: ``dpcore warm --only dp_owl``, which also
stores the figures a class reaches first); ``--store empty`` gives the server a fresh empty
store. Prints how many figures the store holds, errors, per-move response p50
and p95, the first view, the server's CPU per move, and its peak memory (resident, sampled
every 0.2 s); ``--classes 2`` runs a second class on the same server, its caches then warm;
``--lead S`` lets S seconds pass between the lecturer's first view and the class.

``--replicas N`` runs the class through ``dpcore serve --replicas N`` (nginx in front of N app
processes; each student's websocket is routed to one of them) and reports each process's CPU
and peak memory. ``--kill-at S`` then SIGKILLs replica 1 S seconds into the class: a student
whose connection drops reconnects through the proxy as a browser does (to a live replica,
where the page runs afresh) and goes on; the report says how many were cut, how long they took
to see the page again, and the moves of the others before and after. ``--url`` runs the class
against a server already running (nothing is started or measured there).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages (ui)
from load import cpu_seconds, describe, free_port, rss_mb, start_serve, start_server, watch_memory  # noqa: E402

from dpcore.store import ResultStore  # noqa: E402
from dpcore_app.ui.common.figures import stored_count  # noqa: E402

FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
EPS_LABELS = ("0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100")
N_LABELS = ("500", "800", "1000", "1500", "2000")
ERROR = 1  # Alert.Format
VERDICT_ICON = ":material/medical_services:"  # the verdict's alert, whatever its colour
TRACE = open(os.environ["CLASSROOM_TRACE"], "w") if os.environ.get("CLASSROOM_TRACE") else None


class Student:
    """One browser tab's worth of protocol: connect, run the page, move its sliders."""

    def __init__(self, url, page, stats, name="lecturer"):
        self.url, self.page, self.stats, self.name = url, page, stats, name
        self.widgets = {}  # key -> (widget id, fragment id)
        self.page_hash = ""  # the current page's script hash, as a browser sends it
        self.verdict = ""
        self.cache = {}  # hash -> cacheable message received, as a browser keeps them

    async def __aenter__(self):
        self.ws = await websockets.connect(
            self.url,
            subprotocols=["streamlit"],
            max_size=2**27,
            open_timeout=120,
            ping_interval=None,
        )
        return self

    async def reconnect(self, give_up=120.0):
        """As a browser does when its server goes away: connect again (through a proxy, to
        another replica) and run the page afresh; the seconds until it has finished."""
        start = time.perf_counter()
        while True:
            try:
                await self.__aenter__()
                break
            except (OSError, websockets.InvalidHandshake):
                if time.perf_counter() - start > give_up:
                    raise
                await asyncio.sleep(0.5)
        await self.send()
        await self.settle()
        return time.perf_counter() - start

    async def __aexit__(self, *exc):
        await self.ws.close()

    async def send(self, widget_states=None, fragment=""):
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = ""
        state.page_name = self.page
        state.page_script_hash = self.page_hash
        state.fragment_id = fragment
        state.cached_message_hashes.extend(self.cache)  # the server sends references to these
        for wid, values in (widget_states or {}).items():
            w = state.widget_states.widgets.add()
            w.id = wid
            w.string_array_value.data.extend(values)
        if TRACE:
            print(
                f"{time.perf_counter():.2f} {self.name} SEND {fragment} {widget_states}",
                file=TRACE,
                flush=True,
            )
        await self.ws.send(msg.SerializeToString())

    async def settle(self, timeout=600):
        """Read messages until a run finishes (not one that stops early for a rerun)."""
        first_chart = None
        start = time.perf_counter()
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            if msg.WhichOneof("type") == "ref_hash":
                msg = self.cache[msg.ref_hash]
            elif msg.metadata.cacheable:
                self.cache[msg.hash] = msg
            kind = msg.WhichOneof("type")
            if TRACE:
                detail = (
                    msg.script_finished
                    if kind == "script_finished"
                    else (msg.delta.new_element.WhichOneof("type") if kind == "delta" else "")
                )
                print(
                    f"{time.perf_counter():.2f} {self.name} {kind} {detail}", file=TRACE, flush=True
                )
            if kind == "navigation":  # the page that runs (new_session names the entry script)
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element, msg.delta.fragment_id)
                if (
                    first_chart is None
                    and msg.delta.new_element.WhichOneof("type") == "plotly_chart"
                ):
                    first_chart = time.perf_counter() - start
            elif kind == "script_finished" and msg.script_finished in FINISHED:
                return first_chart

    def _element(self, element, fragment):
        kind = element.WhichOneof("type")
        key = re.search(r"[.-](eps|n)$", element.slider.id) if kind == "slider" else None
        if key:  # the page-scoped keys dp-owl.eps and dp-owl.n (or an older -eps, -n)
            self.widgets[key.group(1)] = (element.slider.id, fragment)
        elif kind == "alert" and element.alert.icon == VERDICT_ICON:
            self.verdict = element.alert.body
        elif kind == "exception" or (kind == "alert" and element.alert.format == ERROR):
            text = element.exception.message if kind == "exception" else element.alert.body
            self.stats["errors"].append(text[:200])

    async def move(self, key, label):
        wid, fragment = self.widgets[key]
        start = time.perf_counter()
        await self.send({wid: [label]}, fragment)
        await self.settle()
        seconds = time.perf_counter() - start
        if key == "eps" and f"ε = {label}" not in self.verdict:  # the move must take effect
            self.stats["errors"].append(
                f"ε = {label} moved, the verdict reads {self.verdict[:80]!r}"
            )
        return seconds


async def student(k, args, url, stats):
    rng = random.Random(1000 + k)
    await asyncio.sleep(rng.uniform(0, args.arrive))  # the class opens the link within 10 s
    start = time.perf_counter()
    try:
        async with Student(url, "dp-owl", stats, f"s{k}") as s:
            await s.send()
            first_chart = await s.settle()
            stats["first_view"].append(time.perf_counter() - start)
            if first_chart is not None:
                stats["first_chart"].append(first_chart)
            moves = ["eps"] * 5 + ["n"] * 2
            rng.shuffle(moves)
            cut = False
            for key in moves:
                await asyncio.sleep(rng.uniform(*args.pause))  # reading the page
                label = rng.choice(EPS_LABELS if key == "eps" else N_LABELS)
                try:
                    seconds = await s.move(key, label)
                except websockets.ConnectionClosed:
                    if args.kill_at is None:
                        raise
                    cut, seen = True, time.perf_counter()
                    back = await s.reconnect()
                    stats["cut"].append(
                        (
                            seen - stats["t0"] - stats["killed_at"],
                            back,
                            time.perf_counter() - stats["t0"] - stats["killed_at"],
                        )
                    )
                    seconds = await s.move(key, label)
                stats[key].append(seconds)
                stats["timeline"].append(
                    (time.perf_counter() - stats["t0"] - seconds, seconds, k, cut)
                )
    except Exception as err:  # a failed session is a result, not a crash of the benchmark
        stats["failed"].append(f"session {k}: {type(err).__name__}: {err}"[:300])


def _class_stats():
    return {
        k: []
        for k in ("first_view", "first_chart", "eps", "n", "errors", "failed", "timeline", "cut")
    }


async def run(args):
    store = args.store_dir if args.store == "warm" else tempfile.mkdtemp(prefix="dpcore-empty-")
    os.environ["DPCORE_STORE"] = store
    if args.url:
        server, port, pids, ports = None, None, {}, []
        url = re.sub(r"^http", "ws", args.url.rstrip("/")) + "/_stcore/stream"
    elif args.replicas:
        server, port, pids, ports = start_serve(args.replicas)
    else:
        port = free_port()
        server = start_server(port)
        pids, ports = {"server": server.pid}, []
    url = url if args.url else f"ws://127.0.0.1:{port}/_stcore/stream"
    classes = []
    stop = asyncio.Event()
    peaks = {name: [rss_mb(pid)] for name, pid in pids.items()}
    monitors = [
        asyncio.create_task(watch_memory(pid, stop, peaks[name])) for name, pid in pids.items()
    ]
    start = time.perf_counter()
    try:
        # The lecturer opens the link first: the server process has imported the page (on
        # each replica, past the proxy: the students' sessions then meet the same start).
        t0 = time.perf_counter()
        for first in [f"ws://127.0.0.1:{p}/_stcore/stream" for p in ports] or [url]:
            async with Student(first, "dp-owl", {"errors": []}) as lecturer:
                await lecturer.send()
                await lecturer.settle()
        lecturer_seconds = time.perf_counter() - t0
        await asyncio.sleep(args.lead)  # the lecturer opened the link before the class came in
        for c in range(args.classes):  # a later class meets the server's caches warm
            stats = _class_stats()
            cpu0, stats["t0"] = {n: cpu_of(n, p) for n, p in pids.items()}, time.perf_counter()
            stats["killed_at"] = args.kill_at if args.kill_at is not None and c == 0 else None
            killer = (
                asyncio.create_task(kill(pids["replica 1"], args.kill_at))
                if (stats["killed_at"] is not None)
                else None
            )
            await asyncio.gather(
                *(student(k + 1000 * c, args, url, stats) for k in range(args.sessions))
            )
            last = {"replica 1": await killer - cpu0["replica 1"]} if killer else {}
            stats["cpu"] = {
                n: last[n] if n in last else cpu_of(n, p) - cpu0[n] for n, p in pids.items()
            }
            classes.append(stats)
            args.kill_at = None
    finally:
        stop.set()
        await asyncio.gather(*monitors, return_exceptions=True)
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    peak = {name: p[0] for name, p in peaks.items()}
    return classes, lecturer_seconds, peak, time.perf_counter() - start, store


def cpu_of(name, pid):
    """CPU seconds of a server process; nginx's with its workers (the master only forks them)."""
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split() if name == "nginx" else []
    return cpu_seconds(pid) + sum(cpu_seconds(int(k)) for k in kids)


async def kill(pid, at):
    """SIGKILL a replica ``at`` seconds into the class (a process or machine failing); its CPU
    seconds until then."""
    await asyncio.sleep(at)
    cpu = cpu_seconds(pid)
    os.kill(pid, signal.SIGKILL)
    return cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--store", choices=("warm", "empty"), default="warm")
    parser.add_argument("--store-dir", default=os.environ.get("DPCORE_STORE"))
    parser.add_argument(
        "--arrive", type=float, default=10.0, help="seconds over which the class arrives"
    )
    parser.add_argument(
        "--pause", type=float, nargs=2, default=(2.0, 6.0), help="pause between moves, s"
    )
    parser.add_argument(
        "--classes", type=int, default=1, help="classes in a row on the same server"
    )
    parser.add_argument(
        "--replicas", type=int, help="through dpcore serve with this many app processes"
    )
    parser.add_argument(
        "--kill-at",
        type=float,
        help="SIGKILL replica 1 this many seconds into the class (needs --replicas 2 or more)",
    )
    parser.add_argument(
        "--url", help="a running server or proxy (http://host:port); nothing started"
    )
    parser.add_argument(
        "--lead",
        type=float,
        default=0.0,
        help="seconds between the lecturer's first view and the class's arrival",
    )
    args = parser.parse_args()
    if args.store == "warm" and not args.store_dir:
        parser.error("--store warm needs --store-dir or DPCORE_STORE")
    if args.kill_at is not None and (args.replicas or 0) < 2:
        parser.error("--kill-at needs --replicas 2 or more")
    where = args.url or (
        f"dpcore serve --replicas {args.replicas}" if args.replicas else "one streamlit server"
    )
    classes, lecturer, peak, seconds, store = asyncio.run(run(args))
    print(
        f"{args.sessions} sessions through {where}, {args.store} store ({store}), "
        f"{seconds:.0f} s in all; load average {os.getloadavg()[0]:.1f} (1 min) at the end; "
        f"{stored_count(ResultStore(store))} figures stored"
    )
    print(
        f"lecturer's first view (fresh server{', each replica in turn' if args.replicas else ''}): "
        f"{lecturer:.2f} s"
    )
    for c, stats in enumerate(classes, start=1):
        if len(classes) > 1:
            print(f"class {c} of {len(classes)}:")
        report(stats)
    for name, mb in peak.items():
        print(f"peak memory of {name} (with its children): {mb:.0f} MB")


def report(stats):
    print(describe("first view, settled", stats["first_view"]))
    print(describe("first chart after the link opens", stats["first_chart"]))
    print(describe("ε moves", stats["eps"]))
    print(describe("n moves", stats["n"]))
    print(f"errors shown: {len(stats['errors'])} {stats['errors'][:3]}")
    print(f"sessions that failed: {len(stats['failed'])} {stats['failed'][:3]}")
    if os.environ.get("CLASSROOM_TIMELINE"):
        for at, seconds, *_ in sorted(stats["timeline"]):
            print(f"  move sent at {at:6.1f} s took {seconds:.2f} s")
    if stats.get("killed_at") is not None:
        killed, cut = stats["killed_at"], stats["cut"]
        print(f"replica 1 killed {killed:g} s into the class: {len(cut)} sessions cut")
        print(describe("  cut: noticed after the kill (at their next move)", [c[0] for c in cut]))
        print(describe("  cut: reconnect and the page run afresh", [c[1] for c in cut]))
        print(describe("  cut: page back, counted from the kill", [c[2] for c in cut]))
        before = [s for at, s, k, was_cut in stats["timeline"] if at < killed and not was_cut]
        after = [s for at, s, k, was_cut in stats["timeline"] if at >= killed and not was_cut]
        spared = {k for at, s, k, was_cut in stats["timeline"]} - {
            k for at, s, k, was_cut in stats["timeline"] if was_cut
        }
        print(
            f"  the {len(spared)} sessions never cut: moves before the kill: {_median(before)}; "
            f"after: {_median(after)}"
        )
    runs = len(stats["first_view"]) + len(stats["eps"]) + len(stats["n"])
    if not stats["cpu"]:
        print("server CPU: not measured (--url: a server this benchmark did not start)")
        return
    total = sum(stats["cpu"].values())
    print(
        f"server CPU: {total:.1f} s for {runs} views and moves, "
        f"{1000 * total / max(runs, 1):.0f} ms each"
        + (
            f" ({', '.join(f'{n} {c:.1f} s' for n, c in stats['cpu'].items())})"
            if len(stats["cpu"]) > 1
            else ""
        )
    )


def _median(values):
    if not values:
        return "none"
    q = statistics.quantiles(values, n=20, method="inclusive") if len(values) > 1 else values
    return f"{len(values)}, median {statistics.median(values):.2f} s, 95th percentile {q[-1]:.2f} s"


if __name__ == "__main__":
    main()
