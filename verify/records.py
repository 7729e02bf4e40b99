"""Writing and checking proof records (``FILE.proof.json``) from ``quorem verify``'s results.

The record's format and how the engine reads it are in :mod:`quorem.proofrecord`.
A record is written from a run that proved every kind of obligation of the rules it
covers (equivalence, int64, termination and the nested order, at the default arity or
more), never by hand: ``quorem verify --check-records`` proves again and fails on any
difference, which is what CI runs on the shipped rules.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import z3

from quorem.proofrecord import (
    PROVEN,
    RECORD_FORMAT,
    read_record,
    record_path,
    rule_digest,
    semantics_key,
)
from quorem.rule import Rule

from .digest import code_digest
from .prove import OBLIGATIONS, PROVEN_STATUSES
from .termination import NESTED_OBLIGATION

__all__ = ["RECORDED_KINDS", "check_records", "rule_statuses", "write_records"]

# The obligations a record's ``proven`` stands for: all of them.
RECORDED_KINDS: Final = (*OBLIGATIONS, "termination", NESTED_OBLIGATION)
_FAILED: Final = frozenset({"unsound", "disagree"})


def _kinds_of(rule: Rule) -> tuple[str, ...]:
    """The obligation kinds a rule has: constraint and lowering rules have no order."""
    return OBLIGATIONS if rule.by_own_pass else RECORDED_KINDS


def rule_statuses(rule: Rule, results: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Per semantics key, the verdict of all of ``rule``'s obligations in ``results``.

    ``unsound`` when any obligation is unsound (or a second solver disagrees),
    ``proven`` when every kind of obligation is there and proven, else ``unknown``.
    """
    mine = [r for r in results if r.get("name") == rule.name and r.get("file") == rule.file]
    out: dict[str, str] = {}
    for sem in rule.semantics or (None,):
        key = semantics_key(sem)
        found = [r for r in mine if r.get("semantics") in (key, "any")]
        kinds = {str(r["obligation"]).split(" ")[0] for r in found}  # "equivalence k=2"
        if any(r["status"] in _FAILED for r in found):
            out[key] = "unsound"
        elif set(_kinds_of(rule)) <= kinds and all(
            r["status"] in PROVEN_STATUSES or r["status"] == PROVEN for r in found
        ):
            out[key] = PROVEN
        else:
            out[key] = "unknown"
    return out


def _record(
    file: str, rules: Sequence[Rule], results: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    data = Path(file).read_bytes()
    return {
        "format": RECORD_FORMAT,
        "about": "written by quorem verify; checked by quorem verify --check-records; "
        "do not edit (a rule counts as proven only when this record says so)",
        "prover": code_digest(),
        "z3": z3.get_version_string(),
        "file_sha256": hashlib.sha256(data).hexdigest(),
        "rules": [
            {
                "name": r.name,
                "sha256": rule_digest(r),
                "statuses": rule_statuses(r, results),
            }
            for r in rules
        ],
    }


def _by_file(rules: Sequence[Rule]) -> dict[str, list[Rule]]:
    out: dict[str, list[Rule]] = {}
    for r in rules:
        out.setdefault(r.file, []).append(r)
    return out


def _merged(
    file: str, rules: Sequence[Rule], results: Sequence[Mapping[str, Any]], every: Sequence[Rule]
) -> dict[str, Any]:
    """The record of ``file`` for ``rules`` proven now.

    The entries of the file's other rules (``every``) are kept from its current record
    where their text is unchanged and the prover is the same.
    """
    fresh = _record(file, rules, results)
    old = read_record(record_path(file))
    if isinstance(old, str) or old.get("prover") != fresh["prover"]:
        kept: dict[str, dict[str, Any]] = {}
    else:
        kept = {str(e.get("sha256")): e for e in old["rules"] if isinstance(e, dict)}
    proven_now = {r.name for r in rules}
    entries = {e["name"]: e for e in fresh["rules"]}
    ordered = []
    for r in every:
        if r.name in proven_now:
            ordered.append(entries[r.name])
        elif (e := kept.get(rule_digest(r))) is not None:
            ordered.append({**e, "name": r.name})
    fresh["rules"] = ordered
    return fresh


def _dumps(record: Mapping[str, Any]) -> str:
    """The record as JSON with one rule a line: short, and a change is a one-line diff."""
    head = {k: v for k, v in record.items() if k != "rules"}
    lines = [json.dumps(head)[:-1] + ', "rules": [']
    rules = [json.dumps(e) for e in record["rules"]]
    lines += [f"  {r}," for r in rules[:-1]] + [f"  {r}" for r in rules[-1:]]
    return "\n".join([*lines, "]}"]) + "\n"


def write_records(
    rules: Sequence[Rule], results: Sequence[Mapping[str, Any]], every: Sequence[Rule]
) -> list[Path]:
    """Write the record of each file ``rules`` come from; return the paths written.

    ``every``: all rules of those files (a run of some rules keeps the others' entries
    where their text is unchanged). Raises OSError when a record cannot be written.
    """
    written = []
    all_by_file = _by_file(every)
    for file, group in _by_file(rules).items():
        record = _merged(file, group, results, all_by_file.get(file, group))
        # Beside the rules file itself: an editable install reaches the shipped files
        # through links, and a record written beside the link would not be the tree's.
        path = record_path(Path(file).resolve())
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(_dumps(record), encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


def check_records(
    rules: Sequence[Rule], results: Sequence[Mapping[str, Any]], every: Sequence[Rule]
) -> list[str]:
    """Where the committed records of ``rules``' files differ from what was proven now.

    One line per difference: a missing or unreadable record, another prover's digest,
    a file changed since, a rule missing or whose text or statuses differ, a record of
    a rule the file (``every``: all rules of the files) does not hold.
    """
    problems = []
    names = {r.name for r in every}
    for file, group in _by_file(rules).items():
        path = record_path(file)
        old = read_record(path)
        if isinstance(old, str):
            problems.append(f"{path}: {old}")
            continue
        fresh = _record(file, group, results)
        if old.get("prover") != fresh["prover"]:
            problems.append(
                f"{path}: proven by another prover ({str(old.get('prover'))[:12]}, "
                f"this one {fresh['prover'][:12]})"
            )
        if old.get("file_sha256") != fresh["file_sha256"]:
            problems.append(f"{path}: the rules file changed since the record was written")
        recorded = {e.get("name"): e for e in old["rules"] if isinstance(e, dict)}
        for e in fresh["rules"]:
            had = recorded.pop(e["name"], None)
            if had is None:
                problems.append(f"{path}: rule {e['name']} is not in the record")
            elif had.get("sha256") != e["sha256"]:
                problems.append(f"{path}: rule {e['name']}: the record is of another text")
            elif had.get("statuses") != e["statuses"]:
                problems.append(
                    f"{path}: rule {e['name']}: recorded {had.get('statuses')}, "
                    f"proven now {e['statuses']}"
                )
        problems += [
            f"{path}: rule {name} is recorded but not in the file"
            for name in recorded
            if name not in names
        ]
    return problems
