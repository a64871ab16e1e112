"""Checks: stationary (filled in by its issue)."""
