"""Real tinygrad kernels generated with and without the quorem hook, side by side.

``python -m benchmarks.tinygrad_kernels [--out FILE] [--runs N] [--only NAME ...]``

Each workload (a strided padded convolution, a transposed reshape chain, a pooling, a
matmul over a permuted layout, a small ResNet block) is run on tinygrad's CPU device
(C source compiled by clang) twice, each time in a fresh process with tinygrad's disk
cache off (``CACHELEVEL=0``), so every kernel is generated and compiled anew: once as
tinygrad does it, once with :func:`quorem.adapters.tinygrad.install`. Inputs are the
same numpy arrays (fixed seed); the two outputs are compared exactly (the float
operations are the same, in the same order: only integer index arithmetic may differ).

Measured per workload and mode:

- ``divmods``: integer ``FLOORDIV``/``FLOORMOD``/``CDIV``/``CMOD`` UOps in the kernels'
  graphs as they enter tinygrad's "early decompositions" pass, after all of its symbolic
  passes (and quorem's): the divisions and remainders the kernels compute. tinygrad then
  writes them as shifts, masks and multiply-shift sequences, so the C source spells few
  of them ``/`` or ``%``; the source counts are reported too.
- ``final_ops``: integer ``CDIV`` (C ``/``), ``CMOD`` (``%``), ``SHR`` (``>>``) and
  ``AND`` (``&``) UOps in the kernels' final linearized programs, which the C source
  spells one operator each: what the divisions became. (Counting the operators in the
  C text would also count float divisions.) The sources themselves are captured at the
  compiler and written to ``$QUOREM_BENCH_SOURCES`` if that is set.
- ``codegen_s``: time spent in ``to_program`` (kernel lowering, quorem's pass, rendering
  and clang), summed over the workload's kernels; quorem's one-time loading of its
  rules (on its first use in a process) is timed apart, as ``quorem_load_s``.
- ``run_s``: median wall time of a replayed ``TinyJit`` call (kernels only, after two
  capture calls), over ``--runs`` calls.

Compilation runs in the measuring process (``PARALLEL=0``) so the counters see each
kernel. Needs clang (``clang`` or ``clang-14`` on the ``PATH``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

WORKLOADS = (
    "conv_strided_pad",
    "reshape_chain",
    "pool",
    "matmul_permuted",
    "resnet_block",
    "pixel_shuffle",
    "odd_permute_chain",
)
MODES = ("off", "on")
# The final program's integer ops a division or remainder becomes (columns of the table).
_FINAL_OPS = ("CDIV", "CMOD", "SHR", "AND")


def _inputs(name: str) -> list[Any]:
    """The workload's input arrays (float32, fixed seed)."""
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(19)

    def arr(*shape: int) -> Any:
        return rng.standard_normal(shape).astype(np.float32)

    shapes: dict[str, list[tuple[int, ...]]] = {
        "conv_strided_pad": [(2, 12, 35, 35), (24, 12, 3, 3)],
        "reshape_chain": [(30, 10, 36)],
        "pool": [(2, 12, 37, 37)],
        "matmul_permuted": [(12, 5, 48), (36, 48)],
        "resnet_block": [(2, 12, 18, 18), (12, 12, 3, 3), (12, 12, 3, 3), (4, 12)],
        "pixel_shuffle": [(2, 36, 10, 10)],
        "odd_permute_chain": [(3, 5, 7, 11)],
    }
    return [arr(*s) for s in shapes[name]]


