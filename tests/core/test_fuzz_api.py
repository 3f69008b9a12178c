"""Hypothesis fuzz of the public engine, rule-bot and env API, run in a child process.

The child (tests/helpers/fuzz_api.py) calls every public method with valid and hostile
arguments; a call may only raise a documented Python exception. A signal exit fails the test
and names the last call the child printed, which is the one that crashed.
"""
import os
import subprocess
import sys

import pytest

from tests.helpers.paths import HELPERS
from tests.helpers.waiting import HANG_SECONDS

FUZZ = os.path.join(HELPERS, "fuzz_api.py")


def run_fuzz(examples: int, seed: int, timeout: float = HANG_SECONDS):
    proc = subprocess.run([sys.executable, FUZZ, "--examples", str(examples), "--seed", str(seed)],
                          capture_output=True, text=True, timeout=timeout)
    calls = [line for line in proc.stdout.splitlines() if line.startswith("CALL ")]
    if proc.returncode < 0:
        pytest.fail(f"the fuzzed API killed the interpreter (signal {-proc.returncode}) in "
                    f"{calls[-1] if calls else 'setup'}\n{proc.stderr[-2000:]}")
    assert proc.returncode == 0, (
        f"a call raised an undocumented exception or the program failed:\n{proc.stderr[-4000:]}")
    assert "FUZZ DONE" in proc.stdout
    assert len(calls) >= examples, "the programs made fewer calls than examples"


def test_fuzz_public_api():
    run_fuzz(examples=250, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_fuzz_public_api_long(seed):
    run_fuzz(examples=3000, seed=1000 + seed)
