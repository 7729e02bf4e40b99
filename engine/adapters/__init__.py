"""Adapters between quorem terms and other compilers' index expressions.

Each adapter is a module imported on its own, which imports its library:
:mod:`quorem.adapters.tinygrad` (tinygrad UOps, the ``tinygrad`` extra) and
:mod:`quorem.adapters.tvm` (TVM PrimExprs, the ``tvm`` extra). ``import quorem``
and ``import quorem.adapters`` import neither library.

Every adapter keeps the same promises: ``to_term`` reads an expression into a term equal
to it at every point of its variables' bounds; a node it cannot read is not dropped but
becomes an opaque variable bounded by that node's own bounds, and ``from_term`` puts the
same node back; ``from_term`` builds an expression equal to the term; shared
subexpressions are read once and stay shared.
"""
