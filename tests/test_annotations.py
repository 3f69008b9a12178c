"""Every public function and method of lbs_pz says what it returns (the scan is
`benchmarks/house.py`'s, which prints the figure; mypy checks that the annotations are
true: tests/test_lint.py)."""

from __future__ import annotations

import ast

from tests.helpers.scripts import load_script

house = load_script("benchmarks/house.py")


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