def _workload(name: str) -> Callable[..., Any]:
    """The workload as a function of its input tensors, returning one realized tensor."""

    def conv_strided_pad(x: Any, w: Any) -> Any:
        return x.conv2d(w, stride=2, padding=1).realize()

    def reshape_chain(x: Any) -> Any:
        # A split, a permutation and two merges of odd extents: index math with // and %.
        y = x.reshape(15, 2, 10, 36).permute(3, 1, 0, 2).reshape(36, 300)
        return (y.transpose().reshape(25, 12, 36) + 1).realize()

    def pool(x: Any) -> Any:
        return (x.max_pool2d(kernel_size=3, stride=2) + x.avg_pool2d(3, 2)).realize()

    def matmul_permuted(a: Any, b: Any) -> Any:
        return (a.permute(1, 0, 2).reshape(60, 48) @ b.transpose()).realize()

    def resnet_block(x: Any, w1: Any, w2: Any, bn: Any) -> Any:
        # conv-bn-relu-conv + skip, batch norm in inference form (fixed statistics).
        mean, var, gamma, beta = (bn[i].reshape(1, -1, 1, 1) for i in range(4))
        h = x.conv2d(w1, padding=1)
        h = ((h - mean) * (var * var + 1e-5).rsqrt() * gamma + beta).relu()
        return (h.conv2d(w2, padding=1) + x).relu().realize()

    def pixel_shuffle(x: Any) -> Any:
        # depth-to-space by 3 (a sub-pixel convolution's output stage).
        y = x.reshape(2, 4, 3, 3, 10, 10).permute(0, 1, 4, 2, 5, 3).reshape(2, 4, 30, 30)
        return (y + 1).realize()

    def odd_permute_chain(x: Any) -> Any:
        # A permutation merged into odd extents, transposed and split again.
        y = x.permute(2, 0, 3, 1).reshape(21, 55).transpose().reshape(15, 77)
        return (y * 2).realize()

    table: dict[str, Callable[..., Any]] = {
        "conv_strided_pad": conv_strided_pad,
        "reshape_chain": reshape_chain,
        "pool": pool,
        "matmul_permuted": matmul_permuted,
        "resnet_block": resnet_block,
        "pixel_shuffle": pixel_shuffle,
        "odd_permute_chain": odd_permute_chain,
    }
    return table[name]


def count_final_ops(linear: Sequence[Any]) -> dict[str, int]:
    """Integer ``CDIV``, ``CMOD``, ``SHR``, ``AND`` UOps in a kernel's linearized program."""
    from tinygrad.dtype import dtypes  # noqa: PLC0415

    counts = dict.fromkeys(_FINAL_OPS, 0)
    for u in linear:
        if u.op.name in counts and dtypes.is_int(u.dtype):
            counts[u.op.name] += 1
    return counts


def _observe() -> dict[str, Any]:
    """Record what each kernel generated from now on becomes, while ``rec["on"]`` is true.

    Wraps tinygrad's pass runner, ``to_program`` and clang's compile call; done before
    quorem's adapter is imported, so that the hook wraps these observers in turn.
    """
    from tinygrad import codegen  # noqa: PLC0415
    from tinygrad.engine import realize  # noqa: PLC0415
    from tinygrad.runtime.support.compiler_cpu import ClangCompiler  # noqa: PLC0415
    from tinygrad.uop.ops import Ops  # noqa: PLC0415

    divmod_ops = {Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV, Ops.CMOD}
    rec: dict[str, Any] = {"on": False, "divmods": [], "sources": [], "codegen": [], "final": []}
    graph_rewrite, to_program = codegen.graph_rewrite, realize.to_program
    compile_cached = ClangCompiler.compile_cached

    def observe_pass(*args: Any, **kwargs: Any) -> Any:
        if rec["on"] and kwargs.get("name") == "early decompositions":
            rec["divmods"].append(sum(u.op in divmod_ops for u in args[0].toposort()))
        return graph_rewrite(*args, **kwargs)

    def timed_to_program(*args: Any) -> Any:
        start = time.perf_counter()
        out = to_program(*args)
        if rec["on"]:
            rec["codegen"].append(time.perf_counter() - start)
            linear = next(s for s in out.src if s.op is Ops.LINEAR)
            rec["final"].append(count_final_ops(linear.src))
        return out

    def capture(self: Any, src: str) -> bytes:
        if rec["on"]:
            rec["sources"].append(src)
        binary: bytes = compile_cached(self, src)  # tinygrad's compilers return the binary
        return binary

    codegen.graph_rewrite = observe_pass
    realize.to_program = timed_to_program
    ClangCompiler.compile_cached = capture
    return rec


