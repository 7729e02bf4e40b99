"""Coverage reports (:mod:`quorem.coverage.collect`) as a text table, JSON or one HTML page.

The HTML page is self-contained: inline CSS and SVG, no script, nothing fetched.
"""

from __future__ import annotations

import html
import textwrap
from pathlib import Path
from typing import Any, Final

from .collect import Coverage, Example, ResidueGroup, RuleStats

__all__ = ["to_html", "to_json", "to_text"]

_TEXT_RESIDUES: Final = 20  # residue groups a text report lists (JSON and HTML: all)
_TEXT_EXAMPLE: Final = 70  # characters of an example in the text table
_WRAP: Final = 100


def _where(stats: RuleStats) -> str:
    return f"{Path(stats.file).name}:{stats.line}"


def _example_json(example: Example | None, before: str, after: str) -> dict[str, str] | None:
    if example is None:
        return None
    return {"case": example.case, before: example.before, after: example.after}


def _rule_json(stats: RuleStats) -> dict[str, Any]:
    return {
        "name": stats.name,
        "file": stats.file,
        "line": stats.line,
        "applications": stats.applications,
        "cases": stats.cases,
        "divs_removed": stats.divs_removed,
        "mods_removed": stats.mods_removed,
        "ops_removed": stats.ops_removed,
        "first": _example_json(stats.first, "before", "after"),
        "preempted_by": dict(stats.preempted_by.most_common()),
        "shadowed": stats.shadowed,
    }


def _residue_json(group: ResidueGroup) -> dict[str, Any]:
    return {
        "shape": group.shape,
        "cases": group.cases,
        "occurrences": group.occurrences,
        "examples": [_example_json(e, "residue", "result") for e in group.examples],
    }


def to_json(report: Coverage) -> dict[str, Any]:
    """The report as a JSON-ready object, the answer first.

    The totals, then ``fired`` (the rules that fired, in priority order), ``residues``,
    ``shadowed`` and ``never_fired`` (rule names, with ``never_fired_count``), the
    ``failed`` cases, and last ``rules``: every rule of the set, fired or not.
    """
    return {
        "cases": report.cases,
        "steps": report.steps,
        "ops_before": report.ops_before,
        "ops_after": report.ops_after,
        "cases_with_divisions": report.cases_with_divisions,
        "stop_reasons": dict(report.stop_reasons),
        "fired": [_rule_json(s) for s in report.rules if s.applications],
        "residues": [_residue_json(g) for g in report.residues],
        "shadowed": [s.name for s in report.shadowed],
        "never_fired_count": len(report.never_fired),
        "never_fired": [s.name for s in report.never_fired],
        "failed": [{"case": label, "error": why} for label, why in report.failed],
        "rules": [_rule_json(s) for s in report.rules],
    }


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _summary(report: Coverage) -> str:
    stops = ", ".join(f"{why} {n}" for why, n in report.stop_reasons.most_common())
    return (
        f"{report.cases} cases, {report.steps} rule applications; // and % "
        f"{report.ops_before} -> {report.ops_after}; "
        f"{report.cases_with_divisions} cases keep a division"
        + (f"; stop reasons: {stops}" if stops else "")
    )


def to_text(report: Coverage, *, never_fired: bool = False) -> str:
    """The report for a terminal, the answer first.

    The summary, the rules that fired (in priority order), the most frequent residue
    shapes, the shadowed rules, and how many rules never fired: listed with
    ``never_fired``, else the line says which option lists them.
    """
    lines = [f"quorem coverage: {_summary(report)}", ""]
    lines += _fired_lines(report)
    lines += ["", *_residue_lines(report)]
    lines += ["", *_shadowed_lines(report)]
    lines += ["", *_never_fired_lines(report, listed=never_fired)]
    return "\n".join(lines) + "\n"


