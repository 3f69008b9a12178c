"""A centralized value function for bootstrapping LBS-k rollouts of blueprints that have
no value of their own (the rule bots), as the LBS paper suggests.

`CentralValue` predicts the final score of a game under the blueprint from the full
state: the canonical observation of the player to move plus that player's own cards
(one-hot). In search it is applied to sampled worlds, whose cards are the sampled ones,
so it never sees the real hidden hand. Train it with `lbs-pz train-value`; the model
for the strong bot in the 2-player game ships in `lbs_pz/models/value_strong_2p.pt`.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional, Sequence

import numpy as np

VALUE_FORMAT = "lbs_pz.value"
VALUE_VERSION = 1


def default_value_checkpoint() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(__file__)), "models",
                        "value_strong_2p.pt")


def value_features(states, out: Optional[np.ndarray] = None) -> np.ndarray:
    """float32 (N, encoding_size + hand_size * card_types): each game's canonical
    observation of its player to move, then that player's hand one-hot by slot (an empty
    slot is all zeros).

    states: a HanabiBatch of N games (a sequence of HanabiStates is copied into one).
    out: optional writeable C-contiguous float32 array of that shape, overwritten.
    One batched encode and numpy indexing: no Python loop per game."""
    from lbs_pz.engine import HanabiBatch

    batch = states if isinstance(states, HanabiBatch) else HanabiBatch.from_states(states)
    config = batch.config
    N, E, H, T = len(batch), config.encoding_size, config.hand_size, config.num_card_types
    shape = (N, E + H * T)
    if out is None:
        feats = np.zeros(shape, np.float32)
    else:
        if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float32 \
                or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"out must be a writeable C-contiguous float32 array of shape {shape}")
        feats = out
        feats[:, E:] = 0.0
    feats[:, :E] = batch.encode()
    hands = batch.hands()                                 # int8 (N, H), -1: empty slot
    rows, slots = np.nonzero(hands >= 0)
    feats[rows, E + slots * T + hands[rows, slots]] = 1.0
    return feats


@dataclasses.dataclass
class ValueNetConfig:
    inputs: int
    hidden: int = 256


def make_value_net(cfg: ValueNetConfig):
    import torch.nn as nn

    return nn.Sequential(nn.Linear(cfg.inputs, cfg.hidden), nn.ReLU(),
                         nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU(),
                         nn.Linear(cfg.hidden, 1))


class CentralValue:
    """value(worlds) -> expected final score of each world, float32 (N,)."""

    def __init__(self, checkpoint: Optional[str] = None, net=None, config=None,
                 threads: Optional[int] = 1):
        """threads: torch intra-op threads while evaluating (restored afterwards; None:
        leave torch's setting). One is fastest for search's batches of a few thousand
        worlds, and avoids oversubscription when search runs one process per core."""
        if net is None:
            net, config, _ = load_value(checkpoint or default_value_checkpoint())
        self.net, self.config, self.threads = net.eval(), config, threads

    def __call__(self, states) -> np.ndarray:
        """float32 (N,): the value of every game of a HanabiBatch (a sequence of
        HanabiStates is copied into one); one torch forward for the whole batch."""
        import torch
        from lbs_pz.engine import HanabiBatch

        if not isinstance(states, HanabiBatch):
            if not len(states):
                return np.zeros(0, np.float32)
            states = HanabiBatch.from_states(states)
        if states.config != self.config:
            raise ValueError(f"value model trained for {self.config}, got states of "
                             f"{states.config}")
        from lbs_pz.search.beliefs.learned import TorchThreads

        with torch.no_grad(), TorchThreads(torch, self.threads):
            x = torch.from_numpy(value_features(states))
            return self.net(x).squeeze(1).numpy()


def save_value(path: str, net, net_cfg: ValueNetConfig, config, blueprint: str,
               info: Optional[dict] = None) -> None:
    from lbs_pz.train.belief import config_to_dict
    from lbs_pz.models.checkpoint import save_plain

    save_plain(path, {
        "format": VALUE_FORMAT, "version": VALUE_VERSION,
        "game_config": config_to_dict(config), "net_config": dataclasses.asdict(net_cfg),
        "blueprint": blueprint,
        "state_dict": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
        "info": dict(info or {}),
    })


def load_value(path: str):
    """(network in eval mode, HanabiConfig, checkpoint dict); CheckpointError if the file
    is missing, corrupt or not a value checkpoint (read with weights_only=True)."""
    from lbs_pz.engine import HanabiConfig
    from lbs_pz.models.checkpoint import CheckpointError, load_plain

    ckpt = load_plain(path, VALUE_FORMAT, VALUE_VERSION, "value")
    try:
        config = HanabiConfig(**ckpt["game_config"])
        net = make_value_net(ValueNetConfig(**ckpt["net_config"]))
        net.load_state_dict(ckpt["state_dict"])
    except Exception as err:
        raise CheckpointError(f"{path!r}: value checkpoint does not match the network: "
                              f"{type(err).__name__}: {err}") from None
    return net.eval(), config, ckpt
