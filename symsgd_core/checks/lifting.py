"""Checks: lifting (filled in by its issue)."""
