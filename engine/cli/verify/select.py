"""The rules a run proves: the files' (or the shipped ones), ``--rule``, ``--slowest``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from quorem.verify.cache import ProofCache, cache_key
from quorem.verify.jobs import load_rules
from quorem.verify.prove import obligations_of

from ...rule import Rule
from ..args import CliError

__all__ = ["load", "named", "slowest", "slowest_rules"]


def load(files: Sequence[str]) -> list[Rule]:
    """The rules of ``files``, in order (the shipped rules for none); QuoremError if bad."""
    return load_rules(files)


def named(rules: Sequence[Rule], names: Sequence[str]) -> list[Rule]:
    """The rules of ``rules`` named in ``names``, in rule order; CliError if one is missing."""
    known = {r.name for r in rules}
    missing = [n for n in names if n not in known]
    if missing:
        raise CliError(f"no rule named {', '.join(missing)}")
    return [r for r in rules if r.name in names]


def slowest(rules: Sequence[Rule], args: argparse.Namespace) -> list[Rule]:
    """``--slowest N``: :func:`slowest_rules` from the proof cache; CliError if it cannot."""
    if args.no_cache:
        raise CliError("--slowest reads the times in the cache")
    chosen = slowest_rules(rules, args.slowest, ProofCache(), args.arity)
    if not chosen:
        raise CliError(
            "--slowest: the cache holds no proof times for these "
            "rules (run quorem verify without --no-cache first)"
        )
    return chosen


def slowest_rules(rules: Sequence[Rule], n: int, cache: ProofCache, arity: int) -> list[Rule]:
    """The ``n`` rules of ``rules`` whose slowest cached equivalence or int64 proof took longest.

    In rule order. Rules without a cached time are left out: CI runs the full proof
    first, then the seed runs on these (the longest proofs are the ones nearest to a
    timeout, so the likeliest to flip with Z3's seed).
    """
    times: dict[str, float] = {}
    for rule in rules:
        for ob in obligations_of(rule, arity):
            hit = cache.lookup(cache_key(ob))
            if hit is not None and isinstance(hit.get("seconds"), int | float):
                times[rule.name] = max(times.get(rule.name, 0.0), float(hit["seconds"]))
    keep = set(sorted(times, key=lambda name: -times[name])[:n])
    return [r for r in rules if r.name in keep]
