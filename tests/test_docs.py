"""The README's and the documentation's examples are executed, so they cannot go stale.

Conventions, for every page (``README.md`` and ``docs/*.md``; ``docs/research/`` holds
notes, not examples):

- `````pycon`` blocks are doctests (the output shown is compared, ``...`` elides);
  `````python`` blocks are executed. Both share one namespace per page, in page order,
  so a page's session can build on its earlier blocks.
- `````console`` blocks: each ``$ quorem ...`` line runs (in this process, from the
  repository root) and must exit 0 and print exactly the lines shown after it.
- `````sh`` blocks: each command runs in bash, in a scratch folder that sees the
  repository's ``rules``, ``tests`` and ``benchmarks`` and a copy of ``docs`` (so a command
  that writes a file or a proof record writes it there). It must exit 0, or the status a
  trailing comment announces (``# exit 1: unsound``). Output is not compared.
- A block is exempted by an HTML comment on the line just before its fence:
  ``<!-- docs-test: skip (why) -->``, or run only where an optional package imports:
  ``<!-- docs-test: needs tinygrad -->``. Exemptions are counted and kept few.
- Other fences (rules blocks, YAML recipes, text output) are not commands.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO

from quorem.cli.main import main

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# The install lines, the set-up commands and a 40 s discovery run (tests/test_discover.py
# runs it) are the only examples that do not run here.
MAX_SKIPPED = 6
_FENCE = re.compile(r"^```(\w*)[^\n]*$")
_MARKER = re.compile(r"^<!-- docs-test: (skip|needs) ([^>]*?) -->$")
_EXIT = re.compile(r"#.*\bexit (\d+)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, text, first line and marker."""

    page: Path
    lang: str
    text: str
    line: int
    marker: tuple[str, str] | None

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        start = i
        i += 1
        while not lines[i].startswith("```"):
            i += 1
        marker = _MARKER.match(lines[start - 1]) if start > 0 else None
        text = "\n".join(lines[start + 1 : i]) + "\n"
        kind = (marker.group(1), marker.group(2)) if marker else None
        blocks.append(Block(page, m.group(1), text, start + 1, kind))
        i += 1
    return blocks


