"""The package is linted and type-checked: `ruff check lbs_pz` and `mypy lbs_pz` pass.

Both read their settings from pyproject.toml ([tool.ruff]: E, F, W at 100 columns;
[tool.mypy]: Python 3.11, the package lbs_pz, the stubs of the compiled modules). The
`test` extra installs them at the versions the code is checked with; a test is skipped,
saying so, only where its tool is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import pytest

from tests.helpers.paths import ROOT

DEADLINE = 1800         # seconds: a first mypy run reads torch's and RLlib's types (minutes)


def _check(tool: str, *args: str) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install -e \".[test]\" installs it)")
    done = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=DEADLINE)
    assert done.returncode == 0, (
        f"`{tool} {' '.join(args)}` failed (exit {done.returncode}):\n"
        f"{done.stdout[-20000:]}{done.stderr[-5000:]}")


def test_ruff_passes():
    _check("ruff", "check", "lbs_pz")


def test_mypy_passes():
    _check("mypy", "lbs_pz")
