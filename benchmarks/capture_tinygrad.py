"""Capture the index math tinygrad builds for real kernels, before it simplifies it.

``python -m benchmarks.capture_tinygrad --out benchmarks/data/tinygrad_captured.jsonl``

Runs a handful of small workloads (conv2d with padding and stride, max-pool, an odd-shaped
matmul, a reshape/permute/pad chain, cumsum over an ``arange``, an embedding gather, ...)
through tinygrad's kernel generation and records the index and validity expressions of
every ``INDEX`` UOp of each kernel as they enter two of ``full_rewrite_to_sink``'s passes:

- ``initial symbolic``: the first ``sym`` rewrite, right after the movement ops were
  turned into index arithmetic (``pm_mops``) and ranges split; nothing has simplified
  the index math yet.
- ``postopt symbolic``: after the kernel optimizer (upcast, unroll, local splits of the
  ranges), whose new range arithmetic has not been simplified yet.

The hook wraps ``graph_rewrite`` as ``tinygrad.codegen`` sees it; it only reads the sink
and calls the original. tinygrad's CPU backend needs clang; without it the workloads run
on its PYTHON device (the same codegen, a Python emulator runs the kernels).

Each index (``weakint``) or validity (``bool``) UOp tree is read into the benchmark's
neutral tree (:mod:`benchmarks.peers.expr`, the op table of the tinygrad peer) and printed
with :func:`~benchmarks.peers.expr.to_text`. ``FLOORDIV``/``FLOORMOD`` print as ``//``/``%``
(floor, the corpus' semantics); ``CDIV``/``CMOD`` (truncating) as ``truncdiv``/``truncmod``
calls; the ``source`` field says which the expression used. Variables: ``RANGE`` ``[0,
end-1]`` named ``r<axis>`` (``r<axis>_<sub>`` for split ranges), ``SPECIAL`` by its name,
a symbolic-shape variable by its name and bounds (a range up to such a variable gets the
bounds tinygrad gives it, ``[0, max-1]``). Trees reading memory (``LOAD``, a gather's
index), vectors, or ops quorem's text has no form for are skipped and counted.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

os.environ.setdefault("DEV", "CPU" if shutil.which("clang") else "PYTHON")
os.environ["CACHELEVEL"] = "0"  # no disk cache: every kernel is generated here, none read back
os.environ["PARALLEL"] = "0"  # compile in this process (a worker pool would bypass the hook)

from benchmarks.peers.expr import Node, Unsupported, to_text

_OPAQUE = frozenset({"LOAD", "STACK", "GEP", "INDEX", "PARAM", "BUFFER", "AFTER", "BIND"})
PASSES = ("initial symbolic", "postopt symbolic")


class _Thunk(Protocol):
    """Builds a workload's lazy tensor (tinygrad's values are Any to the type checker).

    A protocol, not a ``Callable``: the workloads are lambdas that bind loop variables as
    defaults, and a ``Callable[[], Any]`` context does not type such a lambda.
    """

    def __call__(self) -> Any: ...


def _workloads() -> list[tuple[str, Callable[[], Any]]]:
    """(label, thunk) pairs; each thunk builds a lazy tensor, realized by the caller."""
    from tinygrad import Tensor, Variable, nn  # noqa: PLC0415

    Tensor.manual_seed(0)
    out: list[tuple[str, Callable[[], Any]]] = []

    def add(label: str, make: _Thunk) -> None:
        out.append((label, make))

    convs = [  # (cin, h, w, cout, kh, kw, stride, padding, dilation)
        (3, 11, 9, 4, 3, 3, 2, 1, 1),
        (2, 10, 10, 3, 3, 2, 1, (2, 1), 2),
        (1, 7, 13, 2, 5, 5, 3, 2, 1),
        (4, 6, 6, 4, 1, 1, 2, 0, 1),
        (2, 9, 8, 3, 3, 3, (2, 1), (1, 0), 1),
    ]
    for ci, h, w, co, kh, kw, st, pad, dil in convs:
        label = (
            f"conv2d 1x{ci}x{h}x{w} * {co}x{ci}x{kh}x{kw} stride {st} padding {pad} dilation {dil}"
        )
        add(
            label,
            lambda ci=ci, h=h, w=w, co=co, kh=kh, kw=kw, st=st, pad=pad, dil=dil: Tensor.rand(
                1, ci, h, w
            ).conv2d(Tensor.rand(co, ci, kh, kw), stride=st, padding=pad, dilation=dil),
        )
    for h, w, st in ((5, 6, 2), (4, 7, 3)):
        add(
            f"conv_transpose2d 1x2x{h}x{w} * 2x3x3x3 stride {st} padding 1",
            lambda h=h, w=w, st=st: Tensor.rand(1, 2, h, w).conv_transpose2d(
                Tensor.rand(2, 3, 3, 3), stride=st, padding=1
            ),
        )
    for h, w, k, st in ((9, 7, 3, 2), (10, 10, 2, 2), (13, 11, 3, 3)):
        add(
            f"max_pool2d 1x2x{h}x{w} kernel {k} stride {st}",
            lambda h=h, w=w, k=k, st=st: Tensor.rand(1, 2, h, w).max_pool2d(
                kernel_size=k, stride=st
            ),
        )
    add(
        "avg_pool2d 1x2x10x10 kernel (3,2) stride (2,3)",
        lambda: Tensor.rand(1, 2, 10, 10).avg_pool2d(kernel_size=(3, 2), stride=(2, 3)),
    )
    for m, k, n in ((7, 13, 5), (3, 17, 11), (1, 33, 9), (10, 6, 14)):
        add(
            f"matmul {m}x{k} @ {k}x{n}", lambda m=m, k=k, n=n: Tensor.rand(m, k) @ Tensor.rand(k, n)
        )
    add(
        "reshape/permute/pad/shrink/flip chain of a 6x10",
        lambda: (
            Tensor.rand(6, 10)
            .reshape(3, 4, 5)
            .permute(2, 0, 1)
            .pad(((1, 0), (0, 2), (1, 1)))
            .reshape(6, 5, 6)[:, 1:4, ::2]
            .flip(0)
            + 1
        ),
    )
    add(
        "permute/reshape/transpose chain of a 4x6x5",
        lambda: Tensor.rand(4, 6, 5).permute(1, 2, 0).reshape(10, 12).T.reshape(3, 4, 10) * 2,
    )
    add(
        "pad/reshape/pool-like strided slice of a 7x9",
        lambda: Tensor.rand(7, 9).pad(((2, 1), (0, 3))).reshape(5, 2, 6, 2)[:, 0, :, 1] + 1,
    )
    for n in (37, 100):
        add(f"cumsum of arange({n})", lambda n=n: Tensor.arange(n).reshape(n, 1).cumsum(0))
    add("cumsum along axis 1 of a 3x20", lambda: Tensor.rand(3, 20).cumsum(1))
    add(
        "Embedding(11, 6) gather of a 2x3 index tensor",
        lambda: nn.Embedding(11, 6)(Tensor([[1, 4, 9], [3, 10, 0]])),
    )
    add(
        "cat 3x5 and 4x5, repeat (2,3)",
        lambda: Tensor.rand(3, 5).cat(Tensor.rand(4, 5)).repeat(2, 3),
    )
    for size in ((9, 4), (3, 10)):
        add(
            f"interpolate nearest 5x7 to {size[0]}x{size[1]}",
            lambda size=size: Tensor.rand(1, 1, 5, 7).interpolate(size, mode="nearest"),
        )
    for shape, perm, new_shape in (
        ((6, 10), (1, 0), (4, 15)),
        ((4, 6, 5), (2, 0, 1), (12, 10)),
        ((3, 5, 7), (1, 2, 0), (7, 15)),
        ((8, 9), (1, 0), (6, 12)),
        ((2, 3, 4, 5), (3, 1, 0, 2), (20, 6)),
    ):
        add(
            f"permute {perm} of a {'x'.join(map(str, shape))} then reshape to "
            f"{'x'.join(map(str, new_shape))}",
            lambda shape=shape, perm=perm, new_shape=new_shape: (
                Tensor.rand(*shape).permute(*perm).reshape(*new_shape) + 1
            ),
        )
    for r in (2, 3):
        add(
            f"pixel shuffle (depth to space) factor {r} of a 1x{2 * r * r}x3x5",
            lambda r=r: (
                Tensor.rand(1, 2 * r * r, 3, 5)
                .reshape(1, 2, r, r, 3, 5)
                .permute(0, 1, 4, 2, 5, 3)
                .reshape(1, 2, 3 * r, 5 * r)
                * 2
            ),
        )
    add(
        "flatten of a padded, transposed 5x7 then reshape to 6x9",
        lambda: Tensor.rand(5, 7).T.pad(((1, 1), (2, 0))).flatten()[:54].reshape(6, 9) + 1,
    )
    add(
        "unfold-like sliding windows (size 4, step 3) of a length-20 signal",
        lambda: (
            Tensor.rand(20)
            .pad(((0, 1),))
            .reshape(7, 3)[:6]
            .cat(Tensor.rand(20)[3:].pad(((0, 1),)).reshape(6, 3)[:, :1], dim=1)
            * 2
        ),
    )
    shape_n = Variable("n", 2, 9).bind(5)
    add(
        "symbolic shape: an n x 6 tensor (n in [2, 9], bound to 5) transposed, times 2",
        lambda: Tensor.ones(shape_n, 6).contiguous().permute(1, 0) * 2,
    )
    add(
        "symbolic shape: sum over the rows of an n x 7 tensor (n in [2, 9], bound to 5)",
        lambda: Tensor.ones(shape_n, 7).contiguous().sum(0),
    )
    add("softmax 5x17", lambda: Tensor.rand(5, 17).softmax(-1))
    add("sum over axis 0 of a 13x7x3", lambda: Tensor.rand(13, 7, 3).sum(0))
    add("triu of a 6x9", lambda: Tensor.rand(6, 9).triu(1))
    return out


class Capture:
    """The INDEX UOps of each kernel as they enter the passes in :data:`PASSES`."""

    def __init__(self) -> None:
        self.workload = ""
        self.found: list[tuple[str, str, Any, str]] = []  # workload, pass, uop, role
        self.kernels: set[tuple[str, int]] = set()

    def install(self) -> None:
        import tinygrad.codegen as cg  # noqa: PLC0415
        from tinygrad.uop.ops import Ops  # noqa: PLC0415

        original = cg.graph_rewrite

        def hooked(sink: Any, pm: Any, *args: Any, **kwargs: Any) -> Any:
            name = kwargs.get("name")
            if name in PASSES:
                if name == PASSES[0]:
                    self.kernels.add((self.workload, id(sink)))
                for u in sink.toposort():
                    if u.op is Ops.INDEX:
                        for s in u.src[1:]:
                            idx, valid = s.get_idx(), s.get_valid()
                            self.found.append((self.workload, name, idx, "index"))
                            if not (valid.op is Ops.CONST and valid.arg is True):
                                self.found.append((self.workload, name, valid, "valid"))
            return original(sink, pm, *args, **kwargs)

        cg.graph_rewrite = hooked


class _Reader:
    """Reads one UOp tree; collects its variables' bounds and UOps and its division ops."""

    def __init__(self) -> None:
        from tinygrad.dtype import dtypes  # noqa: PLC0415
        from tinygrad.uop.ops import Ops  # noqa: PLC0415

        from benchmarks.peers.tinygrad_peer import _READ  # noqa: PLC0415

        self.dtypes, self.ops, self.read_table = dtypes, Ops, _READ
        self.bounds: dict[str, tuple[int, int]] = {}
        self.leaves: dict[str, Any] = {}
        self.divisions: set[str] = set()

    def _variable(self, name: str, lo: int, hi: int, u: Any) -> Node:
        self.bounds[name] = (lo, hi)
        self.leaves[name] = u
        return Node("var", value=name)

    def leaf(self, u: Any) -> Node | None:
        ops, dtypes = self.ops, self.dtypes
        if u.op is ops.CONST:
            if u.dtype == dtypes.bool:
                return Node("const", value=int(bool(u.arg)))
            if not isinstance(u.arg, int):
                raise Unsupported(f"float arithmetic in the index (constant {u.arg!r})")
            return Node("const", value=int(u.arg))
        if u.op in (ops.RANGE, ops.SPECIAL):
            # [0, end-1]; a symbolic end (a shape variable) gives the UOp's own bounds,
            # [0, max(end)-1], and the text loses that the range stays below the variable.
            if u.op is ops.SPECIAL:
                name = str(u.arg)
            else:
                name = "r" + "_".join(str(a) for a in u.arg if isinstance(a, int))
            return self._variable(name, int(u.vmin), int(u.vmax), u)
        vmm = getattr(u.arg, "vmin_vmax", None)
        if u.op in (ops.PARAM, ops.BUFFER) and vmm is not None and u.arg.name:
            return self._variable(u.arg.name, int(vmm[0]), int(vmm[1]), u)
        return None

    def inner(self, u: Any, src: list[Node]) -> Node:
        ops, dtypes = self.ops, self.dtypes
        if u.op is ops.CAST:
            for t in (u.dtype, u.src[0].dtype):
                if not (t == dtypes.weakint or dtypes.is_int(t)):
                    raise Unsupported(f"cast between {u.src[0].dtype} and {u.dtype}")
            return src[0]
        if u.dtype == dtypes.bool and u.op in (ops.AND, ops.OR):
            return Node("and" if u.op is ops.AND else "or", tuple(src))
        if u.op is ops.CMPNE and u.src[0].dtype == dtypes.bool:
            c = u.src[1]
            if c.op is ops.CONST and c.arg is True:
                return Node("not", (src[0],))
            if c.op is ops.CONST and c.arg is False:
                return src[0]
            raise Unsupported("!= of two booleans")
        name = self.read_table.get(u.op)
        if name is None or name in ("select", "cast", "xor", "bitand", "bitor", "shl", "shr"):
            raise Unsupported(f"op {u.op}")
        if name in ("floordiv", "floormod", "truncdiv", "truncmod"):
            self.divisions.add(u.op.name)
        return Node(name, tuple(src))

    def read(self, root: Any) -> Node:
        nodes: dict[Any, Node] = {}
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            u, done = stack.pop()
            if u in nodes:
                continue
            lf = self.leaf(u)
            if lf is not None:
                nodes[u] = lf
            elif done:
                nodes[u] = self.inner(u, [nodes[s] for s in u.src])
            else:
                if u.op.name in _OPAQUE:
                    raise Unsupported(f"op {u.op}")
                stack.append((u, True))
                stack.extend((s, False) for s in u.src if s not in nodes)
        return nodes[root]


