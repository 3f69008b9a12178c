"""What the trainers share: the command line a run records in its checkpoint (from its
hyper-parameter dataclass, as `lbs_pz.cli.options` turns fields into options), the torch
set-up of a run and the blueprint a run trains for."""

from __future__ import annotations

import dataclasses
import shlex


def command_line(command: str, config) -> str:
    """The `lbs-pz COMMAND ...` line that reproduces a run of hyper-parameters `config`
    (its fields that differ from their defaults; True/False switches as `--name` /
    `--no-name`), recorded in checkpoints as info["command"]."""
    parts = [f"lbs-pz {command}"]
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if value == field.default:
            continue
        flag = field.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(f"--{flag}" if value else f"--no-{flag}")
        else:
            parts.append(f"--{flag} {shlex.quote(str(value))}")
    return " ".join(parts)


def torch_setup(config):
    """Threads, seed and device of a run whose config has `device` ("cpu" | "cuda[:N]"),
    `threads` and `seed`; returns the torch.device. A CUDA device that is not there is a
    ValueError before anything is built."""
    import torch

    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is available")
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    return torch.device(config.device)


def load_training_blueprint(spec: str):
    """(blueprint, identity) for a blueprint spec (`NAME` | `sb3:PATH` | `lstm:PATH` |
    `py:MODULE_OR_FILE.py:CLASS`, see `lbs_pz.agents.load_blueprint`); identity is the
    {"spec", "fingerprint"} that belief and value checkpoints record as `trained_for`."""
    from lbs_pz.agents import blueprint_identity, load_blueprint

    blueprint = load_blueprint(spec)
    return blueprint, blueprint_identity(blueprint)
