"""Every python and bash block of README.md and docs/*.md runs as written, or says why not.

What is collected: each fenced block (a fence at the start of a line) tagged ``python``,
``bash``, ``sh`` or ``shell`` in README.md and docs/*.md. Each is one test case, named by its
file and the line of its opening fence (``docs/api.md:81``). A block that shows output only is
tagged ``text`` or ``console`` and is not collected.

The conventions (CONTRIBUTING.md, "Documentation", says the same):

- **Paths are what a user types from a checkout's root.** Each case runs in a fresh temporary
  directory laid out as a checkout's root for the files the docs read: the demo files are in
  ``dpcore_app/demo_data/`` (copied there), and what a block writes (``rule.json``) lands in the
  temporary directory. ``DPCORE_LEDGER`` points at a ledger file there (every release a block
  makes is recorded in it, never in the user's), ``DPCORE_STORE``, ``HOME`` and
  ``XDG_CACHE_HOME`` too, ``PYTHONPATH`` is the checkout and BLAS runs one thread.
- **python blocks** run as a script in a subprocess of this interpreter. A block that continues
  the previous python block of its file (a walkthrough in several steps) has the line
  ``<!-- continues -->`` right before its fence: it runs in the same script, after it, and the
  case is named by both lines (``docs/api.md:8+65``). Every other block runs alone.
- **bash blocks** run with ``bash -euo pipefail``, with ``dpcore``, ``python`` and ``python3``
  on the PATH as small scripts that run this interpreter (``python -m dpcore``), so the
  checkout's code is what runs whether or not it is installed.
- **A block that is not run** says so in its first line, with the reason a reader sees:
  ``# not run by the docs test: starts a server``. Blocks that install packages, start a
  server (``streamlit run``, ``dpcore app``, ``dpcore serve``), need root, the network,
  PostgreSQL, nginx or systemd, or take minutes are marked; every other block runs. A marker
  without a reason fails :func:`test_every_block_not_run_says_why`.
- **Passing** is exiting 0 within :data:`TIMEOUT_S` and writing no Python warning
  (``NoiseWarning: ...``) to standard error: a warning in a documented example means its
  settings are not ones a user should copy. A value a block shows is checked by an ``assert``
  in the block itself, so a number that no longer holds fails the case.
- **Types:** the python blocks, pasted into scripts, pass ``mypy --strict``
  (:func:`test_python_blocks_pass_mypy_strict`), as ``tests/typecheck/user_script.py`` does.

The scripts a case runs keep the Markdown file's line numbers (prose becomes blank lines), so a
traceback's ``line 104`` is line 104 of the Markdown file. Each block takes seconds; keep a new
one cheap (a small n, one fit), seeded where it prints numbers of simulated data.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python": "python", "bash": "bash", "sh": "bash", "shell": "bash"}
NOT_RUN = "# not run by the docs test:"
CONTINUES = "<!-- continues -->"
TIMEOUT_S = 60
#: What a Python warning looks like on standard error: "file.py:12: NoiseWarning: the noise...".
WARNING = re.compile(r"^.*:\d+: \w*Warning: .*$", re.M)


@dataclass(frozen=True)
class Block:
    path: str  # relative to the checkout, as the case names it
    line: int  # of the opening fence (1-based)
    language: str  # "python" or "bash"
    text: str
    continues: bool = False

    @property
    def not_run_reason(self) -> str | None:
        first = self.text.split("\n", 1)[0].strip()
        return first[len(NOT_RUN) :].strip() if first.startswith(NOT_RUN) else None


@dataclass(frozen=True)
class Case:
    """One test case: a block, or a python block and the blocks that continue it."""

    blocks: tuple[Block, ...]

    @property
    def id(self) -> str:
        return f"{self.blocks[0].path}:" + "+".join(str(b.line) for b in self.blocks)

    @property
    def language(self) -> str:
        return self.blocks[0].language

    def script(self) -> str:
        """The blocks' code at their own line numbers in the Markdown file, blank elsewhere."""
        lines: list[str] = []
        for block in self.blocks:
            lines += [""] * (block.line - len(lines))  # up to and including the fence
            lines += block.text.split("\n")
        return "\n".join(lines) + "\n"


