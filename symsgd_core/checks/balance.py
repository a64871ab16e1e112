"""Checks: balance (filled in by its issue)."""
