"""Proof records: what ``quorem verify FILE`` proved, kept beside the rules file.

A rule is applied only where it is proven for the semantics in use (see
:class:`~quorem.ruleset.RuleSet`). The evidence is a *proof record*,
``FILE.proof.json`` beside ``FILE``, written by ``quorem verify FILE``. It holds:

* ``prover``: the digest of the prover's code that proved it
  (:func:`quorem.proofdigest.code_digest`);
* ``file_sha256``: the SHA-256 of the rules file's bytes when it was proven;
* per rule: its name, the SHA-256 of its text (comments and blank lines dropped, lines
  stripped: moving a rule or re-indenting it keeps its proof) and, per semantics it is
  stated for (``any`` for a rule without division), the verdict of all of its
  obligations together: ``proven`` only when every obligation (equivalence, int64,
  termination, for every arity) is proven; else ``unsound`` or ``unknown``.

Checking a record needs no solver: one digest of the file's bytes (when the file is
unchanged, every rule's entry is taken by name), else one digest per rule, and for a
rules file that is not shipped with quorem, the prover's digest, computed once per
process. A record proven by another version of the prover is *stale*, and so is the
entry of a rule whose text changed: neither counts as a proof. The shipped rules'
records are not checked against the prover at run time; CI proves the shipped rules
again and fails when a record differs from what it proves, so no record can be written
by hand.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from .ops import Semantics
from .rule import Rule

__all__ = [
    "NO_RECORD",
    "PROVEN",
    "RECORD_FORMAT",
    "RECORD_SUFFIX",
    "RuleProof",
    "attach_proofs",
    "proofs_from_record",
    "read_record",
    "record_path",
    "rule_digest",
    "semantics_key",
]

RECORD_SUFFIX: Final = ".proof.json"
RECORD_FORMAT: Final = 1
PROVEN: Final = "proven"
# The status of a rule instance no current record speaks for.
UNPROVEN: Final = "unproven"
STALE: Final = "stale"
NO_RECORD: Final = "no proof record"


def semantics_key(semantics: Semantics | None) -> str:
    """How a record names ``semantics``: its value, or ``any`` for rules without division."""
    return semantics.value if semantics is not None else "any"


def rule_digest(rule: Rule) -> str:
    """SHA-256 of the rule's text with comments, blank lines and indentation dropped."""
    body = "\n".join(
        line.split("#", 1)[0].strip()
        for line in rule.text.splitlines()
        if line.split("#", 1)[0].strip()
    )
    return hashlib.sha256(body.encode()).hexdigest()


def record_path(rules_file: str | Path) -> Path:
    """The proof record of ``rules_file``: ``FILE.proof.json`` beside it."""
    return Path(f"{rules_file}{RECORD_SUFFIX}")


@dataclasses.dataclass(frozen=True, slots=True)
class RuleProof:
    """What the proof records say of one rule.

    ``statuses`` maps a semantics key (``floor``, ``trunc``, ``euclid``, ``any``) to the
    verdict of every obligation of the rule for it. ``stale`` is empty when the record
    is current, else why it does not count (a rule changed since, another prover).
    ``source`` names the record.
    """

    statuses: tuple[tuple[str, str], ...]
    source: str
    stale: str = ""
    missing: str = ""

    def proves(self, semantics: Semantics | None) -> bool:
        """Whether the record proves the rule for ``semantics``."""
        if self.stale:
            return False
        key = semantics_key(semantics)
        return any(k == key and v == PROVEN for k, v in self.statuses)

    def status(self, semantics: Semantics | None) -> str:
        """``proven``, ``unsound``, ``unknown``, ``stale`` or ``unproven`` (not in the record)."""
        if self.stale:
            return STALE
        return dict(self.statuses).get(semantics_key(semantics), UNPROVEN)

    def why(self, semantics: Semantics | None) -> str:
        """A short reason for :meth:`status`, naming the record."""
        if self.stale:
            return f"{self.source}: {self.stale}"
        if self.missing:
            return self.missing
        if semantics_key(semantics) not in dict(self.statuses):
            return f"{self.source} holds no proof of it for this semantics"
        return f"says {self.source}"


