from libc.stdint cimport int64_t

from lbs_pz.engine._core cimport GameConfig, GameState

cdef void encode_canonical(const GameConfig* cfg, const GameState* s, int observer,
                           bint own_hand, float* out) noexcept nogil
cdef int encode_canonical_ones(const GameConfig* cfg, const GameState* s, int observer,
                               bint own_hand, int64_t* positions) noexcept nogil
