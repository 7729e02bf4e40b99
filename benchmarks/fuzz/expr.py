"""Expression targets: soundness of ``simplify``, expression text, batch JSON lines."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from typing import Any, ClassVar, Final

import quorem
from benchmarks.fuzz import mutate
from benchmarks.fuzz.harness import Case, Target, WrongResultError
from benchmarks.fuzz.terms import (
    Bounds,
    Tree,
    TreeGen,
    UndefinedError,
    build,
    eval_term_all,
    eval_tree,
    random_points,
    range_violation,
    to_source,
    uses_semantics,
)
from quorem import QuoremError, Semantics, Term
from quorem.cli.batch import batch_record

_SEMANTICS: Final = {s.value: s for s in Semantics}
_RANGE_CHECK_POINTS: Final = 3


def _bounds_of(case: Case) -> Bounds:
    return {n: (lo, hi) for n, (lo, hi) in case["vars"].items()}


def _roundtrip(t: Term, bounds: Bounds, sem: Semantics, what: str) -> None:
    """``t`` printed (in both spellings) parses back to ``t`` itself."""
    for spelling in (Semantics.FLOOR, sem):
        text = quorem.to_text(t, spelling)
        try:
            back = quorem.parse(text, bounds, spelling)
        except QuoremError as exc:
            raise WrongResultError(
                f"{what} text does not parse", f"{text!r} ({spelling.value}): {exc}"
            ) from None
        if back is not t:
            raise WrongResultError(
                f"{what} text parses to another term",
                f"{text!r} ({spelling.value}) parses to {quorem.to_text(back)!r}",
            )


class ExprSoundness(Target):
    """Random trees simplified under floor, trunc and euclid, checked against evaluation.

    A case is a tree (see :mod:`benchmarks.fuzz.terms`), its variables' bounds, the
    points to evaluate at, and ``via``: ``"term"`` builds the term with the API,
    ``"text"`` prints the tree (varied spelling) and parses it.
    """

    name: ClassVar[str] = "expr-soundness"
    # The tree may divide by a constant that folds to zero: the API's TermError and the
    # parser's ParseError. Anything else (EvaluationError from simplify's output at a
    # point where the input is defined, say) is a failure.
    allowed: ClassVar[tuple[type[BaseException], ...]] = (quorem.TermError, quorem.ParseError)

    def __init__(self, simplify: Any = None) -> None:
        self.simplify = simplify or quorem.simplify

    def generate(self, rng: random.Random) -> Case:
        gen = TreeGen(rng)
        tree = gen.tree(rng.randint(1, 5))
        case: Case = {
            "tree": tree,
            "vars": {n: list(b) for n, b in gen.bounds.items()},
            "points": random_points(rng, gen.bounds, 4),
            "via": "text" if rng.random() < 0.3 else "term",
        }
        if case["via"] == "text":
            case["spell"] = rng.getrandbits(32)
        return case

    def check(self, case: Case) -> int:
        tree: Tree = case["tree"]
        bounds = _bounds_of(case)
        sems = ("floor", "trunc", "euclid") if uses_semantics(tree) else ("floor",)
        for s in sems:
            sem = _SEMANTICS[s]
            t = build(tree, bounds, sem)
            if case["via"] == "text":
                text = to_source(tree, random.Random(case.get("spell", 0)))
                parsed = quorem.parse(text, bounds, sem)
                if parsed is not t:
                    raise WrongResultError(
                        "parsed text is not the built term",
                        f"{text!r} ({s}) parses to {quorem.to_text(parsed)!r}, "
                        f"the API builds {quorem.to_text(t)!r}",
                    )
            out = self.simplify(t)
            _roundtrip(out, bounds, sem, "output")
            self._compare(tree, t, out, case["points"], sem)
        return len(sems)

    @staticmethod
    def _compare(
        tree: Tree, t: Term, out: Term, points: list[dict[str, int]], sem: Semantics
    ) -> None:
        s = sem.value
        for n, env in enumerate(points):
            try:
                want = eval_tree(tree, env, sem)
            except UndefinedError:
                continue
            where = f"at {env} ({s})"
            try:
                got_in = quorem.evaluate(t, env)
            except quorem.EvaluationError as exc:
                raise WrongResultError(
                    "built term undefined where the tree is", f"{where}: {exc}"
                ) from None
            if got_in != want:
                raise WrongResultError(
                    "built term has another value",
                    f"{quorem.to_text(t, limit=500)!r} = {got_in}, tree = {want} {where}",
                )
            try:
                got_out = quorem.evaluate(out, env)
            except quorem.EvaluationError as exc:
                raise WrongResultError(
                    "simplified term undefined where the input is",
                    f"{quorem.to_text(t, limit=500)!r} -> {quorem.to_text(out, limit=500)!r} "
                    f"{where}: {exc}",
                ) from None
            if got_out != want:
                raise WrongResultError(
                    f"simplify changed the value ({s})",
                    f"{quorem.to_text(t, limit=500)!r} = {want} but "
                    f"{quorem.to_text(out, limit=500)!r} = {got_out} {where}",
                )
            if n < _RANGE_CHECK_POINTS:
                for term, what in ((t, "input"), (out, "output")):
                    values = eval_term_all(term, env)
                    if values is None:
                        continue
                    if values[term] != want:
                        raise WrongResultError("quorem.evaluate disagrees", f"{what} {where}")
                    bad = range_violation(values)
                    if bad is not None:
                        raise WrongResultError(
                            f"value outside the range of a subterm ({what})", f"{bad} {where}"
                        )

    def shrink(self, case: Case) -> Iterator[Case]:
        for tree in shrink_tree(case["tree"]):
            yield {**case, "tree": tree}
        for i in range(len(case["points"])):
            yield {**case, "points": [case["points"][i]]}
        if case["via"] == "text":
            yield {**case, "via": "term"}
        for name, (lo, hi) in case["vars"].items():
            for lo2, hi2 in ((None, hi), (lo, None), (None, None)):
                if (lo2, hi2) != (lo, hi):
                    yield {**case, "vars": {**case["vars"], name: [lo2, hi2]}}


def shrink_tree(tree: Tree) -> Iterator[Tree]:
    """Trees with one node replaced by a child, 0, 1, or a smaller constant."""
    if tree[0] == "c":
        v = int(tree[1])
        for w in (0, 1, -1, v // 2, v - 1 if v > 0 else v + 1):
            if abs(w) < abs(v) or (abs(w) == abs(v) and w > v):
                yield ["c", w]
        return
    if tree[0] == "v":
        return
    yield from tree[1:]
    yield ["c", 0]
    yield ["c", 1]
    for i in range(1, len(tree)):
        for smaller in shrink_tree(tree[i]):
            yield [*tree[:i], smaller, *tree[i + 1 :]]


# ------------------------------------------------------------------------ text
_HOSTILE_NAMES: Final = (
    "and", "or", "not", "max", "min", "floordiv", "_", "__class__", "x" * 300, "é", "\u210c",
    "x\u200b", "\ufb01", "i̇", "\U0001d465", "None", "True", "lambda", "import", "\u216b", "٣",
)  # fmt: skip
_TOKENS: Final = (
    "x", "y", "1", "0", "-", "+", "*", "//", "%", "(", ")", ",", "max(", "min(", "<", "<=",
    ">", ">=", "==", "!=", "floordiv(", "truncmod(", "eucliddiv(", "ceildiv(", "0x", "1_000",
    "__", " ", "\t", "\n",
    "**", "/", "!", "=", "and", "not", "9" * 40, "-" * 5, "#", "'", '"', "\\", "\x00",
    "\uff11", "²", "٣", "e", "1e3", ".", "@", ";", "[", "]",
)  # fmt: skip


def random_expr_text(rng: random.Random) -> tuple[str, Bounds]:
    """Text: a valid expression, mutated; random tokens; deep nesting; huge literals."""
    pick = rng.random()
    gen = TreeGen(rng)
    if pick < 0.45:
        text = to_source(gen.tree(rng.randint(1, 5)), rng)
        if rng.random() < 0.85:
            text = mutate.mutate_text(rng, text, rng.randint(1, 4))
    elif pick < 0.65:
        text = "".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 30)))
    elif pick < 0.75:
        depth = rng.choice((50, 500, 500, 2000, 2000, 10_000))
        kind = rng.randrange(4)
        if kind == 0:
            text = "(" * depth + "x" + ")" * depth
        elif kind == 1:
            text = "-" * depth + "x"
        elif kind == 2:
            text = "max(" * depth + "x" + ", 1)" * depth
        else:
            text = "x" + " // 2" * depth
        if rng.random() < 0.5:
            text = mutate.mutate_text(rng, text, 1)
    elif pick < 0.85:
        digits = rng.choice((100, 4300, 5000, 20_000))
        lit = rng.choice(("9" * digits, "0x" + "f" * digits, "1" + "_0" * (digits // 2)))
        text = rng.choice((f"x * {lit}", f"x // {lit}", f"{lit} % (x + 1)", f"-{lit}", lit))
    else:
        name = rng.choice(_HOSTILE_NAMES)
        text = rng.choice((f"{name} + 1", f"{name}({name})", f"{name} // 4", name))
        gen.bounds[name if name.isidentifier() else "x"] = (0, 7)
    return text, gen.bounds


class ExprText(Target):
    """Random and mutated text through ``quorem.parse`` and ``quorem simplify``'s path."""

    name: ClassVar[str] = "expr-text"

    def generate(self, rng: random.Random) -> Case:
        text, bounds = random_expr_text(rng)
        return {
            "text": text,
            "vars": {n: list(b) for n, b in bounds.items()},
            "semantics": rng.choice(("floor", "trunc", "euclid")),
        }

    def check(self, case: Case) -> int:
        from quorem.cli.main import main  # noqa: PLC0415

        bounds = _bounds_of(case)
        sem = _SEMANTICS[case["semantics"]]
        text: str = case["text"]
        t = quorem.parse(text, bounds, sem)
        full = {**dict.fromkeys(_free_names(t), (None, None)), **bounds}
        _roundtrip(t, full, sem, "parsed")
        out = quorem.simplify(t)
        _roundtrip(out, full, sem, "output")
        if len(text) < 2000 and "\x00" not in text:
            # The command line's path: argv, not a shell, so any text is one argument.
            argv = ["simplify", text, "--semantics", case["semantics"]]
            for n, (lo, hi) in bounds.items():
                argv += ["--var", f"{n}={'' if lo is None else lo}:{'' if hi is None else hi}"]
            sink, err = io.StringIO(), io.StringIO()
            status = _run_cli(main, argv, sink, err)
            if status not in (0, 1, 2, 3):
                raise WrongResultError(
                    "quorem simplify exit status", f"{status}: {err.getvalue()[-500:]}"
                )
            if "Traceback" in err.getvalue() or "internal error" in err.getvalue():
                raise WrongResultError(
                    "quorem simplify printed a traceback", err.getvalue()[-1500:]
                )
        return 1


