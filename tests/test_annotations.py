"""Every public function and method of lbs_pz says what it returns.

Public: a function or method whose name does not start with "_" (methods of every class
count, a private class's too), defined at a module's or a class's level (functions nested
in a function are that function's details). The scan reads each `.py` file of lbs_pz with
`ast`; mypy checks that the annotations are true (tests/test_lint.py).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Tuple

import lbs_pz

ROOT = Path(lbs_pz.__file__).resolve().parent


def _public_functions(tree: ast.AST, where: str) -> Iterator[Tuple[str, ast.AST]]:
    """(qualified name, node) of every public function and method of a module."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not node.name.startswith("_"):
                yield f"{where}{node.name}", node
        elif isinstance(node, ast.ClassDef):
            yield from _public_functions(node, f"{where}{node.name}.")
        elif not isinstance(node, (ast.Lambda,)):
            # if TYPE_CHECKING / try blocks at module or class level
            yield from _public_functions(node, where)


def _scan() -> Tuple[int, List[str]]:
    total, missing = 0, []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for name, node in _public_functions(tree, ""):
            total += 1
            if node.returns is None:
                missing.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {name}")
    return total, missing


def test_the_scan_sees_methods_and_nested_blocks():
    tree = ast.parse("def a() -> int: ...\ndef b(): ...\ndef _c(): ...\n"
                     "class K:\n    def m(self): ...\n    def _p(self): ...\n"
                     "if True:\n    def d(): ...\n"
                     "def outer() -> None:\n    def inner(): ...\n")
    found = {name: node.returns is not None for name, node in _public_functions(tree, "")}
    assert found == {"a": True, "b": False, "K.m": False, "d": False, "outer": True}


def test_every_public_function_has_a_return_annotation():
    total, missing = _scan()
    annotated = total - len(missing)
    print(f"{annotated} of {total} public functions and methods of lbs_pz annotate their "
          f"return ({100 * annotated / total:.1f}%)")
    assert total > 500
    assert not missing, (f"{len(missing)} of {total} public functions lack a return "
                         f"annotation:\n" + "\n".join(missing))
