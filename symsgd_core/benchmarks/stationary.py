"""Benchmarks: stationary (filled in by its issue)."""
