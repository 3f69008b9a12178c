"""Types of the compiled `lbs_pz.engine._core` (_core.pyx): the rules at C level. Its C
functions are for Cython modules (`cimport`); Python sees one function.

tests/repo/test_stubs.py checks that this stub names every public attribute of the compiled
module and nothing else.
"""


def derived_sizes(players: int, colors: int, ranks: int, hand_size: int, max_info: int,
                  max_life: int, obs_type: int) -> tuple[int, int, int]:
    """(num_moves, deck_size, encoding_size) of a configuration; ValueError for a value
    outside the engine's limits."""
