from lbs_pz.engine._core cimport GameState
from lbs_pz.engine.state cimport HanabiState

cdef class HanabiBatch:
    cdef GameState* games      # num_games contiguous game structs
    cdef object _config
    cdef readonly int num_games
    cdef HanabiState _proto    # holds the GameConfig struct shared by all games

    cdef int _check_index(self, index) except -1
