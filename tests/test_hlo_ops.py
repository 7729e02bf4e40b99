"""HLO indexing of the ops real modules are made of (issue 23): call, scatter, sort, ...

Each op's maps are checked, as in ``test_hlo_indexing``, against an element-by-element
simulation of the op on random shapes and indices (``check_op``), and on the forms JAX
prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from quorem.engine.indexing.hlo import HloError, parse_hlo
from quorem.engine.indexing.hlo_indexing import (
    Unknown,
    fused_input_to_output,
    fused_output_to_input,
)
from test_hlo_cli import run
from test_hlo_indexing import (
    assert_maps,
    in_to_out,
    out_to_in,
)

# ---------------------------------------------------------------------------- call
# As jax.jit(lambda x, w: jax.nn.relu(x @ w)).lower(...).as_text(dialect="hlo") prints it.
CALL_MODULE = """HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0}, f32[8,16]{1,0})
  ->f32[4,16]{1,0}}

relu.1 {
  Arg_0.2 = f32[4,16]{1,0} parameter(0)
  constant.3 = f32[] constant(0)
  broadcast.4 = f32[4,16]{1,0} broadcast(constant.3), dimensions={}
  ROOT maximum.5 = f32[4,16]{1,0} maximum(Arg_0.2, broadcast.4)
}

ENTRY main.8 {
  Arg_0.1 = f32[4,8]{1,0} parameter(0)
  Arg_1.2 = f32[8,16]{1,0} parameter(1)
  dot.6 = f32[4,16]{1,0} dot(Arg_0.1, Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT call.8 = f32[4,16]{1,0} call(dot.6), to_apply=relu.1
}
"""


def test_call_composes_through_the_called_computation() -> None:
    text = CALL_MODULE
    (ms,) = out_to_in(text)
    assert_maps(ms, "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 15]")
    module = parse_hlo(text)
    # The whole module as one fusion: through the call and the dot.
    lhs, rhs = fused_output_to_input(module, module.entry)
    assert_maps(lhs, "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 15], s0 in [0, 7]")
    assert_maps(rhs, "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 3], d1 in [0, 15], s0 in [0, 7]")
    (back,) = fused_input_to_output(module, module.entry, 1)
    assert_maps(back, "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 7], d1 in [0, 15], s0 in [0, 3]")
    assert_maps(in_to_out(text, 0)[0], "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 15]")


def test_call_of_a_missing_computation_is_an_error_at_the_call() -> None:
    with pytest.raises(HloError, match="nope") as info:
        out_to_in(CALL_MODULE.replace("to_apply=relu.1\n", "to_apply=nope\n"))
    assert info.value.line == 15
    with pytest.raises(HloError, match="needs to_apply=") as info:
        out_to_in(CALL_MODULE.replace(", to_apply=relu.1\n", "\n"))


# ---------------------------------------------------------------------------- unknown: why
WHY = """HloModule m

body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[8] negate(x)
  ROOT t = (s32[], f32[8]) tuple(j, y)
}

cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

fused {
  a = f32[8] parameter(0)
  cc = f32[8] custom-call(a), custom_call_target="__cpu$xnn_thing", api_version=API_VERSION_TYPED
  ROOT e = f32[8] exponential(cc)
}

ENTRY e {
  x0 = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x0)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  y = f32[8] get-tuple-element(w), index=1
  ROOT f = f32[8] fusion(y), kind=kLoop, calls=fused
}
"""


def test_unknown_maps_say_why_in_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "why.hlo"
    path.write_text(WHY)
    _, text = run("hlo", str(path))
    assert text.splitlines() == [
        "operand id = 0",
        "  unknown indexing: cc (custom-call): its target (__cpu$xnn_thing) is opaque code: "
        "what it reads is not in the HLO",
    ]
    _, text = run("hlo", str(path), "--json", "--fused")
    (op,) = json.loads(text)["operands"]
    assert op["maps"] == [None] and op["runtime_variables"] == [None]
    (reason,) = op["reasons"]
    assert reason.startswith("cc (custom-call): its target")
    # Through the whole entry computation, the while is the first unknown on the way.
    path.write_text(WHY.replace("fusion(y), kind=kLoop, calls=fused", "negate(y)"))
    _, text = run("hlo", str(path), "--json", "--fused")
    (op,) = json.loads(text)["operands"]
    assert op["maps"] == [None]
    assert op["reasons"][0].startswith("w (while): its body runs a number of times known only")
    _, text = run("hlo", str(path), "--input-to-output", "--operand", "0", "--fused", "--json")
    record = json.loads(text)
    assert record["maps"] == [None]
    assert record["reasons"][0].startswith("w (while)")


def test_an_op_without_indexing_says_which_direction() -> None:
    text = "p = f32[4] parameter(0)\nROOT c = f32[4] cholesky(p), lower=true"
    ((m,),) = out_to_in(text)
    assert isinstance(m, Unknown)
    assert m.reason == "c (cholesky): no output-to-input indexing is modelled for cholesky"
