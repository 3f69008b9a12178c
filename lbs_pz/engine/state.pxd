from lbs_pz.engine._core cimport GameConfig, GameState

# lbs_pz.checks.is_int for the compiled modules' argument checks (see state.pyx)
cdef bint int_arg(object value) except -1

cdef class HanabiState:
    cdef GameConfig cfg
    cdef GameState s
    cdef readonly object config   # None until __init__ succeeds: every method checks it
    # Concurrent-use guard: > 0 while that many calls copy the game without the GIL (changes
    # raise RuntimeError meanwhile); see the class docstring's threading contract.
    cdef int _busy

    cdef HanabiState _new_like(self)
    cdef int _check_player(self, player) except -1
    cdef int _check_free(self) except -1
    cdef int _enter_read(self) except -1
