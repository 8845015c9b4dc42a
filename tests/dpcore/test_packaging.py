"""The wheel: a lean library whose dashboard is an extra, with the app's files inside.

Building the wheel takes 20-30 s on this 2-core machine (pip sets up an isolated build environment with a
recent setuptools, which the SPDX license expression needs); it is built once for the module.
A fresh-venv check by hand: ``python -m venv /tmp/v && /tmp/v/bin/pip install . &&
/tmp/v/bin/python -c "import dpcore, importlib.util as u; print(dpcore.__version__,
u.find_spec('streamlit'))"`` prints the version and None; ``docs/install.md`` has the
install-scheme checks (a venv, ``pip install --user``).
"""

import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from the checkout. setuptools builds in the checkout's build/ folder,
    so two test processes (pytest-xdist workers) take turns under a file lock."""
    import fcntl
    import tempfile

    out = tmp_path_factory.mktemp("wheel")
    with open(Path(tempfile.gettempdir()) / "dpcore-wheel-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(out)],
            check=True,
            cwd=out,
        )
    return zipfile.ZipFile(next(out.glob("dpcore-*.whl")))


def metadata(wheel):
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(wheel.read(name).decode())


def test_core_requires_no_streamlit_or_plotly(wheel):
    requires = metadata(wheel).get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    assert sorted(r.split(">")[0].split("<")[0].strip() for r in core) == [
        "numpy",
        "pandas",
        "scipy",
    ]
    app = [r for r in requires if 'extra == "app"' in r]
    assert any(r.startswith("streamlit") and ">=1.65" in r and "<1.68" in r for r in app)
    assert any(r.startswith("scikit-learn") for r in requires if 'extra == "sklearn"' in r)


def test_wheel_installs_dpcore_and_the_dashboard_under_one_name(wheel):
    """Two top-level names, nothing generic (app, ui, assets) in site-packages, no dev scripts;
    the dashboard's files inside dpcore_app, where importlib.resources finds them."""
    names = set(wheel.namelist())
    top = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top).decode().split() == ["dpcore", "dpcore_app"]
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"dpcore", "dpcore_app"}
    for needed in (
        "dpcore/__init__.py",
        "dpcore/py.typed",
        "dpcore/cli/__init__.py",
        "dpcore/cli/fit.py",
        "dpcore/data/dictionary.schema.json",
        "dpcore_app/__init__.py",
        "dpcore_app/app.py",
        "dpcore_app/.streamlit/config.toml",
        "dpcore_app/app_pages/overview.py",
        "dpcore_app/ui/common/controls.py",
        "dpcore_app/ui/owl/charts.py",
        "dpcore_app/assets/icon.png",
        "dpcore_app/demo_data/hospital_trial.csv",
        "dpcore_app/demo_data/hospital_trial.json",
        "dpcore_app/demo_data/hospital_new_patients.csv",
    ):
        assert needed in names, needed
    assert not [n for n in names if "/make_" in n or n.startswith("tests/") or "__pycache__" in n]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "dpcore_app/deploy/nginx.conf.template" in names  # dpcore serve's proxy config
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    text = wheel.read(entry).decode()
    assert "dpcore = dpcore.cli:main" in text and "dpcore-app = dpcore.cli:app_main" in text


def test_metadata_names_the_license_by_its_spdx_expression(wheel):
    meta = metadata(wheel)
    assert meta["License-Expression"] == "MIT" and meta["Author"] == "The dpcore authors"
    assert "Typing :: Typed" in meta.get_all("Classifier")


def test_version_is_importable():
    out = subprocess.run(
        [sys.executable, "-c", "import dpcore; print(dpcore.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip()


def test_every_dashboard_module_imports_from_the_wheel(wheel, tmp_path):
    """Unpacked as pip would install it, outside the checkout: every module of the dashboard
    imports under its package name (none needs the checkout's root on the path), and the entry
    script names every page by a file that exists there."""
    site = tmp_path / "site"
    wheel.extractall(site)
    modules = sorted(
        ".".join(p.relative_to(site).with_suffix("").parts).removesuffix(".__init__")
        for p in (site / "dpcore_app").rglob("*.py")
        if "app_pages" not in p.parts
    )
    code = (
        "import importlib, sys, dpcore_app\n"
        f"assert dpcore_app.__file__.startswith({str(site)!r}), dpcore_app.__file__\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "from dpcore_app.app import main\n"
        "print(sorted(p.rsplit('/', 1)[1] for p in map(dpcore_app.page, "
        "['overview', 'dp_owl', 'cvar', 'bounds', 'your_data', 'lessons', 'limitations', "
        "'glossary'])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "dpcore_app.ui.owl.compute" in modules and "dpcore_app.ui.upload.compute" in modules
    assert out.stdout.count(".py") == 8
