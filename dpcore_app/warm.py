"""Warm the shared results store: every view the pages' main controls reach, at default
secondary settings, computed once for every later user (and every later server process).

    dpcore warm [--only dp_owl cvar theory] [--workers N] [--scheduler tcp://host:8786]
                [--list] [--limit K]
    python -m dpcore_app.warm ...    # the same

Resumable (a stored view is skipped), in parallel (``--workers`` processes, by default one per
core: numpy releases the GIL only partly, so threads of one process do not fill a machine),
with a progress bar on stderr. The views come back to this process, which alone writes the
store. ``--scheduler`` sends the sweeps' cells to a dask.distributed cluster instead; the
results still come back here and are stored on this machine.

With the DP-OWL views it also stores the figures a class reaches first (:func:`store_figures`):
the default link's, every ε at its n, every n at its ε, then every other (n, ε) of the sliders.
A server reads them from the store (``dpcore_app.ui.common.figures``) instead of building them on the
interpreter its sessions share.

The views, per page (the pages' defaults: DP-OWL h = 0.5, W auto, 200 repetitions, seed 0,
"also show n" 200, 500, 2500; CVaR B = 1, 200 repetitions, M = 31; theory h = 0.5, W = 30,
C = 0, rho = 0.05):

- DP-OWL: every n x gamma mode (paper-tuned, fixed 75) x preprocessing; one sweep per size
  shown serves every epsilon; the example rule at every (n, epsilon) of each.
- CVaR: the scalar sweep of each loss law (every n x tau x epsilon), the finite-class study at
  every (n, tau), and the method comparison at every (law, n, tau, finite epsilon).
- Theory: the bound measurement at every (n, epsilon) with the paper's gamma, and the CVaR
  measurement at every tau.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, TextIO, cast

from dpcore.montecarlo import WORKERS_ENV, workers
from dpcore.store import default_store
from dpcore_app.ui.bounds import compute as bounds
from dpcore_app.ui.common import figures
from dpcore_app.ui.common.grids import EPS_OPTIONS, N_OPTIONS
from dpcore_app.ui.common.limits import SIMULATIONS, cap_work
from dpcore_app.ui.cvar import compute as cvar
from dpcore_app.ui.owl import compute as owl
from dpcore_app.ui.owl import decide as owl_decide
from dpcore_app.ui.owl import panels as owl_panels
from dpcore_app.ui.owl import view_model as owl_view
from dpcore_app.ui.owl.decide_compute import Target

if TYPE_CHECKING:
    from dpcore_app.ui.common.limits import Workload
    from dpcore_app.ui.owl.compute import SweepArgs
    from dpcore_app.ui.owl.view_model import State

#: A view to warm: (label, the page's stored function, its arguments).
View = tuple[str, Any, tuple[Any, ...]]
#: A progress callback: (views done, views in all, the view's label).
Progress = Callable[[int, int, str], None]

_LOG = logging.getLogger(__name__)
OWL_COMPARE, OWL_REPS = (200, 500, 2500), 200
OWL_DEFAULTS = dict(h=0.5, W="auto", seed=0)
CVAR_BOUND, CVAR_REPS, CVAR_M, SEED = 1.0, 200, 31, 0
THEORY = dict(h=0.5, W=30, C=0.0, rho=0.05)
PAGES = ("dp_owl", "cvar", "theory")


def owl_views() -> Iterator[View]:
    """The DP-OWL page's views: every n x γ mode x preprocessing, and the example rules."""
    for n in N_OPTIONS:
        work = cap_work(OWL_REPS, set(OWL_COMPARE) | {n}, keep=n)
        for mode in ("paper", "free"):
            for prep in ("public", "paper"):
                for size in work.sizes:
                    yield (
                        f"DP-OWL n = {size}, γ {mode}, {prep}",
                        owl.owl_sweep,
                        (
                            size,
                            mode,
                            75,
                            OWL_DEFAULTS["h"],
                            OWL_DEFAULTS["W"],
                            work.reps,
                            OWL_DEFAULTS["seed"],
                            prep,
                        ),
                    )
                for eps in EPS_OPTIONS:
                    yield (
                        f"DP-OWL example rule n = {n}, ε = {eps:g}",
                        owl.example_rule,
                        (
                            n,
                            eps,
                            mode,
                            75,
                            OWL_DEFAULTS["h"],
                            OWL_DEFAULTS["W"],
                            OWL_DEFAULTS["seed"],
                            prep,
                        ),
                    )