def translate(root: Any) -> tuple[Node, dict[str, tuple[int, int]], set[str], dict[str, Any]]:
    """The neutral tree of a UOp, its variables' bounds and UOps, the division ops used.

    Raises:
        Unsupported: the tree reads memory, is a vector, or has an op quorem's text lacks.

    """
    reader = _Reader()
    tree = reader.read(root)
    return tree, reader.bounds, reader.divisions, reader.leaves


def check_translation(
    root: Any, tree: Node, bounds: dict[str, tuple[int, int]], leaves: dict[str, Any], n: int = 8
) -> bool:
    """The UOp, its variables substituted and folded by tinygrad, equals the tree's value."""
    import random  # noqa: PLC0415

    from tinygrad.uop.ops import Ops  # noqa: PLC0415

    from benchmarks.peers.expr import evaluate_points  # noqa: PLC0415

    rng = random.Random(to_text(tree))
    points = [{k: rng.randint(lo, hi) for k, (lo, hi) in bounds.items()} for _ in range(n)]
    for point, value in zip(points, evaluate_points(tree, points), strict=True):
        sub = {leaves[k]: leaves[k].const_like(v) for k, v in point.items()}
        folded = root.substitute(sub).simplify()
        if folded.op is not Ops.CONST or value is None or int(folded.arg) != int(value):
            return False
    return True