def blocks(markdown: str, path: str) -> list[Block]:
    """The runnable-language blocks of one Markdown text, in order."""
    found: list[Block] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"(`{3,})\s*([\w+-]*)", lines[i])
        if fence is None:
            i += 1
            continue
        end = next(
            (
                j
                for j in range(i + 1, len(lines))
                if lines[j].startswith(fence.group(1)) and not lines[j].strip("`").strip()
            ),
            None,
        )
        if end is None:
            raise ValueError(f"{path}:{i + 1}: a fence that is never closed")
        language = LANGUAGES.get(fence.group(2).lower())
        if language is not None:
            before = next((s.strip() for s in reversed(lines[:i]) if s.strip()), "")
            found.append(
                Block(path, i + 1, language, "\n".join(lines[i + 1 : end]), before == CONTINUES)
            )
        i = end + 1
    return found


def cases(found: list[Block]) -> list[Case]:
    """The blocks that run, each continuing block joined to the python block before it."""
    out: list[Case] = []
    for block in found:
        if block.not_run_reason is not None:
            if block.continues:
                raise ValueError(f"{block.path}:{block.line}: a block not run cannot continue")
            continue
        if block.continues:
            previous = next(
                (c for c in reversed(out) if c.language == "python" == block.language), None
            )
            if previous is None:
                raise ValueError(
                    f"{block.path}:{block.line}: {CONTINUES} but no python block before it"
                )
            out[out.index(previous)] = Case((*previous.blocks, block))
        else:
            out.append(Case((block,)))
    return out


def _all_blocks() -> list[Block]:
    return [b for doc in DOCS for b in blocks(doc.read_text(), str(doc.relative_to(ROOT)))]


ALL_BLOCKS = _all_blocks()
CASES = cases(ALL_BLOCKS)


def _workdir(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A directory laid out as a checkout's root for the docs' files, and the environment."""
    work = tmp_path / "work"
    shutil.copytree(ROOT / "dpcore_app" / "demo_data", work / "dpcore_app" / "demo_data")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, command in {
        "python": f'exec "{sys.executable}" "$@"',
        "python3": f'exec "{sys.executable}" "$@"',
        "dpcore": f'exec "{sys.executable}" -m dpcore "$@"',
    }.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{command}\n")
        (bin_dir / name).chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "DPCORE_LEDGER": str(tmp_path / "ledger.sqlite"),
        "DPCORE_STORE": str(tmp_path / "store"),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for name in ("PYTHONWARNINGS", "PYTHONSTARTUP", "PYTHONHOME"):
        env.pop(name, None)
    return work, env


def run_case(case: Case, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    work, env = _workdir(tmp_path)
    stem = re.sub(r"\W", "_", case.blocks[0].path.removesuffix(".md"))
    if case.language == "python":
        script = tmp_path / f"{stem}_md_{case.blocks[0].line}.py"
        command = [sys.executable, str(script)]
    else:
        script = tmp_path / f"{stem}_md_{case.blocks[0].line}.sh"
        command = ["bash", "-euo", "pipefail", str(script)]
    script.write_text(case.script())
    return subprocess.run(
        command,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def failure(case: Case, done: subprocess.CompletedProcess[str]) -> str | None:
    """Why the case failed, or None when it passed."""
    warnings = WARNING.findall(done.stderr)
    if done.returncode == 0 and not warnings:
        return None
    why = f"exit code {done.returncode}" if done.returncode else "warnings: " + "; ".join(warnings)
    return (
        f"{case.id} failed ({why}); the script's line numbers are the Markdown file's.\n"
        f"--- stdout (end)\n{done.stdout[-3000:]}\n--- stderr (end)\n{done.stderr[-3000:]}"
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_block_runs_as_written(case, tmp_path):
    message = failure(case, run_case(case, tmp_path))
    if message is not None:
        pytest.fail(message, pytrace=False)


def test_every_block_not_run_says_why():
    """A block is run unless its first line is the marker with a reason after it."""
    marked = [b for b in ALL_BLOCKS if b.not_run_reason is not None]
    assert marked and CASES  # the collector found both kinds
    assert [f"{b.path}:{b.line}" for b in marked if not b.not_run_reason] == []
    for block in ALL_BLOCKS:  # a misspelt marker would run the block (or look like a reason)
        first = block.text.split("\n", 1)[0].lower()
        assert "not run" not in first or block.not_run_reason, f"{block.path}:{block.line}"


@pytest.mark.slow
def test_python_blocks_pass_mypy_strict(tmp_path):
    """Each python case, pasted into a script, passes ``mypy --strict`` as a user's would
    (``.ci/run`` does the same for ``tests/typecheck/`` and ``examples/``). 8-16 s on 2 cores:
    mypy reads dpcore, numpy and pandas's stubs afresh (its cache is in ``tmp_path``, so runs
    in parallel never share one)."""
    pytest.importorskip("mypy")
    scripts = []
    for case in CASES:
        if case.language == "python":
            stem = re.sub(r"\W", "_", case.blocks[0].path.removesuffix(".md"))
            script = tmp_path / f"{stem}_md_{case.blocks[0].line}.py"
            script.write_text(case.script())
            scripts.append(str(script))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            *scripts,
        ],
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(
            "mypy --strict on the docs' python blocks (a script's line numbers are its Markdown "
            f"file's):\n{done.stdout}{done.stderr}",
            pytrace=False,
        )


# The collector and the runner themselves, on Markdown written here: they find what they
# should, and a broken block fails its case.

SAMPLE = """\
Some prose.

