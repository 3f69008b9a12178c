"""The learned belief network (torch): encoder LSTM + auto-regressive hand decoder.

Input: a seat's observation sequence, one HLE canonical vector per time step (the seat's
view after every move, both players' moves included). Output: for each time step, a
distribution over the seat's own hand, factorised card by card (slot 0 = oldest card):

    p(c_0 .. c_{n-1} | o_<=t) = prod_i p(c_i | c_<i, o_<=t)

Architecture (shapes for a batch B, sequence length T, E = encoding size, H hand size,
K = card types):

    x_t  = ReLU(Linear(E -> embed)(o_t))                      (B, T, embed)
    h_t  = LSTM(embed -> hidden, layers)(x)                   (B, T, hidden)
    slot i: z_i = ReLU(ctx_i(h_t) + sum_{j<i} emb_{i,j}[c_j])  (.., dec)
            logits_i = out_i(z_i)                               (.., K)

The decoder is MADE-like: the previous cards enter through per-(slot, previous slot)
embedding tables, so sampling N hands costs N * H * (dec * K) multiply-adds after one
encoder step (10,000 hands in a few ms), unlike an LSTM decoder.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np

from lbs_pz.engine import HanabiConfig
from lbs_pz.models.checkpoint import (CheckpointError, build_network, game_of, load_checkpoint,
                                     save_checkpoint)
from lbs_pz.optional import require_torch

if TYPE_CHECKING:           # torch's own types for the checker; at run time, the gate
    import torch
    import torch.nn.functional as F
    from torch import nn
else:
    torch = require_torch("the learned belief network")
    nn, F = torch.nn, torch.nn.functional


@dataclasses.dataclass
class BeliefNetConfig:
    """Sizes of the belief network (all ints, stored in checkpoints)."""

    encoding_size: int = 658
    hand_size: int = 5
    card_types: int = 25
    embed: int = 256
    hidden: int = 256
    layers: int = 1
    decoder: int = 128
    # Add the grounded prior to the decoder's logits: slot i's logits are the network's
    # plus log(plausible_i(t) * copies of t still unseen after the cards of slots < i).
    # The network then learns only what conventions add to card counting and hints.
    prior: bool = False


def prior_layout(config) -> Tuple[np.ndarray, np.ndarray, int, int]:
    """For HLE's canonical encoding of `config`: (M (E, K) float32, count (K,) float32,
    knowledge offset, knowledge stride) such that the observer's unseen copies are
    count - obs @ M and its slot i's plausible types are
    obs[off + i * stride : off + i * stride + K]."""
    P, C, R, hs = config.players, config.colors, config.ranks, config.hand_size
    K, E = C * R, config.encoding_size
    M = np.zeros((E, K), dtype=np.float32)
    off = 0
    for _ in range(1, P):                           # other hands, one-hot per slot
        for i in range(hs):
            M[off + i * K: off + (i + 1) * K] += np.eye(K, dtype=np.float32)
        off += hs * K
    off += P + config.deck_size - P * hs            # short-hand bits, deck thermometer
    for c in range(C):                              # fireworks: one-hot of the top card
        for top in range(R):
            for r in range(top + 1):
                M[off + c * R + top, c * R + r] = 1.0
    off += C * R + config.max_information_tokens + config.max_life_tokens
    count = np.array([config.card_count(t) for t in range(K)], dtype=np.float32)
    for t in range(K):                              # discards: thermometer per type
        M[off: off + int(count[t]), t] = 1.0
        off += int(count[t])
    off += 2 * P + 4 + C + R + 2 * hs + K + 2       # last action
    return M, count, off, K + C + R


class BeliefNet(nn.Module):
    """`game_config` (a HanabiConfig) is needed when cfg.prior is set."""

    prior_M: torch.Tensor           # the grounded prior's buffers (with cfg.prior)
    prior_count: torch.Tensor

    def __init__(self, cfg: BeliefNetConfig, game_config=None):
        super().__init__()
        self.cfg = cfg
        if cfg.prior:
            if game_config is None:
                raise ValueError("a BeliefNet with the grounded prior needs the game config")
            M, count, off, stride = prior_layout(game_config)
            self.register_buffer("prior_M", torch.as_tensor(M), persistent=False)
            self.register_buffer("prior_count", torch.as_tensor(count), persistent=False)
            self.prior_off, self.prior_stride = off, stride
        H, K, D = cfg.hand_size, cfg.card_types, cfg.decoder
        self.inp = nn.Linear(cfg.encoding_size, cfg.embed)
        self.lstm = nn.LSTM(cfg.embed, cfg.hidden, num_layers=cfg.layers, batch_first=True)
        self.ctx = nn.Linear(cfg.hidden, H * D)
        # prev[i, j, c]: contribution of card c at slot j < i to slot i's hidden layer.
        self.prev = nn.Parameter(torch.randn(H, H, K, D) * (1.0 / D ** 0.5))
        self.out_w = nn.Parameter(torch.randn(H, D, K) * (1.0 / D ** 0.5))
        self.out_b = nn.Parameter(torch.zeros(H, K))

    # --- encoder ----------------------------------------------------------------------

    def encode(self, obs: torch.Tensor, hc: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
               ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        """obs (B, T, E) float -> (context (B, T, hidden), new LSTM state)."""
        x = torch.relu(self.inp(obs))
        return self.lstm(x, hc)

    # --- decoder ----------------------------------------------------------------------

    def slot_logits(self, ctx_i: torch.Tensor, i: int, prev_cards: torch.Tensor) -> torch.Tensor:
        """Logits (..., K) of slot i. ctx_i (..., D) is slot i's context projection;
        prev_cards (..., >= i) long: the cards of slots 0..i-1 (all >= 0 where slot i holds
        a card: hands only shrink from the newest slot)."""
        if i > 0:
            # Slots after the last card hold -1: only their own (ignored) targets see them.
            K, D = self.cfg.card_types, self.cfg.decoder
            lead = prev_cards.shape[:-1]
            idx = (prev_cards[..., :i].clamp(min=0)
                   + torch.arange(i, device=prev_cards.device) * K).reshape(-1, i)
            z = ctx_i + F.embedding_bag(idx, self.prev[i, :i].reshape(i * K, D),
                                        mode="sum").reshape(*lead, D)
        else:
            z = ctx_i
        z = torch.relu(z)
        return z @ self.out_w[i] + self.out_b[i]

    def context(self, h: torch.Tensor) -> torch.Tensor:
        """(..., hidden) -> (..., H, D) per-slot projections."""
        D = self.cfg.decoder
        return self.ctx(h).reshape(*h.shape[:-1], self.cfg.hand_size, D)

    def prior_inputs(self, obs: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(unseen (..., K), plausible (..., H, K)) read off canonical observations."""
        unseen = self.prior_count - obs @ self.prior_M
        K, H = self.cfg.card_types, self.cfg.hand_size
        idx = (self.prior_off + torch.arange(H, device=obs.device)[:, None] * self.prior_stride
               + torch.arange(K, device=obs.device)[None, :])
        return unseen, obs[..., idx]

    @staticmethod
    def log_prior(plaus_i: torch.Tensor, avail: torch.Tensor) -> torch.Tensor:
        """log(plausible * available copies), floored at log(1e-12) (no -inf: no NaNs)."""
        return torch.log((plaus_i * avail.clamp(min=0)).clamp(min=1e-12))

    def log_probs(self, h: torch.Tensor, hands: torch.Tensor, prior=None) -> torch.Tensor:
        """Per-card log-probabilities of `hands` (..., H) long (-1 = empty slot, after
        the last card) under contexts h (..., hidden): (..., H), 0 at empty slots.
        `prior` = (unseen, plausible) from `prior_inputs` when cfg.prior is set."""
        ctx = self.context(h)
        out = []
        K = self.cfg.card_types
        if self.cfg.prior:
            unseen, plaus = prior
            avail = unseen.clone()
        for i in range(self.cfg.hand_size):
            logits = self.slot_logits(ctx[..., i, :], i, hands[..., :i])
            if self.cfg.prior:
                logits = logits + self.log_prior(plaus[..., i, :], avail)
                avail = avail - F.one_hot(hands[..., i].clamp(min=0), K).to(avail.dtype)
            lp = torch.log_softmax(logits, dim=-1)
            tgt = hands[..., i]
            picked = lp.gather(-1, tgt.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            out.append(torch.where(tgt >= 0, picked, torch.zeros_like(picked)))
        return torch.stack(out, dim=-1)

    def forward(self, obs: torch.Tensor, hands: torch.Tensor) -> torch.Tensor:
        """obs (B, T, E), hands (B, T, H) long -> per-card log-probs (B, T, H)."""
        h, _ = self.encode(obs)
        return self.log_probs(h, hands, self.prior_inputs(obs) if self.cfg.prior else None)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# --- checkpoints (the lbs_pz layout of lbs_pz.models.checkpoint, kind "belief") -------------

def save_belief(path: str, model: BeliefNet, config, trained_for: Optional[dict] = None,
                info: Optional[dict] = None, half: bool = False) -> dict:
    """Write `model` (trained on games of `config` for the blueprint identity
    `trained_for`) as a "belief" checkpoint; float16 weights if `half`."""
    return save_checkpoint(path, "belief", config, dataclasses.asdict(model.cfg),
                           model.state_dict(), trained_for=trained_for, info=info, half=half)


def load_belief(path_or_name: str,
                map_location: Any = "cpu") -> Tuple[BeliefNet, HanabiConfig, dict]:
    """A belief checkpoint (file path or shipped name, e.g. "belief_strong_2p") ->
    (BeliefNet in eval mode, HanabiConfig, checkpoint dict). Read with
    `torch.load(weights_only=True)`; CheckpointError (a ValueError) for a missing,
    corrupt, foreign or old-layout file, NaN or infinite weights, sizes above the caps, or
    weights that do not fit the network (checked before the network is allocated:
    `lbs_pz.models.checkpoint.build_network`)."""
    ckpt = load_checkpoint(path_or_name, "belief", map_location)
    config = game_of(ckpt)
    try:
        net_cfg = BeliefNetConfig(**ckpt["architecture"])
    except TypeError as err:
        raise CheckpointError(f"{ckpt['path']!r}: belief checkpoint does not match the "
                              f"network: {err}") from None
    model = build_network(ckpt, lambda: BeliefNet(net_cfg, config), "belief network")
    return model.eval(), config, ckpt