def _division_note(divisions: set[str]) -> str:
    if not divisions:
        return "no divisions"
    kinds = []
    if divisions & {"FLOORDIV", "FLOORMOD"}:
        kinds.append("FLOORDIV/FLOORMOD as // and % (floor)")
    if divisions & {"CDIV", "CMOD"}:
        kinds.append("CDIV/CMOD as truncdiv/truncmod (truncating)")
    return "divisions: " + ", ".join(kinds)


def capture(log: Callable[[str], None] = print) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    cap = Capture()
    cap.install()
    for label, make in _workloads():
        cap.workload = label
        make().realize()
    version = importlib.metadata.version("tinygrad")
    cases: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    skipped: Counter[str] = Counter()
    translated = duplicates = 0
    for workload, pass_name, uop, role in cap.found:
        try:
            tree, bounds, divisions, leaves = translate(uop)
        except Unsupported as exc:
            skipped[str(exc)] += 1
            continue
        translated += 1
        if tree.op in ("const", "var"):
            skipped["a constant or a lone variable"] += 1
            continue
        text = to_text(tree)
        key = (text, json.dumps(sorted(bounds.items())))
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        if not check_translation(uop, tree, bounds, leaves):
            skipped["the text differs from the UOp on a sampled point"] += 1
            continue
        cases.append(
            {
                "id": f"tinygrad-{len(cases):04d}",
                "family": "tinygrad_captured",
                "semantics": "floor",
                "vars": {k: list(v) for k, v in sorted(bounds.items())},
                "expr": text,
                "source": (
                    f"tinygrad {version} ({os.environ['DEV']} device), {workload}: {role} of "
                    f"an INDEX entering '{pass_name}'; {_division_note(divisions)}"
                ),
            }
        )
    stats = {
        "tinygrad": version,
        "device": os.environ["DEV"],
        "kernels": len(cap.kernels),
        "captured": len(cap.found),
        "translated": translated,
        "duplicates": duplicates,
        "skipped": dict(skipped),
        "distinct": len(cases),
    }
    log(json.dumps(stats, indent=1))
    return cases, stats


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    args = parser.parse_args(argv)
    cases, _ = capture(lambda s: print(s, file=sys.stderr))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as f:
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    print(f"{len(cases)} expressions -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
