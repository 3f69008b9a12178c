"""Types of the compiled `lbs_pz.engine._encode` (_encode.pyx): HLE's canonical encoder at
C level, for Cython modules only (`cimport`); it has no public Python attribute.

tests/repo/test_stubs.py checks that the compiled module has none.
"""
