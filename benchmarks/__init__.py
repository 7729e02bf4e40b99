"""quorem benchmarks: corpora, peers (tinygrad, TVM) and the side-by-side runner."""
