"""Dump real HLO modules printed by JAX/XLA:CPU into ``benchmarks/data/hlo/``.

A corpus for ``quorem hlo``: small real models, each printed three ways as XLA's own
printer writes them:

* ``NAME.hlo``: unoptimized (``jax.jit(f).lower(...).as_text(dialect="hlo")``);
* ``NAME.debug.hlo``: the same with debug info (source locations, stack frames);
* ``NAME.opt.hlo``: optimized by XLA:CPU (``.compile().as_text()``: fusions, layouts).

``jax`` is not a dependency of quorem, only of this script::

    .venv/bin/pip install jax
    .venv/bin/python benchmarks/hlo_dump.py            # every model
    .venv/bin/python benchmarks/hlo_dump.py mlp cnn    # some

Four CPU devices are faked (``--xla_force_host_platform_device_count=4``) for the
sharded model; the others run on one device. Shapes are kept small so the printed
constants and the files stay small. Printed paths in debug info are made relative to
the repository, so a dump does not depend on where it was run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Must be set before jax is imported: it fixes the number of CPU devices.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
from jax import lax

OUT = Path(__file__).resolve().parent / "data" / "hlo"
ROOT = Path(__file__).resolve().parent.parent

Model = tuple[Callable[..., Any], tuple[Any, ...]]


def _f32(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def mlp() -> Model:
    def f(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
        h = jax.nn.relu(x @ w1 + b1)
        return jax.nn.softmax(h @ w2, axis=-1)

    return f, (_f32(8, 16), _f32(16, 32), _f32(32), _f32(32, 10))


def cnn() -> Model:
    def f(x: Any, k: Any, scale: Any, bias: Any) -> Any:
        dims = ("NHWC", "HWIO", "NHWC")
        y = lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dims)
        mean = y.mean(axis=(0, 1, 2))
        var = y.var(axis=(0, 1, 2))
        y = (y - mean) * lax.rsqrt(var + 1e-5) * scale + bias
        y = jax.nn.relu(y)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return y.mean(axis=(1, 2))

    return f, (_f32(2, 8, 8, 3), _f32(3, 3, 3, 4), _f32(4), _f32(4))


def _attention(x: Any, wq: Any, wk: Any, wv: Any, wo: Any) -> Any:
    def norm(v: Any) -> Any:
        m = v.mean(-1, keepdims=True)
        return (v - m) * lax.rsqrt(((v - m) ** 2).mean(-1, keepdims=True) + 1e-6)

    h = norm(x)
    b, t, d = h.shape
    heads = 2
    q = (h @ wq).reshape(b, t, heads, d // heads)
    k = (h @ wk).reshape(b, t, heads, d // heads)
    v = (h @ wv).reshape(b, t, heads, d // heads)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // heads).astype(x.dtype)
    mask = jnp.tril(jnp.ones((t, t), bool))
    s = jnp.where(mask, s, jnp.asarray(-1e9, s.dtype))
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(b, t, d)
    y = x + o @ wo
    return y + jax.nn.gelu(norm(y) @ wq) @ wo


def transformer() -> Model:
    def f(*args: Any) -> Any:
        return jax.grad(lambda *a: _attention(*a).sum(), argnums=(1, 2))(*args)

    return f, (_f32(2, 8, 16), *(_f32(16, 16) for _ in range(4)))


def transformer_bf16() -> Model:
    bf = jnp.bfloat16

    def f(*args: Any) -> Any:
        return jax.grad(lambda *a: _attention(*a).astype(jnp.float32).sum(), argnums=1)(*args)

    return f, tuple(jax.ShapeDtypeStruct(s, bf) for s in ((2, 8, 16), *((16, 16),) * 4))


def embedding() -> Model:
    def loss(table: Any, ids: Any) -> Any:
        return (jnp.take(table, ids, axis=0) ** 2).sum()

    return jax.value_and_grad(loss), (_f32(32, 8), jax.ShapeDtypeStruct((4, 6), jnp.int32))


def scatter() -> Model:
    def f(x: Any, idx: Any, upd: Any) -> Any:
        return x.at[idx].add(upd).at[idx, 1].set(0.0)

    return f, (_f32(16, 4), jax.ShapeDtypeStruct((5,), jnp.int32), _f32(5, 4))


def cumsum() -> Model:
    def f(x: Any) -> Any:
        return jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0)

    return f, (_f32(4, 16),)


def assoc_scan() -> Model:
    def f(a: Any, b: Any) -> Any:
        def op(left: Any, right: Any) -> Any:
            return (left[0] * right[0], right[0] * left[1] + right[1])

        return lax.associative_scan(op, (a, b))

    return f, (_f32(8, 4), _f32(8, 4))


def rnn() -> Model:
    def f(w: Any, u: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = jnp.tanh(h @ w + x @ u)
            return h, h.sum()

        return lax.scan(step, jnp.zeros((2, 8)), xs)

    return f, (_f32(8, 8), _f32(4, 8), _f32(5, 2, 4))


def im2col() -> Model:
    def f(x: Any) -> Any:
        # (B, H, W, C) -> (B, H-2, W-2, 9*C) patches, then a transpose to channel-major.
        b, h, w, c = x.shape
        cols = [x[:, i : i + h - 2, j : j + w - 2, :] for i in range(3) for j in range(3)]
        patches = jnp.concatenate(cols, axis=-1)
        padded = jnp.pad(patches, ((0, 0), (1, 1), (1, 1), (0, 0)))
        return jnp.transpose(padded[:, ::2, ::-1], (0, 3, 1, 2)).reshape(b, 9 * c, -1)

    return f, (_f32(2, 6, 6, 3),)


def sort_topk() -> Model:
    def f(x: Any) -> Any:
        vals, idx = lax.top_k(x, 3)
        return jnp.sort(x, axis=0), jnp.argsort(x, axis=1), vals, idx

    return f, (_f32(6, 10),)


def dropout() -> Model:
    def f(key: Any, x: Any) -> Any:
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        return jnp.where(keep, x / 0.9, 0.0)

    return f, (jax.random.key_data(jax.random.key(0)), _f32(8, 16))


def sharded_mlp() -> Model:
    import numpy as np  # noqa: PLC0415
    from jax.sharding import Mesh, NamedSharding  # noqa: PLC0415
    from jax.sharding import PartitionSpec as P  # noqa: PLC0415

    devices = jax.devices()
    if len(devices) < 4:
        raise RuntimeError("sharded_mlp needs 4 devices: set XLA_FLAGS before running")

    mesh = Mesh(np.array(devices[:4]).reshape(2, 2), ("data", "model"))
    x_s = NamedSharding(mesh, P("data", None))
    w_s = NamedSharding(mesh, P(None, "model"))
    out_s = NamedSharding(mesh, P("data", None))

    def f(x: Any, w1: Any, w2: Any) -> Any:
        h = jax.nn.relu(x @ w1)
        return jax.lax.with_sharding_constraint(h @ w2, out_s)

    jitted = jax.jit(f, in_shardings=(x_s, w_s, NamedSharding(mesh, P("model", None))))
    return jitted, (_f32(8, 16), _f32(16, 32), _f32(32, 16))


MODELS: dict[str, Callable[[], Model]] = {
    "mlp": mlp,
    "cnn": cnn,
    "transformer": transformer,
    "transformer_bf16": transformer_bf16,
    "embedding": embedding,
    "scatter": scatter,
    "cumsum": cumsum,
    "assoc_scan": assoc_scan,
    "rnn": rnn,
    "im2col": im2col,
    "sort_topk": sort_topk,
    "dropout": dropout,
    "sharded_mlp": sharded_mlp,
}


def _relative(text: str) -> str:
    """Debug info names source files by absolute path: made relative to the repository."""
    return text.replace(str(ROOT) + os.sep, "").replace(sys.prefix + os.sep, "")


def dump(name: str) -> list[Path]:
    """Write the three printings of model ``name``; the paths written."""
    f, args = MODELS[name]()
    jitted = f if hasattr(f, "lower") else jax.jit(f)
    lowered = jitted.lower(*args)
    texts = {
        f"{name}.hlo": lowered.as_text(dialect="hlo"),
        f"{name}.debug.hlo": lowered.as_text(dialect="hlo", debug_info=True),
        f"{name}.opt.hlo": lowered.compile().as_text() or "",
    }
    OUT.mkdir(parents=True, exist_ok=True)
    written = []
    for file, text in texts.items():
        path = OUT / file
        path.write_text(_relative(text), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    """Dump the models named in ``argv`` (every model when none is named)."""
    names = argv or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(MODELS)}")
        return 2
    for name in names:
        for path in dump(name):
            print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")
    print(f"jax {jax.__version__}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