def read_record(path: Path) -> dict[str, Any] | str:
    """The record at ``path`` as a dict, or why it cannot be used (missing, malformed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return NO_RECORD
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {path}: {exc}"
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return f"{path} is not a proof record (not JSON: {exc})"
    if (
        not isinstance(data, dict)
        or data.get("format") != RECORD_FORMAT
        or not isinstance(data.get("prover"), str)
        or not isinstance(data.get("rules"), list)
    ):
        return f"{path} is not a proof record of format {RECORD_FORMAT}"
    return data


def _entries(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The well-formed rule entries of a record (a malformed one proves nothing)."""
    out = []
    for e in data["rules"]:
        if (
            isinstance(e, dict)
            and isinstance(e.get("name"), str)
            and isinstance(e.get("sha256"), str)
            and isinstance(e.get("statuses"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in e["statuses"].items())
        ):
            out.append(e)
    return out


def _proof(entry: Mapping[str, Any], source: str, stale: str) -> RuleProof:
    return RuleProof(tuple(sorted(entry["statuses"].items())), source, stale)


def _prover_stale(data: Mapping[str, Any], rules_file: str) -> str:
    """Why a record by another prover does not count, or '' when it is this one's."""
    from .proofdigest import code_digest  # noqa: PLC0415  (user records only)

    current = code_digest()
    if data["prover"] == current:
        return ""
    return (
        f"stale: proven by another version of quorem's prover (record {data['prover'][:12]}, "
        f"this quorem {current[:12]}); refresh it with quorem verify {rules_file}"
    )


def proofs_from_record(
    rules: Sequence[Rule],
    path: Path,
    *,
    data: bytes | None = None,
    check_prover: bool = True,
) -> list[Rule]:
    """``rules`` (of one rules file) with their :attr:`Rule.proof` from the record ``path``.

    ``data``: the rules file's bytes, when the record is the file's own: if they are the
    bytes the record was made from, entries are taken by name without a digest per rule.
    A rule the record does not speak for (or a missing, malformed record) gets a proof
    whose every status is ``unproven``, with the reason.
    """
    record = read_record(path)
    source = str(path)
    if isinstance(record, str):
        why = f"{NO_RECORD} {source}" if record == NO_RECORD else record
        return [dataclasses.replace(r, proof=RuleProof((), source, missing=why)) for r in rules]
    stale = _prover_stale(record, str(path).removesuffix(RECORD_SUFFIX)) if check_prover else ""
    entries = _entries(record)
    unchanged = data is not None and record.get("file_sha256") == hashlib.sha256(data).hexdigest()
    out = []
    if unchanged:
        by_name = {e["name"]: e for e in entries}
        for r in rules:
            e = by_name.get(r.name)
            missing = f"{source}: not in the record"
            proof = _proof(e, source, stale) if e else RuleProof((), source, missing=missing)
            out.append(dataclasses.replace(r, proof=proof))
        return out
    by_digest = {e["sha256"]: e for e in entries}
    for r in rules:
        e = by_digest.get(rule_digest(r))
        if e is not None:
            proof = _proof(e, source, stale)
        else:
            known = any(x["name"] == r.name for x in entries)
            why = "the rule changed since it was proven" if known else "not in the record"
            proof = RuleProof((), source, missing=f"{source}: {why}")
        out.append(dataclasses.replace(r, proof=proof))
    return out


def attach_proofs(
    rules: Sequence[Rule], files: Iterable[tuple[str, bytes]], *, shipped: Any = None
) -> list[Rule]:
    """``rules`` loaded from ``files`` (path, bytes), each with the proof its file's record gives.

    ``shipped(path)`` tells whether a file is one of quorem's own: their records are not
    checked against the prover's digest at run time (CI checks them).
    """
    data = dict(files)
    by_file: dict[str, list[Rule]] = {}
    for r in rules:
        by_file.setdefault(r.file, []).append(r)
    proven: dict[int, Rule] = {}
    for name, group in by_file.items():
        own = shipped is not None and shipped(name)
        done = proofs_from_record(
            group, record_path(name), data=data.get(name), check_prover=not own
        )
        for old, new in zip(group, done, strict=True):
            proven[id(old)] = new
    return [proven[id(r)] for r in rules]
