"""Shared pytest setup.

What the tests share lives in the package tests/helpers/ (`from helpers.engine import ...`),
importable however pytest is launched through `pythonpath` in pyproject.toml; lbs_pz itself
is the installed (editable) package.

The rule of every test: a test waits for the event it needs (a log line, a file, a status
code) and asserts outcomes, never a duration, so that it passes on a machine whose cores are
busy with another job; a deadline only tells a hang (helpers.waiting.HANG_SECONDS).
"""
