"""A second solver's word on Z3's answers: each decided query checked again by cvc5.

``quorem verify --confirm cvc5`` hands the query that decided an obligation — the
standard SMT-LIB text of :func:`quorem.verify.smtlib.obligation_script`, the very
assertions Z3 refuted or satisfied — to cvc5 (through its Python API, in the process
that ran the proof) with a time limit of its own. The verdict:

* ``z3+cvc5``: cvc5 gives Z3's answer (``unsat`` for a proof, ``sat`` for a
  counterexample);
* ``z3 only``: cvc5 gives none in its time (unknown, a timeout), so Z3's answer stands
  alone;
* ``disagree``: cvc5 gives the opposite answer. Either solver is wrong, or the text is
  not the statement Z3 decided; the run fails, and cvc5's model (if it has one) is
  replayed through the engine on the rule, as Z3's counterexamples are.

cvc5 is optional (``pip install "quorem[confirm]"``); nothing here imports it until a
confirmation is asked for.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Sequence
from typing import Any, Final

import z3

from .lemmas import path_instances
from .prove import (
    PROVEN_STATUSES,
    SPLIT_METHOD,
    Obligation,
    check_query,
    counterexample_report,
    obligation_kind,
    replay_model,
    split_queries,
)
from .smtlib import Script, UnsupportedTermError, obligation_script, to_smtlib

__all__ = [
    "CONFIRMERS",
    "DEFAULT_CONFIRM_TIMEOUT",
    "DEFINITE_ANSWERS",
    "NO_ANSWER",
    "NO_QUERY",
    "ConfirmerMissingError",
    "confirm",
    "confirm_key",
    "confirm_queries",
    "confirmer_version",
    "expected_answer",
]

CONFIRMERS: Final = ("cvc5",)
DEFAULT_CONFIRM_TIMEOUT: Final = 20.0
DISAGREE: Final = "disagree"
Z3_ONLY: Final = "z3 only"
NO_QUERY: Final = "no query"  # a proof no solver answer decided: nothing to confirm
NO_ANSWER: Final = "none"
# A confirmation with one of these answers is definite (cached; a longer limit changes nothing).
DEFINITE_ANSWERS: Final = ("sat", "unsat", NO_ANSWER)

# The methods whose result is one query's answer (obligation_query rebuilds it); a grid
# result or a vacuity verdict is not one query, and is not confirmed.
_ONE_QUERY: Final = ("IntAux", "IntAux64", "IntAux, values in int64")


# Obligations proven by a search whose every step is a Z3 ``unsat``.
_SEARCHES: Final = ("termination", "termination-context", "interval")


def _is_split(method: object) -> bool:
    """Whether ``method`` is a proof by sign cases (``quorem verify --encoding native-split``)."""
    return isinstance(method, str) and f"{SPLIT_METHOD} (" in method


class ConfirmerMissingError(RuntimeError):
    """The confirming solver is not installed (or not one quorem knows)."""


@functools.cache
def confirmer_version(solver: str) -> str:
    """The version of ``solver`` as it reports it; :class:`ConfirmerMissingError` without it."""
    if solver not in CONFIRMERS:
        raise ConfirmerMissingError(f"no confirming solver named {solver!r} (known: cvc5)")
    try:
        import cvc5  # noqa: PLC0415  (optional: the confirm extra)
    except ImportError as exc:
        raise ConfirmerMissingError(
            f'--confirm cvc5 needs the cvc5 package ({exc}): pip install "quorem[confirm]"'
        ) from exc
    terms = cvc5.TermManager()  # kept alive as long as the solver made with it
    version = cvc5.Solver(terms).getVersion()
    return version.decode() if isinstance(version, bytes) else str(version)


def confirm_key(proof_key: str, method: str, expected: str, solver: str, version: str) -> str:
    """The cache key of a confirmation.

    It names the obligation's proof (``proof_key``: the rule, the obligation, Z3's
    version and the digest of the code proofs rely on, which covers this module and the
    SMT-LIB writer: the job runner imports them), the query confirmed (``method``), the
    answer expected, and the confirming solver and its version.
    """
    parts = ["confirm", proof_key, method, expected, solver, version]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def expected_answer(result: dict[str, Any]) -> str | None:
    """The answer Z3 gave on the query (or sign cases) that decided ``result``; else None."""
    method = result.get("method")
    if obligation_kind(result) in _SEARCHES:
        # Its answers the proof recorded (confirm_queries): each one unsat.
        return "unsat" if result.get("status") in PROVEN_STATUSES else None
    if method not in _ONE_QUERY and not _is_split(method):
        return None
    if result.get("status") in PROVEN_STATUSES:
        return "unsat"
    if result.get("status") == "unsound":
        return "sat"
    return None


def _values(raw: dict[str, int | bool], ob: Obligation) -> dict[str, int]:
    """The model's values of the rule's names and range bounds, as Z3's models give them."""
    names = set(ob.rule.names)
    out = {}
    for name, v in raw.items():
        if isinstance(v, bool):
            continue
        base = name.split("[", 1)[0]
        if name.startswith(("vmin(", "vmax(")) or base in names:
            out[name] = v
    return out


