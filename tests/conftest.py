"""Shared pytest setup: make the in-place build and the test helpers importable however
pytest is launched (from the repo root, from tests/, or as `pytest` rather than
`python -m pytest`)."""

import os
import sys

_TESTS = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_TESTS)
for _path in (_ROOT, _TESTS):
    if _path not in sys.path:
        sys.path.insert(0, _path)
