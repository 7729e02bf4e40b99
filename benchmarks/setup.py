"""An editable install of the benchmarks is a strict one (a link tree tools can read)."""

from setuptools import setup
from setuptools.command.editable_wheel import editable_wheel


class StrictEditable(editable_wheel):  # type: ignore[misc]  # setuptools is Any to mypy
    """``pip install -e ./benchmarks`` as a strict editable install unless a mode is asked for."""

    mode: str | None  # editable_wheel's --mode option (None when not given)

    def finalize_options(self) -> None:
        """Default the mode to ``strict``."""
        if self.mode is None:
            self.mode = "strict"
        super().finalize_options()


setup(cmdclass={"editable_wheel": StrictEditable})
