"""``quorem hlo``: indexing maps of an HLO instruction or fusion, read from HLO text."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from ..errors import QuoremError
from ..hlo.indexing import (
    OperandMaps,
    Unknown,
    format_indexing,
    fused_input_to_output,
    fused_output_to_input,
    input_to_output,
    output_to_input,
)
from ..hlo.parse import Computation, Module, parse_hlo
from ..indexing.mapsyntax import print_map
from .args import non_negative

__all__ = ["HloUsageError", "add_parser", "run"]

_EPILOG = """\
The analysed instruction is the ROOT of the ENTRY computation (or of the last
computation, or of --computation NAME); a fusion (or call) is analysed through the
computation it calls. An unknown map prints as "unknown indexing: REASON", the reason
naming the instruction that has no map and why. --fused reads the computation itself
as a fusion body instead: its root is mapped to its parameters (operand id = parameter
number), composing every instruction on the way.

--all analyses every computation of the module in one run, each read as a fusion body
(--fusions: only those a fusion calls); one record per computation, and an error in
one computation is reported in its record while the others go on. --jsonl writes
each record as one JSON line:
  {"computation": NAME, "kind": KIND, "line": N, "known": BOOL,
   "outputs": [{"output": k, "operands": [{"operand": i, "maps": [...],
                "runtime_variables": [...]}, ...]}, ...]}
  or "error": "FILE:LINE:COL: reason" instead of "outputs"; KIND is entry, fusion, the
  opcode of the first instruction calling it (reduce, call, ...) or unused; "maps" and
  "runtime_variables" are as in --json's output below.

examples:
  quorem hlo model.hlo                          # output-to-input, per operand
  quorem hlo model.hlo --input-to-output --operand 0
  quorem hlo model.hlo --physical --json        # indices in memory (layout) order
  quorem hlo model.hlo --all --jsonl            # every computation, one JSON line each

JSON output:
  {"direction": "output_to_input", "operands": [{"operand": i, "maps": [MAP, ...]}, ...]}
  {"direction": "input_to_output", "operand": I, "maps": [MAP, ...]}
  where MAP is XLA's textual form, or null for unknown indexing; beside "maps",
  "runtime_variables" lists per map [{"name": "rt0", "source": SOURCE}, ...] (null for
  unknown indexing), SOURCE naming the instruction that holds the value and the op
  operand it feeds, e.g. "i1 (operand 1 of ds)"; "reasons" gives per map why it is
  unknown (null for a known map), e.g. "cc (custom-call): its target (foo) is opaque
  code: what it reads is not in the HLO".