def cvar_views() -> Iterator[View]:
    """The CVaR page's views: each kind of sweep and of rule."""
    reps = cvar.workload(CVAR_REPS).reps
    for kind in cvar.KIND_LABELS:
        yield f"CVaR sweep, {kind}", cvar.scalar_summary, (kind, CVAR_BOUND, reps, SEED)
    for n in cvar.N_GRID:
        for tau in cvar.TAU_GRID:
            yield (
                f"CVaR finite class n = {n}, τ = {tau:g}",
                cvar.finite_class,
                (n, tau, CVAR_M, CVAR_BOUND, SEED),
            )
    for kind in cvar.KIND_LABELS:
        for n in cvar.N_GRID:
            for tau in cvar.TAU_GRID:
                for eps in EPS_OPTIONS:
                    if math.isfinite(eps):
                        yield (
                            f"CVaR methods {kind} n = {n}",
                            cvar.methods,
                            (kind, n, tau, eps, CVAR_BOUND, reps, SEED),
                        )


def theory_views() -> Iterator[View]:
    """The Theory page's views: the bound terms at every (n, ε)."""
    for n in N_OPTIONS:
        for eps in EPS_OPTIONS:
            gamma = bounds.gamma_used("paper", 75, eps, n)
            yield (
                f"Theory n = {n}, ε = {eps:g}",
                bounds.measure,
                (n, eps, gamma, THEORY["h"], THEORY["W"], THEORY["C"], THEORY["rho"], SEED),
            )
    for tau in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0):
        yield f"Theory CVaR τ = {tau:g}", bounds.cvar_runs, (tau, SEED)


VIEWS = {"dp_owl": owl_views, "cvar": cvar_views, "theory": theory_views}


def views(pages: Iterable[str] = PAGES) -> list[View]:
    """(label, stored function, arguments) of every view of ``pages``, without repeats."""
    seen, out = set(), []
    for page in pages:
        for label, fn, args in VIEWS[page]():
            if (fn.store_name, args) not in seen:
                seen.add((fn.store_name, args))
                out.append((label, fn, args))
    return out


def _compute(fn, args):
    # The stored function under st.cache_data: no in-memory copy of every view in this process.
    return fn.__wrapped__(*args)


def _compute_elsewhere(store_name, args):
    """In a worker process: the view's computation alone (the function the page's cached,
    stored function wraps), returned to the parent, which stores it."""
    module, name = store_name.rsplit(".", 1)
    return getattr(importlib.import_module(module), name).compute(*args)


def _worker_init(threads):
    quiet_bare_mode()
    os.environ[WORKERS_ENV] = str(threads)  # the processes share the cores