def _child(name: str, mode: str, result: Path) -> None:
    """Run one workload in this (fresh) process and write what was measured to ``result``."""
    import numpy as np  # noqa: PLC0415

    rec = _observe()
    from tinygrad import Device, Tensor, TinyJit  # noqa: PLC0415

    import quorem.adapters.tinygrad as adapter  # noqa: PLC0415

    warm_s = 0.0
    if mode == "on":
        adapter.install()
        # quorem loads and compiles its rules on first use: timed apart from the kernels.
        start = time.perf_counter()
        adapter.simplify((Tensor.empty(1).uop.variable("w", 0, 9) * 4 + 1) // 4)
        warm_s = time.perf_counter() - start
    tensors = [Tensor(a).realize() for a in _inputs(name)]
    device = Device[Device.DEFAULT]
    device.synchronize()
    fn = _workload(name)
    rec["on"] = True
    start = time.perf_counter()
    out = fn(*tensors)
    device.synchronize()
    first_s = time.perf_counter() - start
    rec["on"] = False
    np.save(result.with_suffix(".npy"), out.numpy())
    # Run time: a TinyJit replays the captured kernels from its third call on.
    jit = TinyJit(fn)
    times = []
    for i in range(2 + int(os.environ.get("QUOREM_BENCH_RUNS", "5"))):
        start = time.perf_counter()
        jit(*tensors)
        device.synchronize()
        if i >= 2:
            times.append(time.perf_counter() - start)
    summary = {
        "workload": name,
        "mode": mode,
        "device": Device.DEFAULT,
        "kernels": len(rec["sources"]),
        "divmods": sum(rec["divmods"]),
        "divmods_per_kernel": rec["divmods"],
        "final_ops": {k: sum(c[k] for c in rec["final"]) for k in _FINAL_OPS},
        "codegen_s": sum(rec["codegen"]),
        "quorem_load_s": warm_s,
        "first_call_s": first_s,
        "run_s": statistics.median(times),
        "hook": vars(adapter.hook_stats()),
    }
    result.write_text(json.dumps(summary))
    if os.environ.get("QUOREM_BENCH_SOURCES"):
        folder = Path(os.environ["QUOREM_BENCH_SOURCES"])
        folder.mkdir(parents=True, exist_ok=True)
        for i, src in enumerate(rec["sources"]):
            (folder / f"{name}-{mode}-{i}.c").write_text(src)


def _environment() -> dict[str, str]:
    """The child's environment: the CPU device with clang, no disk cache, no workers."""
    env = dict(os.environ)
    env.pop("QUOREM_TINYGRAD", None)  # the mode decides, not the caller's environment
    if not shutil.which(env.get("CC", "clang")):
        found = next((c for c in ("clang", "clang-14", "clang-15") if shutil.which(c)), None)
        if found is None:
            raise SystemExit("tinygrad's CPU device needs clang (clang or clang-NN on PATH)")
        env["CC"] = found
    env.update({"DEV": "CPU", "CACHELEVEL": "0", "PARALLEL": "0"})
    return env


def run(names: Sequence[str], runs: int) -> list[dict[str, Any]]:
    """Each workload off and on, each in a fresh process; outputs compared exactly."""
    import numpy as np  # noqa: PLC0415

    env = _environment()
    env["QUOREM_BENCH_RUNS"] = str(runs)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            got: dict[str, dict[str, Any]] = {}
            for mode in MODES:
                result = Path(tmp) / f"{name}-{mode}.json"
                command = [sys.executable, "-m", "benchmarks.tinygrad_kernels"]
                command += ["--child", name, mode, str(result)]
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    raise SystemExit(f"{name} ({mode}) failed:\n{done.stderr[-4000:]}")
                got[mode] = json.loads(result.read_text())
                got[mode]["output"] = np.load(result.with_suffix(".npy"))
            a, b = got["off"].pop("output"), got["on"].pop("output")
            same = bool(a.shape == b.shape and np.array_equal(a, b))
            rows.append({"workload": name, "identical": same, "off": got["off"], "on": got["on"]})
            print(_row(rows[-1]), flush=True)
    return rows


_HEADER = (
    f"{'workload':18} {'kernels':>7} {'divmods off→on':>15} {'/ % >> & off':>13}"
    f" {'/ % >> & on':>12} {'codegen s off/on':>17} {'run ms off/on':>14}  identical"
)


def _ops(r: dict[str, Any]) -> str:
    return " ".join(str(r["final_ops"][k]) for k in _FINAL_OPS)


def _row(row: dict[str, Any]) -> str:
    off, on = row["off"], row["on"]
    return (
        f"{row['workload']:18} {off['kernels']:>7} {off['divmods']:>7} → {on['divmods']:<5}"
        f" {_ops(off):>13} {_ops(on):>12}"
        f" {off['codegen_s']:>8.2f}/{on['codegen_s']:<8.2f}"
        f" {off['run_s'] * 1e3:>6.2f}/{on['run_s'] * 1e3:<7.2f} {row['identical']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print its table, write ``--out`` JSON; 1 if an output differs."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tinygrad_kernels")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--runs", type=int, default=7, help="timed JIT calls per workload")
    parser.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--child", nargs=3, metavar=("NAME", "MODE", "RESULT"), help="internal")
    args = parser.parse_args(argv)
    if args.child:
        name, mode, result = args.child
        _child(name, mode, Path(result))
        return 0
    print(_HEADER, flush=True)
    rows = run(args.only, args.runs)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
