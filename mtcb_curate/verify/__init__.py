"""Verification of supporting passages: normalization, fuzzy alignment, verdicts and repairs."""
