"""The package and its tests are linted and the package type-checked: `ruff check lbs_pz
tests` and `mypy lbs_pz` pass, and every public function and method of lbs_pz says what it
returns.

Both read their settings from pyproject.toml ([tool.ruff]: E, F, W at 100 columns;
[tool.mypy]: Python 3.11, the package lbs_pz, the stubs of the compiled modules). The
`test` extra installs them at the versions the code is checked with; a test is skipped,
saying so, only where its tool is not installed. The scan for return annotations is
`benchmarks/house.py`'s, which prints the figure; mypy checks that the annotations are true.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.scripts import load_script

DEADLINE = 1800         # seconds: a first mypy run reads torch's and RLlib's types (minutes)
house = load_script("benchmarks/house.py")


def _check(tool: str, *args: str) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install -e \".[test]\" installs it)")
    done = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=DEADLINE)
    assert done.returncode == 0, (
        f"`{tool} {' '.join(args)}` failed (exit {done.returncode}):\n"
        f"{done.stdout[-20000:]}{done.stderr[-5000:]}")


def test_ruff_passes():
    _check("ruff", "check", "lbs_pz", "tests")


def test_mypy_passes():
    _check("mypy", "lbs_pz")


def test_the_scan_sees_methods_and_nested_blocks():
    tree = ast.parse("def a() -> int: ...\ndef b(): ...\ndef _c(): ...\n"
                     "class K:\n    def m(self): ...\n    def _p(self): ...\n"
                     "if True:\n    def d(): ...\n"
                     "def outer() -> None:\n    def inner(): ...\n")
    found = {name: node.returns is not None for name, node in house.public_functions(tree)}
    assert found == {"a": True, "b": False, "K.m": False, "d": False, "outer": True}


def test_every_public_function_has_a_return_annotation():
    annotated, total, missing = house.annotated_public()
    print(f"{annotated} of {total} public functions and methods of lbs_pz annotate their "
          f"return ({100 * annotated / total:.1f}%)")
    assert total > 500
    assert not missing, (f"{len(missing)} of {total} public functions lack a return "
                         f"annotation:\n" + "\n".join(missing))
