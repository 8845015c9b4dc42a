"""The test suite's own layout (tests/README.md): no test module imports another."""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_test_modules(path: Path) -> list[str]:
    """The ``tests.….test_*`` modules that the file at ``path`` imports, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [n for n in names if n.startswith("tests.") and "test_" in n.split(".")[-1]]
    return found


def test_no_test_module_imports_another():
    """A helper two test files share lives in a plain module beside them: importing a test
    module runs its module-level code again under another name, and hides the helper's home."""
    offenders = {
        str(path.relative_to(TESTS)): hits
        for path in sorted(TESTS.rglob("*.py"))
        if (hits := imported_test_modules(path))
    }
    assert offenders == {}


def test_the_check_sees_an_import_of_a_test_module(tmp_path):
    """Its broken twin: a file that imports a helper from a test module is found."""
    bad = tmp_path / "test_bad.py"
    bad.write_text("def f():\n    from tests.app.test_your_data import PAGE\n")
    assert imported_test_modules(bad) == ["tests.app.test_your_data"]
