from lbs_pz.engine._core cimport GameConfig, GameState
from lbs_pz.engine.state cimport HanabiState

# A per-game integer query (state_score, state_max_score), for `HanabiBatch._per_game`.
ctypedef int (*GameQuery)(const GameConfig*, const GameState*) noexcept nogil

cdef class HanabiBatch:
    cdef GameState* games      # num_games contiguous game structs; NULL until __init__ succeeds
    cdef object _config
    cdef readonly int num_games
    cdef HanabiState _proto    # holds the GameConfig struct shared by all games
    # Concurrent-use guard: > 0 while that many calls read the games, -1 while one call
    # changes them; a conflicting call raises RuntimeError (see the class docstring).
    cdef int _busy
    # Calls that have changed the games so far (every write entry counts one): a caller
    # that hands the batch to other code tells from it whether that code changed it.
    cdef unsigned long long _generation

    cdef int _check_index(self, index) except -1
    cdef int _enter_read(self) except -1
    cdef int _enter_write(self) except -1
    cdef int _allocate(self, object config, HanabiState proto, Py_ssize_t n) except -1
    cdef object _per_game(self, object out, GameQuery query)