def process_pool(processes: int | None = None) -> ProcessPoolExecutor:
    """A pool of ``processes`` worker processes (default: one per core) for :func:`warm`;
    each sweep in them uses its share of the cores."""
    processes = max(1, int(processes or workers()))
    return ProcessPoolExecutor(
        max_workers=processes,
        # a fresh interpreter: the parent may hold threads (a fork would copy their locks)
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_init,
        initargs=(max(1, workers() // processes),),
    )


def warm(
    progress: Progress | None = None,
    executor: Executor | None = None,
    scheduler: str | None = None,
    pages: Sequence[str] = PAGES,
    limit: int | None = None,
    processes: int | None = None,
) -> dict[str, Any]:
    """Compute and store every view of ``pages`` not yet in the store.

    Parameters
    ----------
    progress : callable(done, total, label), optional
        Called after each view.
    executor : concurrent.futures.Executor, optional
        Runs the views: threads of this process (they write the store themselves), or a
        ``ProcessPoolExecutor`` (:func:`process_pool`: each view comes back to this process,
        which stores it). By default ``processes`` worker processes, or a thread pool sized to
        the machine when ``processes`` is None or a scheduler is given.
    scheduler : str, optional
        A dask.distributed scheduler address: the sweeps' cells run there.
    processes : int, optional
        Worker processes of this machine (see :func:`process_pool`).
    pages : sequence of "dp_owl", "cvar", "theory"
    limit : int, optional
        Compute at most this many of the missing views (to time a subset).

    Returns
    -------
    dict with the number of views, how many were already stored, how many were computed now,
    the number of DP-OWL states whose figures were stored (a full warm of ``dp_owl``: see
    :func:`store_figures`), and the seconds taken.
    """
    before = os.environ.get("DPCORE_SCHEDULER")
    if scheduler:
        os.environ["DPCORE_SCHEDULER"] = scheduler  # read by dpcore_app.ui.common.limits.executor
    try:
        if executor is None and processes and not scheduler:
            with process_pool(processes) as pool:
                return _warm(progress, pool, pages, limit)
        return _warm(progress, executor, pages, limit)
    finally:
        if scheduler:
            if before is None:
                os.environ.pop("DPCORE_SCHEDULER", None)
            else:
                os.environ["DPCORE_SCHEDULER"] = before


def _warm(progress, executor, pages, limit):
    todo = views(pages)
    stored = [fn.is_stored(*args) for _, fn, args in todo]
    missing = [view for view, hit in zip(todo, stored) if not hit][:limit]
    start, done = time.perf_counter(), sum(stored)
    if progress is not None:
        progress(done, done + len(missing), "already stored")
    own = executor is None
    pool = ThreadPoolExecutor(max_workers=workers()) if own else executor
    # One sweep at a time protects a web server's sessions; here every worker may run one.
    with SIMULATIONS.widened(getattr(pool, "_max_workers", workers())):
        _run(pool, missing, done, done + len(missing), progress, own)
    states = owl_figure_states() if "dp_owl" in pages and limit is None else []
    stored = store_figures(
        states,
        log=None
        if progress is None
        else (lambda k, _: progress(k, len(states), "figures a class reaches first")),
    )
    return {
        "views": len(todo),
        "already_stored": done,
        "computed": len(missing),
        "figures": stored,
        "seconds": time.perf_counter() - start,
    }


def _run(pool, missing, done, total, progress, own):
    elsewhere = isinstance(pool, ProcessPoolExecutor)
    try:
        futures = {
            (
                pool.submit(_compute_elsewhere, fn.store_name, args)
                if elsewhere
                else pool.submit(_compute, fn, args)
            ): (label, fn, args)
            for label, fn, args in missing
        }
        for fut in as_completed(futures):
            label, fn, args = futures[fut]
            if elsewhere:
                fn.save(fut.result(), *args)  # this process alone writes the store
            else:
                fut.result()
            done += 1
            if progress is not None:
                progress(done, total, label)
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)


#: The DP-OWL page's default state, as its controls give it (the types too: a figure's cache
#: key tells 75 from 75.0); tests/ui/test_warm.py checks that the page then builds no figure.
OWL_STATE = dict(
    eps=1.0,
    n=1000,
    compare=OWL_COMPARE,
    mode="paper",
    gamma=75,
    prep="public",
    h=OWL_DEFAULTS["h"],
    W=OWL_DEFAULTS["W"],
    reps=OWL_REPS,
    seed=OWL_DEFAULTS["seed"],
)
OWL_TARGET = (
    Target(cast(str, owl_decide.TARGET.default), cast(float, owl_decide.K.default)),
    float(cast(float, owl_decide.ASSURANCE.default)),
)


def owl_figure_states(state: State = OWL_STATE) -> list[dict[str, Any]]:
    """The states whose figures a class needs first, in that order: the default link, every ε
    at its n, every n at its ε, then every other (n, ε), nearest the default first."""
    eps0, n0 = state["eps"], state["n"]
    e_rank, n_rank = ({v: k for k, v in enumerate(options)} for options in (EPS_OPTIONS, N_OPTIONS))

    def distance(point):
        e, n = point
        moves = (e != eps0) + (n != n0)
        return moves, abs(e_rank[e] - e_rank[eps0]) + abs(n_rank[n] - n_rank[n0])

    grid = [(e, n) for n in N_OPTIONS for e in EPS_OPTIONS]
    return [dict(state, eps=e, n=n) for e, n in sorted(grid, key=distance)]


def _owl_figures(s: State, work: Workload, args: SweepArgs, target: tuple[Target, float]) -> None:
    """The figures the DP-OWL page shows first at the state ``s`` (accuracy, the current n's
    references), built with the page's own functions so they get the keys the page asks for;
    ``work`` and ``args`` are :func:`~dpcore_app.ui.owl.view_model.workload`'s of ``s``."""
    v = owl_view.view(s, owl.sweeps(work.sizes, *args), work.reps)
    mark = owl_view.decision(s, v, target, work.reps)["mark"]
    owl_panels.curve_figures(s, work.sizes, v, work.reps, "accuracy", "own", (s["n"],), mark)
    owl_panels.rule_figures(s, v.runs, "accuracy", owl_panels.example(s))


def build_owl_figures(s: State, target: tuple[Target, float] = OWL_TARGET) -> bool:
    """Build the figures the DP-OWL page shows first at the state ``s`` (:func:`_owl_figures`).
    Returns False, having built nothing, when the state's sweeps or example rule are not
    stored: this never simulates."""
    work, args = owl_view.workload(s)
    example_args = (s["n"], s["eps"], s["mode"], s["gamma"], s["h"], s["W"], s["seed"], s["prep"])
    # st.cache_data keeps @stored's is_stored (functools.update_wrapper copies the wrapper's
    # attributes), but its CachedFunc type does not declare it
    if not (owl.is_computed(work.sizes, *args) and owl.example_rule.is_stored(*example_args)):  # type: ignore[attr-defined]
        return False
    _owl_figures(s, work, args, target)
    return True


def warm_replica(state: State = OWL_STATE, target: tuple[Target, float] = OWL_TARGET) -> float:
    """Build, in this process, the view a class opens first (the DP-OWL page's default link),
    with the page's own cached functions: its sweeps and example rule (read from the results
    store, or simulated and stored when ``dpcore warm`` has not run) and its figures (read
    from the store when ``dpcore warm`` stored them). A server replica then answers its first
    student from memory (:mod:`dpcore_app.replica`). Returns the seconds taken."""
    start = time.perf_counter()
    s = state
    _owl_figures(s, *owl_view.workload(s), target)
    return time.perf_counter() - start


def store_figures(
    states: Iterable[State] | None = None, log: Callable[[int, float], object] | None = None
) -> int:
    """Build the figures of ``states`` (default: :func:`owl_figure_states`) and write them to
    the results store, for every server that later reads them; returns how many states were
    stored (a state whose views are not stored is skipped: this never simulates).
    ``log(done, seconds)`` is called after each state."""
    start, done = time.perf_counter(), 0
    with figures.storing():
        for s in owl_figure_states() if states is None else states:
            try:
                done += build_owl_figures(s)
            except Exception:  # a page asking for this view meets the error itself, as a message
                _LOG.warning(
                    "no figures stored for ε = %s, n = %s", s["eps"], s["n"], exc_info=True
                )
            if log is not None:
                log(done, time.perf_counter() - start)
    return done


def text_bar(stream: TextIO = sys.stderr, width: int = 30) -> Progress:
    """A progress callback that draws ``[#####     ] 12/48 label`` on one line."""
    start = time.perf_counter()

    def show(done, total, label):
        filled = int(width * done / max(total, 1))
        elapsed = time.perf_counter() - start
        stream.write(
            f"\r[{'#' * filled}{' ' * (width - filled)}] {done}/{total} "
            f"{elapsed:5.0f} s  {label[:40]:<40}"
        )
        if done == total:
            stream.write("\n")
        stream.flush()

    return show


BARE_MODE_LOGGERS = (
    "streamlit.runtime.caching.cache_data_api",
    "streamlit.runtime.scriptrunner_utils.script_run_context",
)


def quiet_bare_mode() -> None:
    """Drop Streamlit's bare-mode notices ("No runtime found", "missing ScriptRunContext").

    The warm-up calls the pages' cached functions outside ``streamlit run`` on purpose; the
    notices are meant for an app that should be running under Streamlit. Only those two loggers
    are filtered, and only below ERROR, in this process only (a filter stays when Streamlit later
    sets the level); the app itself logs as Streamlit does.
    """
    for name in BARE_MODE_LOGGERS:
        logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.ERROR)


