from lbs_pz.engine._core cimport GameConfig, GameState

cdef void encode_canonical(const GameConfig* cfg, const GameState* s, int observer,
                           float* out) noexcept nogil
