"""The README's quickstart is executed, so it cannot go stale."""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import shlex

import pytest
from support import REPO

from quorem.cli.main import main


def _pycon_blocks() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```pycon\n(.*?)```", text, flags=re.DOTALL)


def test_quickstart_runs() -> None:
    """Every ```pycon block of the README runs and prints what it shows."""
    blocks = _pycon_blocks()
    assert blocks, "the README has no pycon quickstart"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README block {i}", "README.md", 0)
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} README examples failed"
    assert result.attempted >= 10


@pytest.mark.parametrize("extra", ["tinygrad", "tvm"])
def test_embedding_blocks_run(extra: str) -> None:
    """Each ```pycon block of an adapter runs and prints what it shows (with its extra)."""
    pytest.importorskip(extra)
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(rf"```pycon {extra}\n(.*?)```", text, flags=re.DOTALL)
    assert blocks, f"the README shows no {extra} adapter"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"README {extra} block {i}", "README.md", 0))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} README {extra} examples failed"


def test_setup_commands_are_what_ci_runs() -> None:
    """The README's test command is the one .ci/run executes."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = ".venv/bin/python -m pytest"
    assert f"```sh\n{command}\n```" in readme
    assert ci.rstrip().splitlines()[-1] == command
    assert 'pip install -e ".[dev]" && .venv/bin/quorem demo' in readme


def test_console_blocks_print_what_they_show() -> None:
    """Every ```console block's ``$ quorem ...`` commands print the lines shown after them."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL)
    assert blocks
    ran = 0
    for block in blocks:
        for command in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            line, _, shown = command.partition("\n")
            argv = shlex.split(line)
            assert argv[0] == "quorem", line
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                status = main(argv[1:])
            assert status == 0, line
            assert out.getvalue() == shown, (line, out.getvalue(), shown)
            ran += 1
    assert ran >= 3
