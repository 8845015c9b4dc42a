"""Releases in tests: the same noise on every surface, and the page's release without a browser.

:func:`seeded_noise` makes every release's noise come from numpy's generator with one seed (the
release itself stays titled private, as the page's is): the page, ``dpcore fit`` run in this
process, the library and the rerun script then write byte-identical rule files. It patches the
one place the pipeline draws its noise from (:func:`dpcore.release.pipeline.noise_source`) and
restores it, so nothing leaks into the next test of the process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def seeded_noise(seed=0):
    from dpcore.release import pipeline

    original = pipeline.noise_source
    pipeline.noise_source = lambda plan: (np.random.default_rng(seed), "numpy")
    try:
        yield
    finally:
        pipeline.noise_source = original


def page_release(data, trial, settings, *, p_min=None, label="", seed=0, base=None, binary=()):
    """What the page's release button makes of ``settings`` (the page's dict: bounds,
    outcome_bounds, larger_is_better, W, propensity, private, eps, gamma, gamma_source and,
    optionally, evaluation) for the page's ``trial`` read from ``data``: (Release, rec),
    not recorded, with seeded noise (``seed=None``: the page's own noise source)."""
    from dpcore_app.ui.upload import compute

    d = compute.dictionary_from_settings(
        trial,
        settings["bounds"],
        settings["outcome_bounds"],
        settings["larger_is_better"],
        settings["propensity"],
        base=base,
        min_propensity=p_min,
        binary=binary,
    )
    plan = compute.plan_from_settings({"private": True, **settings}, p_min)
    if seed is None:
        made, rec = compute.make_release(data, d, plan)
    else:
        with seeded_noise(seed):
            made, rec = compute.make_release(data, d, plan)
    return compute.Release(made, label=label, time="2026-01-01T00:00:00Z"), rec


def with_rule(release, **changes):
    """The page's release with some fields of its rule changed (coefficients zeroed, labels)."""
    from dataclasses import replace

    made = release.made
    return replace(release, made=replace(made, rule=replace(made.rule, **changes)))


def recorded_release(epsilon=1.0, epsilon_eval=None, reasons=(), mechanism="DP-OWL rule"):
    """A release with nothing computed, to record in a ledger: its plan's parts and, with
    ``reasons``, no guarantee."""
    from types import SimpleNamespace

    from dpcore.release import Release, ReleasePlan

    rule = SimpleNamespace(
        settings={"not_private_because": list(reasons), "private": not reasons, "title": "t"}
    )
    plan = ReleasePlan(epsilon=epsilon, epsilon_eval=epsilon_eval)
    return Release(rule, None, None, plan, mechanism)


def run_here(script, folder, ledger_file=None, timeout=60, name="release.py"):
    """Run ``script`` as ``name`` in ``folder`` with this checkout's packages (and the ledger
    ``ledger_file``, if given, else the test's own through ``DPCORE_LEDGER``), as an analyst
    runs a downloaded script; it must succeed; its output."""
    (folder / name).write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if ledger_file is not None:
        env["DPCORE_LEDGER"] = str(ledger_file)
    done = subprocess.run(
        [sys.executable, name],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_script(folder, script, timeout=120):
    """Run the Your data page's script download in ``folder``; returns the rule it wrote."""
    from dpcore import load_rule

    run_here(script, folder, timeout=timeout, name="release_again.py")
    return load_rule(folder / "rule.json")
