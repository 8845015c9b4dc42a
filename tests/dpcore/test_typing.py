"""What type checkers see of ``import dpcore``: the names the lazy loader serves, typed.

The whole check is ``mypy --strict`` on ``tests/typecheck/user_script.py`` in ``.ci/run``; this
test keeps the three lists in ``dpcore/__init__.py`` (the run-time table, the imports type
checkers read, ``__all__``) the same, so no public name is typed ``Any`` or missing.
"""

import ast
from pathlib import Path

import dpcore

INIT = Path(dpcore.__file__)


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(INIT.read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )
    return {
        alias.name: "dpcore." + node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_type_checkers_see_every_lazy_name_from_its_module():
    assert _type_checking_imports() == dpcore._EXPORTS
    assert sorted(dpcore.__all__) == sorted([*dpcore._EXPORTS, "__version__"])


def test_each_public_name_is_the_object_its_module_defines():
    import importlib

    for name, module in dpcore._EXPORTS.items():
        assert getattr(dpcore, name) is getattr(importlib.import_module(module), name), name
