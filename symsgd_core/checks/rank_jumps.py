"""Checks: rank_jumps (filled in by its issue)."""