def _free_names(t: Term) -> set[str]:
    from quorem.walk import free_names  # noqa: PLC0415

    return set(free_names(t))


def _run_cli(main: Any, argv: list[str], out: io.StringIO, err: io.StringIO) -> int:
    """``main(argv)`` with standard output and error captured; SystemExit gives its code."""
    import contextlib  # noqa: PLC0415

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return int(main(argv) or 0)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 2


# ------------------------------------------------------------------------ batch JSON
def _json_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth > 3 or pick < 0.3:
        return rng.choice(
            (None, True, False, 0, -1, 2**63, 1.5, float("nan"), "", "x", "floor", [], {},
             10**400, "\ud800", "x\x00", -(2**64))
        )  # fmt: skip
    if pick < 0.6:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(("id", "expr", "vars", "semantics", "x", "")): _json_value(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}  # fmt: skip


def random_batch_line(rng: random.Random) -> str:
    """One JSON line: valid, with wrong types, mutated bytes, or deep nesting."""
    pick = rng.random()
    gen = TreeGen(rng)
    expr = to_source(gen.tree(rng.randint(1, 4)), rng)
    record: dict[str, Any] = {
        "id": str(rng.randint(0, 999)),
        "vars": {n: list(b) for n, b in gen.bounds.items()},
        "expr": expr,
        "semantics": rng.choice(("floor", "trunc", "euclid")),
    }
    if pick < 0.35:
        return json.dumps(record)
    if pick < 0.6:
        key = rng.choice(("id", "vars", "expr", "semantics"))
        if rng.random() < 0.5 and key == "vars" and record["vars"]:
            name = next(iter(record["vars"]))
            record["vars"][name] = _json_value(rng)
        else:
            record[key] = _json_value(rng)
        if rng.random() < 0.2:
            del record[rng.choice(list(record))]
        try:
            return json.dumps(record)
        except ValueError:
            return json.dumps(record, allow_nan=True)
    if pick < 0.8:
        return mutate.mutate_text(rng, json.dumps(record), rng.randint(1, 4))
    if pick < 0.9:
        depth = rng.choice((100, 5000, 100_000))
        return rng.choice(("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth,
                           "[" * depth))  # fmt: skip
    return json.dumps(_json_value(rng))