def main(argv: Sequence[str] | None = None) -> None:
    """``dpcore warm``: compute and store every view a class opens (see the module's text)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=PAGES, default=list(PAGES))
    parser.add_argument(
        "--workers",
        type=int,
        default=workers(),
        metavar="N",
        help=f"worker processes of this machine (default: one per core, here {workers()})",
    )
    parser.add_argument(
        "--scheduler", help="dask.distributed scheduler address (instead of the workers)"
    )
    parser.add_argument("--list", action="store_true", help="count the views and exit")
    parser.add_argument("--limit", type=int, help="compute at most this many missing views")
    args = parser.parse_args(argv)
    if args.list:
        todo = views(args.only)
        stored = sum(fn.is_stored(*a) for _, fn, a in todo)
        print(f"{len(todo)} views, {stored} stored")
        return
    # Outside a server st.cache_data keeps its entries in this process's memory, as a warm-up
    # wants; Streamlit's notices that it does so would read as a problem to whoever runs this.
    quiet_bare_mode()
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    out = warm(
        progress=text_bar(),
        scheduler=args.scheduler,
        pages=args.only,
        limit=args.limit,
        processes=args.workers,
    )
    store = default_store()
    with_figures = (
        f", the figures of {out['figures']} DP-OWL states stored" if out["figures"] else ""
    )
    print(
        f"{_count(out['computed'], 'view')} computed in {out['seconds']:.0f} s "
        f"({out['already_stored']} of {out['views']} were stored){with_figures}; "
        f"the store holds {store.size() / 2**20:.1f} MB in {store.root}"
    )


def _count(k, noun):
    return f"{k} {noun}" + ("" if k == 1 else "s")


if __name__ == "__main__":
    # Through the module's own name, so that the worker processes find what they are sent.
    from dpcore_app.warm import main as _main

    _main()
