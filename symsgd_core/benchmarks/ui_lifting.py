"""Benchmarks: ui_lifting (filled in by its issue)."""
