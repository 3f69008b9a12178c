"""The grounded belief: the paper's analytical baseline.

Each card's distribution is proportional to the remaining unseen copies of the card
types its card knowledge (hints) allows:

    P(slot i = t)  =  plaus[i, t] * unseen[t]  /  sum_u plaus[i, u] * unseen[u]

`log_prob` is the product of these per-card marginals (what the per-card cross-entropy
of the belief-quality study measures). `sample` draws card by card *without replacement*
(each card drawn from its slot's allowed types, in proportion to the copies still
unseen after the cards already drawn for earlier slots), so every sampled hand is jointly
consistent with the counts; a draw that reaches a slot with no copy left is rejected and
redrawn. That sequential draw is not the exact posterior over whole hands (each slot is
normalised over what its own prefix left), so `sample_weighted` returns the importance
weight that corrects it: the exact posterior is proportional to the product of the
copies left at each draw, the draw's probability is that product over the product of
the per-slot totals, so the log weight is the sum of the log per-slot totals.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

from lbs_pz.search.beliefs.base import Belief, as_rng, check_hand


class GroundedBelief(Belief):
    name = "grounded"

    def card_probabilities(self) -> np.ndarray:
        info = self.seat_info()
        w = info.plaus * info.unseen[None, :].astype(np.float64)
        tot = w.sum(axis=1, keepdims=True)
        return np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)

    def log_prob(self, hand) -> float:
        probs = self.card_probabilities()
        hand = check_hand(hand, probs.shape[0])
        with np.errstate(divide="ignore"):
            return float(np.log(probs[np.arange(len(hand)), hand]).sum())

    def sample(self, n: int, rng, max_rounds: int = 50) -> np.ndarray:
        return self.sample_weighted(n, rng, max_rounds)[0]

    def sample_weighted(self, n: int, rng,
                        max_rounds: int = 50) -> Tuple[np.ndarray, np.ndarray]:
        rng = as_rng(rng)
        info = self.seat_info()
        H, T = info.plaus.shape
        out = np.empty((n, H), dtype=np.int64)
        log_w = np.zeros(n)
        todo = np.arange(n)
        proposed = 0
        for _ in range(max_rounds):
            if len(todo) == 0:
                break
            m = len(todo)
            proposed += m
            left = np.tile(info.unseen.astype(np.float64), (m, 1))
            ok = np.ones(m, dtype=bool)
            cards = np.zeros((m, H), dtype=np.int64)
            log_totals = np.zeros(m)
            for i in range(H):
                w = left * info.plaus[i]
                cw = np.cumsum(w, axis=1)
                tot = cw[:, -1]
                ok &= tot > 0
                log_totals += np.log(np.maximum(tot, 1.0))
                u = rng.random(m) * tot
                c = (cw <= u[:, None]).sum(axis=1)
                c = np.minimum(c, T - 1)
                cards[:, i] = c
                left[np.arange(m), c] -= 1
                left = np.maximum(left, 0)
            out[todo[ok]] = cards[ok]
            log_w[todo[ok]] = log_totals[ok]
            todo = todo[~ok]
        if len(todo):
            raise RuntimeError("grounded belief: no hand is consistent with the seat's "
                               "knowledge and the unseen counts")
        self.last_proposed, self.last_legal = proposed, n
        return out, log_w
