"""The learned belief: a trained `BeliefNet` run on the seat's observation sequence.

The encoder LSTM is advanced by one step per move (the seat's canonical observation
after the move), so `observe` costs one small LSTM step. Sampling draws card by card
from the auto-regressive decoder, whose logits include the grounded prior when the model
was trained with it (the unseen copies each slot's hints allow, after the cards already
drawn for the earlier slots). By default each slot's distribution is restricted to the
types its card knowledge allows and that still have an unseen copy (`mask=True`); hands
that then need more copies of a type than remain unseen are rejected. `sample` returns
the legal hands only (m <= n rows) and records `last_proposed` / `last_legal`;
`too_few_legal(min_fraction)` tells a search to fall back to its blueprint.

`sample_weighted` also returns each hand's importance weight toward the exact posterior
(its multiplicity under the unseen counts over the decoder's probability of drawing it),
so a search can correct whatever the network gets wrong as its sample grows.

`log_prob` is the decoder's log-probability of the hand under the same (masked,
renormalised) distribution; `card_probabilities` are per-slot marginals estimated from
`marginal_samples` samples with a fixed seed.

A learned belief is trained FOR a blueprint (`lbs-pz train-belief --blueprint SPEC`) and a
game variant; its checkpoint records both (`lbs_pz.models.checkpoint`). Given
`blueprint=`, `LearnedBelief` checks the checkpoint against it (and, at `reset`, against
the game's variant) and raises `CheckpointMismatchError` on a mismatch unless
`allow_mismatch=True`. The shipped model ("belief_strong_2p", `default_checkpoint()`):
2 players, 5 cards, trained for the "strong" rule bot; see lbs_pz/models/README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from lbs_pz.models import path as model_path
from lbs_pz.optional import TorchThreads, require_torch
from lbs_pz.search.beliefs.base import Belief, as_rng, check_hand
from lbs_pz.search.beliefs.model import load_belief
from lbs_pz.search.trained_for import TrainedForBlueprint

if TYPE_CHECKING:           # torch's own types for the checker; at run time, the gate
    import torch
else:
    torch = require_torch("the learned belief")

DEFAULT_CHECKPOINT = "belief_strong_2p"


def default_checkpoint() -> str:
    """Path of the belief that ships with the package (2p, 5 cards, strong bot)."""
    return model_path(DEFAULT_CHECKPOINT)


class LearnedBelief(TrainedForBlueprint, Belief):
    """Args:
        checkpoint: a `lbs-pz train-belief` checkpoint: file path or shipped model name.
            Default: the shipped belief trained for `blueprint` (`find_model`; a
            CheckpointMismatchError naming the fix if none ships), or the shipped
            strong-bot belief when no blueprint is given.
        blueprint: the blueprint the partners play (object or spec string); the
            checkpoint must have been trained for it (`trained_for`).
        allow_mismatch: use a checkpoint made for another blueprint or variant anyway
            (not when the network cannot read the variant's observations).
        model, config: a BeliefNet and its HanabiConfig instead of a checkpoint
            (nothing is checked against the blueprint then).
        mask: restrict each card to types allowed by knowledge and unseen counts.
        threads: torch intra-op threads while this belief computes (restored afterwards;
            None: torch's setting). One thread is fastest for these small ops, and avoids
            torch's pathological slow-down on a machine whose cores are busy.

    Attributes (`TrainedForBlueprint`): `trained_for` ({"spec", "fingerprint"} or None),
    `model_config` (HanabiConfig it was trained on), `checkpoint_path` (None for a given model),
    `mismatches` (what allow_mismatch let through).
    """

    name = "learned"
    kind, reads = "belief", "observations"

    def __init__(self, checkpoint: Optional[str] = None, blueprint=None,
                 allow_mismatch: bool = False, model=None, config=None, mask: bool = True,
                 marginal_samples: int = 4000, threads: Optional[int] = 1):
        super().__init__()
        model, config = self._load_for(checkpoint, blueprint, allow_mismatch,
                                       DEFAULT_CHECKPOINT, load_belief, model, config)
        self.model = model.eval()
        self.model_config = config
        self.mask = mask
        self.marginal_samples = marginal_samples
        self.threads = threads
        self._torch = torch

    def _threads(self):
        return TorchThreads(self._torch, self.threads)

    # --- updates -------------------------------------------------------------------------------

    def _reset(self, start) -> None:
        self.check_game(start.config)
        self._hc = None
        self._pending = [start.encode(self.seat)]
        self._ctx: Optional[torch.Tensor] = None     # per slot, once a move is observed

    def _update(self, before, after, rec) -> None:
        self._pending.append(after.encode(self.seat))

    def _after_updates(self) -> None:
        torch = self._torch
        if not self._pending:
            return
        obs = torch.as_tensor(np.stack(self._pending))[None]
        with torch.no_grad(), self._threads():
            h, self._hc = self.model.encode(obs, self._hc)
            self._ctx = self.model.context(h[0, -1])          # (H, D)
        self._pending = []

    # --- decoding -----------------------------------------------------------------------------

    def _allowed(self, info) -> np.ndarray:
        allowed = info.plaus & (info.unseen > 0)[None, :]
        return allowed

    def _slot_logits(self, i, cards):
        m, ctx = self.model, self._ctx
        assert ctx is not None          # reset() observes the game: the context is set
        return m.slot_logits(ctx[i].expand(cards.shape[0], -1), i, cards[:, :i])

    def _logits(self, i, prefix_cards, info_t):
        """Slot i's logits for rows of prefix cards (m, >= i), with the grounded prior
        (if the model has one) and the knowledge/unseen mask (if self.mask)."""
        torch = self._torch
        logits = self._slot_logits(i, prefix_cards)
        unseen, plaus, allowed = info_t
        if self.model.cfg.prior:
            K = self.config.num_card_types
            used = torch.zeros((prefix_cards.shape[0], K))
            if i > 0:
                used.scatter_add_(1, prefix_cards[:, :i], torch.ones((prefix_cards.shape[0], i)))
            logits = logits + self.model.log_prior(plaus[i], unseen - used)
        if self.mask:
            logits = logits.masked_fill(~allowed[i], float("-inf"))
        return logits

    def _info_tensors(self, info):
        torch = self._torch
        return (torch.as_tensor(info.unseen, dtype=torch.float32),
                torch.as_tensor(info.plaus, dtype=torch.float32),
                torch.as_tensor(self._allowed(info)))

    def _draw(self, n, rng, info):
        """(cards int64 (n, hand_len), log-probability of drawing each, float64 (n,)),
        decoded DRAW_CHUNK hands at a time so that memory stays flat for any n (a
        search's filter may propose hundreds of thousands); the random numbers are drawn
        once, so the hands do not depend on the chunking."""
        torch = self._torch
        info_t = self._info_tensors(info)
        u = torch.as_tensor(rng.random((info.hand_len, n)), dtype=torch.float32)
        cards = np.zeros((n, info.hand_len), dtype=np.int64)
        log_q = np.zeros(n)
        with torch.no_grad():
            for lo in range(0, n, self.DRAW_CHUNK):
                hi = min(lo + self.DRAW_CHUNK, n)
                cards[lo:hi], log_q[lo:hi] = self._decode(u[:, lo:hi], info_t)
        return cards, log_q

    DRAW_CHUNK = 8192

    def _decode(self, u, info_t):
        """The hands drawn by uniforms u (hand_len, m): (cards, log-probabilities)."""
        torch = self._torch
        n_slots, n = u.shape
        cards = torch.zeros((n, n_slots), dtype=torch.long)
        K = self.config.num_card_types
        keys = torch.zeros(n, dtype=torch.long)
        log_q = torch.zeros(n, dtype=torch.float64)
        for i in range(n_slots):
            # Samples sharing a prefix c_<i share slot i's distribution: decode each
            # distinct prefix once (few early on, never more than n).
            uniq, inverse = torch.unique(keys, return_inverse=True)
            first = torch.zeros(len(uniq), dtype=torch.long).scatter_(
                0, inverse, torch.arange(n))
            logits = self._logits(i, cards[first], info_t)
            probs = torch.softmax(logits, dim=-1)
            cw = torch.cumsum(probs, dim=-1)[inverse]
            c = torch.searchsorted(cw, (u[i] * cw[:, -1]).unsqueeze(-1), right=True)
            cards[:, i] = c.squeeze(-1).clamp(max=K - 1)
            log_q += torch.log(probs[inverse, cards[:, i]].double())
            keys = keys * K + cards[:, i]
        return cards.numpy(), log_q.numpy()

    def sample(self, n: int, rng) -> np.ndarray:
        return self.sample_weighted(n, rng)[0]

    def sample_weighted(self, n: int, rng) -> Tuple[np.ndarray, np.ndarray]:
        rng = as_rng(rng)
        info = self.seat_info()
        if info.hand_len == 0:
            return np.zeros((n, 0), dtype=np.int64), np.zeros(n)
        with self._threads():
            cards, log_q = self._draw(n, rng, info)
        legal = info.consistent(cards)
        self.last_proposed, self.last_legal = n, int(legal.sum())
        cards = cards[legal].astype(np.int64)
        return cards, info.log_multiplicity(cards) - log_q[legal]

    def log_prob(self, hand) -> float:
        torch = self._torch
        info = self.seat_info()
        hand = check_hand(hand, info.hand_len)
        allowed = self._allowed(info)
        if self.mask and not allowed[np.arange(len(hand)), hand].all():
            return -np.inf
        cards = torch.as_tensor(hand[None])
        info_t = self._info_tensors(info)
        total = 0.0
        with torch.no_grad(), self._threads():
            for i in range(len(hand)):
                logits = self._logits(i, cards, info_t)[0]
                total += float(torch.log_softmax(logits, dim=-1)[hand[i]])
        return total

    def card_probabilities(self) -> np.ndarray:
        info = self.seat_info()
        T = self.config.num_card_types
        rng = np.random.default_rng(12345)
        with self._threads():
            cards = self._draw(self.marginal_samples, rng, info)[0]
        out = np.zeros((info.hand_len, T))
        for i in range(info.hand_len):
            out[i] = np.bincount(cards[:, i], minlength=T)[:T] / len(cards)
        return out


