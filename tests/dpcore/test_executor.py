"""Sweeps run on any concurrent.futures executor and give the same bits however they are split."""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from dpcore.cvar.sweep import cvar_sweep
from dpcore.montecarlo import local_executor, workers
from dpcore.owl.experiments import owl_monte_carlo
from dpcore.theory import measurement as check

N_GRID = (150, 90, 120)
EPS = (0.5, 2.0, np.inf)


def owl(**kw):
    res = owl_monte_carlo(N_GRID, EPS, gamma=["paper", 10.0], reps=4, test_size=200, seed=3, **kw)
    return res.runs, res.references


def same(a, b):
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_the_default_pool_is_sized_to_the_machine():
    with local_executor() as (pool, local):
        assert local and pool._max_workers == workers() >= 1


@pytest.fixture(scope="module")
def serial():
    with ThreadPoolExecutor(max_workers=1) as one:
        return owl(executor=one)


def test_a_sweep_on_a_process_pool_is_bit_identical(serial):
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:  # test sets rebuilt there
        runs, refs = owl(executor=pool)
    same(runs, serial[0])
    same(refs, serial[1])
    same(owl()[0], serial[0])  # the default pool


def test_a_sweep_split_by_n_is_the_same_as_the_whole(serial):
    parts = [
        owl_monte_carlo([n], EPS, gamma=["paper", 10.0], reps=4, test_size=200, seed=3).runs
        for n in N_GRID
    ]
    same(pd.concat(parts, ignore_index=True), serial[0])


def test_a_cvar_sweep_is_bit_identical_on_any_executor():
    args = ("two-point", (100, 40), (0.1, 0.5), EPS, 1.0, 5, 2)
    with ThreadPoolExecutor(max_workers=1) as one:
        base = cvar_sweep(*args, executor=one)
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        same(cvar_sweep(*args, executor=pool), base)
    split = pd.concat([cvar_sweep(args[0], (n,), *args[2:]) for n in args[1]], ignore_index=True)
    same(split, base)


def test_the_bound_measurement_over_h_matches_the_serial_loop():
    trials = check.paper_trials(80, 3, seed=1)
    theta0 = check.comparator(trials, 20.0)
    kw = dict(weight_bound=30.0, draws=5, seed=1)
    serial = pd.concat(
        [check.werm_excess_risk(trials, theta0, 1.0, [20.0], h, **kw) for h in (0.1, 0.5, 1.0)],
        ignore_index=True,
    )
    same(check.werm_excess_over_h(trials, theta0, 1.0, 20.0, (0.1, 0.5, 1.0), **kw), serial)


def test_a_dask_cluster_gives_the_same_bits(serial):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        runs, refs = owl(executor=client.get_executor())
    same(runs, serial[0])
    same(refs, serial[1])


def test_the_cli_sweep_on_a_scheduler_writes_the_same_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    from dpcore.cli import main

    args = "sweep --n 80 120 --epsilon 1 inf --reps 3 --test-size 150".split()
    assert main([*args, "--out", str(tmp_path / "local.csv")]) == 0
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        assert (
            main(
                [
                    *args,
                    "--scheduler",
                    cluster.scheduler_address,
                    "--out",
                    str(tmp_path / "cluster.csv"),
                ]
            )
            == 0
        )
    assert (tmp_path / "local.csv").read_bytes() == (tmp_path / "cluster.csv").read_bytes()
