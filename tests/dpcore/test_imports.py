"""dpcore's and the dashboard's import graphs have no cycle: every module can be read (and
imported) after the ones it imports, so a concept's home never needs a module that needs it back.

A lazy import inside a function counts as much as one at the top (it is the same tie, only
deferred); an import under ``if TYPE_CHECKING:`` does not (it never runs). Reading the source
with :mod:`ast` takes a fraction of a second and imports nothing.
"""

import ast
from pathlib import Path

import pytest

import dpcore
import dpcore_app

ROOT = Path(dpcore.__file__).resolve().parent
APP_ROOT = Path(dpcore_app.__file__).resolve().parent


def _modules(root: Path, package: str) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path], package: str) -> set[str]:
    """The modules of ``package`` that ``name`` imports, at the top or inside a function."""
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def known(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.orelse:
                    visit(sub)
                continue
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = here[: len(here) - child.level + 1]
                    base = ".".join([*up, *([child.module] if child.module else [])])
                targets = [base, *(f"{base}.{a.name}" for a in child.names)]
            for target in targets:
                ours = target == package or target.startswith(package + ".")
                module = known(target) if ours else None
                if module is not None and module != name:
                    found.add(module)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def import_cycles(root: Path = ROOT, package: str = "dpcore") -> list[list[str]]:
    """The groups of modules of ``package`` (its folder ``root``) that import each other
    (Tarjan's strongly connected components with more than one module), each sorted."""
    modules = _modules(root, package)
    graph = {m: _imports(m, p, modules, package) for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(cycles)


@pytest.mark.parametrize("root, package", [(ROOT, "dpcore"), (APP_ROOT, "dpcore_app")])
def test_the_package_has_no_import_cycle(root, package):
    assert import_cycles(root, package) == []


def test_a_cycle_is_found_when_there_is_one(tmp_path):
    """The check's broken twin: two modules that import each other, one lazily."""
    package = tmp_path / "dpcore"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import f\n")
    (package / "b.py").write_text("def f():\n    from .a import g\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n"
    )
    (package / "d.py").write_text("import dpcore_app.e\n")  # another package's module
    assert import_cycles(package, "dpcore") == [["dpcore.a", "dpcore.b"]]
