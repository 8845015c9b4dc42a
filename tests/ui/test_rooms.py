"""The dashboard's rooms (docs/architecture.md): a page file imports from its own room and from
dpcore_app/ui/common only, a room from itself and common, and common from no room. The lessons are the
one room that reads others' computations (each lesson opens another page's view)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROOMS = {"owl", "cvar", "bounds", "upload", "lessons", "overview"}
PAGE_ROOM = {
    "dp_owl": "owl",
    "cvar": "cvar",
    "bounds": "bounds",
    "your_data": "upload",
    "lessons": "lessons",
    "overview": "overview",
    "glossary": None,
    "limitations": None,
}
READS_OTHERS = {"lessons": {"owl", "cvar", "bounds"}}


def rooms_imported(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("dpcore_app.ui")
        ):
            parts = node.module.split(".")[1:]
            for alias in node.names:
                yield parts[1] if len(parts) > 1 else alias.name


@pytest.mark.parametrize(
    "path", sorted((ROOT / "dpcore_app" / "app_pages").glob("*.py")), ids=lambda p: p.stem
)
def test_a_page_imports_its_own_room_and_common(path):
    allowed = {"common", PAGE_ROOM[path.stem]}
    assert {r for r in rooms_imported(path) if r in ROOMS | {"common"}} <= allowed


@pytest.mark.parametrize("room", sorted(ROOMS | {"common"}))
def test_a_room_imports_itself_and_common_only(room):
    allowed = {"common"} if room == "common" else {"common", room} | READS_OTHERS.get(room, set())
    for path in (ROOT / "dpcore_app" / "ui" / room).glob("*.py"):
        got = {r for r in rooms_imported(path) if r in ROOMS | {"common"}}
        assert got <= allowed, (path.name, got - allowed)


def test_every_ui_module_lives_in_a_room():
    loose = {p.name for p in (ROOT / "dpcore_app" / "ui").glob("*.py")} - {"__init__.py"}
    assert not loose, loose
