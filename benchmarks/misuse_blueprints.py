"""Misuse cases of the blueprints layer for benchmarks/misuse.py: (name, expectation, exception class
or None, snippet), in the format and with the PRELUDE described there."""

CASES = [
]
