"""How a test waits: for the event it needs, never for a time.

A test must pass on a machine whose cores are busy with another job, so no test asserts a
duration: it polls for what it waits for (a log line, a file, a status code) and gives up
only after HANG_SECONDS, a deadline that no working run reaches and that only tells a hang
from a slow machine.
"""
from __future__ import annotations

import time
from typing import Callable, Optional, TypeVar

HANG_SECONDS = 600
"""Seconds before a wait counts as a hang: every test's deadline for a child, a request or
an event, however loaded the machine."""

T = TypeVar("T")


def wait_for(condition: Callable[[], T], what: str, proc=None, timeout: float = HANG_SECONDS,
             every: float = 0.02, output: Optional[Callable[[], str]] = None) -> T:
    """Poll `condition()` every `every` s until it is true; return its value. An
    AssertionError naming `what` if `proc` (a Popen, if given) ends first, with
    `output()` (the child's output, if given), or after `timeout` seconds (a hang; `proc`
    is killed)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            told = f"\n{output()}" if output is not None else ""
            raise AssertionError(f"{what}: the process ended first (exit status "
                                 f"{proc.returncode}){told}")
        if time.monotonic() > deadline:
            if proc is not None:
                proc.kill()
            raise AssertionError(f"{what}: not within {timeout:g} s (a hang)")
        time.sleep(every)


def poll_until(condition: Callable[[], T], timeout: float = HANG_SECONDS,
               every: float = 0.02) -> Optional[T]:
    """Poll `condition()` until it is true (its value) or `timeout` s pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value or None
        time.sleep(every)
