"""Model checkpoints: one layout for every model, one loader by name or path, and the
weights shipped with lbs_pz, listed in manifest.json (package data; see README.md here).

    save_checkpoint(path, kind, game, architecture, weights, trained_for, info)
    load_checkpoint(path_or_name, kind)      -> the checked dict (CheckpointError if not one,
                                                or a shipped file whose sha256 is not listed)
    check_trained_for(ckpt, blueprint_identity, game, allow_mismatch)
                                             -> CheckpointMismatchError on a mismatch
    shipped_models() / shipped_names()       -> the manifest's entries / their names
    find_model(kind, trained_for, game)      -> the shipped model's name, or None
    recommended_settings(trained_for, game)  -> {method: {setting: value}} recorded for a
                                                blueprint, or {}
    path(name)                               -> the file of a shipped model

The look-ups read manifest.json only (`lbs_pz.models.manifest`), so they need no torch;
loading a model does (through the gate `lbs_pz.optional.require_torch`). This layer sits
just above the engine: it imports lbs_pz.engine, lbs_pz.optional, lbs_pz.checks and torch
(on use) only. The networks themselves live with their users
(`lbs_pz.search.beliefs.model.BeliefNet`, `lbs_pz.search.value`,
`lbs_pz.agents.public_lstm.PublicLSTMNet`).
"""

import os

from lbs_pz.models.checkpoint import (
    FORMAT, KINDS, MODELS_DIR, VERSION, CheckpointError, CheckpointMismatchError,
    check_trained_for, find_model, game_from_dict, game_of, game_to_dict, load_checkpoint,
    recommended_settings, retired_models, save_checkpoint, shipped_models, shipped_names,
)
from lbs_pz.models.manifest import ManifestError

__all__ = [
    "FORMAT", "VERSION", "KINDS", "MODELS_DIR", "CheckpointError", "CheckpointMismatchError",
    "check_trained_for", "find_model", "game_from_dict", "game_of", "game_to_dict",
    "load_checkpoint", "save_checkpoint", "shipped_models", "shipped_names", "path",
    "recommended_settings", "retired_models", "ManifestError",
]


def path(name: str) -> str:
    """Absolute path of a shipped model file ("belief_strong_2p" or "belief_strong_2p.pt")."""
    return os.path.join(MODELS_DIR, name if name.endswith(".pt") else name + ".pt")