def _fired_lines(report: Coverage) -> list[str]:
    fired = [s for s in report.rules if s.applications]
    if not fired:
        return [f"no rule fired ({len(report.rules)} rules)"]
    name_w = max(len("rule"), *(len(s.name) for s in fired))
    where_w = max(len("where"), *(len(_where(s)) for s in fired))
    head = f"{'rule':<{name_w}}  {'where':<{where_w}}  {'apps':>6}  {'cases':>5}"
    lines = [f"{head}  {'//-':>6}  {'%-':>6}  first application"]
    for s in fired:
        first = "" if s.first is None else f"{s.first.before} -> {s.first.after}"
        lines.append(
            f"{s.name:<{name_w}}  {_where(s):<{where_w}}  {s.applications:>6}  "
            f"{s.cases:>5}  {s.divs_removed:>6}  {s.mods_removed:>6}  "
            f"{_clip(first, _TEXT_EXAMPLE)}"
        )
    lines.append(f"{'total':<{name_w}}  {'':<{where_w}}  {report.steps:>6}")
    return lines


def _residue_lines(report: Coverage) -> list[str]:
    groups = report.residues
    shown = groups[:_TEXT_RESIDUES]
    lines = [
        f"residues ({len(groups)} shapes in {report.cases_with_divisions} cases"
        + (f"; the {len(shown)} most frequent" if len(shown) < len(groups) else "")
        + "):"
    ]
    if shown:
        width = min(max(len(g.shape) for g in shown), _TEXT_EXAMPLE)
        for g in shown:
            e = g.examples[0]
            shape = _clip(g.shape, width)
            cases = f"{g.cases} case" + ("s" if g.cases != 1 else "")
            lines.append(f"  {cases:>11}  {shape:<{width}}  e.g. {e.before} ({e.case})")
    return lines


def _shadowed_lines(report: Coverage) -> list[str]:
    shadowed = report.shadowed
    lines = [f"shadowed ({len(shadowed)}: they matched, but an earlier rule always took the term):"]
    for s in shadowed:
        by = ", ".join(f"{name} ({n})" for name, n in s.preempted_by.most_common())
        lines.append(f"  {s.name} ({_where(s)}): taken by {by}")
    return lines


def _never_fired_lines(report: Coverage, *, listed: bool) -> list[str]:
    never = report.never_fired
    count = f"{len(never)} of {len(report.rules)} rules"
    if not listed:
        hint = " (list them with --never-fired)" if never else ""
        return [f"never fired: {count}{hint}"]
    lines = [f"never fired ({count}):"]
    lines.extend(
        textwrap.wrap(
            ", ".join(s.name for s in never),
            _WRAP,
            initial_indent="  ",
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
    )
    return lines


_STYLE: Final = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; width: 100%; table-layout: fixed; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left;
         vertical-align: top; overflow-wrap: break-word; }
