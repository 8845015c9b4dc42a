"""The shared results store: exact round trips, keys, atomic writes, eviction, safety."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore import store as store_module
from dpcore.owl.experiments import owl_monte_carlo
from dpcore.owl.tuning import TuningResult
from dpcore.store import ResultStore, stored

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    return ResultStore(tmp_path / "store")


@dataclass(frozen=True)
class Foreign:
    """A dataclass outside dpcore and ui: the store will not rebuild it."""

    x: float


def test_the_environment_points_the_tests_at_a_temporary_store():
    assert "dpcore-test-store-" in os.environ["DPCORE_STORE"]
    assert str(store_module.default_store().root) == os.environ["DPCORE_STORE"]


def test_a_sweep_comes_back_bit_for_bit(store):
    res = owl_monte_carlo([120], [0.5, np.inf], reps=6, test_size=300)
    value = (res.runs, res.summary, res.references)
    store.put("sweep", {"n": 120}, value)
    back = store.get("sweep", {"n": 120})
    assert isinstance(back, tuple) and len(back) == 3
    for a, b in zip(value, back):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        for col in a.select_dtypes("number").columns:  # NaN and inf included: the same bytes
            assert a[col].to_numpy().tobytes() == b[col].to_numpy().tobytes()


def test_every_kind_of_result_round_trips(store):
    frame = pd.DataFrame(
        {
            "kind": ["a", "b"],
            "x": [np.nan, np.inf],
            "ok": [True, False],
            "label": pd.Categorical(["y", "x"], categories=["y", "x", "z"]),
        },
        index=pd.Index([100, 200], name="n"),
    )
    value = {
        "result": TuningResult(frame, -np.inf, "ε", 2.0, 0.5),
        "values": np.eye(3)[:2],
        "numbers": [1, 2.5, None, "text", (3, 4)],
        "scalar": np.float64(0.1),
    }
    store.put("mixed", {}, value)
    back = store.get("mixed", {})
    assert isinstance(back["result"], TuningResult)
    pd.testing.assert_frame_equal(back["result"].curve, frame, check_exact=True)
    assert (back["result"].best_gamma, back["result"].metric) == (-np.inf, "ε")
    np.testing.assert_array_equal(back["values"], value["values"])
    assert back["numbers"] == [1, 2.5, None, "text", (3, 4)] and back["scalar"] == 0.1
    with pytest.raises(TypeError, match="dataclass"):
        store.put("foreign", {}, Foreign(1.0))


def test_count_reads_which_function_wrote_each_entry(store):
    for k in range(3):
        store.put("tests.sweep", {"k": k}, np.arange(k))
    store.put("tests.figure", {}, {"data": []})
    (store.root / "ab").mkdir(exist_ok=True)
    (store.root / "ab" / ("x" * 64 + ".npz")).write_bytes(b"not an entry")
    assert (store.count("tests.sweep"), store.count("tests.figure"), store.count("other")) == (
        3,
        1,
        0,
    )


def test_the_key_names_the_function_its_parameters_and_the_version(store, monkeypatch):
    base = store.key("dpcore_app.ui.owl.compute.owl_sweep", {"n": 500, "eps": np.inf})
    assert base == store.key("dpcore_app.ui.owl.compute.owl_sweep", {"eps": np.inf, "n": 500})
    assert base == store.key(
        "dpcore_app.ui.owl.compute.owl_sweep", {"n": 500.0, "eps": float("inf")}
    )
    assert base != store.key("dpcore_app.ui.owl.compute.owl_sweep", {"n": 501, "eps": np.inf})
    assert base != store.key("dpcore_app.ui.owl.compute.other", {"n": 500, "eps": np.inf})
    monkeypatch.setattr(dpcore, "__version__", "99.0")
    assert base != store.key("dpcore_app.ui.owl.compute.owl_sweep", {"n": 500, "eps": np.inf})


def test_stored_reads_before_computing_across_instances_and_binds_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "shared"))
    calls = []

    @stored
    def sweep(n, reps=10):
        calls.append(n)
        return pd.DataFrame({"n": [n], "reps": [reps]})

    first = sweep(5)
    assert sweep.is_stored(5) and sweep.is_stored(n=5, reps=10) and not sweep.is_stored(6)
    pd.testing.assert_frame_equal(sweep(n=5, reps=10), first)
    assert calls == [5]
    monkeypatch.setenv("DPCORE_STORE", "off")
    sweep(5)
    assert calls == [5, 5]


def test_another_process_reads_what_this_one_wrote(tmp_path):
    root = tmp_path / "shared"
    ResultStore(root).put("shared.entry", {"n": 1}, np.array([1.5, 2.5]))
    code = (
        "import sys; from dpcore.store import ResultStore; "
        "print(ResultStore(sys.argv[1]).get('shared.entry', {'n': 1}).sum())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert out.stdout.strip() == "4.0"


def test_a_failed_write_leaves_the_old_entry_and_no_temporary_file(store, monkeypatch):
    store.put("atomic", {}, np.array([1.0]))

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(store_module.os, "replace", crash)
    with pytest.raises(OSError):
        store.put("atomic", {}, np.array([2.0]))
    monkeypatch.undo()
    assert store.get("atomic", {})[0] == 1.0
    assert [p.name for p in store.root.rglob(".tmp-*")] == []


def test_a_damaged_or_foreign_file_is_dropped_and_recomputed(store):
    store.put("damaged", {}, np.array([1.0]))
    path = store._path(store.key("damaged", {}))
    path.write_bytes(b"not a zip file")
    assert store.get("damaged", {}, "missing") == "missing" and not path.exists()
    # A planted file asking to rebuild a class from outside the package is refused.
    manifest = json.dumps({"dataclass": "subprocess:Popen", "fields": {}}).encode()
    np.savez(path, __manifest__=np.frombuffer(manifest, dtype=np.uint8))
    assert store.get("damaged", {}, "missing") == "missing"


def test_eviction_drops_the_least_recently_used_entries(tmp_path):
    store = ResultStore(tmp_path / "small", max_bytes=10**9)
    for k in range(3):
        store.put(f"e{k}", {}, np.zeros(1000))
    for k, (path, _, _) in enumerate(sorted(store.entries(), key=lambda e: e[0].name)):
        os.utime(path, (1000 + k, 1000 + k))
    os.utime(store._path(store.key("e0", {})), (1, 1))  # e0 oldest ...
    store.get("e0", {})  # ... until read: now the most recent
    one = store.entries()[0][1]
    store.max_bytes = 2 * one + one // 2
    store.put("e3", {}, np.zeros(1000))
    kept = {name for name in ("e0", "e1", "e2", "e3") if store.has(name, {})}
    assert "e0" in kept and "e3" in kept and len(kept) == 2
    assert store.size() <= store.max_bytes


def test_a_parameter_that_is_not_plain_data_is_refused(store):
    with pytest.raises(TypeError, match="plain data"):
        store.key("f", {"x": object()})


def _plant(store, name, manifest, tag=None):
    """A file in the store as someone with write access to its directory could make it."""
    import hashlib
    import hmac
    import io

    path = store._path(store.key(name, {}))
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8))
    body = buf.getvalue()
    if tag == "valid":
        tag = hmac.new((store.root / ".store-key").read_bytes(), body, hashlib.sha256).digest()
    path.write_bytes((tag or b"\0" * 32) + body)
    return path


def test_a_planted_file_is_ignored_and_nothing_is_imported_because_a_file_names_it(
    store, monkeypatch
):
    store.put("mine", {}, np.array([1.0]))  # creates the store's key
    path = _plant(store, "planted", {"producer": "planted", "value": {"value": 42}})
    assert store.get("planted", {}, "missing") == "missing" and not path.exists()
    # Even a correctly tagged file may only rebuild classes of modules already imported.
    imported = []
    monkeypatch.setattr(
        store_module.importlib, "import_module", lambda name, *a: imported.append(name)
    )
    _plant(
        store,
        "tagged",
        {
            "producer": "tagged",
            "value": {"dataclass": "dpcore.not_yet_imported:Thing", "fields": {}},
        },
        tag="valid",
    )
    assert store.get("tagged", {}, "missing") == "missing"
    assert "dpcore.not_yet_imported" not in imported  # (the key imports only the asker)
    monkeypatch.undo()
    # A tagged file written for another function is not served for this one.
    _plant(store, "other", {"producer": "someone.else", "value": {"value": 1}}, tag="valid")
    assert store.get("other", {}, "missing") == "missing"
    assert store.get("mine", {})[0] == 1.0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_a_store_whose_key_is_not_private_reads_and_writes_nothing(tmp_path):
    store = ResultStore(tmp_path / "store")
    store.put("x", {}, np.array([1.0]))
    assert (store.root / ".store-key").stat().st_mode & 0o777 == 0o600
    os.chmod(store.root / ".store-key", 0o644)
    fresh = ResultStore(tmp_path / "store")
    assert fresh.get("x", {}, "missing") == "missing"
    assert fresh.fetch("y", {}, lambda: 2.0) == 2.0 and not fresh.has("y", {})


def test_the_front_ends_are_left_out_of_the_package_digest(tmp_path):
    # the command line and the server are packages: editing one keeps every stored result
    package = Path(dpcore.__file__).resolve().parent
    parts = {p.relative_to(package).parts[0] for p in store_module._digested(package)}
    assert {"store.py", "owl", "privacy", "cvar"} <= parts
    assert not parts & {"cli", "_serve", "__main__.py"}
    for name in ("engine.py", "owl/rule.py", "cli/fit.py", "_serve/server.py", "__main__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"# {name}\n")
    before = store_module._source_digest(tmp_path)
    for name in ("cli/fit.py", "cli/new.py", "_serve/server.py", "__main__.py"):
        (tmp_path / name).write_text("# edited\n")
    assert store_module._source_digest(tmp_path) == before
    (tmp_path / "owl/rule.py").write_text("# edited\n")
    assert store_module._source_digest(tmp_path) != before
