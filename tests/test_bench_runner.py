"""The side-by-side benchmark runner: translation, equivalence checks, op counts, reports.

Peer parts are skipped when tinygrad or TVM is not installed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import quorem
from benchmarks.peers import System, load_system
from benchmarks.peers.expr import (
    Node,
    Unsupported,
    annotate_nonneg,
    compile_eval,
    count_divmod,
    division_ops,
    evaluate_points,
    from_term,
    from_text,
    lower_divisions,
    node_count,
    to_term,
    to_text,
)
from benchmarks.runner import (
    EXHAUSTIVE_LIMIT,
    Bounds,
    Case,
    Outcome,
    RunResult,
    _system_input,
    box_points,
    check_equivalent,
    markdown,
    measure,
    prepare_case,
    render,
    report,
    run,
    summarize,
    warm_up,
    write_results,
)

# (text, bounds, semantics): sums with negative coefficients and constants, products,
# nested and symbolic divisions, both semantics, max/min and comparisons.
CASES: list[tuple[str, dict[str, tuple[int | None, int | None]], str]] = [
    ("x%7 + (x//7)*7", {"x": (-20, 20)}, "floor"),
    ("(x + 70)//8", {"x": (-100, 100)}, "trunc"),
    ("-((-11*d0 - d1 + 109)//11) + 9", {"d0": (0, 9), "d1": (0, 10)}, "floor"),
    ("(4*a)//(2*b) - a % b", {"a": (-6, 10), "b": (1, 5)}, "trunc"),
    ("max(x, y) - min(x//2, 3) + (x < y) + (x >= y)*2", {"x": (-5, 5), "y": (-3, 4)}, "floor"),
    ("3*(a + b) - a*b + truncmod(a, 3) + floordiv(b, -2)", {"a": (-7, 7), "b": (-4, 4)}, "floor"),
    ("((x*8 + y)//4)%3 + (x == y) - (x != 2)", {"x": (0, 9), "y": (0, 7)}, "floor"),
    ("-x - 5", {"x": (-3, 3)}, "floor"),
]


def _points(bounds: Bounds, names: list[str]) -> list[dict[str, int]]:
    return box_points(bounds, sorted(names), seed=1, samples=200)[0]


def _eval_or_none(f: Any, p: dict[str, int]) -> int | None:
    try:
        return int(f(p))
    except (ZeroDivisionError, quorem.EvaluationError):
        return None


@pytest.mark.parametrize(("text", "bounds", "sem"), CASES)
def test_term_round_trip(text: str, bounds: Bounds, sem: str) -> None:
    term = quorem.parse(text, bounds, sem)
    tree = from_term(term)
    assert to_term(tree, bounds) is term
    assert count_divmod(tree) == quorem.count_divmod(term)
    # The printed tree parses back to the same term (trunc ops print as functions).
    assert quorem.parse(to_text(tree), bounds) is term
    f = compile_eval(tree)
    points = _points(bounds, list(bounds))
    wants = []
    for p in points:
        want = _eval_or_none(lambda q: quorem.evaluate(term, q), p)
        assert _eval_or_none(f, p) == want, p
        wants.append(want)
    # All points at once (numpy's int64 path when numpy is installed) agrees.
    assert evaluate_points(tree, points) == wants


@pytest.mark.parametrize(("text", "bounds", "sem"), CASES)
def test_text_tree_is_the_expression_as_written(text: str, bounds: Bounds, sem: str) -> None:
    tree = from_text(text, sem)
    assert to_term(tree, bounds) is quorem.parse(text, bounds, sem)


def test_text_tree_keeps_what_the_canonical_form_removes() -> None:
    tree = from_text("x//2 - x//2 + 3*(y + 1)")
    assert count_divmod(tree) == 2
    assert to_text(tree) == "x//2 - x//2 + 3*(y + 1)"
    assert count_divmod(from_term(quorem.parse("x//2 - x//2 + 3*(y + 1)"))) == 0


def test_op_and_node_counts() -> None:
    x = Node("var", value="x")
    q = Node("floordiv", (x, Node("const", value=4)))
    shared = Node("add", (q, q))  # a shared node counts once per use
    assert count_divmod(shared) == 2
    assert node_count(shared) == 7
    assert count_divmod(from_text("truncdiv(x, 3) + truncmod(x, 3) + x%2 + x//2")) == 4
    assert count_divmod(from_text("x*3 + 1")) == 0


def test_printer_parenthesises_by_precedence() -> None:
    for text in ("a*(b//c)", "a - (b - c)", "(a + b)*c", "a//b*c", "-(a + b)", "a + b*-3"):
        tree = from_text(text)
        bounds = dict.fromkeys("abc", (-9, 9))
        assert quorem.parse(to_text(tree), bounds) is quorem.parse(text, bounds), text


def test_box_points_exhaustive_or_sampled() -> None:
    pts, exhaustive = box_points({"x": (0, 3), "y": (-1, 1)}, ["x", "y"], seed=0)
    assert exhaustive and len(pts) == 12
    big = {"x": (0, 100), "y": (0, 100)}
    pts, exhaustive = box_points(big, ["x", "y"], seed=7, samples=50)
    assert not exhaustive and len(pts) == 4 + 50
    assert {(0, 0), (0, 100), (100, 0), (100, 100)} <= {(p["x"], p["y"]) for p in pts}
    assert pts == box_points(big, ["x", "y"], seed=7, samples=50)[0]  # seeded
    pts, exhaustive = box_points({"x": (None, 5)}, ["x"], seed=0, samples=10)
    assert not exhaustive and min(p["x"] for p in pts) >= -(10**6)
    assert len(box_points({"x": (0, EXHAUSTIVE_LIMIT - 1)}, ["x"], 0)[0]) == EXHAUSTIVE_LIMIT


def test_equivalence_check_finds_counterexamples() -> None:
    bounds = {"x": (-8, 8), "y": (0, 3)}
    ref = from_text("x//4 + x % 4")
    verdicts = check_equivalent(
        ref,
        {
            "same": from_text("x % 4 + x//4"),
            "trunc": from_text("truncdiv(x, 4) + truncmod(x, 4)"),
            "zero": from_text("x//y + x//4 + x%4 - x//y"),
        },
        bounds,
        seed=0,
    )
    assert verdicts["same"] == (True, None, 17 * 4)  # y comes from a candidate
    ok, example, _ = verdicts["trunc"]
    assert not ok and example is not None and example["point"]["x"] < 0
    ok, example, _ = verdicts["zero"]  # divides by zero where the input is defined
    assert not ok and example is not None and example["got"] == "division by zero"
    # Where the input is undefined any output is fine.
    undefined = from_text("x//y")
    assert check_equivalent(undefined, {"o": from_text("x//y")}, bounds, 0)["o"][0]


def test_lower_divisions_only_where_semantics_agree() -> None:
    floor_only = frozenset({"floordiv", "floormod"})
    tree = from_text("truncdiv(a, 4) + truncmod(b, 3)", "trunc")
    annotate_nonneg(tree, {"a": (0, 10), "b": (0, 5)})
    lowered = lower_divisions(tree, floor_only)
    assert to_text(lowered) == "a//4 + b%3"
    tree = from_text("truncdiv(a, 4)", "trunc")
    annotate_nonneg(tree, {"a": (-1, 10)})
    with pytest.raises(Unsupported):
        lower_divisions(tree, floor_only)
    assert lower_divisions(tree, frozenset({"truncdiv"})) is tree


# ---------------------------------------------------------------------------------------
# The runner with quorem and fake peers (no third-party package needed).


class _Fake:
    """A peer that returns its input (``identity``), a wrong answer, or only floor ops."""

    def __init__(self, name: str, mode: str) -> None:
        self.name = name
        self.version = "0"
        self.mode = mode
        self.method = f"fake ({mode})"
        self.division_ops = (
            frozenset({"floordiv", "floormod"})
            if mode == "floor-only"
            else frozenset({"floordiv", "floormod", "truncdiv", "truncmod"})
        )

    def build(self, tree: Node, bounds: Any) -> Node:
        return tree

    def simplify(self, built: Node) -> Node:
        if self.mode == "wrong":
            return Node("add", (built, Node("const", value=1)))
        if self.mode in ("hang", "slow"):
            end = time.monotonic() + (30 if self.mode == "hang" else 0.05)
            while time.monotonic() < end:  # Python code: the deadline can interrupt it
                pass
        return built

    def release(self) -> None:
        pass

    def to_tree(self, result: Node) -> Node:
        return result

    def live_nodes(self) -> int | None:
        return None


RAW: list[dict[str, Any]] = [
    {"id": "a", "vars": {"x": [0, 31]}, "expr": "(x//8)*8 + x%8", "ideal_ops": 0},
    {"id": "b", "vars": {"x": [-50, 50]}, "expr": "(x + 7)//4", "semantics": "trunc"},
    {"id": "c", "vars": {"r": [0, 3], "v": [0, 2]}, "expr": "(r*8 + v)%7", "family": "fold"},
]


def _run_fakes() -> tuple[list[Case], list[System], dict[str, dict[str, Outcome]], dict[str, int]]:
    cases = [prepare_case(r, "tiny") for r in RAW]
    systems: list[System] = [
        load_system("quorem"),
        _Fake("same", "identity"),
        _Fake("bad", "wrong"),
    ]
    systems.append(_Fake("floor", "floor-only"))
    outcomes = warm_up(cases, systems)
    stale = measure(cases, systems, outcomes, repeats=2)
    return cases, systems, outcomes, stale


def test_runner_summary_and_comparisons() -> None:
    cases, _systems, outcomes, stale = _run_fakes()
    assert stale["quorem"] == 0  # every interned term of a call was freed after it
    summary = summarize(cases, outcomes, stale)
    q = summary["systems"]["quorem"]
    assert q["supported"] == 3 and q["ops_before"] == 4 and q["ops_after"] == 1
    assert q["reached_ideal"] == 1 and q["with_ideal_ops"] == 1
    assert q["non_equivalent"] == [] and q["median_us"] > 0 and q["p90_us"] >= q["median_us"]
    assert all(len(outcomes["quorem"][c.key].simplify_ns) == 2 for c in cases)
    same = summary["comparisons"]["same"]
    assert same["quorem_fewer_ops"] == ["tiny:a", "tiny:c"] and same["same_ops"] == 1
    assert same["quorem_more_ops"] == []
    assert same["time_ratio_peer_over_quorem"]["median"] > 0
    bad = summary["systems"]["bad"]
    assert bad["non_equivalent"] == ["tiny:a", "tiny:b", "tiny:c"]
    assert summary["comparisons"]["bad"]["cases"] == 0  # wrong outputs are not compared
    floor = summary["systems"]["floor"]
    assert list(floor["unsupported"]) == ["tiny:b"]  # trunc on a box with negatives
    assert "may be negative" in floor["unsupported"]["tiny:b"]


def test_report_markdown_and_files(tmp_path: Path) -> None:
    cases, systems, outcomes, stale = _run_fakes()
    result = RunResult(cases, systems, outcomes, summarize(cases, outcomes, stale), {})
    result.meta = {
        "date": "d",
        "commit": "c",
        "python": "3",
        "cpu_count": 2,
        "cpu": "",
        "platform": "p",
        "versions": {s.name: s.version for s in systems},
        "methods": {s.name: s.method for s in systems},
        "repeats": 2,
        "clock": "wall",
        "peer_input": "term",
        "command": "python -m benchmarks",
        "corpora": [{"path": "tiny.jsonl", "cases": 3, "sha256": "0"}],
    }
    doc = report(result)
    row = doc["cases"][0]
    assert row["id"] == "a" and row["ops_before"] == 2 and row["ideal_ops"] == 0
    res = row["results"]["quorem"]
    assert res["status"] == "ok" and res["output"] == "x" and res["ops_after"] == 0
    assert res["equivalent"] is True and res["points_checked"] == 32
    assert res["median_us"] > 0 and res["build_plus_simplify_median_us"] >= res["median_us"]
    assert doc["cases"][1]["results"]["bad"]["counterexample"]["got"] is not None
    md = markdown(doc)
    assert "| quorem | 3/3 |" in md and "Per family" in md and "`tiny:b`" in md
    assert "| fold | " in md and "Per family, quorem against each peer" in md
    written = write_results(result, tmp_path, "tiny")
    assert {p.suffix for p in written} >= {".json", ".md"}
    assert json.loads((tmp_path / "tiny.json").read_text())["systems"]["quorem"]["supported"] == 3
    first = (tmp_path / "tiny.md").read_text()
    (tmp_path / "tiny.md").unlink()
    render(tmp_path / "tiny.json")  # the page again, from the JSON alone
    assert (tmp_path / "tiny.md").read_text() == first


def test_plot_is_written_with_matplotlib(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cases, systems, outcomes, stale = _run_fakes()
    result = RunResult(cases, systems, outcomes, summarize(cases, outcomes, stale), {})
    result.meta = {"repeats": 2, "date": "d", "corpora": [{"path": "tiny.jsonl"}]}
    from benchmarks.runner import plot

    assert plot(report(result), tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_run_quorem_alone_on_a_corpus_file(tmp_path: Path) -> None:
    corpus = tmp_path / "mini.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in RAW) + "\n")
    result = run([corpus], repeats=1, system_names=["quorem"], peer_input="text")
    assert result.meta["corpora"][0]["cases"] == 3 and result.meta["peer_input"] == "text"
    assert result.summary["comparisons"] == {}
    assert result.summary["systems"]["quorem"]["ops_after"] == 1


# ---------------------------------------------------------------------------------------
# Peers, when installed.


def _peer_round_trip(name: str) -> None:
    system = load_system(name)
    assert system.division_ops == frozenset({"floordiv", "floormod", "truncdiv", "truncmod"})
    for text, bounds, sem in CASES:
        term = quorem.parse(text, bounds, sem)
        for tree in (from_term(term), from_text(text, sem)):
            back = system.to_tree(
                system.build(tree, bounds)[-1] if name == "tvm" else system.build(tree, bounds)
            )
            verdict = check_equivalent(tree, {"back": back}, bounds, seed=3)["back"]
            assert verdict[0], (name, text, to_text(back), verdict)
            assert count_divmod(back) == count_divmod(tree), (text, to_text(back))


def _peer_simplifies(name: str) -> None:
    system = load_system(name)
    bounds = {"R3": (0, 3), "R4": (0, 1), "R2": (0, 3)}
    tree = from_text("((R3*8 + R4*4 + R2)//8)*8 + (R3*8 + R4*4 + R2)%8")
    out = system.to_tree(system.simplify(system.build(tree, bounds)))
    system.release()
    assert count_divmod(out) == 0
    assert check_equivalent(tree, {"o": out}, bounds, 0)["o"][0]
    trunc = from_text("(x + 70)//8", "trunc")
    out = system.to_tree(system.simplify(system.build(trunc, {"x": (-100, 100)})))
    system.release()
    assert check_equivalent(trunc, {"o": out}, {"x": (-100, 100)}, 0)["o"][0]


def test_tinygrad_translation_round_trip() -> None:
    pytest.importorskip("tinygrad")
    _peer_round_trip("tinygrad")
    _peer_simplifies("tinygrad")


def test_tinygrad_calls_leave_no_uop_alive() -> None:
    pytest.importorskip("tinygrad")
    cases = [prepare_case(r, "tiny") for r in RAW]
    systems = [load_system("tinygrad")]
    outcomes = warm_up(cases, systems)
    assert measure(cases, systems, outcomes, repeats=2) == {"tinygrad": 0}


def test_tinygrad_floor_gets_nonnegative_trunc_as_floor_and_nothing_else() -> None:
    pytest.importorskip("tinygrad")
    system = load_system("tinygrad-floor")
    assert system.division_ops == {"floordiv", "floormod"}
    case = prepare_case(
        {"id": "t", "vars": {"x": [0, 99]}, "expr": "(x*4 + 3)//4", "semantics": "trunc"}, "tiny"
    )
    tree = _system_input(case, system)
    assert division_ops(tree) == {"floordiv"}
    out = system.to_tree(system.simplify(system.build(tree, case.bounds)))
    system.release()
    assert count_divmod(out) == 0
    negative = prepare_case(
        {"id": "n", "vars": {"x": [-9, 9]}, "expr": "x//4", "semantics": "trunc"}, "tiny"
    )
    with pytest.raises(Unsupported):
        _system_input(negative, system)


def test_tvm_translation_round_trip() -> None:
    pytest.importorskip("tvm")
    _peer_round_trip("tvm")
    _peer_simplifies("tvm")


def test_vector_evaluation_matches_point_evaluation() -> None:
    x, y = Node("var", value="x"), Node("var", value="y")

    def c(v: int) -> Node:
        return Node("const", value=v)

    trees = [
        # select takes the value of the branch its condition picks only
        Node("select", (Node("lt", (x, c(0))), Node("floordiv", (y, x)), Node("neg", (x,)))),
        Node("and", (Node("not", (Node("eq", (x, y)),)), Node("or", (x, Node("ge", (y, c(2))))))),
        Node("cast", (Node("truncmod", (Node("mul", (x, y, c(-3))), Node("sub", (y, c(1))))),)),
        Node("max", (Node("truncdiv", (x, y)), Node("min", (x, y, c(1))), Node("gt", (x, y)))),
        Node("xor", (x, c(-1))),  # bitwise: the exact path
        Node("mul", (x, c(2**70))),  # beyond int64: the exact path
        Node("floormod", (c(7), Node("le", (x, y)))),  # undefined where x > y
    ]
    bounds = {"x": (-6, 6), "y": (-3, 5)}
    points = _points(bounds, ["x", "y"])
    assert len(points) >= 32
    for tree in trees:
        f = compile_eval(tree)
        want = [_eval_or_none(f, p) for p in points]
        assert evaluate_points(tree, points) == want, to_text(tree)


def test_a_hanging_call_times_out_and_a_slow_one_is_timed_once() -> None:
    cases = [prepare_case(r, "tiny") for r in RAW[:2]]
    systems = [_Fake("hang", "hang"), _Fake("slow", "slow")]
    start = time.monotonic()
    outcomes = warm_up(cases, systems, timeout=0.3, slow=0.01)
    assert time.monotonic() - start < 10
    assert {o.status for o in outcomes["hang"].values()} == {"timeout"}
    slow = outcomes["slow"]["tiny:a"]
    assert slow.status == "ok" and slow.timed_once and len(slow.simplify_ns) == 1
    measure(cases, systems, outcomes, repeats=2)
    assert len(slow.simplify_ns) == 1  # not repeated in the rounds
    summary = summarize(cases, outcomes)
    assert list(summary["systems"]["hang"]["timeouts"]) == ["tiny:a", "tiny:b"]
    assert summary["systems"]["slow"]["timed_once"] == ["tiny:a", "tiny:b"]
