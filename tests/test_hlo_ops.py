"""HLO indexing of the ops real modules are made of (issue 23): call, scatter, sort, ...

Each op's maps are checked, as in ``test_hlo_indexing``, against an element-by-element
simulation of the op on random shapes and indices (``check_op``), and on the forms JAX
prints.
"""

from __future__ import annotations

import pytest
from quorem.engine.indexing.hlo import HloError, parse_hlo
from quorem.engine.indexing.hlo_indexing import (
    fused_input_to_output,
    fused_output_to_input,
)
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