def _run_cvc5(script: Script, timeout: float) -> tuple[str, str, dict[str, int | bool]]:
    """cvc5's answer on ``script``, why it is unknown, and its model when sat.

    A fresh solver per query, default options but models and the time limit; the
    script's commands run as written but ``check-sat``, asked through the API for its
    result.
    """
    import cvc5  # noqa: PLC0415  (optional: the confirm extra)

    terms = cvc5.TermManager()  # kept alive as long as the solver made with it
    solver = cvc5.Solver(terms)
    solver.setOption("produce-models", "true")
    solver.setOption("tlimit-per", str(max(1, int(timeout * 1000))))
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, script.text, "query.smt2")
    symbols = parser.getSymbolManager()
    while True:
        command = parser.nextCommand()
        if command.isNull():
            break
        if command.getCommandName() != "check-sat":
            command.invoke(solver, symbols)
    result = solver.checkSat()
    if result.isUnsat():
        return "unsat", "", {}
    if not result.isSat():
        why = result.getUnknownExplanation()
        return "unknown", str(getattr(why, "name", why)).lower(), {}
    z3_names = {smt.strip("|"): name for name, smt in script.symbols.items()}
    model: dict[str, int | bool] = {}
    for term in symbols.getDeclaredTerms():
        value = solver.getValue(term)
        name = z3_names.get(term.getSymbol(), term.getSymbol())
        model[name] = (
            value.getBooleanValue() if value.isBooleanValue() else int(value.getIntegerValue())
        )
    return "sat", "", model


def confirm(
    ob: Obligation, result: dict[str, Any], solver: str, timeout: float
) -> dict[str, Any] | None:
    """``solver``'s check of the query that decided ``result`` (a ``prove`` result's JSON).

    None when the result is no one query's answer (unknown, on the grid, vacuous).
    Otherwise the confirmation's JSON: ``solver``, ``version``, ``method`` (the query),
    ``expected`` (Z3's answer), ``answer`` (the solver's: ``unsat``, ``sat``,
    ``unknown`` or ``error``), ``verdict`` (``z3+cvc5``, ``z3 only`` or ``disagree``),
    ``seconds``, ``reason`` (why unknown), and for a disagreement ``model`` and a
    ``report`` with both answers and the model replayed through the engine.
    """
    expected = expected_answer(result)
    if expected is None:
        return None
    start = time.perf_counter()
    method = str(result["method"])
    confirmed = method
    try:
        if _is_split(method):
            answer, reason, raw = _confirm_restated(ob, timeout)
        else:
            answer, reason, raw = "unknown", "", {}
            if expected == "unsat" and _restatable(ob):
                # A symbolic divisor: the purified text is non-linear in ways cvc5
                # rarely decides, its sign cases it does (benchmarks/README.md).
                answer, reason, raw = _confirm_restated(ob, timeout)
                if answer == "unsat":
                    confirmed = f"{method}; restated: {SPLIT_METHOD}"
            if answer != "unsat":
                first = f"{reason}; " if reason else ""
                script = obligation_script(ob, method, expected=expected)
                answer, reason, raw = _run_cvc5(script, timeout)
                reason = f"{first}{reason}" if answer != expected else ""
    except (UnsupportedTermError, RuntimeError) as exc:
        # Not a verdict on the rule: the text could not be written or read. Z3's
        # answer stands alone, and the reason says why.
        answer, reason, raw = "error", f"{type(exc).__name__}: {exc}", {}
    out: dict[str, Any] = {
        "solver": solver,
        "version": confirmer_version(solver),
        "method": confirmed,
        "expected": expected,
        "answer": answer,
        "verdict": f"z3+{solver}" if answer == expected else Z3_ONLY,
        "seconds": round(time.perf_counter() - start, 4),
        "reason": reason,
    }
    if answer in ("sat", "unsat") and answer != expected:
        model = _values(raw, ob)
        out["verdict"] = DISAGREE
        out["model"] = model or None
        out["report"] = _disagreement(ob, result, out, model)
    return out