class BatchJson(Target):
    """JSON lines through the ``simplify --batch`` path: each gives an output or an error."""

    name: ClassVar[str] = "batch-json"
    allowed: ClassVar[tuple[type[BaseException], ...]] = ()

    def generate(self, rng: random.Random) -> Case:
        lines = [random_batch_line(rng) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.05:
            lines.append("")
        return {"text": "\n".join(lines), "semantics": rng.choice(("floor", "trunc", "euclid"))}

    def check(self, case: Case) -> int:
        from quorem.cli.batch import run_batch  # noqa: PLC0415

        raw = case["text"]
        lines = raw.split("\n")
        sem = _SEMANTICS[case["semantics"]]
        for n, line in enumerate(lines, 1):
            obj = batch_record(line, n, sem, 100_000, io.StringIO())
            if "internal error" in str(obj.get("error", "")):
                _raise_internal(line, n, sem)
            _check_batch_object(obj, line)
        # The whole stream, as bytes (invalid UTF-8 included), like the command reads it.
        out, err = io.StringIO(), io.StringIO()
        stream = [ln.encode("utf-8", "surrogatepass") + b"\n" for ln in lines]
        run_batch(stream, sem, 100_000, out, err)
        written = out.getvalue().splitlines()
        expected = sum(1 for ln in lines if ln.strip())
        if len(written) != expected:
            raise WrongResultError(
                "batch output line count", f"{len(written)} lines for {expected} inputs"
            )
        for text in written:
            _check_batch_object(json.loads(text), text)
        return len(lines)


def _raise_internal(line: str, lineno: int, sem: Semantics) -> None:
    """Run the steps of ``batch_record`` unguarded, so the engine's exception shows."""
    from quorem.cli.batch import LineError, decode, job_of, simplify_job  # noqa: PLC0415

    try:
        job = job_of(decode(line), sem)
    except LineError:
        return
    simplify_job(job, lineno, 100_000, io.StringIO())


def _check_batch_object(obj: dict[str, Any], line: str) -> None:
    if set(obj) == {"id", "error"}:
        if "internal error" in str(obj["error"]):
            raise WrongResultError(
                "batch internal error", f"{obj['error'][:600]} for {line[:300]!r}"
            )
        return
    keys = {"id", "output", "ops_before", "ops_after", "rules", "counts", "steps"}
    keys |= {"stop_reason", "culprits", "seconds"}
    if set(obj) != keys:
        raise WrongResultError("batch object keys", f"{sorted(obj)} for {line[:300]!r}")
    json.dumps(obj)
