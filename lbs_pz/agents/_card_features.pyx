# cython: language_level=3
"""`CardFeatures.forward` (lbs_pz.agents.public_lstm) for a batch of canonical vectors in
one C loop: the same numbers, bit for bit (every value is a small integer or a ratio of
two, computed in float32 as torch does), without the ~100 small tensor operations per
call that dominate a search's rollouts at a few hundred worlds per step.

    card_features(obs, out, players, colors, ranks, hand_size, fw_off, kn_off, knowledge)

obs: float32 (N, E) C-contiguous; out: float32 (N, size), C-contiguous and writeable,
size = CardFeatures.size. See CardFeatures for what each feature is and their order.
"""

import numpy as np

cimport cython


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def card_features(const float[:, ::1] obs not None, float[:, ::1] out not None,
                  int players, int colors, int ranks, int hand_size, int fw_off,
                  int kn_off, bint knowledge):
    """Fill out (N, size) with the card features of every row of obs (N, E)."""
    cdef int P = players, C = colors, R = ranks, H = hand_size
    cdef int CR = C * R, K, q, h, c, r, t, j, k, p, o, i, kk, base, width
    cdef Py_ssize_t n = obs.shape[0], e = obs.shape[1], row
    if P < 2 or C < 1 or R < 1 or H < 1:
        raise ValueError(f"card_features: bad game sizes players={P} colors={C} ranks={R} "
                         f"hand_size={H}")
    cdef int size = 2 * CR + 2 * (P - 1) * H + (
        6 * P * H + 8 * (P - 1) * (C + R) if knowledge else 0)
    if out.shape[0] != n or out.shape[1] != size:
        raise ValueError(f"card_features: out must have shape ({n}, {size}), got "
                         f"({out.shape[0]}, {out.shape[1]})")
    cdef int hands_len = (P - 1) * H * CR
    if fw_off < hands_len or fw_off + CR > e or (knowledge and (
            kn_off < fw_off + CR or kn_off + P * H * (CR + C + R) != e)):
        raise ValueError(f"card_features: offsets fw_off={fw_off} kn_off={kn_off} do not fit "
                         f"a vector of {e}")
    cdef float[:, ::1] tables = np.zeros((CR, 2), dtype=np.float32)
    cdef float[:, :, ::1] flags = np.zeros((P, H, 2), dtype=np.float32)
    cdef float[:, ::1] touched = np.zeros((P, H), dtype=np.float32)
    cdef float[:, ::1] chop = np.zeros((P, H), dtype=np.float32)
    cdef float[::1] touch = np.zeros(H, dtype=np.float32)
    cdef float[::1] first = np.zeros(H, dtype=np.float32)
    cdef float cnt, hit0, hit1, none, acc, fresh, on_chop, n_, good, bad, new, any_first
    cdef float f_good, f_bad, later, newest, focus, untouched, before
    with nogil:
        for row in range(n):
            o = 0
            # playable / useless tables from the fireworks
            for c in range(C):
                none = 1.0
                for r in range(R):
                    none = none - obs[row, fw_off + c * R + r]
                acc = 0.0
                for r in range(R - 1, -1, -1):
                    acc = acc + obs[row, fw_off + c * R + r]
                    tables[c * R + r, 1] = acc
                for r in range(R):
                    tables[c * R + r, 0] = none if r == 0 else obs[row, fw_off + c * R + r - 1]
            for t in range(CR):
                out[row, o + t] = tables[t, 0]
                out[row, o + CR + t] = tables[t, 1]
            o += 2 * CR
            # the cards seen in the other hands: playable / useless
            for q in range(P - 1):
                for h in range(H):
                    hit0 = 0.0
                    hit1 = 0.0
                    base = (q * H + h) * CR
                    for t in range(CR):
                        hit0 = hit0 + obs[row, base + t] * tables[t, 0]
                        hit1 = hit1 + obs[row, base + t] * tables[t, 1]
                    flags[q, h, 0] = hit0
                    flags[q, h, 1] = hit1
                    out[row, o] = hit0
                    out[row, o + 1] = hit1
                    o += 2
            if not knowledge:
                continue
            width = CR + C + R
            # common knowledge of every hand: fractions, full, touched, chop
            for p in range(P):
                before = 0.0
                for h in range(H):
                    base = kn_off + (p * H + h) * width
                    cnt = 0.0
                    hit0 = 0.0
                    hit1 = 0.0
                    for t in range(CR):
                        cnt = cnt + obs[row, base + t]
                        hit0 = hit0 + obs[row, base + t] * tables[t, 0]
                        hit1 = hit1 + obs[row, base + t] * tables[t, 1]
                    i = o + (p * H + h) * 2
                    out[row, i] = hit0 / (cnt if cnt > 1.0 else 1.0)
                    out[row, i + 1] = hit1 / (cnt if cnt > 1.0 else 1.0)
                    i = o + 2 * P * H + (p * H + h) * 2
                    out[row, i] = 1.0 if (hit0 == cnt and cnt > 0) else 0.0
                    out[row, i + 1] = 1.0 if (hit1 == cnt and cnt > 0) else 0.0
                    acc = 0.0
                    for t in range(C + R):
                        acc = acc + obs[row, base + CR + t]
                    touched[p, h] = acc if acc < 1.0 else 1.0
                    untouched = (1.0 - touched[p, h]) * (1.0 if cnt > 0 else 0.0)
                    chop[p, h] = untouched if before == 0 else 0.0
                    before = before + untouched
                    out[row, o + 4 * P * H + p * H + h] = touched[p, h]
                    out[row, o + 5 * P * H + p * H + h] = chop[p, h]
            o += 6 * P * H
            # every hint move: colors to the next players, then ranks
            for kk in range(2):
                K = C if kk == 0 else R
                for q in range(P - 1):
                    on_chop = 0.0
                    for k in range(K):
                        # touch[h]: card h of player q + 1 has color / rank k
                        n_ = 0.0
                        good = 0.0
                        bad = 0.0
                        new = 0.0
                        on_chop = 0.0
                        any_first = 0.0
                        for h in range(H):
                            base = (q * H + h) * CR
                            acc = 0.0
                            if kk == 0:
                                for r in range(R):
                                    acc = acc + obs[row, base + k * R + r]
                            else:
                                for c in range(C):
                                    acc = acc + obs[row, base + c * R + k]
                            touch[h] = acc
                            fresh = 1.0
                            base = kn_off + ((q + 1) * H + h) * width + CR + (0 if kk == 0 else C)
                            for j in range(K):
                                fresh = fresh - obs[row, base + j]
                            n_ = n_ + acc
                            good = good + acc * flags[q, h, 0]
                            bad = bad + acc * flags[q, h, 1]
                            new = new + acc * fresh
                            on_chop = on_chop + acc * chop[q + 1, h]
                            first[h] = acc * (1.0 - touched[q + 1, h])
                            any_first = any_first + first[h]
                        f_good = 0.0
                        f_bad = 0.0
                        later = 0.0
                        for h in range(H - 1, -1, -1):
                            newest = first[h] if later == 0 else 0.0
                            later = later + first[h]
                            focus = on_chop * chop[q + 1, h] * touch[h] + (1.0 - on_chop) * newest
                            f_good = f_good + focus * flags[q, h, 0]
                            f_bad = f_bad + focus * flags[q, h, 1]
                        i = o + (q * K + k) * 8
                        out[row, i] = n_
                        out[row, i + 1] = good
                        out[row, i + 2] = bad
                        out[row, i + 3] = new
                        out[row, i + 4] = on_chop
                        out[row, i + 5] = any_first if any_first < 1.0 else 1.0
                        out[row, i + 6] = f_good
                        out[row, i + 7] = f_bad
                o += 8 * (P - 1) * K
    return out
