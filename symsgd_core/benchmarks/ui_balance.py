"""Benchmarks: ui_balance (filled in by its issue)."""