```python
x = 1
```

```text
not collected
```

<!-- continues -->

```python
assert x == 1
```

````bash
# not run by the docs test: starts a server
dpcore app
````

```sh
echo sh is bash here
```
"""


def test_collector_reads_fences_markers_and_continuations():
    found = blocks(SAMPLE, "docs/sample.md")
    assert [(b.line, b.language, b.continues) for b in found] == [
        (3, "python", False),
        (13, "python", True),
        (17, "bash", False),
        (22, "bash", False),
    ]
    assert found[2].not_run_reason == "starts a server" and found[0].not_run_reason is None
    made = cases(found)
    assert [c.id for c in made] == ["docs/sample.md:3+13", "docs/sample.md:22"]
    assert made[0].script().split("\n")[3] == "x = 1"  # line 4 of the Markdown file
    assert made[0].script().split("\n")[13] == "assert x == 1"
    with pytest.raises(ValueError, match="never closed"):
        blocks("```python\nx = 1\n", "docs/open.md")


@pytest.mark.parametrize(
    "language, text, expected",
    [
        ("python", "open('dpcore_app/demo_data/nowhere.csv')", "exit code 1"),
        ("python", "import warnings\nwarnings.warn('mostly noise')", "UserWarning: mostly noise"),
        ("python", "assert 1 + 1 == 3  # the output shown", "exit code 1"),
        ("bash", "false | cat\necho not reached", "exit code 1"),
        ("bash", "echo $UNSET_IN_THE_DOCS_TEST", "exit code 1"),
    ],
)
def test_a_broken_block_fails_its_case(language, text, expected, tmp_path):
    case = Case((Block("docs/broken.md", 1, language, text),))
    message = failure(case, run_case(case, tmp_path))
    assert message is not None and expected in message and "docs/broken.md:1" in message


def test_the_demo_files_and_the_ledger_are_where_the_docs_say(tmp_path):
    case = Case(
        (
            Block(
                "docs/sample.md",
                1,
                "bash",
                "test -f dpcore_app/demo_data/hospital_new_patients.csv\n"
                'test "$DPCORE_LEDGER" != "" && test ! -e "$DPCORE_LEDGER"\n'
                'python -c "import dpcore, sys; '
                f'assert dpcore.__file__.startswith({str(ROOT)!r}), dpcore.__file__"\n'
                "dpcore --help >/dev/null",
            ),
        )
    )
    message = failure(case, run_case(case, tmp_path))
    assert message is None, message


def test_the_readmes_picture_is_the_one_the_screenshot_script_makes():
    """README.md shows docs/images/dp-owl.png, written by ``docs/screenshots.py --readme`` from
    the running page (the PNG names the command that made it). This checks where the picture
    came from, not that it shows the current page: rerun the script when the page changes."""
    from PIL import Image

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/images/dp-owl.png)" in readme and "docs/screenshots.py --readme" in readme
    with Image.open(ROOT / "docs" / "images" / "dp-owl.png") as image:
        assert image.info.get("Software") == "docs/screenshots.py --readme"
