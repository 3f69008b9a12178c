"""Corrupted files handed to every reader a user reaches (tests/helpers/fuzz_files.py, in a
child process so that a crash fails the test instead of the run): game logs, recorded searches,
value / belief / public-LSTM checkpoints, RLlib modules. Only ValueError may come out
(CheckpointError from the RLlib loader), what is accepted must be true, and memory stays
bounded."""

import os
import subprocess
import sys

import pytest
from tests.helpers.paths import HELPERS

pytest.importorskip("torch")
pytest.importorskip("hypothesis")

PROGRAM = os.path.join(HELPERS, "fuzz_files.py")


def run_fuzz(examples: int, seed: int, timeout: float = 900, extra=()) -> None:
    proc = subprocess.run([sys.executable, PROGRAM, "--examples", str(examples), "--seed",
                           str(seed), *extra], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if "FUZZ SKIPPED" in proc.stdout:
        pytest.skip(proc.stdout.split("FUZZ SKIPPED: ")[1].splitlines()[0])
    last = proc.stdout.strip().splitlines()[-3:]
    assert proc.returncode == 0, (f"exit {proc.returncode}; last attempts: {last}\n"
                                  f"{proc.stderr[-3000:]}")
    assert "FUZZ DONE" in proc.stdout
    files = int(proc.stdout.split("FUZZ DONE: ")[1].split()[0])
    assert files >= examples


def test_fuzz_file_readers():
    run_fuzz(examples=1000, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_fuzz_file_readers_long(seed):
    run_fuzz(examples=20000, seed=1000 + seed, timeout=3600)


def test_fuzz_rllib_loader():
    """The two pickles of a module saved by RLlib, corrupted byte- and opcode-wise
    (`fuzz_files.py --rllib`; skipped without the [rllib] extra)."""
    run_fuzz(examples=1000, seed=0, extra=("--rllib",))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_fuzz_rllib_loader_long(seed):
    run_fuzz(examples=20000, seed=2000 + seed, timeout=3600, extra=("--rllib",))
