"""Benchmarks: engine (filled in by its issue)."""
