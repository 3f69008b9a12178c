"""Run a snippet of Python in a child process, so that a crash fails a test instead of the run.

Hardening tests use this for every misuse that once killed the interpreter: the snippet runs in
a fresh ``python -c`` and the test asserts on how the child ended, never on a signal.
"""
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from tests.helpers.waiting import HANG_SECONDS

# Marker the child prints on success; a test asserts it (or the exception) so that an early exit
# with status 0 cannot pass silently.
OK_MARKER = "__ISOLATED_OK__"


@dataclass
class ChildResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def signal_name(self):
        """Name of the signal that killed the child (e.g. 'SIGSEGV'), or None."""
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


def run_child(code: str, timeout: float = HANG_SECONDS) -> ChildResult:
    """Run ``code`` (dedented) in ``python -c``; ``timeout`` seconds before it counts as a hang
    (a TimeoutExpired)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)
    return ChildResult(proc.returncode, proc.stdout, proc.stderr)


def assert_raises_cleanly(code: str, exc_name: str, match: str = "",
                          timeout: float = HANG_SECONDS):
    """Assert ``code`` raises the Python exception ``exc_name`` (its message containing
    ``match``), and that the child neither crashed nor hung."""
    wrapped = (f"{textwrap.dedent(code)}\n"
               f"print({OK_MARKER!r}, 'no exception')\n")
    result = run_child(wrapped, timeout)
    assert result.signal_name is None, (
        f"child died of {result.signal_name}\n--- stderr ---\n{result.stderr[-3000:]}")
    assert result.returncode == 1, (
        f"expected {exc_name}, child exited {result.returncode}\n{result.stdout}{result.stderr}")
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    assert last.startswith(exc_name + ":") or last == exc_name, (
        f"expected {exc_name}, got: {last}\n--- stderr ---\n{result.stderr[-3000:]}")
    assert match in last, f"message {last!r} does not contain {match!r}"
    return last


def assert_runs_cleanly(code: str, timeout: float = HANG_SECONDS) -> str:
    """Assert ``code`` runs to its end in a child (no exception, no signal); returns stdout."""
    result = run_child(f"{textwrap.dedent(code)}\nprint({OK_MARKER!r})\n", timeout)
    assert result.signal_name is None, (
        f"child died of {result.signal_name}\n--- stderr ---\n{result.stderr[-3000:]}")
    assert result.returncode == 0 and OK_MARKER in result.stdout, (
        f"child exited {result.returncode}\n{result.stdout}\n{result.stderr[-3000:]}")
    return result.stdout
