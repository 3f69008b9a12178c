"""The paper's public-LSTM Q-network and its Blueprint adapter.

Network (`PublicLSTMNet`, after Hu et al., "Learned Belief Search", section 4):

    public features (B, T, Dpub) -> Linear + ReLU -> LSTM ----------------> h (B, T, H)
    each seat's observation (B, T, P, E) + seat one-hot -> MLP (2 x Linear + ReLU) -> m (B, T, P, H)
    fused = h[:, :, None] * m          (element-wise product, one row per seat)
    dueling head: Q = V + A(fused) - mean_a A(fused)                 -> (B, T, P, M + 1)
        (or, with dueling="max", Q = V + A - max over the seat's LEGAL moves of A, so that
        the greedy move's Q is V itself)
    V = v_head(fused) (linear), or with value_hidden > 0 an MLP of its own on [h, the
    seat's MLP input] (its capacity does not come out of the policy's features), or with
    value_lstm > 0 that MLP on [h_v, the seat's MLP input], h_v (B, T, Hv) from a public
    stream of the value's own (Linear + ReLU -> LSTM), trained for the value alone

`Dpub` is the public part of HLE's canonical vector (`lbs_pz.engine.features`, taken
from seat 0's vector): the LSTM never sees a private feature, so its state is a function
of the public history alone and is the same for every seat and for every world a search
samples. The MLP gets the seat's whole canonical vector (E floats: its private features,
the other players' cards, followed by the public features in the seat's own frame) and a
one-hot of the seat. The M + 1 outputs are the M moves in HLE order
plus a "no-op" (index M), the only legal move of the players who are not to move; the
training objective is VDN's sum over players (`lbs_pz.train.blueprint`), so

    value(state) = score + sum over seats p of max over p's legal moves of Q_p

estimates the expected final score (the paper bootstraps LBS-k rollouts the same way).

The architecture's options (width, fusion, card and convention features, dueling, value
head) come in named presets, `ARCHITECTURES` ("paper", "card_features", "conventions",
"conventions_maxq", "conventions_value"): `PublicLSTMNet.from_preset(name, config,
**overrides)`. The inputs (`public_part`, `seat_inputs`, `encode_batch`, the card and
convention features) are built by `lbs_pz.agents.features`.

`PublicLSTMBlueprint` wraps a trained net as a `Blueprint` (`lbs_pz.agents.base`):
greedy, deterministic, no private memory (its recurrent state is rebuilt from the public
history, and cached per history), batched `act_batch` / `rollout` / `value` on a
`HanabiBatch` with one forward per step over all running worlds (the rollout carries each
world's LSTM state along, one LSTM step per move). `PublicLSTMBlueprint.load(path)` reads
a checkpoint of `lbs-pz train-blueprint` (a path, or a shipped model's name, default
"public_lstm_2p"); `lbs_pz.agents.load_blueprint("lstm:PATH")` calls it.

>>> from lbs_pz.engine import HanabiConfig, HanabiState
>>> bp = PublicLSTMBlueprint(PublicLSTMNet.for_config(HanabiConfig(), hidden=32))
>>> state = HanabiState(HanabiConfig(), seed=1)
>>> bp.act(state) in state.legal_moves()
True
"""

from __future__ import annotations

import collections
import copy
import functools
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, cast

import numpy as np

from lbs_pz.agents.base import check_max_moves, file_sha256, require_batch
# the features live in lbs_pz.agents.features; public_part, seat_inputs, encode_batch and
# the convention names stay importable from here too
from lbs_pz.agents.features import (CONVENTION_HINT_PARTS, CONVENTION_SLOT_PARTS,  # noqa: F401
                                    CardLayout, ConventionReader, card_features,
                                    convention_feature_size, convention_features,
                                    encode_batch, public_part, seat_inputs)
from lbs_pz.checks import as_bool, as_choice, as_int
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.engine.features import private_size
from lbs_pz.models.checkpoint import build_network, game_of, load_checkpoint
from lbs_pz.optional import require_torch

if TYPE_CHECKING:           # torch's own types for the checker; at run time, the gate
    import torch
    from torch import nn
else:
    torch = require_torch("the public-LSTM blueprint")
    nn = torch.nn

# an LSTM's state (h, c)
LSTMState = Tuple["torch.Tensor", "torch.Tensor"]

NEG = -1e9          # Q given to masked (illegal) moves before the argmax

# --- features ---------------------------------------------------------------------------
# public_part, seat_inputs, encode_batch: see lbs_pz.agents.features


def seat_masks(legal: np.ndarray, current: np.ndarray, players: int) -> np.ndarray:
    """Legal outputs of every seat, bool (N, P, M + 1): the player to move has its legal
    moves (`legal`, (N, M)), every other seat only the no-op (index M)."""
    n, m = legal.shape
    out = np.zeros((n, players, m + 1), dtype=bool)
    out[:, :, m] = True
    rows = np.arange(n)
    out[rows, current] = False
    out[rows, current, :m] = legal.astype(bool)
    return out


# --- the network --------------------------------------------------------------------------


