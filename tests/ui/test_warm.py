"""The warm-up: which views it covers, that it resumes, and that a warmed view costs no simulation."""

import os
import sys
import types

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore_app import warm
from dpcore_app.ui.common.grids import EPS_OPTIONS
from dpcore_app.ui.owl import compute as owl
from tests.app.conftest import APP, failures

SMALL = ("DP-OWL n = 200, small", owl.owl_sweep, (200, "paper", 75, 0.5, "auto", 40, 77, "public"))


def test_the_dp_owl_views_are_every_size_mode_and_preprocessing_at_default_settings():
    todo = warm.views(["dp_owl"])
    rules = {a for _, fn, a in todo if fn.store_name.endswith("example_rule")}
    args = {a for _, fn, a in todo if fn.store_name.endswith("owl_sweep")}
    assert len(args) == 12 * 2 * 2 and len(todo) == len(args) + len(rules)
    assert len(rules) == 12 * 15 * 2 * 2  # every n x ε x γ mode x preprocessing
    assert (1000, 1.0, "paper", 75, 0.5, "auto", 0, "public") in rules
    for prep in ("public", "paper"):  # the page's default view, both preprocessings
        for size in (200, 500, 1000, 2500):
            assert (size, "paper", 75, 0.5, "auto", 200, 0, prep) in args
    assert {a[1] for a in args} == {"paper", "free"}


def test_every_page_has_views_and_none_repeats():
    todo = warm.views()
    assert {fn.store_name.split(".")[2] for _, fn, _ in todo} == {"owl", "cvar", "bounds"}
    assert len({(fn.store_name, a) for _, fn, a in todo}) == len(todo)


@pytest.fixture
def small_views(monkeypatch):
    monkeypatch.setattr(warm, "VIEWS", {"small": lambda: iter([SMALL])})
    return ["small"]


def test_warm_resumes_and_reports_progress(small_views, monkeypatch):
    seen = []
    first = warm.warm(
        progress=lambda done, total, label: seen.append((done, total)), pages=small_views
    )
    assert seen[-1] == (1, 1) and first["views"] == 1
    calls = []
    monkeypatch.setattr(owl, "owl_monte_carlo", lambda *a, **k: calls.append(1))
    again = warm.warm(pages=small_views)
    assert again["already_stored"] == 1 and calls == []


def test_worker_processes_store_the_same_views_as_threads(monkeypatch, tmp_path):
    """Two worker processes (each view comes back to this process, which stores it) and a
    thread pool store the same entries. About 10 s: two fresh interpreters import the
    dashboard (the way `dpcore warm` starts its workers)."""
    tiny = [
        ("DP-OWL n = 100, tiny", owl.owl_sweep, (100, "paper", 75, 0.5, "auto", 20, 5, "public")),
        ("example rule, tiny", owl.example_rule, (100, 1.0, "paper", 75, 0.5, "auto", 5, "public")),
    ]
    monkeypatch.setattr(warm, "VIEWS", {"tiny": lambda: iter(tiny)})
    # A spawned worker re-runs this process's __main__, which an earlier AppTest of this test
    # process may have left as its script (`dpcore warm`'s own __main__ is the warm module).
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))

    def entries(root):  # each store signs its entries with a key of its own: compare names
        return {p.relative_to(root) for p in root.rglob("*") if not p.name.startswith(".")}

    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "threads"))
    threads = warm.warm(pages=["tiny"])
    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "processes"))
    processes = warm.warm(pages=["tiny"], processes=2)
    assert threads["computed"] == processes["computed"] == 2
    stored = entries(tmp_path / "processes")
    assert len([p for p in stored if p.suffix]) == 2 and stored == entries(tmp_path / "threads")
    assert warm.warm(pages=["tiny"], processes=2)["already_stored"] == 2  # and it resumes
    label, fn, args = tiny[0]
    from_processes = fn.__wrapped__(*args)  # read back from the store
    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "threads"))
    for a, b in zip(from_processes, fn.__wrapped__(*args)):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_a_warmed_view_opens_without_simulating(small_views, monkeypatch):
    warm.warm(pages=small_views)

    def refuse(*args, **kwargs):
        raise AssertionError("the warmed view was simulated again")

    monkeypatch.setattr(owl, "owl_monte_carlo", refuse)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("dpcore_app/app_pages/dp_owl.py")
    for key, value in {"n": "200", "compare": ["200"], "reps": "40", "seed": "77"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not failures(at), [e.value for e in failures(at)]
    assert len(at.get("plotly_chart")) >= 4  # the view is drawn, from the store alone


def test_an_unreachable_cluster_falls_back_to_the_local_pool(monkeypatch, caplog):
    from dpcore_app.ui.common import limits

    def unreachable(address):
        raise OSError(f"cannot connect to {address}")

    monkeypatch.setattr(limits, "cluster_executor", unreachable)
    monkeypatch.setitem(limits._cluster, "failed_at", -float("inf"))
    monkeypatch.setenv("DPCORE_SCHEDULER", "tcp://192.0.2.1:8786")
    assert limits.executor() is None
    assert "unusable" in caplog.text
    monkeypatch.delenv("DPCORE_SCHEDULER")
    assert limits.executor() is None


def test_warming_on_a_dask_cluster_stores_the_same_bits(small_views, monkeypatch, tmp_path):
    distributed = pytest.importorskip("distributed")
    import pandas as pd

    from dpcore_app.ui.common import limits

    label, fn, args = SMALL
    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "local"))
    local = fn.__wrapped__(*args)
    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "cluster"))
    monkeypatch.setattr(
        limits, "_cluster", {"address": None, "executor": None, "failed_at": -float("inf")}
    )
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        out = warm.warm(pages=small_views, scheduler=cluster.scheduler_address)
        assert out["computed"] == 1 and limits._cluster["executor"] is not None
        limits._cluster["executor"]._client.close()
    assert "DPCORE_SCHEDULER" not in os.environ  # warm() put it back as it was
    for a, b in zip(local, fn.__wrapped__(*args)):  # read back from the cluster-warmed store
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_the_warm_up_starts_with_the_default_link_and_the_single_moves():
    states = warm.owl_figure_states()
    points = [(s["eps"], s["n"]) for s in states]
    assert len(points) == len(set(points)) == 15 * 12  # every (ε, n) of the sliders, once
    assert points[0] == (1.0, 1000)
    singles = 15 + 12 - 2
    assert all(e == 1.0 or n == 1000 for e, n in points[1 : 1 + singles])
    assert points[1:3] == [(1.0, 800), (0.5, 1000)] or points[1:3] == [(0.5, 1000), (1.0, 800)]


