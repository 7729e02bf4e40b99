"""Indexing-map corpora: maps with the map each must simplify to."""
