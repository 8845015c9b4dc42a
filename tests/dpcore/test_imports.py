"""dpcore's import graph has no cycle: every module can be read (and imported) after the ones it
imports, so a concept's home never needs a module that needs it back.

A lazy import inside a function counts as much as one at the top (it is the same tie, only
deferred); an import under ``if TYPE_CHECKING:`` does not (it never runs). Reading the source
with :mod:`ast` takes a fraction of a second and imports nothing.
"""

import ast
import sys
from pathlib import Path

import dpcore

ROOT = Path(dpcore.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ["dpcore", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The dpcore modules ``name`` imports, at the top or inside a function."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

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
                    up = package[: len(package) - child.level + 1]
                    base = ".".join([*up, *([child.module] if child.module else [])])
                targets = [base, *(f"{base}.{a.name}" for a in child.names)]
            for target in targets:
                module = known(target) if target.startswith("dpcore") else None
                if module is not None and module != name:
                    found.add(module)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def import_cycles() -> list[list[str]]:
    """The groups of dpcore modules that import each other (Tarjan's strongly connected
    components with more than one module), each sorted."""
    modules = _modules()
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
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


def test_dpcore_has_no_import_cycle():
    assert import_cycles() == []


def test_a_cycle_is_found_when_there_is_one(tmp_path, monkeypatch):
    """The check's broken twin: two modules that import each other, one lazily."""
    package = tmp_path / "dpcore"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import f\n")
    (package / "b.py").write_text("def f():\n    from .a import g\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", package)
    assert import_cycles() == [["dpcore.a", "dpcore.b"]]