def record_figure_builds(monkeypatch):
    """The titles of the figures built from now on (``SharedFigure.freeze`` still runs), in a
    list that grows as they are built."""
    from dpcore_app.ui.common import figures

    built = []
    freeze = figures.SharedFigure.freeze.__func__
    monkeypatch.setattr(
        figures.SharedFigure,
        "freeze",
        classmethod(lambda cls, fig: built.append(fig.layout.title.text) or freeze(cls, fig)),
    )
    return built


def test_the_warm_up_stores_exactly_the_figures_the_page_then_reads(small_views, monkeypatch):
    """Once ``dpcore warm`` has stored a view's figures, a server opening that view builds none:
    the page and the warm-up give the figures the same keys (types included). A view whose
    example rule is not stored is skipped, never simulated."""
    from dpcore_app.ui.common import figures

    warm.warm(pages=small_views)  # the sweep, stored
    state = dict(warm.OWL_STATE, n=200, compare=(200,), reps=40, seed=77)
    monkeypatch.setattr(owl.example_rule, "is_stored", lambda *args: False)
    assert not warm.store_figures([state])
    monkeypatch.undo()
    owl.example_rule(200, 1.0, "paper", 75, 0.5, "auto", 77, "public")  # now stored
    built = record_figure_builds(monkeypatch)
    figures._build.clear()
    # The view's four charts, and the chart against n at every ε of the grid: its own slider's
    # steps (dpcore_app.ui.common.frames).
    assert warm.store_figures([state]) == 1 and len(built) == 4 + len(EPS_OPTIONS)
    figures._build.clear()  # a server started after the warm-up: nothing in memory
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()  # the Overview, which builds its own figure
    built.clear()
    at.switch_page("dpcore_app/app_pages/dp_owl.py")
    for key, value in {"n": "200", "compare": ["200"], "reps": "40", "seed": "77"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and len(at.get("plotly_chart")) == 4
    assert built == []


def test_a_replica_warm_up_leaves_the_first_view_in_the_process_caches(monkeypatch):
    """What ``dpcore serve`` has each replica do before it reports ready: build the default
    link's view with the page's cached functions. Afterwards the same view needs neither a
    simulation, nor the results store, nor a figure build (the store is switched off and the
    engine refuses to run: only the process's own caches can answer)."""
    from dpcore_app.ui.common import figures

    state = dict(warm.OWL_STATE, n=200, compare=(200,), reps=40, seed=78)
    figures._build.clear()
    assert warm.warm_replica(state) >= 0

    def refuse(*args, **kwargs):
        raise AssertionError("the warmed view was simulated again")

    built = record_figure_builds(monkeypatch)
    monkeypatch.setattr(owl, "owl_monte_carlo", refuse)
    monkeypatch.setenv("DPCORE_STORE", "off")
    warm.warm_replica(state)
    assert built == []


def test_a_replica_says_when_its_first_view_is_built(monkeypatch, tmp_path):
    """The file ``dpcore serve`` waits for before it reports ready: "ok SECONDS", or why not
    (the replica still serves)."""
    from dpcore_app import replica

    monkeypatch.setattr(warm, "warm_replica", lambda: 1.25)
    replica.warm_up(tmp_path / "replica-1.warm", wait=0)
    assert (tmp_path / "replica-1.warm").read_text() == "ok 1.25\n"

    def broken():
        raise RuntimeError("no store")

    monkeypatch.setattr(warm, "warm_replica", broken)
    replica.warm_up(tmp_path / "replica-2.warm", wait=0)
    assert (tmp_path / "replica-2.warm").read_text() == "failed: RuntimeError: no store\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replica-1.warm", "replica-2.warm"]
