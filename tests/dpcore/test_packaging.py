"""The wheel: a lean library whose dashboard is an extra, with the app's files inside.

A fresh-venv check by hand: ``python -m venv /tmp/v && /tmp/v/bin/pip install . &&
/tmp/v/bin/python -c "import dpcore, importlib.util as u; print(dpcore.__version__,
u.find_spec('streamlit'))"`` prints the version and None.
"""

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                    "-q", "-w", str(out)], check=True, cwd=out)
    return zipfile.ZipFile(next(out.glob("dpcore-*.whl")))


def metadata(wheel):
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(wheel.read(name).decode())


def test_core_requires_no_streamlit_or_plotly(wheel):
    requires = metadata(wheel).get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    assert sorted(r.split(">")[0].split("<")[0].strip() for r in core) == ["numpy", "pandas", "scipy"]
    app = [r for r in requires if 'extra == "app"' in r]
    assert any(r.startswith("streamlit") and ">=1.65" in r and "<1.68" in r for r in app)
    assert any(r.startswith("scikit-learn") for r in requires if 'extra == "sklearn"' in r)


def test_wheel_carries_the_library_and_the_dashboard(wheel):
    names = set(wheel.namelist())
    for needed in ("dpcore/__init__.py", "dpcore/py.typed", "dpcore/cli.py", "app.py",
                   "app_pages/overview.py", "ui/controls.py", "assets/icon.png",
                   "demo_data/hospital_trial.csv", "demo_data/hospital_trial.json"):
        assert needed in names, needed
    assert any(n.endswith("data/share/dpcore/.streamlit/config.toml") for n in names)
    assert any(n.endswith("data/share/dpcore/deploy/nginx.conf.template") for n in names)
    assert not any(n.startswith("tests/") for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    text = wheel.read(entry).decode()
    assert "dpcore = dpcore.cli:main" in text and "dpcore-app = dpcore.cli:app_main" in text


def test_version_is_importable():
    out = subprocess.run([sys.executable, "-c", "import dpcore; print(dpcore.__version__)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip()
