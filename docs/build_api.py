"""Build dpcore's API reference with pdoc from the numpydoc docstrings (run by .ci/run).

    python docs/build_api.py [OUTPUT_DIR]      # default build/api

pdoc rather than Sphinx: it reads the numpydoc docstrings and type hints as they are, needs no
configuration, theme or extension list, and builds the whole package in seconds, so CI can
check every build. Every public module is documented (private ``_*`` modules and
``__main__`` are not). An import error or a failed build ends with a non-zero exit.
"""

from __future__ import annotations

import pkgutil
import sys
import warnings
from pathlib import Path

import pdoc
import pdoc.render

import dpcore


def public_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(dpcore.__path__, "dpcore.")]
    return ["dpcore"] + [n for n in names if not n.rsplit(".", 1)[-1].startswith("_")]


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/api")
    pdoc.render.configure(docformat="numpy")
    with warnings.catch_warnings():
        # a package without __all__ already includes its submodules; naming them again is fine
        warnings.filterwarnings("ignore", message="The module specification")
        pdoc.pdoc(*public_modules(), output_directory=out)
    pages = sorted(out.rglob("*.html"))
    print(f"API reference: {len(pages)} pages in {out}")
    return 0 if (out / "dpcore.html").is_file() else 1


if __name__ == "__main__":
    raise SystemExit(main())