def _page_id(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


def _runs(block: Block) -> bool:
    """Whether the block runs here: not skipped, and its optional package imports."""
    if block.marker is None:
        return True
    kind, what = block.marker
    if kind == "skip":
        return False
    try:
        __import__(what)
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def _in_repo() -> Iterator[None]:
    before = Path.cwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(before)


def _run_console(block: Block) -> int:
    ran = 0
    for command in re.split(r"^\$ ", block.text, flags=re.MULTILINE)[1:]:
        line, _, shown = command.partition("\n")
        argv = shlex.split(line)
        assert argv[0] == "quorem", (block.where(), line)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(argv[1:])
        assert status == 0, (block.where(), line, status)
        assert out.getvalue() == shown, (block.where(), line, out.getvalue(), shown)
        ran += 1
    return ran


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_sessions_print_what_they_show(page: Path) -> None:
    """Every pycon, python and console block of the page runs and prints what it shows."""
    namespace: dict[str, object] = {"__name__": "__docs__"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with _in_repo():
        for block in _blocks(page):
            if not _runs(block):
                continue
            if block.lang == "pycon":
                test = parser.get_doctest(block.text, namespace, block.where(), str(page), 0)
                runner.run(test, clear_globs=False)
                namespace.update(test.globs)  # DocTest ran on a copy
            elif block.lang == "python":
                exec(compile(block.text, block.where(), "exec"), namespace)
            elif block.lang == "console":
                _run_console(block)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} examples of {_page_id(page)} failed"


def _commands(text: str) -> list[str]:
    """The commands of a shell block: comment lines dropped, continuations joined."""
    commands: list[str] = []
    pending = ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append(pending + line)
        pending = ""
    return commands


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A folder that reads the repository's files and keeps every file written apart."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name in ("rules", "tests", "benchmarks", "engine", "verify"):
            (root / name).symlink_to(REPO / name)
        shutil.copytree(REPO / "docs", root / "docs")
        (root / "cache").mkdir()
        yield root


def _in_process(command: str) -> tuple[list[str], str | None] | None:
    """A plain ``quorem ...`` command (at most ``> FILE`` after it): its argv and file.

    Those run in this process, which saves a start-up each; anything else goes to bash.
    """
    bare = re.sub(r"'[^']*'|\"[^\"]*\"", "''", command.split(" #", maxsplit=1)[0])
    redirect = re.search(r"\s>\s*([\w./-]+)\s*$", bare)
    if redirect is not None:
        bare = bare[: redirect.start()]
    if not bare.startswith("quorem ") or re.search(r"[|&;$`*?<>(){}\\~]", bare):
        return None
    argv = shlex.split(command, comments=True)
    if redirect is not None:
        argv = argv[:-2] if argv[-2] == ">" else argv[:-1]
    return argv[1:], redirect.group(1) if redirect else None


def _run_command(command: str, scratch: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run one command in the scratch folder: its exit status and what it said on stderr."""
    plain = _in_process(command)
    if plain is None:
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command}"],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.returncode, done.stderr
    argv, out_file = plain
    out, err = io.StringIO(), io.StringIO()
    before = Path.cwd()
    os.chdir(scratch)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        if out_file is not None:
            Path(out_file).write_text(out.getvalue(), encoding="utf-8")
    finally:
        os.chdir(before)
    return status, err.getvalue()


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if any(b.lang == "sh" for b in _blocks(p))],
    ids=_page_id,
)
def test_page_commands_run(page: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command of the page's sh blocks exits with the status it announces (0 if none)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["QUOREM_CACHE_DIR"] = str(scratch / "cache")
    monkeypatch.setenv("QUOREM_CACHE_DIR", env["QUOREM_CACHE_DIR"])
    for block in _blocks(page):
        if block.lang != "sh" or not _runs(block):
            continue
        for command in _commands(block.text):
            expected = _EXIT.search(command)
            status, stderr = _run_command(command, scratch, env)
            want = int(expected.group(1)) if expected else 0
            assert status == want, (block.where(), command, stderr[-2000:])


def test_exemptions_are_few_and_explained() -> None:
    """Skipped blocks say why, and there are few of them."""
    skipped = [b for p in PAGES for b in _blocks(p) if b.marker and b.marker[0] == "skip"]
    assert all(b.marker and b.marker[1].strip("() ") for b in skipped)
    assert len(skipped) <= MAX_SKIPPED, [b.where() for b in skipped]


def test_setup_commands_are_what_ci_runs() -> None:
    """The README's test command is the one .ci/run executes, and its set-up command is whole."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = ".venv/bin/python -m pytest"
    assert f"```sh\n{command}\n```" in readme
    # Its own line in .ci/run's fast-tier stage, exactly as the README gives it.
    fast_stage = ci.split("stage tests-fast\n", 1)[1].split("\nstage ", 1)[0]
    assert command in fast_stage.splitlines()
    setup = (
        'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" -e ./benchmarks'
        " && .venv/bin/quorem demo"
    )
    assert f"```sh\n{setup}\n```" in readme


def test_readme_is_short() -> None:
    """The README is an entrance, not the manual: at most 300 lines."""
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def test_every_page_runs_something() -> None:
    """Each page with examples has at least one that runs."""
    ran = [b for p in PAGES for b in _blocks(p) if b.lang in ("pycon", "console", "sh")]
    assert len(ran) >= 20


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize(
    "page",
    [*PAGES, REPO / "CHANGELOG.md", REPO / "benchmarks" / "README.md"],
    ids=_page_id,
)
def test_relative_links_resolve(page: Path) -> None:
    """Every relative link points to a file that exists, and an anchor to a heading there."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        missing_anchor = anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved)
        if not resolved.exists() or missing_anchor:
            broken.append(target)
    assert broken == [], broken


def _anchors(page: Path) -> set[str]:
    """The ids MkDocs gives the page's headings (Python-Markdown's toc slugs)."""
    anchors = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#+ (.*)", line)
        if m:
            slug = re.sub(r"[^\w\s-]", "", m.group(1).replace("`", "")).strip().lower()
            anchors.add(re.sub(r"[-\s]+", "-", slug))
    return anchors
