from lbs_pz.engine._core cimport GameConfig, GameState

cdef class HanabiState:
    cdef GameConfig cfg
    cdef GameState s
    cdef readonly object config

    cdef HanabiState _new_like(self)
    cdef _load_deck(self, deck)
    cdef void _set_raw(self, const char* raw)
    cdef int _check_player(self, player) except -1
