"""`TrainedForBlueprint`: what a learned belief and a centralized value share.

Both are models trained FOR one blueprint and one game variant. Given a blueprint they
load the checkpoint made for it (the one passed, else the shipped one trained for it) and
refuse one made for another blueprint or variant with a `CheckpointMismatchError` that
names the fix, unless `allow_mismatch` (and never when the network cannot read the
variant's inputs).
"""

from __future__ import annotations

from typing import Callable, List, Optional

from lbs_pz.agents import blueprint_identity
from lbs_pz.models.checkpoint import (CheckpointMismatchError, check_trained_for,
                                      describe_game, model_for, same_game)


def input_structure(config) -> tuple:
    """What a network's input layer depends on: encoding size, hand size, card types."""
    return (config.encoding_size, config.hand_size, config.num_card_types)


class TrainedForBlueprint:
    """Mixin. Attributes after `_load_for`: `trained_for` ({"spec", "fingerprint"} or
    None), `trained_game` (the HanabiConfig it was trained on), `checkpoint_path` (None
    for a network given in memory), `mismatches` (what allow_mismatch let through)."""

    kind = "model"          # "belief" or "value": names the checkpoint kind and the fix
    reads = "inputs"        # what the network reads, for messages

    def _load_for(self, checkpoint: Optional[str], blueprint, allow_mismatch: bool,
                  default: str, loader: Callable, net=None, config=None):
        """(network, its HanabiConfig): `net` and `config` when given (nothing checked),
        else loaded with `loader(path)` -> (net, config, checkpoint dict) from the
        checkpoint for `blueprint` (`model_for`), its blueprint checked."""
        self.allow_mismatch = bool(allow_mismatch)
        self.trained_for, self.checkpoint_path = None, None
        self.mismatches: List[str] = []
        self._ckpt_head = None
        if net is not None:
            if config is None:
                raise ValueError(f"a {self.kind} network given in memory needs the "
                                 f"HanabiConfig it was trained on (config=...)")
            self.trained_game = config
            return net, config
        identity = None if blueprint is None else blueprint_identity(blueprint)
        path = model_for(self.kind, checkpoint, identity, default, self.allow_mismatch)
        net, config, ckpt = loader(path)
        self.trained_for, self.checkpoint_path = ckpt["trained_for"], ckpt["path"]
        self._ckpt_head = {"kind": self.kind, "game": ckpt["game"],
                           "trained_for": ckpt["trained_for"]}
        self.mismatches = check_trained_for(self._ckpt_head, identity, None,
                                            self.allow_mismatch, repr(ckpt["path"]))
        self.trained_game = config
        return net, config

    def check_game(self, config) -> None:
        """CheckpointMismatchError unless this model was trained on the variant `config`
        (or allow_mismatch is set and the network can read the variant's inputs)."""
        mine = self.trained_game
        if config == mine or same_game(mine, config):
            return
        if self._ckpt_head is not None:
            for problem in check_trained_for(self._ckpt_head, None, config,
                                             self.allow_mismatch, repr(self.checkpoint_path)):
                if problem not in self.mismatches:
                    self.mismatches.append(problem)
        elif not self.allow_mismatch:
            raise CheckpointMismatchError(f"the {self.kind} model was trained for the game "
                                          f"{describe_game(mine)}, not {describe_game(config)}")
        if input_structure(mine) != input_structure(config):
            raise CheckpointMismatchError(
                f"the {self.kind} network reads the {self.reads} of {describe_game(mine)} "
                f"(encoding {mine.encoding_size}, {mine.hand_size} cards), not those of "
                f"{describe_game(config)}: train one with `lbs-pz train-{self.kind} "
                f"--blueprint SPEC` for this variant")
