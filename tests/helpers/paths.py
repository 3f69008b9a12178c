"""Where the repository and the tests' own files lie, whichever folder a test sits in."""
from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""The repository's root folder (README.md, benchmarks/, examples/, results/, tests/)."""

TESTS = os.path.join(ROOT, "tests")
"""The test suite's folder."""

DATA = os.path.join(TESTS, "data")
"""Files the tests read (tests/data/)."""

HELPERS = os.path.join(TESTS, "helpers")
"""What the tests share, and the fuzz programs they run (tests/helpers/)."""
