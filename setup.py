"""The wheel's layout: ``dpcore`` and the dashboard as one package, ``dpcore_app``.

Everything else about the package is in pyproject.toml. In the repository the dashboard stays
at the root, where ``streamlit run app.py`` and the tests use it; the wheel installs those
folders inside ``dpcore_app`` (``ui/`` as ``dpcore_app/ui``, ``app_pages/`` as
``dpcore_app/app_pages``) and copies the files beside them that are not modules (``app.py``,
the Streamlit config, the icon, the demo trials). The scripts that made the icon and the demo
data stay in the repository and the sdist, not in the wheel.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

DASHBOARD = ("ui", "app_pages")  # root folders of modules installed as dpcore_app.<folder>
FILES = ("app.py", ".streamlit/config.toml", "assets/*.png", "demo_data/*.csv",
         "demo_data/*.json", "demo_data/*.md",
         "deploy/*.template")  # copied into dpcore_app/ as they are (deploy/: dpcore serve's)


class BuildWithDashboardFiles(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads them at the root (dpcore_app.root())
            return
        for pattern in FILES:
            for source in sorted(Path().glob(pattern)):
                target = Path(self.build_lib, "dpcore_app", source)
                self.mkpath(str(target.parent))
                self.copy_file(str(source), str(target))


dashboard = [name for folder in DASHBOARD
             for name in find_namespace_packages(include=[folder, f"{folder}.*"],
                                                 exclude=["*.__pycache__"])]
setup(
    packages=[*find_namespace_packages(include=["dpcore", "dpcore.*"], exclude=["*.__pycache__"]),
              "dpcore_app", *(f"dpcore_app.{name}" for name in dashboard)],
    package_dir={f"dpcore_app.{folder}": folder for folder in DASHBOARD},
    cmdclass={"build_py": BuildWithDashboardFiles},
)