td code { overflow-wrap: anywhere; }
th { overflow-wrap: normal; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, monospace; font-size: 0.95em; }
tr.never td, tr.shadowed td { color: #777; }
tr.shadowed td.name::after { content: " (shadowed)"; color: #b35900; }
svg { max-width: 100%; height: auto; }
svg text { font-family: ui-monospace, monospace; font-size: 11px; }
details > summary { cursor: pointer; font-size: 1.15em; font-weight: bold; margin-top: 2em; }
"""
_BAR_ROW: Final = 16
_BAR_LABEL: Final = 300
_BAR_WIDTH: Final = 500
# Column widths of the rule tables (fixed layout: long terms wrap inside their cell).
_RULE_COLUMNS: Final = (
    ("rule", "", "16%"),
    ("where", "", "13%"),
    ("applied", "n", "8.5%"),
    ("cases", "n", "5.5%"),
    ("// removed", "n", "7%"),
    ("% removed", "n", "7%"),
    ("first application", "", "28%"),
    ("matched, taken first by", "", "15%"),
)
_RESIDUE_COLUMNS: Final = (
    ("shape", "", "25%"),
    ("cases", "n", "6%"),
    ("occurrences", "n", "10%"),
    ("examples (residue in result)", "", "59%"),
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(table_id: str, columns: tuple[tuple[str, str, str], ...], rows: list[str]) -> str:
    cols = "".join(f'<col style="width: {width}">' for _, _, width in columns)
    head = "".join(
        f'<th class="{cls}">{_e(name)}</th>' if cls else f"<th>{_e(name)}</th>"
        for name, cls, _ in columns
    )
    body = "\n".join(rows)
    return (
        f'<table id="{table_id}"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}\n</tbody></table>"
    )


def _rule_row(s: RuleStats) -> str:
    cls = "rule" if s.applications else ("rule shadowed" if s.shadowed else "rule never")
    first = (
        ""
        if s.first is None
        else (
            f"<code>{_e(s.first.before)}</code> &rarr; <code>{_e(s.first.after)}</code>"
            f" <small>({_e(s.first.case)})</small>"
        )
    )
    by = ", ".join(f"{_e(name)} ({n})" for name, n in s.preempted_by.most_common())
    return (
        f'<tr class="{cls}"><td class="name"><code>{_e(s.name)}</code></td>'
        f'<td class="where">{_e(_where(s))}</td><td class="n">{s.applications}</td>'
        f'<td class="n">{s.cases}</td><td class="n">{s.divs_removed}</td>'
        f'<td class="n">{s.mods_removed}</td><td>{first}</td><td>{by}</td></tr>'
    )


def _bar_chart(rules: list[RuleStats]) -> str:
    """Inline SVG: one horizontal bar per rule whose steps removed (or added) divisions."""
    bars = sorted((s for s in rules if s.ops_removed), key=lambda s: -s.ops_removed)
    if not bars:
        return "<p>No rule removed a division on this corpus.</p>"
    top = max(abs(s.ops_removed) for s in bars)
    height = _BAR_ROW * len(bars) + 4
    width = _BAR_LABEL + _BAR_WIDTH + 80
    parts = [
        f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="// and % removed per rule">'
    ]
    for i, s in enumerate(bars):
        y = i * _BAR_ROW + 2
        w = max(1, round(_BAR_WIDTH * abs(s.ops_removed) / top))
        colour = "#3572a5" if s.ops_removed > 0 else "#c0392b"
        parts.append(
            f'<text x="{_BAR_LABEL - 6}" y="{y + 11}" text-anchor="end">{_e(s.name)}</text>'
            f'<rect class="bar" x="{_BAR_LABEL}" y="{y}" width="{w}" height="{_BAR_ROW - 4}" '
            f'fill="{colour}"><title>{_e(s.name)}: {s.divs_removed} // and '
            f"{s.mods_removed} % removed</title></rect>"
            f'<text x="{_BAR_LABEL + w + 4}" y="{y + 11}">{s.ops_removed}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _residue_row(g: ResidueGroup) -> str:
    examples = "<br>".join(
        f"<code>{_e(e.before)}</code> in <code>{_e(e.after)}</code> <small>({_e(e.case)})</small>"
        for e in g.examples
    )
    return (
        f'<tr class="residue"><td><code>{_e(g.shape)}</code></td><td class="n">{g.cases}</td>'
        f'<td class="n">{g.occurrences}</td><td>{examples}</td></tr>'
    )


def to_html(report: Coverage, title: str = "quorem coverage") -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script).

    The answer first: the summary, a bar chart of the ``//`` and ``%`` removed per rule,
    the residue groups with examples, the rules that fired and the shadowed ones; the
    rules that never fired last, folded (a ``<details>`` the reader opens). Long terms
    wrap inside their cells: the page fits a 1280 px wide window.
    """
    fired = [_rule_row(s) for s in report.rules if s.applications]
    shadowed = [_rule_row(s) for s in report.shadowed]
    unmatched = [_rule_row(s) for s in report.never_fired if not s.shadowed]
    n_never = len(report.never_fired)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title>
<style>{_STYLE}</style></head>
<body>
<h1>{_e(title)}</h1>
<p id="summary">{_e(_summary(report))}. {len(fired)} of {len(report.rules)} rules fired;
{n_never} never fired ({len(shadowed)} of them shadowed: listed below; the others folded
at the end).</p>
<h2>// and % removed per rule</h2>
{_bar_chart(report.rules)}
<h2>Residues: divisions left, by shape</h2>
{_table("residues", _RESIDUE_COLUMNS, [_residue_row(g) for g in report.residues])}
<h2>Rules that fired ({len(fired)})</h2>
{_table("rules", _RULE_COLUMNS, fired)}
<h2>Shadowed rules ({len(shadowed)}): they matched, but an earlier rule always took the term</h2>
{_table("shadowed", _RULE_COLUMNS, shadowed)}
<details id="never-fired"><summary>Never fired, never matched ({len(unmatched)} rules)</summary>
{_table("never", _RULE_COLUMNS, unmatched)}
</details>
</body></html>
"""
