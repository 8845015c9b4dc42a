"""The installed package's version, in one place (``dpcore.__version__`` is this one).

A module that writes the version into a file imports it from here, not from the package's
``__init__``, which imports every public name's module on first use.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpcore")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