def confirm_queries(
    queries: Sequence[Sequence[Any]], method: str, solver: str, timeout: float
) -> dict[str, Any]:
    """``solver``'s check of each query a search-based proof rests on (Z3 refuted each).

    ``queries`` are the assertions of the ``unsat`` answers a termination or interval
    proof recorded (:mod:`quorem.verify.record`), each sent once (equal texts once) with
    ``timeout`` of its own. The confirmation's JSON as :func:`confirm`'s, its ``method``
    saying how many queries; ``disagree`` when the solver satisfies one (its ``report``
    shows the query and the model: there is no rule instance to replay it on). A proof
    that rested on no query (decided by computing, as the nested order's syntactic
    cases are) gets the verdict ``no query`` and the answer ``none``.
    """
    texts: dict[str, tuple[Script, Sequence[Any]]] = {}
    for assertions in queries:
        script = to_smtlib(list(assertions), comments=["expected: unsat"])
        texts.setdefault(script.text, (script, assertions))
    if not texts:
        return {
            "solver": solver,
            "version": confirmer_version(solver),
            "method": f"{method}: 0 queries",
            "expected": "unsat",
            "answer": NO_ANSWER,
            "verdict": NO_QUERY,
            "seconds": 0.0,
            "reason": "decided without a solver query",
        }
    start = time.perf_counter()
    answer, reason, left = "unsat", "", 0
    for i, (plain, assertions) in enumerate(texts.values()):
        script = plain
        try:
            got, why, model = _run_cvc5(plain, timeout)
            if got not in ("sat", "unsat"):
                script, got, why, model = _with_path_lemmas(assertions, timeout, got, why)
        except (UnsupportedTermError, RuntimeError) as exc:
            got, why, model = "error", f"{type(exc).__name__}: {exc}", {}
        if got == "sat":
            answer = "sat"
            reason = f"query {i + 1} of {len(texts)} satisfiable"
            shown = ", ".join(f"{k} = {v}" for k, v in sorted(model.items()))
            report = f"{solver} satisfies a query Z3 refuted ({method}): {shown}\n{script.text}"
            break
        if got != "unsat":
            left += 1
            answer = "unknown"
            reason = reason or f"query {i + 1} of {len(texts)}: {got} {why}".rstrip()
    out: dict[str, Any] = {
        "solver": solver,
        "version": confirmer_version(solver),
        "method": f"{method}: {len(texts)} queries",
        "expected": "unsat",
        "answer": answer,
        "verdict": f"z3+{solver}" if answer == "unsat" else Z3_ONLY,
        "seconds": round(time.perf_counter() - start, 4),
        "reason": f"{reason} ({left} left)" if left > 1 else reason,
    }
    if answer == "sat":
        out["verdict"] = DISAGREE
        out["model"] = None
        out["report"] = report
    return out


def _with_path_lemmas(
    assertions: Sequence[Any], timeout: float, got: str, why: str
) -> tuple[Script, str, str, dict[str, int | bool]]:
    """A query cvc5 left undecided, restated with lemma instances; both solvers read it.

    The instances (:func:`quorem.verify.lemmas.path_instances`) are valid facts, so the
    text is the same statement; Z3 reads it back and must refute it too (``sat`` from Z3
    is reported as the solvers' disagreement). Returns the text decided and cvc5's
    answer, its reason and model; where Z3 does not refute the text, the first answer
    (``got``, ``why``) stands.
    """
    facts = path_instances(list(assertions))
    script = to_smtlib([*facts, *assertions], comments=["expected: unsat", "with lemma instances"])
    z3_answer, z3_solver = check_query(list(z3.parse_smt2_string(script.text)), timeout)
    if z3_answer == z3.sat:
        return (
            script,
            "sat",
            "z3 satisfies the query with lemma instances",
            _z3_model(z3_solver.model()),
        )
    if z3_answer != z3.unsat:
        return script, got, f"{why}; with lemma instances: z3 {z3_answer}", {}
    answer, reason, model = _run_cvc5(script, timeout)
    if answer not in ("sat", "unsat"):
        reason = f"{why}; with lemma instances: {answer} {reason}".rstrip()
    return script, answer, reason, model


