"""A centralized value function for bootstrapping LBS-k rollouts of blueprints that have
no value of their own (the rule bots), as the LBS paper suggests.

`CentralValue` predicts the final score of a game under the blueprint from the full
state: the canonical observation of the player to move plus that player's own cards
(one-hot). In search it is applied to sampled worlds, whose cards are the sampled ones,
so it never sees the real hidden hand. A value is trained FOR a blueprint (`lbs-pz
train-value --blueprint SPEC`) and a variant; its checkpoint (`lbs_pz.models.checkpoint`,
kind "value") records both, and `CentralValue(checkpoint, blueprint=bp)` raises
`CheckpointMismatchError` when they are not `bp` and the games it is asked about (unless
allow_mismatch=True). The model for the strong bot in the 2-player game ships as
"value_strong_2p" (`lbs_pz/models/value_strong_2p.pt`).

Importing this module needs no torch (`resolve` in `lbs_pz.search.config` names
`CentralValue` on every path); building or running a value network takes torch through
the one gate, `lbs_pz.optional.require_torch`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.models import path as model_path
from lbs_pz.models.checkpoint import (CheckpointError, build_network, game_of, load_checkpoint,
                                     save_checkpoint)
from lbs_pz.optional import TorchThreads, require_torch
from lbs_pz.search.trained_for import TrainedForBlueprint

if TYPE_CHECKING:           # torch's types for the checker (torch stays optional here)
    import torch

DEFAULT_VALUE = "value_strong_2p"


def default_value_checkpoint() -> str:
    """Path of the value that ships with the package (2p, 5 cards, strong bot)."""
    return model_path(DEFAULT_VALUE)


def value_features(states, out: Optional[np.ndarray] = None) -> np.ndarray:
    """float32 (N, encoding_size + hand_size * card_types): each game's canonical
    observation of its player to move, then that player's hand one-hot by slot (an empty
    slot is all zeros): `HanabiBatch.encode(own_hand=True)`.

    states: a HanabiBatch of N games (a sequence of HanabiStates is copied into one).
    out: optional writeable C-contiguous float32 array of that shape, overwritten."""
    batch = states if isinstance(states, HanabiBatch) else HanabiBatch.from_states(states)
    return batch.encode(out=out, own_hand=True)


@dataclasses.dataclass
class ValueNetConfig:
    inputs: int
    hidden: int = 256


def make_value_net(cfg: ValueNetConfig) -> torch.nn.Sequential:
    nn = require_torch("a value network").nn
    return nn.Sequential(nn.Linear(cfg.inputs, cfg.hidden), nn.ReLU(),
                         nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU(),
                         nn.Linear(cfg.hidden, 1))


class CentralValue(TrainedForBlueprint):
    """value(worlds) -> expected final score of each world, float32 (N,).

    Args:
        checkpoint: a `lbs-pz train-value` checkpoint: file path or shipped model name.
            Default: the shipped value trained for `blueprint` (`find_model`; a
            CheckpointMismatchError naming the fix if none ships), or the shipped
            strong-bot value when no blueprint is given.
        blueprint: the blueprint whose rollouts it bootstraps (object or spec string);
            the checkpoint must have been trained for it.
        allow_mismatch: use a checkpoint made for another blueprint or variant anyway
            (not when the network cannot read the variant's features).
        net, config: a value network and its HanabiConfig instead of a checkpoint.
        threads: torch intra-op threads while evaluating (restored afterwards; None:
            leave torch's setting). One is fastest for search's batches of a few thousand
            worlds, and avoids oversubscription when search runs one process per core.

    Attributes: `trained_for` ({"spec", "fingerprint"} or None), `config` (HanabiConfig
    it was trained on), `checkpoint_path`, `mismatches` (what allow_mismatch let through).
    """

    kind, reads = "value", "features"

    def __init__(self, checkpoint: Optional[str] = None, blueprint=None,
                 allow_mismatch: bool = False, net=None, config=None,
                 threads: Optional[int] = 1):
        net, config = self._load_for(checkpoint, blueprint, allow_mismatch, DEFAULT_VALUE,
                                     load_value, net, config)
        self.net, self.config, self.threads = net.eval(), config, threads
        self._after_first = self.net[1:] if isinstance(self.net, require_torch(
            "a value network").nn.Sequential) else None    # built once: not per call

    def __call__(self, states) -> np.ndarray:
        """float32 (N,): the value of every game of a HanabiBatch (a sequence of
        HanabiStates is copied into one); one torch forward for the whole batch. The
        first layer of the shipped architecture sums the weight rows of the features
        that are one (the encoding is binary; `sparse_first_layer`), equal to the dense
        product up to float rounding and several times faster."""
        torch = require_torch("CentralValue")
        if not isinstance(states, HanabiBatch):
            if not len(states):
                return np.zeros(0, np.float32)
            states = HanabiBatch.from_states(states)
        self.check_game(states.config)
        with torch.no_grad(), TorchThreads(torch, self.threads):
            first = sparse_first_layer(self.net, states)
            if first is None:
                x = torch.from_numpy(value_features(states))
                return self.net(x).squeeze(1).numpy()
            assert self._after_first is not None    # first is computed: a Sequential net
            return self._after_first(first).squeeze(1).numpy()


def sparse_first_layer(net, batch: HanabiBatch) -> Optional[torch.Tensor]:
    """The first Linear layer of `net` (an nn.Sequential starting with a Linear over
    `value_features`) applied to the batch's features without building them: float32
    torch tensor (N, hidden), the sum of the weight columns of the features that are one
    (`HanabiBatch.encode_sparse(own_hand=True)` lists them), plus the bias. None if `net`
    is not of that shape."""
    torch = require_torch("sparse_first_layer")
    nn, F = torch.nn, torch.nn.functional
    config = batch.config
    E, H, T = config.encoding_size, config.hand_size, config.num_card_types
    if not isinstance(net, nn.Sequential) or not len(net) or not isinstance(net[0], nn.Linear) \
            or net[0].in_features != E + H * T:
        return None
    weight = net[0].weight
    key = (weight.data_ptr(), weight._version)
    cached = getattr(net, "_lbs_sparse_weights", None)
    if cached is None or cached[0] != key:
        cached = (key, weight.detach().t().contiguous())          # (E + H*T, hidden)
        net._lbs_sparse_weights = cached
    indices, offsets = batch.encode_sparse(own_hand=True)
    out = F.embedding_bag(torch.from_numpy(indices), cached[1], torch.from_numpy(offsets),
                          mode="sum")
    if net[0].bias is not None:
        out += net[0].bias
    return out


def save_value(path: str, net, net_cfg: ValueNetConfig, config, trained_for: Optional[dict],
               info: Optional[dict] = None) -> dict:
    """Write a value network (trained on games of `config` for the blueprint identity
    `trained_for`, {"spec", "fingerprint"}) as a "value" checkpoint."""
    return save_checkpoint(path, "value", config, dataclasses.asdict(net_cfg),
                           net.state_dict(), trained_for=trained_for, info=info)


def load_value(path_or_name: str) -> Tuple[torch.nn.Sequential, HanabiConfig, dict]:
    """A value checkpoint (file path or shipped name, e.g. "value_strong_2p") ->
    (network in eval mode, HanabiConfig, checkpoint dict). CheckpointError (a ValueError)
    if the file is missing, corrupt, foreign, in an old layout, holds NaN or infinite
    weights, claims sizes above the caps or does not fit the network (read with
    weights_only=True, which never runs code; the shapes are checked before the network
    is allocated: `lbs_pz.models.checkpoint.build_network`)."""
    ckpt = load_checkpoint(path_or_name, "value")
    config = game_of(ckpt)
    try:
        net_cfg = ValueNetConfig(**ckpt["architecture"])
    except TypeError as err:
        raise CheckpointError(f"{ckpt['path']!r}: value checkpoint does not match the "
                              f"network: {err}") from None
    net = build_network(ckpt, lambda: make_value_net(net_cfg), "value network")
    return net.eval(), config, ckpt
