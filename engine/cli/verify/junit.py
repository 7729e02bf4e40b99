"""The JUnit XML report (``--junit PATH``): a test case per result, for CI."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quorem.verify.prove import PROVEN_STATUSES

from .paths import relative
from .summary import FAILED

__all__ = ["write_junit"]


def write_junit(path: Path, results: Sequence[dict[str, Any]], seconds: float) -> None:
    """Write the JUnit XML report of ``results`` (a run of ``seconds``) to ``path``."""
    # Counted as the summary counts: anything neither proven nor failed (unknown,
    # vacuous, seed-dependent, proven-on-grid) is an error, which fails CI as the exit
    # status does.
    undecided = [r for r in results if r["status"] not in {*PROVEN_STATUSES, *FAILED}]
    suite = ET.Element(
        "testsuite",
        name="quorem verify",
        tests=str(len(results)),
        failures=str(sum(r["status"] in FAILED for r in results)),
        errors=str(len(undecided)),
        time=f"{seconds:.3f}",
    )
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{relative(r['file'])}:{r['line']}",
            name=f"{r['name']} [{r['semantics']} {r['obligation']}]",
            time=str(r["seconds"]),
        )
        c = r.get("confirmation")
        if c:
            # The second solver's word on the obligation, as test case properties.
            props = ET.SubElement(case, "properties")
            for name, value in (
                ("confirmation", c["verdict"]),
                (f"{c['solver']} answer", c["answer"]),
                (f"{c['solver']} seconds", str(c["seconds"])),
            ):
                ET.SubElement(props, "property", name=name, value=value)
        if r["status"] in FAILED:
            message = r["status"].upper()
            ET.SubElement(case, "failure", message=message).text = r.get("report", "")
        elif r["status"] not in PROVEN_STATUSES:
            why = f"{r['status']} ({r['method']})"
            ET.SubElement(case, "error", message=why).text = r.get("report", "") or why
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
