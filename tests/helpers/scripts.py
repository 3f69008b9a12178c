"""Import a script that is not part of the package (benchmarks/, docs/experiments/) by its
path, without adding its folder to sys.path."""
from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType

from tests.helpers.paths import ROOT


def load_script(path: str) -> ModuleType:
    """The module of the script at `path` (relative to the repository root), imported once
    per run under its file name (so that a script importing another by name shares it)."""
    name = os.path.splitext(os.path.basename(path))[0]
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == \
            os.path.join(ROOT, path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