class CardFeatures(nn.Module):
    """Per-card features computed exactly (no parameters) from a canonical vector (HLE's
    layout, `lbs_pz.engine._encode`): from the fireworks, the tables playable[c, r] and
    useless[c, r] (already played); for each card the observer sees in the other hands
    (one-hot of its type) whether it is playable / useless; for each card of every hand's
    common knowledge (its plausible types) the fraction of plausible types that are
    playable / useless and whether all are, whether a hint touched it, whether it is the
    hand's chop (its oldest untouched card); for each hint move (HLE's order: colors to
    the next players, then ranks) the cards it touches, the playable and useless ones
    among them, those whose color (rank) it tells for the first time, whether it touches
    the chop, whether it touches an untouched card, whether its focus (the chop if it
    touches it, else the newest untouched card it touches) is playable / useless.
    obs (..., E) -> (..., size) float, with size = 2 * C * R + 2 * (P - 1) * H
    + 6 * P * H + 8 * (P - 1) * (C + R) (the last two parts only with card knowledge:
    the minimal observation's vector has none)."""

    def __init__(self, players: int, obs_dim: int, colors: int, ranks: int, hand_size: int,
                 deck_size: int, public: bool = False):
        super().__init__()
        self.public = as_bool(public, "card_features public", what="a bool", error=ValueError)
        # where each section lies and the sizes (`lbs_pz.agents.features.CardLayout`)
        self.layout = layout = CardLayout(players, obs_dim, colors, ranks, hand_size, deck_size)
        self.players, self.colors, self.ranks = players, colors, ranks
        self.hand_size, self.deck_size, self.obs_dim = hand_size, deck_size, obs_dim
        self.hands_len, self.fw_off, self.kn_off = layout.hands_len, layout.fw_off, layout.kn_off
        self.has_knowledge = layout.has_knowledge
        self.size, self.public_size = layout.size, layout.public_size

    @staticmethod
    def game_args(config: HanabiConfig) -> dict:
        return CardLayout.game_args_of(config)

    def args(self) -> dict:
        out = dict(colors=self.colors, ranks=self.ranks, hand_size=self.hand_size,
                   deck_size=self.deck_size)
        if self.public:
            out["public"] = True
        return out

    def _common(self, x: torch.Tensor, fw_off: int, kn_off: int):
        """The features of the common knowledge in x (a canonical vector, or its public
        part with the offsets shifted): the tables (..., C*R, 2), a list of feature
        blocks, and (hinted colors/ranks (..., P, H, C+R), touched, chop (..., P, H))."""
        C, R, H, P = self.colors, self.ranks, self.hand_size, self.players
        lead = x.shape[:-1]
        fw = x[..., fw_off:fw_off + C * R].reshape(*lead, C, R)
        # fireworks[c] = k is bit k - 1; playable (c, r) iff fireworks[c] == r (0-based r)
        none = 1.0 - fw.sum(-1, keepdim=True)
        playable = torch.cat([none, fw[..., :-1]], dim=-1).reshape(*lead, C * R)
        # useless (c, r) iff fireworks[c] > r, i.e. a bit k >= r is set
        useless = fw.flip(-1).cumsum(-1).flip(-1).reshape(*lead, C * R)
        tables = torch.stack([playable, useless], dim=-1)          # (..., C*R, 2)
        blocks = [playable, useless]
        if not self.has_knowledge:
            return tables, blocks, None
        know = x[..., kn_off:].reshape(*lead, P, H, C * R + C + R)
        kn = know[..., :C * R].reshape(*lead, P * H, C * R)
        count = kn.sum(-1, keepdim=True)
        hit = kn @ tables                                          # (..., P*H, 2)
        frac = hit / count.clamp(min=1.0)
        full = ((hit == count) & (count > 0)).to(x.dtype)
        # touched (a color or rank hinted) and chop (the oldest, i.e. lowest, untouched
        # card) of every hand
        hinted_any = know[..., C * R:]
        touched = hinted_any.sum(-1).clamp(max=1.0)                # (..., P, H)
        untouched = (1.0 - touched) * (count[..., 0] > 0).reshape(*lead, P, H).to(x.dtype)
        before = torch.cumsum(untouched, dim=-1) - untouched       # untouched older cards
        chop = untouched * (before == 0).to(x.dtype)
        blocks += [frac.reshape(*lead, -1), full.reshape(*lead, -1),
                   touched.reshape(*lead, -1), chop.reshape(*lead, -1)]
        return tables, blocks, (hinted_any, touched, chop)

    def public_features(self, pub: torch.Tensor) -> torch.Tensor:
        """The common-knowledge features of a public vector (`public_part`): pub (..., Dpub)
        -> (..., public_size): the playable / useless tables and, per card of every hand,
        the knowledge fractions, touched and chop (as in `forward`, seat 0's frame)."""
        _, blocks, _ = self._common(pub, self.fw_off - self.hands_len,
                                    self.kn_off - self.hands_len)
        return torch.cat(blocks, dim=-1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if obs.device.type == "cpu" and obs.dtype == torch.float32 and not obs.requires_grad \
                and obs.shape[-1] == self.obs_dim:
            # the same numbers from one C loop (`lbs_pz.agents.features.card_features`):
            # search's rollouts call this at every step, where ~100 small tensor
            # operations cost more than the net
            flat = obs.reshape(-1, self.obs_dim).contiguous()
            out = torch.empty(flat.shape[0], self.size)
            card_features(flat.numpy(), self.layout, out.numpy())
            return out.reshape(*obs.shape[:-1], self.size)
        return self.forward_torch(obs)

    def forward_torch(self, obs: torch.Tensor) -> torch.Tensor:
        """`forward` in tensor operations (any device, differentiable)."""
        C, R, H, P = self.colors, self.ranks, self.hand_size, self.players
        lead = obs.shape[:-1]
        tables, blocks, common = self._common(obs, self.fw_off, self.kn_off)
        seen = obs[..., :self.hands_len].reshape(*lead, (P - 1) * H, C * R)
        out = blocks[:2] + [(seen @ tables).reshape(*lead, -1)] + blocks[2:]
        if common is not None:
            hinted_any, touched, chop = common
            # what each hint would touch, in HLE's move order: color hints to the next
            # players, then rank hints: cards touched, playable / useless touched, touched
            # cards whose color (rank) was not hinted before; whether it touches the chop,
            # any untouched card, and whether its focus (the chop if it newly touches it,
            # else the newest newly touched card) is playable / useless
            cards = seen.reshape(*lead, P - 1, H, C, R)
            info = hinted_any[..., 1:, :, :]
            flags = (seen @ tables).reshape(*lead, P - 1, H, 2)
            p_chop, p_new = chop[..., 1:, :, None], (1.0 - touched[..., 1:, :, None])
            for touch, hinted in ((cards.sum(-1), info[..., :C]), (cards.sum(-2), info[..., C:])):
                # touch (..., P-1, H, K): card j has color / rank k; hinted (..., P-1, H, K)
                fresh = 1.0 - hinted.sum(-1, keepdim=True)
                n = touch.sum(-2)                                      # (..., P-1, K)
                good = (touch * flags[..., :1]).sum(-2)
                bad = (touch * flags[..., 1:]).sum(-2)
                new = (touch * fresh).sum(-2)
                first = touch * p_new                                  # newly touched cards
                later = first.flip(-2).cumsum(-2).flip(-2) - first
                newest = first * (later == 0).to(obs.dtype)
                on_chop = (touch * p_chop).sum(-2, keepdim=True)       # (..., P-1, 1, K)
                focus = on_chop * p_chop * touch + (1.0 - on_chop) * newest
                out.append(torch.stack([n, good, bad, new, on_chop[..., 0, :], first.sum(-2)
                                        .clamp(max=1.0), (focus * flags[..., :1]).sum(-2),
                                        (focus * flags[..., 1:]).sum(-2)], dim=-1)
                           .reshape(*lead, -1))
        return torch.cat(out, dim=-1)


# --- architecture presets -----------------------------------------------------------------

_PAPER = dict(hidden=256, fusion="product", card_features=False, public_features=False,
              value_hidden=0, conventions=False, hint_head=False, dueling="mean",
              value_lstm=0)

ARCHITECTURES: Dict[str, dict] = {
    "paper": dict(_PAPER),
    "card_features": dict(_PAPER, card_features=True),
    "conventions": dict(_PAPER, card_features=True, conventions=True, hint_head=True),
    "conventions_maxq": dict(_PAPER, card_features=True, conventions=True, hint_head=True,
                             dueling="max"),
    "conventions_value": dict(_PAPER, card_features=True, conventions=True, hint_head=True,
                              dueling="max", value_hidden=256, value_lstm=256),
}
"""Named architectures of `PublicLSTMNet`: each is a complete set of the game-independent
keyword arguments of `PublicLSTMNet.for_config` (hidden, fusion, card_features,
public_features, value_hidden, conventions, hint_head, dueling, value_lstm; the game
fixes the rest), so `PublicLSTMNet.from_preset(name, config, **overrides)` (or
`for_config(config, **ARCHITECTURES[name])`) builds one. A checkpoint stores the net's
full constructor arguments (`PublicLSTMNet.arch()`), never a preset's name: presets can
gain members without changing how any file loads. `net.preset()` (`preset_of(options)`)
names the preset a net is built from, with the options it overrides. Every public-LSTM
model this package has shipped is one preset exactly, except "public_lstm_2p" ("paper"
with hidden=128).

    paper              the LBS paper's public-LSTM: the raw canonical vector, the public
                       stream and the private MLP fused by an element-wise product, a
                       linear dueling head centred on the mean advantage; what Q-learning
                       (`lbs-pz train-blueprint`) trains ("public_lstm_2p", with
                       hidden=128).
    card_features      "paper" whose MLP also reads each card's exact playability and
                       uselessness (`CardFeatures`); what imitation of a rule bot starts
                       from (`lbs-pz distill`): "distilled_strong_2p" and its Q-learning
                       fine-tune "finetuned_strong_2p".
    conventions        "card_features" whose MLP also reads the strong bot's conventions
                       (`lbs_pz.agents.features.convention_features`), with the hint head
                       weighing every hint's convention terms: a net imitating a convention
                       player ("conventions_strong_2p").
    conventions_maxq   "conventions" with the advantage centred on the best legal move
                       (dueling="max"), so the net's value is score + sum of V: the
                       teacher-imitating nets whose value bootstraps search
                       ("conventions_maxq_2p", "conventions_expert_2p").
    conventions_value  "conventions_maxq" whose V is an MLP (256 wide) on a public LSTM of
                       its own (256 wide) and the seat's input, fitted after the policy
                       without changing a move (`lbs-pz distill --init START
                       --value-only --arch conventions_value`):
                       "conventions_maxq_value_2p", "conventions_expert_value_2p".

Overrides change any option (e.g. hidden=128, fusion="concat", public_features=True);
`lbs-pz train-blueprint` and `lbs-pz distill` take a preset (`--arch`) and the width
(`--hidden`) only. The key names and the preset names are stable.
"""


def preset_of(options: dict) -> Tuple[str, dict]:
    """(name, overrides): the preset of ARCHITECTURES that the `PublicLSTMNet.for_config`
    options `options` (keys missing: as in "paper") differ from in the fewest options (the
    first listed on a tie), and the options that differ, with their values here.
    `PublicLSTMNet.from_preset(name, config, **overrides)` builds that architecture."""
    unknown = set(options) - set(_PAPER)
    if unknown:
        raise ValueError(f"unknown architecture options {sorted(unknown)}; known: "
                         f"{', '.join(_PAPER)}")
    full = dict(_PAPER, **options)
    diffs = [(name, {k: v for k, v in full.items() if preset[k] != v})
             for name, preset in ARCHITECTURES.items()]
    return min(diffs, key=lambda diff: len(diff[1]))      # the first of the fewest


class PublicLSTMNet(nn.Module):
    """Public-LSTM Q-network (see the module docstring for the data flow and shapes).

    Args:
        pub_dim: public feature size Dpub (533 for the 2-player game).
        obs_dim: canonical observation size E (658 for the 2-player game).
        players: P.
        num_moves: M (20 for the 2-player game); the net outputs M + 1 values.
        hidden: H, width of the LSTM and of the MLP.
        fusion: how the public stream h (from the LSTM) and a seat's private stream m
            (from the MLP) are joined before the heads, both (..., H):
            "product" (the paper's, and what every checkpoint without a "fusion" entry
            loads as): h * m;
            "concat": ReLU(Linear([h, m])), which keeps m's signal when h is near zero
            (at the start of training the LSTM output is), see `lbs_pz.train.distill`.
        card_features: None (every checkpoint without the entry loads so) or the game's
            {"colors", "ranks", "hand_size", "deck_size"}: the MLP's input then also gets
            `card_features(obs)`, each card's playability and uselessness computed exactly
            from the vector (see `CardFeatures`), which an MLP learns only slowly; with
            "public": True the LSTM's input also gets the common-knowledge part of them
            (`CardFeatures.public_features`, a function of the public vector only).
        value_hidden: 0 (every checkpoint without the entry loads so): V is one linear
            layer on the fused features; > 0: V is an MLP (2 hidden layers of this width)
            on [h, the seat's MLP input]. Moves are the argmax of A alone, so V never
            changes a move: a value refitted after the policy was trained
            (`lbs-pz distill --value-only`) leaves the blueprint exactly as it was.
        conventions: 0 (every checkpoint without the entry loads so), or F =
            `convention_feature_size(config)`: the private stream's input per seat is then
            (..., E + F), the canonical vector followed by the seat's
            `convention_features` (the strong bot's conventions' reading of the position:
            promised and queued cards, chops, each hint's effect; `seat_inputs` builds
            it). They are public-history folds an LSTM learns only slowly, and what a net
            imitating a convention player needs (`lbs-pz distill --arch conventions`).
        dueling: how A is centred in Q = V + A - centre (every checkpoint without the
            entry loads as "mean"). "mean": the mean of A over all M + 1 outputs, as
            the paper's net. "max": the max of A over the seat's legal moves (Wang et al.
            2016, eq. 8), so the greedy move's Q is exactly V and the net's value
            (score + sum over seats of the greedy Q) is score + sum of V: the value no
            longer carries the advantage's margin max A - mean A, which for a net that
            imitated a teacher is a logit margin (about 12 points summed over the two
            seats, s.d. 1.6, in `conventions_strong_2p`) a linear V must cancel. Its Q
            needs the legal moves (`q(..., legal=)`); moves are the argmax of A either way.
        value_lstm: 0 (every checkpoint without the entry loads so), or Hv: V reads a
            public LSTM of its own of width Hv instead of the policy's h (needs
            value_hidden > 0). The recurrent state is then (H + Hv) wide, the policy's H
            first (`state_width`): every caller carries it whole. The policy's stream and
            heads are untouched, so `lbs-pz distill --value-only --arch
            conventions_value` (Hv = 256) fits a value with features of its own without
            changing a move.
        hint_head: with conventions, each hint move's advantage also gets
            <W fused, its hint features> (W: Linear(H, CONVENTION_HINT_PARTS)), one weighing
            shared by every hint and set by the context: a convention player scores each
            hint by the same rule, which a plain output layer must learn once per hint.
    """

    FUSIONS = ("product", "concat")
    DUELING = ("mean", "max")

    def __init__(self, pub_dim: int, obs_dim: int, players: int, num_moves: int,
                 hidden: int = 256, fusion: str = "product",
                 card_features: Optional[dict] = None, value_hidden: int = 0,
                 conventions: int = 0, hint_head: bool = False, dueling: str = "mean",
                 value_lstm: int = 0):
        super().__init__()
        self.dueling = as_choice(dueling, "dueling", self.DUELING)
        conventions = as_int(conventions, "conventions", lo=0, error=ValueError)
        hint_head = as_bool(hint_head, "hint_head", what="a bool", error=ValueError)
        if hint_head and not conventions:
            raise ValueError(f"hint_head must be a bool, and needs conventions; got "
                             f"{hint_head!r} with conventions={conventions}")
        self.conventions, self.hint_head = conventions, hint_head
        as_choice(fusion, "fusion", self.FUSIONS)
        self.cards = None
        extra = 0
        pub_extra = 0
        if card_features is not None:
            self.cards = CardFeatures(players=players, obs_dim=obs_dim, **card_features)
            extra = self.cards.size
            pub_extra = self.cards.public_size if self.cards.public else 0
        for name, v in (("pub_dim", pub_dim), ("obs_dim", obs_dim), ("players", players),
                        ("num_moves", num_moves), ("hidden", hidden)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        # (first hint move, hint moves) with hint_head
        self._hints: Optional[Tuple[int, int]] = None
        if hint_head:
            # F = P*H*SLOT + (P - 1) + hints*HINT with hints = M - 2H: solve for H
            slot, hint = CONVENTION_SLOT_PARTS, CONVENTION_HINT_PARTS
            num, den = hint * num_moves + players - 1 - conventions, 2 * hint - slot * players
            hand = num // den if den and num % den == 0 else 0
            if hand < 1 or num_moves - 2 * hand < 1:
                raise ValueError(f"conventions={conventions} does not fit {players} players "
                                 f"and {num_moves} moves")
            self._hints = (2 * hand, num_moves - 2 * hand)
        self.value_hidden = value_hidden = as_int(value_hidden, "value_hidden", lo=0,
                                                  error=ValueError)
        value_lstm = as_int(value_lstm, "value_lstm", lo=0, error=ValueError)
        if value_lstm and not value_hidden:
            raise ValueError(f"value_lstm must be an integer >= 0, and needs value_hidden > 0; "
                             f"got {value_lstm!r} with value_hidden={value_hidden}")
        self.value_lstm = value_lstm
        self.state_width = hidden + value_lstm
        self.pub_dim, self.obs_dim, self.players = pub_dim, obs_dim, players
        self.num_moves, self.hidden, self.fusion = num_moves, hidden, fusion
        if fusion == "concat":
            self.fuse = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU())
        self.pub_in = nn.Sequential(nn.Linear(pub_dim + pub_extra, hidden), nn.ReLU())
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        private_in = obs_dim + conventions + players + extra
        self.mlp = nn.Sequential(nn.Linear(private_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU())
        if value_lstm:
            self.v_pub_in = nn.Sequential(nn.Linear(pub_dim + pub_extra, value_lstm), nn.ReLU())
            self.v_lstm = nn.LSTM(value_lstm, value_lstm, batch_first=True)
        self.v_head = nn.Linear(hidden, 1) if not value_hidden else nn.Sequential(
            nn.Linear((value_lstm or hidden) + private_in, value_hidden), nn.ReLU(),
            nn.Linear(value_hidden, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))
        self.a_head = nn.Linear(hidden, num_moves + 1)
        if hint_head:
            self.hint_w = nn.Linear(hidden, CONVENTION_HINT_PARTS)

    @classmethod
    def from_preset(cls, name: str, config: HanabiConfig, **overrides) -> "PublicLSTMNet":
        """The net of architecture `name` (a key of ARCHITECTURES: "paper",
        "card_features", "conventions", "conventions_maxq", "conventions_value") for the
        game `config`, with `overrides` replacing any of the preset's options (e.g.
        hidden=128). ValueError for an unknown name or option."""
        if name not in ARCHITECTURES:
            raise ValueError(f"unknown architecture {name!r}; one of "
                             f"{', '.join(ARCHITECTURES)}")
        unknown = set(overrides) - set(ARCHITECTURES[name])
        if unknown:
            raise ValueError(f"unknown architecture options {sorted(unknown)}; known: "
                             f"{', '.join(ARCHITECTURES[name])}")
        return cls.for_config(config, **dict(ARCHITECTURES[name], **overrides))

    @classmethod
    def for_config(cls, config: HanabiConfig, hidden: int = 256, fusion: str = "product",
                   card_features: bool = False, public_features: bool = False,
                   value_hidden: int = 0, conventions: bool = False,
                   hint_head: bool = False, dueling: str = "mean",
                   value_lstm: int = 0) -> "PublicLSTMNet":
        e = config.encoding_size
        cards: Optional[dict] = None
        if card_features or public_features:
            cards = CardFeatures.game_args(config)
            if public_features:
                cards["public"] = True
        return cls(e - private_size(config), e, config.players, config.num_moves, hidden,
                   fusion, cards, value_hidden,
                   convention_feature_size(config) if conventions or hint_head else 0,
                   hint_head, dueling, value_lstm)

    def arch(self) -> dict:
        """Constructor arguments (plain numbers and strings: stored in checkpoints). The
        default fusion ("product") is left out, so the architecture of a product net is
        the same dict as before the option existed."""
        out: Dict[str, Any] = dict(pub_dim=self.pub_dim, obs_dim=self.obs_dim,
                                   players=self.players, num_moves=self.num_moves,
                                   hidden=self.hidden)
        if self.fusion != "product":
            out["fusion"] = self.fusion
        if self.cards is not None:
            out["card_features"] = self.cards.args()
        if self.value_hidden:
            out["value_hidden"] = self.value_hidden
        if self.conventions:
            out["conventions"] = self.conventions
        if self.hint_head:
            out["hint_head"] = True
        if self.dueling != "mean":
            out["dueling"] = self.dueling
        if self.value_lstm:
            out["value_lstm"] = self.value_lstm
        return out

    def options(self) -> dict:
        """This net's game-independent options: the `for_config` keyword arguments (the
        keys of an ARCHITECTURES preset) that build it in its game; `preset_of` names
        the preset they come from."""
        cards = self.cards is not None
        return dict(hidden=self.hidden, fusion=self.fusion, card_features=cards,
                    public_features=self.cards is not None and self.cards.public,
                    value_hidden=self.value_hidden, conventions=self.conventions > 0,
                    hint_head=self.hint_head, dueling=self.dueling,
                    value_lstm=self.value_lstm)

    def preset(self) -> Tuple[str, dict]:
        """(name, overrides): the ARCHITECTURES preset this net is built from and the
        options it overrides (`preset_of`); `from_preset(name, config, **overrides)`
        builds a net of the same architecture."""
        return preset_of(self.options())

    def arch_for(self, config: HanabiConfig) -> dict:
        """The architecture a net with this one's options (width, fusion, features, value
        head) has in the game `config`: equal to `arch()` iff the net fits that game."""
        return PublicLSTMNet.for_config(config, **self.options()).arch()

    @property
    def input_dim(self) -> int:
        """Width of one seat's input to the private stream: E, or E + F with conventions."""
        return self.obs_dim + self.conventions

    def _private_in(self, obs: torch.Tensor, seat_onehot: torch.Tensor) -> torch.Tensor:
        """The MLP's input: obs (..., E [+ F]), seat one-hot (..., P) [, card features]."""
        if obs.shape[-1] != self.input_dim:
            raise ValueError(f"the net reads seat inputs of {self.input_dim} floats "
                             f"(canonical {self.obs_dim} + conventions {self.conventions}), "
                             f"got {obs.shape[-1]}")
        parts = [obs, seat_onehot]
        if self.cards is not None:
            parts.append(self.cards(obs[..., :self.obs_dim] if self.conventions else obs))
        return torch.cat(parts, dim=-1)

    def _fused(self, h: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """Join the public stream h and the private stream m (both (..., H)) -> (..., H)."""
        if self.fusion == "product":
            return h * m
        return self.fuse(torch.cat([h.expand_as(m), m], dim=-1))

    def zero_state(self, batch: int) -> Tuple[torch.Tensor, torch.Tensor]:
        """LSTM state of an empty history: (h, c), each (1, batch, S), S = `state_width`."""
        z = torch.zeros(1, batch, self.state_width)
        return z, z.clone()

    def public(self, pub: torch.Tensor,
               hc: Optional[LSTMState] = None) -> Tuple[torch.Tensor, LSTMState]:
        """Run the public stream. pub (B, T, Dpub) -> out (B, T, S), (h, c) each (1, B, S)
        (S = `state_width`: H, or H + Hv with a value stream of its own, the policy's
        first). `hc` is the state before the first step (None: empty history)."""
        return self.recur(self.embed_public(pub), hc)

    def embed_public(self, pub: torch.Tensor) -> torch.Tensor:
        """The LSTMs' input: pub (..., Dpub) -> (..., S)."""
        pub = self._public_input(pub)
        if not self.value_lstm:
            return self.pub_in(pub)
        return torch.cat([self.pub_in(pub), self.v_pub_in(pub)], dim=-1)

    def _public_input(self, pub: torch.Tensor) -> torch.Tensor:
        """pub (..., Dpub), joined (with card_features "public") by the common-knowledge
        features of `CardFeatures.public_features`."""
        if self.cards is not None and self.cards.public:
            pub = torch.cat([pub, self.cards.public_features(pub)], dim=-1)
        return pub

    def public_policy(self, pub: torch.Tensor,
                      hc: Optional[LSTMState] = None) -> Tuple[torch.Tensor, LSTMState]:
        """The policy's stream alone: pub (B, T, Dpub) -> out (B, T, H), (h, c) each
        (1, B, H), from the state hc of that stream (None: empty history). The first H of
        `public`'s outputs, without the value's stream."""
        return self.lstm(self.pub_in(self._public_input(pub)), hc)

    def public_value(self, pub: torch.Tensor,
                     hc: Optional[LSTMState] = None) -> Tuple[torch.Tensor, LSTMState]:
        """The value's own stream alone (value_lstm > 0): pub (B, T, Dpub) -> out
        (B, T, Hv), (h, c) each (1, B, Hv): the last Hv of `public`'s outputs."""
        if not self.value_lstm:
            raise ValueError("this net's value has no public stream of its own")
        return self.v_lstm(self.v_pub_in(self._public_input(pub)), hc)

    def recur(self, x: torch.Tensor,
              hc: Optional[LSTMState] = None) -> Tuple[torch.Tensor, LSTMState]:
        """The recurrent step(s) of `public` on embedded inputs x (B, T, S)."""
        if not self.value_lstm:
            return self.lstm(x, hc)
        k = self.hidden
        hp = vp = None
        if hc is not None:
            hp = (hc[0][..., :k].contiguous(), hc[1][..., :k].contiguous())
            vp = (hc[0][..., k:].contiguous(), hc[1][..., k:].contiguous())
        out, (h, c) = self.lstm(x[..., :k], hp)
        v_out, (vh, vc) = self.v_lstm(x[..., k:], vp)
        return torch.cat([out, v_out], -1), (torch.cat([h, vh], -1), torch.cat([c, vc], -1))

    def q(self, h: torch.Tensor, obs: torch.Tensor, legal=None) -> torch.Tensor:
        """Q-values of every seat. h (..., S) from `public`, obs (..., P, E [+ F]) every seat's
        canonical vector -> (..., P, M + 1). legal: bool (..., P, M + 1), each seat's
        legal outputs (`seat_masks`); needed with dueling="max", ignored otherwise."""
        players = self.players
        seat = torch.eye(players, dtype=obs.dtype, device=obs.device)
        x = self._private_in(obs, seat.expand(*obs.shape[:-2], players, players))
        return self._heads(h.unsqueeze(-2), x, value=True, legal=legal)

    def _heads(self, h: torch.Tensor, x: torch.Tensor, value: bool, legal=None) -> torch.Tensor:
        """Q (value=True) or the centred advantage A - mean A (value=False: the same
        argmax, without computing V) from h (..., H) (broadcast against x) and the MLP
        input x (..., D) -> (..., M + 1). legal (..., M + 1) bool: see `q`."""
        h_value = h[..., self.hidden:] if self.value_lstm else h
        h = h[..., :self.hidden] if self.value_lstm else h
        fused = self._fused(h, self.mlp(x))
        # the heads are cheap: always float32, so that a bfloat16 autocast (a blueprint's
        # precision) rounds only the wide products' inputs, not the Q-values themselves
        with torch.autocast(fused.device.type, enabled=False):
            fused = fused.float()
            adv = self.a_head(fused)
            if self.hint_head:
                first, count = cast(Tuple[int, int], self._hints)    # set with hint_head
                end = self.obs_dim + self.conventions
                feats = x[..., end - count * CONVENTION_HINT_PARTS:end].float()
                feats = feats.reshape(*x.shape[:-1], count, CONVENTION_HINT_PARTS)
                term = (feats * self.hint_w(fused).unsqueeze(-2)).sum(-1)   # (..., hints)
                adv = torch.cat([adv[..., :first], adv[..., first:first + count] + term,
                                 adv[..., first + count:]], dim=-1)
            adv = adv - adv.mean(dim=-1, keepdim=True)
            if not value:
                return adv
            if self.dueling == "max":
                adv = adv - self._legal_max(adv, legal)
            if self.value_hidden:
                hv = h_value.float()
                v = self.v_head(torch.cat([hv.expand(*x.shape[:-1], hv.shape[-1]),
                                           x.float()], dim=-1))
            else:
                v = self.v_head(fused)
            return v + adv

    @staticmethod
    def _legal_max(adv: torch.Tensor, legal) -> torch.Tensor:
        """max of adv (..., M + 1) over the legal outputs, (..., 1); 0 where none is legal
        (padding)."""
        if legal is None:
            raise ValueError("a dueling='max' net's Q is centred on the best LEGAL move: "
                             "pass legal, bool (..., M + 1) (`seat_masks`)")
        legal = torch.as_tensor(legal, device=adv.device)
        if legal.dtype != torch.bool or legal.shape != adv.shape:
            raise ValueError(f"legal must be bool of shape {tuple(adv.shape)}, got "
                             f"{legal.dtype} {tuple(legal.shape)}")
        best = adv.masked_fill(~legal, float("-inf")).max(dim=-1, keepdim=True).values
        return torch.where(legal.any(dim=-1, keepdim=True), best, torch.zeros_like(best))

    def q_seat(self, h: torch.Tensor, obs: torch.Tensor, seat, value: bool = True,
               legal=None) -> torch.Tensor:
        """Q-values of one seat per row: h (B, S), obs (B, E [+ F]) that seat's input
        (`seat_inputs`), seat int (B,) -> (B, M + 1). Row b equals q(h, obs of every
        seat)[b, seat[b]], at 1/P of the cost (what acting needs). value=False: A - mean A
        instead (the same argmax, V not computed: what acting uses). legal (B, M + 1)
        bool: see `q`."""
        seat = torch.as_tensor(np.asarray(seat), dtype=torch.long)
        onehot = torch.nn.functional.one_hot(seat, self.players).to(obs.device, obs.dtype)
        return self._heads(h, self._private_in(obs, onehot), value, legal)

    def forward(self, pub: torch.Tensor, obs: torch.Tensor, hc: Optional[LSTMState] = None,
                legal: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, LSTMState]:
        """Whole sequences: pub (B, T, Dpub), obs (B, T, P, E [+ F]) -> Q (B, T, P, M + 1),
        final LSTM state. `pub` must be `public_part(obs)`; legal: see `q`."""
        out, hc = self.public(pub, hc)
        return self.q(out, obs, legal), hc


def masked_greedy(q: torch.Tensor, mask) -> torch.Tensor:
    """Argmax of q (..., A) over the entries where mask (..., A) is true: int64 (...)."""
    mask = torch.as_tensor(mask, dtype=torch.bool, device=q.device)
    return q.masked_fill(~mask, NEG).argmax(dim=-1)


def epsilon_greedy(q: torch.Tensor, mask: np.ndarray, eps, rng: np.random.Generator) -> np.ndarray:
    """Greedy legal action per row of q (N, A), replaced with probability eps (a float or
    an (N,) array) by a uniformly random legal action. mask: bool (N, A). Returns int64 (N,)."""
    actions = masked_greedy(q, mask).cpu().numpy()
    eps = np.broadcast_to(np.asarray(eps, dtype=np.float64), actions.shape)
    explore = rng.random(actions.shape) < eps
    if explore.any():
        m = mask[explore].astype(np.float64)
        pick = (rng.random(m.shape) * m).argmax(axis=1)      # uniform over legal entries
        actions[explore] = pick
    return actions


# --- the Blueprint adapter ----------------------------------------------------------------


def _history_key(state: HanabiState) -> bytes:
    """The public history of a game as bytes (`HanabiState.public_history_key`): start
    player, then (move, revealed card, hinted slots) per move. Every prefix of the key
    (1 + 3 * t bytes) is the key of the game after t moves. It never contains a hidden
    card (drawn cards are left out)."""
    return state.public_history_key()


PRECISIONS = ("float32", "bfloat16")


def _inference(method):
    """Run a blueprint method without autograd, in the blueprint's precision: bfloat16
    runs the net's matrix products under CPU autocast (about twice as fast on CPUs with
    bf16 instructions; the greedy moves can differ from float32's in near ties)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with torch.inference_mode(), torch.autocast(
                "cpu", dtype=torch.bfloat16, enabled=self.precision == "bfloat16"):
            return method(self, *args, **kwargs)
    return run


class PublicLSTMBlueprint:
    """A `PublicLSTMNet` as a Blueprint: greedy, deterministic, no private memory, with a
    value estimate (current score + VDN sum of every seat's greedy Q).

    The LSTM state of a public history is computed once and cached (an LRU of
    `cache_size` histories, keyed on the move history with the revealed cards), so that
    every world a search samples from one real history reuses the root state; `rollout`
    carries a state per world with one batched forward per move over all running worlds.

    Args:
        net: a PublicLSTMNet sized for `config`, on the CPU (search is CPU-bound).
        config: the game variant (default: the standard 2-player game).
        epsilon: probability of a uniformly random legal move (0: greedy; > 0 makes the
            blueprint non-deterministic, for exploration only).
        cache_size: number of public histories whose LSTM state is kept.
        name: shown in tables.
        seed: seed of the random moves when epsilon > 0.
        precision: "float32" (exact: the blueprint as trained) or "bfloat16" (the net's
            products in bf16, about twice as fast where the CPU has bf16 instructions; its
            greedy moves can differ from float32's where two moves' Q nearly tie). Search
            uses it for its rollouts (`LBSAgent(precision=...)`, `with_precision`), never
            for the moves the blueprint itself plays.

    Attributes: spec and fingerprint (the `lstm:` spec and the sha256 of the checkpoint
    file, set by `load`; None for a net built in memory).
    """

    has_private_memory = False
    has_value = True
    # one batched forward per move over all worlds: search refills its batches of rollouts
    # after pruning (`search_move(refill=None)`), since a world costs several times less
    # at 512 rows than at 64
    wide_batches = True

    def __init__(self, net: PublicLSTMNet, config: Optional[HanabiConfig] = None,
                 epsilon: float = 0.0, cache_size: int = 50_000, name: str = "public-lstm",
                 seed: int = 0, precision: str = "float32"):
        config = HanabiConfig() if config is None else config
        ref = net.arch_for(config)
        if net.arch() != ref:
            raise ValueError(f"the net {net.arch()} does not fit the game {config} "
                             f"(expected {ref})")
        if next(net.parameters()).device.type != "cpu":
            raise ValueError("PublicLSTMBlueprint needs a net on the CPU "
                             "(use net.cpu(), or a copy)")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        if cache_size < 1:
            raise ValueError(f"cache_size must be >= 1, got {cache_size}")
        self.precision = as_choice(precision, "precision", PRECISIONS)
        self._other_precisions: Dict[str, "PublicLSTMBlueprint"] = {}
        self._bf16_net: Optional[Tuple[tuple, PublicLSTMNet]] = None
        self.net = net.eval()
        self.config, self.epsilon, self.name = config, float(epsilon), name
        self.deterministic = self.epsilon == 0.0
        self.cache_size = cache_size
        self._cache: "collections.OrderedDict[bytes, Tuple[torch.Tensor, torch.Tensor]]" = \
            collections.OrderedDict()
        self._rng = np.random.default_rng(seed)
        self._k = private_size(config)
        self._conventions = net.conventions > 0   # seat inputs carry convention_features
        self.spec: Optional[str] = None
        self.fingerprint: Optional[str] = None

    @classmethod
    def load(cls, path: Optional[str] = None, name: str = "public-lstm",
             **kwargs) -> "PublicLSTMBlueprint":
        """The blueprint of a public-LSTM checkpoint (`lbs_pz.models.checkpoint` layout,
        kind "public_lstm", full or slim): a file path or a shipped model's name (default
        "public_lstm_2p"). kwargs go to the constructor. CheckpointError (a ValueError) for
        a missing, foreign or mismatched file, NaN or infinite weights, or sizes above the
        caps (checked before the net is allocated: `lbs_pz.models.checkpoint.
        build_network`); nothing in the file is ever run."""
        ckpt = load_checkpoint(path or "public_lstm_2p", kind="public_lstm")
        net = build_network(ckpt, lambda: PublicLSTMNet(**ckpt["architecture"]),
                            "public-LSTM net")
        blueprint = cls(net, game_of(ckpt), name=name, **kwargs)
        if path is None or not os.path.isfile(path):      # a shipped model
            blueprint.spec = f"lstm:{path or 'public_lstm_2p'}"
        else:
            blueprint.spec = f"lstm:{os.path.normpath(path)}"
        blueprint.fingerprint = file_sha256(ckpt["path"])
        return blueprint

    def with_precision(self, precision: str) -> "PublicLSTMBlueprint":
        """This blueprint (the same net, spec and fingerprint; a cache of its own: LSTM
        states computed in another precision are not shared) computing in `precision`
        (see the class docstring). Returns self when the precision is already that, and
        the same copy on every call."""
        if precision == self.precision:
            return self
        other = self._other_precisions.get(precision)
        if other is None:       # one copy per precision: its cache serves every search
            other = PublicLSTMBlueprint(self.net, self.config, epsilon=self.epsilon,
                                        cache_size=self.cache_size, name=self.name,
                                        precision=precision)
            other.spec, other.fingerprint = self.spec, self.fingerprint
            self._other_precisions[precision] = other
        return other

    @property
    def _net(self) -> PublicLSTMNet:
        """The net the products run in: `net` itself in float32. In bfloat16, a copy whose
        wide layers (public input, LSTM, MLP) hold their weights in bf16, made again
        whenever a parameter of `net` changes: autocast would otherwise cast every
        weight at every call (the same rounding, so the same numbers)."""
        if self.precision == "float32":
            return self.net
        params = tuple((p.data_ptr(), p._version) for p in self.net.parameters())
        if self._bf16_net is None or self._bf16_net[0] != params:
            with torch.inference_mode(False), torch.no_grad():
                net = copy.deepcopy(self.net)
                own = (net.v_pub_in, net.v_lstm) if net.value_lstm else ()
                for layer in (net.pub_in, net.lstm, net.mlp) + own:
                    layer.to(torch.bfloat16)
            self._bf16_net = (params, net.eval())
        return self._bf16_net[1]

    def _check_config(self, config: HanabiConfig) -> None:
        if config != self.config:
            raise ValueError(f"{self.name}: the worlds have config {config}, the blueprint "
                             f"plays {self.config}")

    # --- recurrent state of public histories ----------------------------------------------

    def _remember(self, key: bytes, hc) -> None:
        hc = (hc[0].float(), hc[1].float())     # one dtype in the cache whatever the precision
        self._cache[key] = hc
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _public_of(self, state: HanabiState) -> np.ndarray:
        return state.encode(0)[self._k:]

    @_inference
    def public_state(self, state: HanabiState, key: Optional[bytes] = None) -> LSTMState:
        """LSTM state (h, c), each (S,) (`PublicLSTMNet.state_width`), after the public
        features of every position of
        `state`'s history up to and including the current one."""
        self._check_config(state.config)
        key = _history_key(state) if key is None else key
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        prev = self._cache.get(key[:-3]) if len(key) > 1 else None
        if prev is not None:                       # one step from the previous position
            pub = torch.from_numpy(self._public_of(state))[None, None]
            _, (h, c) = self._net.public(pub, (prev[0][None, None], prev[1][None, None]))
            self._remember(key, (h[0, 0], c[0, 0]))
            return self._cache[key]
        # Replay the public history from its longest cached prefix (position `known`; -1:
        # none). Public features depend on the public history only, so replaying the
        # game's own dealing order shows nothing hidden.
        moves = state.move_history
        known = len(moves) - 2
        while known >= 0 and key[:1 + 3 * known] not in self._cache:
            known -= 1
        known = max(known, -1)
        hc = None
        if known >= 0:
            h0, c0 = self._cache[key[:1 + 3 * known]]
            hc = (h0[None, None], c0[None, None])
        replay = HanabiState(self.config, deck=state.deck, start_player=state.start_player,
                             seed=0)
        pubs = [] if known >= 0 else [self._public_of(replay)]
        for t, move in enumerate(moves, start=1):
            replay.apply(move)
            if t > known:
                pubs.append(self._public_of(replay))
        # Step by step (nn.LSTM returns c of the last step only) to cache every prefix.
        net = self._net
        x = net.embed_public(torch.from_numpy(np.stack(pubs)))
        for j in range(len(pubs)):
            _, hc = net.recur(x[j][None, None], hc)
            t = known + 1 + j
            self._remember(key[:1 + 3 * t], (hc[0][0, 0], hc[1][0, 0]))
        return self._cache[key]

    def _batch_hc(self, batch: HanabiBatch, rows: np.ndarray):
        """(h, c) of the worlds `rows` of a batch, each (len(rows), S). One computation per
        distinct public history: a cached one is looked up, those one move past a cached
        one take ONE batched LSTM step together, the rest replay their history from its
        longest cached prefix (`public_state`)."""
        index: Dict[bytes, int] = {}
        order = np.empty(len(rows), dtype=np.int64)
        first: List[int] = []                       # a row holding each distinct history
        for j, (i, key) in enumerate(zip(rows, batch.public_history_keys(rows))):
            d = index.get(key)
            if d is None:
                d = index[key] = len(first)
                first.append(int(i))
            order[j] = d
        keys = list(index)
        hs: List[Optional[torch.Tensor]] = [None] * len(keys)
        cs: List[Optional[torch.Tensor]] = [None] * len(keys)
        step = []                                   # distinct histories one move past the cache
        for d, key in enumerate(keys):
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                hs[d], cs[d] = hit
            elif len(key) > 1 and key[:-3] in self._cache:
                step.append(d)
            else:
                hs[d], cs[d] = self.public_state(batch.get_state(first[d]), key)
        if step:
            prev = [self._cache[keys[d][:-3]] for d in step]
            # seat 0's vectors of the whole batch in one call, then the rows needed
            seat0 = np.zeros(len(batch), dtype=np.int64)
            pub = batch.encode(players=seat0)[[first[d] for d in step], self._k:]
            h0 = torch.stack([p[0] for p in prev])[None]
            c0 = torch.stack([p[1] for p in prev])[None]
            _, (h1, c1) = self._net.public(torch.from_numpy(pub)[:, None], (h0, c0))
            for j, d in enumerate(step):
                self._remember(keys[d], (h1[0, j].clone(), c1[0, j].clone()))
                hs[d], cs[d] = self._cache[keys[d]]
        idx = torch.from_numpy(order)
        filled = cast(List[torch.Tensor], hs), cast(List[torch.Tensor], cs)   # all set now
        return torch.stack(filled[0])[idx], torch.stack(filled[1])[idx]

    # --- acting ----------------------------------------------------------------------------

    def _pick(self, q_cur: torch.Tensor, legal: np.ndarray) -> np.ndarray:
        """Move per row from the mover's Q (B, M) and legal masks bool (B, M)."""
        if self.epsilon > 0:
            return epsilon_greedy(q_cur, legal, self.epsilon, self._rng)
        return masked_greedy(q_cur, legal).numpy()

    @_inference
    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        """Greedy legal move of `seat` (default: the player to move); -1 if the game is over."""
        seat = state.current_player if seat is None else seat
        if seat != state.current_player:
            raise ValueError(f"it is seat {state.current_player}'s turn, not seat {seat}'s")
        if state.is_terminal:
            return -1
        return int(self.act_batch(HanabiBatch.from_states([state]))[0])

    @_inference
    def act_batch(self, batch: HanabiBatch) -> np.ndarray:
        """Move of each world's player to move: int64 (N,), -1 where the game is over.
        One forward of the mover's Q over all running worlds."""
        batch = require_batch(batch, f"{self.name}: act_batch")
        self._check_config(batch.config)
        out = np.full(len(batch), -1, dtype=np.int64)
        live = np.flatnonzero(~batch.terminals())
        if not live.size:
            return out
        h, _ = self._batch_hc(batch, live)
        obs = torch.from_numpy(seat_inputs(batch, conventions=self._conventions)[live])
        q = self._net.q_seat(h, obs, batch.current_players()[live], value=False)
        legal = batch.legal_masks()[live].astype(bool)
        out[live] = self._pick(q[:, : self.config.num_moves], legal)
        return out

    @_inference
    def rollout(self, batch: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """Self-play every world of the batch in place with this blueprint in every seat,
        at most `max_moves` moves (to the end if negative). Every world starts from its
        history's cached LSTM state and carries it along: per move, one batched encode,
        one forward of the mover's Q and one LSTM step over all running worlds (a value
        stream of its own, `value_lstm`, runs once at the end over the worlds still
        running). Returns moves made per world, int32 (N,)."""
        batch = require_batch(batch, f"{self.name}: rollout")
        made, h, c, idx, _ = self._rollout(batch, check_max_moves(max_moves))
        # Remember where every unfinished world stopped: a `value` call on the same worlds
        # then needs no replay.
        for i, key in zip(idx, batch.public_history_keys(idx)):
            if made[i] > 0:
                self._remember(key, (h[i].clone(), c[i].clone()))
        return made

    @_inference
    def rollout_value(self, batch: HanabiBatch, max_moves: int) -> np.ndarray:
        """`rollout(batch, max_moves)` then `value(batch)`, float32 (N,), in one pass: the
        value of each unfinished world comes from the LSTM state its rollout carried, with
        no cache look-up per world (what a search bootstrapping LBS-k rollouts calls)."""
        batch = require_batch(batch, f"{self.name}: rollout_value")
        _, h, _, idx, reader = self._rollout(batch, check_max_moves(max_moves))
        out = batch.scores().astype(np.float32)
        if idx.size:
            out[idx] += self._greedy_q_sum(batch, idx, h[idx], reader)
        return out

    def _rollout(self, batch: HanabiBatch, max_moves: int):
        """The rollout loop: (moves made int32 (N,), h, c (N, S) float32 at each world's
        last position, the rows still running, the `ConventionReader` that followed the
        worlds (None without conventions))."""
        self._check_config(batch.config)
        n = len(batch)
        made = np.zeros(n, dtype=np.int32)
        idx = np.flatnonzero(~batch.terminals())
        h = torch.zeros(n, self.net.state_width)
        c = torch.zeros(n, self.net.state_width)
        # each world's convention memory is carried along: a step folds one move per world
        reader = ConventionReader(batch) if self._conventions else None
        net = self._net
        if not idx.size:
            return made, h, c, idx, reader
        h[idx], c[idx] = self._batch_hc(batch, idx)     # also for max_moves == 0: the value
        # The value's own stream (value_lstm) matters only in the worlds still running at
        # the end: their public inputs are kept and it runs once over them as a sequence
        # (one product per layer, not one per move); to the end, every world finishes.
        k = net.hidden
        kept: Optional[list] = [] if net.value_lstm and max_moves >= 0 else None
        seat0 = np.zeros(n, dtype=np.int64)
        actions = np.full(n, -1, dtype=np.int64)
        enc = np.empty((n, self.config.encoding_size), dtype=np.float32)
        conv = np.empty((n, self.net.conventions), dtype=np.float32)
        legal = np.empty((n, self.config.num_moves), dtype=np.int8)
        num_moves = self.config.num_moves
        steps = 0
        seat0_view = False                 # enc holds seat 0's vectors of these positions
        while idx.size and (max_moves < 0 or steps < max_moves):
            every = idx.size == n          # all running: whole arrays, no gather
            movers = batch.current_players()[idx]
            if not (seat0_view and not movers.any()):   # else: seat 0 moves, enc is its view
                batch.encode(out=enc)
            batch.legal_masks(out=legal)
            x = enc if every else enc[idx]
            if reader is not None:
                x = np.concatenate([x, reader.features(batch, movers, conv[:idx.size],
                                                       rows=idx)], axis=1)
            obs = torch.from_numpy(x)
            q = net.q_seat(h if every else h[idx], obs, movers, value=False)
            mask = (legal if every else legal[idx]).view(np.bool_)
            actions.fill(-1)
            actions[idx] = self._pick(q[:, :num_moves], mask)
            batch.step(actions)
            made[idx] += 1
            steps += 1
            idx = np.flatnonzero(~batch.terminals())
            seat0_view = False
            if idx.size:               # the public stream takes one step in running worlds
                every = idx.size == n
                batch.encode(out=enc, players=seat0)
                seat0_view = True
                pub = torch.from_numpy(enc[:, self._k:] if every else enc[idx, self._k:])
                if kept is not None:
                    kept.append((idx, pub.clone() if every else pub))   # enc is reused
                hp = (h[None, :, :k] if every else h[idx, :k][None]).contiguous()
                cp = (c[None, :, :k] if every else c[idx, :k][None]).contiguous()
                _, (h2, c2) = net.public_policy(pub[:, None], (hp, cp))
                # float32 whatever the precision
                if every:
                    h[:, :k], c[:, :k] = h2[0].float(), c2[0].float()
                else:
                    h[idx, :k], c[idx, :k] = h2[0].float(), c2[0].float()
        if kept and idx.size:
            # the running worlds ran every step, so each step's rows include them
            seq = torch.stack([pub[np.searchsorted(rows, idx)] for rows, pub in kept], dim=1)
            _, (h2, c2) = net.public_value(seq, (h[idx, k:][None].contiguous(),
                                                 c[idx, k:][None].contiguous()))
            h[idx, k:], c[idx, k:] = h2[0].float(), c2[0].float()
        return made, h, c, idx, reader

    @_inference
    def q_values(self, batch: HanabiBatch) -> np.ndarray:
        """Q-values of every seat of every world: float32 (N, P, M + 1) (last: no-op)."""
        batch = require_batch(batch, f"{self.name}: q_values")
        self._check_config(batch.config)
        h, _ = self._batch_hc(batch, np.arange(len(batch)))
        obs = torch.from_numpy(encode_batch(batch, self._conventions))
        legal = seat_masks(batch.legal_masks(), batch.current_players(), self.config.players)
        return self._net.q(h, obs, torch.from_numpy(legal)).numpy()

    @_inference
    def value(self, batch: HanabiBatch) -> np.ndarray:
        """Expected final score of each world: score + sum over seats of the greedy legal
        Q (VDN; the seats not to move contribute their no-op's Q). The score of a
        finished world. float32 (N,)."""
        batch = require_batch(batch, f"{self.name}: value")
        self._check_config(batch.config)
        out = batch.scores().astype(np.float32)
        live = np.flatnonzero(~batch.terminals())
        if not live.size:
            return out
        h, _ = self._batch_hc(batch, live)
        out[live] += self._greedy_q_sum(batch, live, h)
        return out

    def _greedy_q_sum(self, batch: HanabiBatch, rows: np.ndarray, h: torch.Tensor,
                      reader: Optional[ConventionReader] = None) -> np.ndarray:
        """Sum over seats of the greedy legal Q of the running worlds `rows`, whose LSTM
        states are h (len(rows), S): float32 (len(rows),). `reader`: a ConventionReader
        that followed the batch (see `seat_inputs`)."""
        obs = torch.from_numpy(encode_batch(batch, self._conventions, reader)[rows])
        mask = torch.from_numpy(seat_masks(batch.legal_masks()[rows],
                                           batch.current_players()[rows], self.config.players))
        q = self._net.q(h, obs, mask)
        best = q.masked_fill(~mask, NEG).max(dim=-1).values.sum(dim=-1)
        return best.float().numpy()

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        return f"<PublicLSTMBlueprint {self.name!r} hidden={self.net.hidden}>"
