"""Safe checkpoint files: plain dicts of tensors, numbers and strings, written atomically
and read with `torch.load(weights_only=True)`, so a file can never run code."""

from __future__ import annotations

import os


class CheckpointError(ValueError):
    """A file that is not a readable lbs_pz checkpoint of the expected kind."""


def save_plain(path: str, checkpoint: dict) -> None:
    import torch

    tmp = f"{path}.tmp"
    torch.save(checkpoint, tmp)
    os.replace(tmp, path)


def load_plain(path: str, fmt: str, version: int, kind: str, map_location="cpu") -> dict:
    """Read a checkpoint dict whose "format" is `fmt` and "version" is `version`.
    Raises CheckpointError for a missing, corrupt, foreign or code-carrying file."""
    import torch

    if not os.path.isfile(path):
        raise CheckpointError(f"{kind} checkpoint {path!r} does not exist")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # pickle errors, zip errors, unsupported globals ...
        text = str(err)
        if "WeightsUnpickler error:" in text:     # skip torch's advice to load unsafely
            text = text.split("WeightsUnpickler error:", 1)[1].split("Check the doc", 1)[0]
        reason = " ".join(text.split())[:160]
        raise CheckpointError(f"{path!r} is not a readable lbs_pz {kind} checkpoint: "
                              f"{type(err).__name__} {reason!r} (loaded with "
                              f"weights_only=True, which never runs code from a file)") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != fmt:
        raise CheckpointError(f"{path!r} is not an lbs_pz {kind} checkpoint (no "
                              f"format={fmt!r} entry)")
    if ckpt.get("version") != version:
        raise CheckpointError(f"{path!r} has {kind} checkpoint version {ckpt.get('version')!r}; "
                              f"this lbs_pz reads version {version}")
    return ckpt