Exit status: 0 success; 2 usage or input error.
"""


class HloUsageError(QuoremError):
    """A bad combination of ``quorem hlo`` options, or an unreadable file."""


def add_parser(subs: Any) -> None:
    """Register ``quorem hlo`` on a subparsers object (its handler is :func:`run`)."""
    p = subs.add_parser(
        "hlo",
        help="indexing maps of an HLO instruction or fusion",
        description="Print XLA-style indexing maps of the root instruction of an HLO "
        "computation: from an output index to the operand indices it reads, or back.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE.hlo", help="HLO text ('-' for standard input)")
    p.add_argument(
        "--input-to-output",
        action="store_true",
        help="map an index of operand --operand to the output instead",
    )
    p.add_argument("--operand", type=non_negative, metavar="I", help="operand (or parameter) I")
    p.add_argument(
        "--output",
        type=non_negative,
        default=0,
        metavar="K",
        help="output K of a tuple-shaped root (default 0)",
    )
    p.add_argument(
        "--physical",
        action="store_true",
        help="index in the shapes' layout order (tiled layouts: the tiled, padded shape)",
    )
    p.add_argument("--fused", action="store_true", help="read the computation as a fusion body")
    p.add_argument("--computation", metavar="NAME", help="analyse computation NAME")
    p.add_argument("--json", action="store_true", help="write one JSON object")
    p.add_argument("--all", action="store_true", help="analyse every computation of the module")
    p.add_argument(
        "--fusions", action="store_true", help="with --all: only the computations fusions call"
    )
    p.add_argument(
        "--jsonl", action="store_true", help="with --all: one JSON object per computation"
    )
    p.add_argument(
        "--keep-unused",
        action="store_true",
        help="keep range and runtime variables that no result uses",
    )
    p.add_argument(
        "--no-simplify", action="store_true", help="print the maps as built and composed"
    )
    p.set_defaults(handler=run)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise HloUsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise HloUsageError(f"{path} is not UTF-8 text") from None


def _options(args: argparse.Namespace) -> dict[str, bool]:
    return {
        "physical": args.physical,
        "simplify": not args.no_simplify,
        "remove_unused": not args.keep_unused,
    }


def _out_to_in(args: argparse.Namespace, module: Module, comp: Computation) -> list[OperandMaps]:
    if args.fused:
        return fused_output_to_input(module, comp, args.output, **_options(args))
    return output_to_input(module, comp, comp.root, args.output, **_options(args))


def _in_to_out(args: argparse.Namespace, module: Module, comp: Computation) -> OperandMaps:
    if args.fused:
        if args.operand not in comp.parameters():
            raise comp.error(f"computation {comp.name} has no parameter({args.operand})")
        per_output = fused_input_to_output(module, comp, args.operand, **_options(args))
    else:
        per_output = input_to_output(module, comp, comp.root, args.operand, **_options(args))
    k: int = args.output
    if k >= len(per_output):
        raise comp.root.error(f"has {len(per_output)} outputs, there is no output {k}")
    return per_output[k]


def _texts(maps: OperandMaps) -> list[str | None]:
    return [None if isinstance(m, Unknown) else print_map(m) for m in maps]


def _reasons(maps: OperandMaps) -> list[str | None]:
    """Per map, why it is unknown (None for a known map)."""
    return [m.reason if isinstance(m, Unknown) else None for m in maps]


def _runtime_variables(maps: OperandMaps) -> list[list[dict[str, str]] | None]:
    """Per map, its runtime variables by name with the operand each one's value is from."""
    return [
        None
        if isinstance(m, Unknown)
        else [{"name": v.name, "source": v.source} for v in m.rt_vars]
        for m in maps
    ]


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``quorem hlo``: print the root's indexing maps (text or ``--json``); 0 on success.

    Raises :class:`HloUsageError` for bad options or an unreadable file and
    :class:`~quorem.hlo.parse.HloError` for malformed or inconsistent HLO.
    """
    if args.all:
        return _all(args, out)
    if args.fusions or args.jsonl:
        raise HloUsageError("--fusions and --jsonl are for --all")
    if args.input_to_output and args.operand is None:
        raise HloUsageError("--input-to-output needs --operand I")
    if not args.input_to_output and args.operand is not None:
        raise HloUsageError("--operand is for --input-to-output")
    source = "<stdin>" if args.file == "-" else args.file
    module = parse_hlo(_read(args.file), source)
    comp = module.entry if args.computation is None else module.computation(args.computation)
    record: dict[str, Any]
    if args.input_to_output:
        maps = _in_to_out(args, module, comp)
        if not args.json:
            out.write(format_indexing([maps], "output id", [args.output]))
            return 0
        record = {
            "direction": "input_to_output",
            "operand": args.operand,
            "maps": _texts(maps),
            "runtime_variables": _runtime_variables(maps),
            "reasons": _reasons(maps),
        }
    else:
        per_operand = _out_to_in(args, module, comp)
        if not args.json:
            out.write(format_indexing(per_operand))
            return 0
        record = {
            "direction": "output_to_input",
            "operands": [
                {
                    "operand": i,
                    "maps": _texts(ms),
                    "runtime_variables": _runtime_variables(ms),
                    "reasons": _reasons(ms),
                }
                for i, ms in enumerate(per_operand)
            ],
        }
    out.write(json.dumps(record) + "\n")
    return 0


def _all(args: argparse.Namespace, out: TextIO) -> int:
    """``--all``: every computation (or fusion body) of the module, one record each."""
    clash = [
        flag
        for flag, given in (
            ("--input-to-output", args.input_to_output),
            ("--operand", args.operand is not None),
            ("--output", args.output != 0),
            ("--computation", args.computation is not None),
            ("--fused", args.fused),
            ("--json", args.json),
        )
        if given
    ]
    if clash:
        hint = " (use --jsonl)" if clash == ["--json"] else ""
        raise HloUsageError(f"--all reads every computation; it takes no {clash[0]}{hint}")
    from ..hlo.module import analyse_module  # noqa: PLC0415  (--all only)

    source = "<stdin>" if args.file == "-" else args.file
    module = parse_hlo(_read(args.file), source)
    failed = total = 0
    for record in analyse_module(module, fusions_only=args.fusions, **_options(args)):
        total += 1
        failed += record.error is not None
        if args.jsonl:
            out.write(json.dumps(record.to_json()) + "\n")
        else:
            out.write(f"computation {record.computation} ({record.kind}, line {record.line})\n")
            if record.error is not None:
                out.write(f"  error: {record.error}\n")
            for k, per in enumerate(record.outputs):
                if len(record.outputs) > 1:
                    out.write(f"output {k}\n")
                out.write(format_indexing(list(per)))
        out.flush()  # a reader sees each computation as soon as it is done
    if failed:
        # The others were analysed and printed; the status still says some were not, as
        # a batch run with bad lines does, so that a script cannot miss it.
        print(f"quorem hlo: {failed} of {total} computations not analysed", file=sys.stderr)
        return 1
    return 0
