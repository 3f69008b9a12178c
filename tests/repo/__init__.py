"""Tests of the repository itself: one-way layers, stubs, lint, the house figures, the README,
the documentation site and benchmarks/."""
