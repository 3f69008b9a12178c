"""Corrupted files handed to every reader a user reaches (tests/fuzz_files.py, in a child
process so that a crash fails the test instead of the run): game logs, recorded searches,
value / belief / public-LSTM checkpoints. Only ValueError may come out, what is accepted
must be true, and memory stays bounded."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("hypothesis")

PROGRAM = os.path.join(os.path.dirname(__file__), "fuzz_files.py")


def run_fuzz(examples: int, seed: int, timeout: float = 900) -> None:
    proc = subprocess.run([sys.executable, PROGRAM, "--examples", str(examples), "--seed",
                           str(seed)], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
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