def _restatable(ob: Obligation) -> bool:
    """Whether ``ob`` divides by a name, so its sign cases are a restatement worth trying."""
    from .split import split_plan  # noqa: PLC0415

    return bool(split_plan(ob.rule, ob.semantics, ob.arity))


# The statements of a sign case tried, in order: with every lemma instance, without
# those on range bounds (they distract cvc5 on a few rules that need none), without any.
# Each is the same case (the instances are valid facts), and both solvers read its text.
_LEMMA_SETS: Final = ((True, True), (True, False), (False, False))


def _confirm_restated(ob: Obligation, timeout: float) -> tuple[str, str, dict[str, int | bool]]:
    """Both solvers on the sign cases of ``ob``, each case from one SMT-LIB text.

    The sign cases are the same obligation (they cover every assignment; native division
    is the purified one, ``tests/test_split.py``): for a proof Z3 found by the purified
    statement, a restatement; for a proof by sign cases (``--encoding native-split``),
    the cases it proved. Each case's text is read back by Z3 and given to cvc5, so
    neither solver trusts the other's work; a case is confirmed when both refute one of
    its statements (:data:`_LEMMA_SETS`). ``unsat`` when every case is; ``sat`` (with
    cvc5's model) when cvc5 satisfies a statement of a case; else ``unknown`` naming the
    first case left and why.
    """
    # Each statement is built when a case first needs it (every case, in the same order).
    statements: dict[int, list[tuple[dict[str, str], list[Any]]]] = {}

    def statement(j: int) -> list[tuple[dict[str, str], list[Any]]]:
        if j not in statements:
            statements[j] = split_queries(ob, *_LEMMA_SETS[j])
        return statements[j]

    for i, (case, _) in enumerate(statement(0)):
        label = ", ".join(f"{n} {rel}" for n, rel in case.items()) or "-"
        why = ""
        for j in range(len(_LEMMA_SETS)):
            assertions = statement(j)[i][1]
            script = to_smtlib(assertions, comments=[f"sign case: {label}", "expected: unsat"])
            z3_answer, z3_solver = check_query(list(z3.parse_smt2_string(script.text)), timeout)
            if z3_answer == z3.sat:
                # Z3 refuted the obligation's other statement: one of the two texts is
                # not the obligation. Shown as a disagreement, with Z3's model.
                return "sat", f"z3 satisfies sign case {label}", _z3_model(z3_solver.model())
            if z3_answer != z3.unsat:
                why = why or f"restated, sign case {label}: z3 {z3_answer}"
                continue
            answer, reason, raw = _run_cvc5(script, timeout)
            if answer == "sat":
                return "sat", f"sign case {label}", raw
            if answer == "unsat":
                break
            why = why or f"restated, sign case {label}: {answer} {reason}".rstrip()
        else:
            return "unknown", why, {}
    return "unsat", "", {}


def _z3_model(model: z3.ModelRef) -> dict[str, int | bool]:
    out: dict[str, int | bool] = {}
    for d in model.decls():
        v = model[d]
        if d.arity() == 0 and z3.is_int_value(v):
            out[d.name()] = v.as_long()
    return out


def _disagreement(
    ob: Obligation, result: dict[str, Any], c: dict[str, Any], model: dict[str, int]
) -> str:
    """Both answers, and the second solver's model replayed on the rule where it has one."""
    rule = ob.rule
    z3_says = (
        f"unsat: {result['status']} ({result['method']})"
        if c["expected"] == "unsat"
        else f"sat: a counterexample the engine confirmed ({result['method']})"
    )
    lines = [
        f"{rule.location}: rule {rule.name} ({ob.label}): DISAGREE",
        f"  z3 {z3.get_version_string()}: {z3_says}",
        f"  {c['solver']} {c['version']}: {c['answer']}",
    ]
    if not model:
        return "\n".join(lines)
    values, rep = replay_model(ob, model)
    replayed = counterexample_report(ob, values, rep).splitlines()
    verdict = (
        "the engine confirms it: the rule is UNSOUND at this point (Z3's unsat is wrong)"
        if rep.confirmed
        else f"the engine does not confirm it ({rep.note})"
    )
    lines.append(f"  {c['solver']}'s model, replayed through the engine: {verdict}")
    # The replay's report without its first line (the rule and a verdict already given).
    lines += [f"  {line}" for line in replayed[1:]]
    return "\n".join(lines)
