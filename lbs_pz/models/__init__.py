"""Model checkpoints: one layout for every model, one loader by name or path, and the
pretrained weights shipped with lbs_pz (package data; see README.md in this folder).

    save_checkpoint(path, kind, game, architecture, weights, trained_for, info)
    load_checkpoint(path_or_name, kind)      -> the checked dict (CheckpointError if not one)
    check_trained_for(ckpt, blueprint_identity, game, allow_mismatch)
                                             -> CheckpointMismatchError on a mismatch
    find_model(kind, trained_for, game)      -> the shipped model's name, or None
    shipped_models()                         -> name, kind, game, trained_for of each

This layer sits just above the engine: it imports lbs_pz.engine and torch (on use) only.
The networks themselves live with their users (`lbs_pz.search.beliefs.model.BeliefNet`,
`lbs_pz.search.value`, `lbs_pz.agents.public_lstm.PublicLSTMNet`).
"""

import os

from lbs_pz.models.checkpoint import (
    FORMAT, KINDS, MODELS_DIR, VERSION, CheckpointError, CheckpointMismatchError,
    check_trained_for, find_model, game_from_dict, game_of, game_to_dict, load_checkpoint,
    save_checkpoint, shipped_models, shipped_names,
)

__all__ = [
    "FORMAT", "VERSION", "KINDS", "MODELS_DIR", "CheckpointError", "CheckpointMismatchError",
    "check_trained_for", "find_model", "game_from_dict", "game_of", "game_to_dict",
    "load_checkpoint", "save_checkpoint", "shipped_models", "shipped_names", "path",
]


def path(name: str) -> str:
    """Absolute path of a shipped model file ("belief_strong_2p" or "belief_strong_2p.pt")."""
    return os.path.join(MODELS_DIR, name if name.endswith(".pt") else name + ".pt")
