"""What the trainers share: the game variant of a run, the longest possible game, the
public-LSTM architecture a run names (preset and width), the greedy self-play figure
of a public-LSTM net, the command line a run records in its checkpoint (from its
hyper-parameter dataclass, as `lbs_pz.cli.options` turns fields into options), the torch
set-up of a run, one clipped gradient step, the checkpoint of a public-LSTM run, and the
blueprint a run trains for."""

from __future__ import annotations

import copy
import dataclasses
import shlex
from typing import Dict, Optional, Tuple

import numpy as np
import torch

from lbs_pz.agents import Blueprint, blueprint_identity, load_blueprint
from lbs_pz.agents.public_lstm import ARCHITECTURES, PublicLSTMBlueprint
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.search.stats import mean_sem


VARIANT_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
                  "max_life_tokens")
"""The fields of a trainer's config that choose its game variant (each optional but
players: the engine's default where a config lacks it)."""


def game_config(run) -> HanabiConfig:
    """The game variant of a run: its config's `VARIANT_FIELDS` (a hand_size of 0 or
    None: the standard rule, 5 cards, or 4 with 4+ players)."""
    if not hasattr(run, "players"):
        raise TypeError(f"game_config takes a trainer's config, got {type(run).__name__}")
    fields = {name: getattr(run, name) for name in VARIANT_FIELDS if hasattr(run, name)}
    fields["hand_size"] = fields.get("hand_size") or None
    return HanabiConfig(**fields)


def net_options(run, default_arch: str = "") -> dict:
    """The `PublicLSTMNet.for_config` options of the new net a run names: the preset
    `run.arch` (None or "": `default_arch`) of `ARCHITECTURES`, as wide as `run.hidden`
    when that is set (a preset's value stream keeps its own widths)."""
    options = dict(ARCHITECTURES[run.arch or default_arch])
    if run.hidden is not None:
        options["hidden"] = run.hidden
    return options


def named_options(run) -> dict:
    """The net options a run names itself, to hold against a start (--init): every option
    of its preset `run.arch` but the width (when --arch is given) and the width
    `run.hidden` (when --hidden is given); {} when it names neither."""
    named = {k: v for k, v in ARCHITECTURES[run.arch].items() if k != "hidden"} \
        if run.arch else {}
    if run.hidden is not None:
        named["hidden"] = run.hidden
    return named


def start_mismatch(what: str, have: dict, run, free=()) -> str:
    """'' when the options `have` of a start's net (`PublicLSTMNet.options()`) agree with
    every option the run names (`named_options(run)`) but those of `free` (the ones the
    run may change in its start); else the one-line reason, for `what` (e.g. "--init
    start.pt"), naming each option that differs, the start's value and the run's."""
    named = named_options(run)
    differ = [k for k in have if k in named and k not in free and named[k] != have[k]]
    if not differ:
        return ""
    culprits = (["arch"] if any(k != "hidden" for k in differ) else []) \
        + (["hidden"] if "hidden" in differ else [])      # the options that name them
    given = " ".join(f"--{name} {getattr(run, name)}" for name in culprits)
    also = (f", or name a preset that differs from the start only in "
            f"{', '.join(free)}") if free and "arch" in culprits else ""
    return (f"{what}: the checkpoint's net has {', '.join(f'{k} {have[k]!r}' for k in differ)}, "
            f"this run asks for {', '.join(f'{k} {named[k]!r}' for k in differ)} "
            f"({given}); the start sets the architecture: leave out "
            f"{' and '.join('--' + name for name in culprits)}{also}")


def self_play(net, config: HanabiConfig, games: int, seed: int = 0) -> Tuple[float, float]:
    """Greedy self-play of a public-LSTM net on EVAL deals 0 .. games-1 of run `seed` (the
    deals of `lbs-pz eval`; training plays TRAIN deals only): (mean, s.e.m.)."""
    was_training = net.training
    cpu_net = net if next(net.parameters()).device.type == "cpu" else copy.deepcopy(net).cpu()
    batch = HanabiBatch(config, games, seeds=deal_seeds(EVAL, seed, 0, games))
    PublicLSTMBlueprint(cpu_net, config).rollout(batch)
    net.train(was_training)
    return mean_sem(batch.scores().astype(np.float64))


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


def torch_setup(config) -> torch.device:
    """Threads, seed and device of a run whose config has `device` ("cpu" | "cuda[:N]"),
    `threads` and `seed`; returns the torch.device. A CUDA device that is not there is a
    ValueError before anything is built."""
    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is available")
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    return torch.device(config.device)


def clipped_step(optimizer: torch.optim.Optimizer, loss: torch.Tensor, parameters,
                 max_norm: float) -> None:
    """One step of `optimizer` on `loss`: the gradients cleared (set to None), `loss`
    back-propagated, the gradients of `parameters` clipped to a total norm of `max_norm`,
    the step taken."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(parameters, max_norm)
    optimizer.step()


def lstm_checkpoint(kind: str, net, config: HanabiConfig, command: str, run_config,
                    info=None, resume=None) -> dict:
    """`make_checkpoint`'s arguments for the public-LSTM net `net` of a run of `command`
    (e.g. "distill") with hyper-parameters `run_config` in the game `config`: the net's
    architecture and weights, trained for no blueprint, info = the command line, the
    hyper-parameters ("train_config") and `info`; `resume` (when given) its resume
    entry."""
    pieces = dict(kind=kind, game=config, architecture=net.arch(), weights=net.state_dict(),
                  trained_for=None, info={"command": command_line(command, run_config),
                                          "train_config": dataclasses.asdict(run_config),
                                          **(info or {})})
    if resume is not None:
        pieces["resume"] = resume
    return pieces


def load_training_blueprint(spec: str) -> Tuple[Blueprint, Dict[str, Optional[str]]]:
    """(blueprint, identity) for a blueprint spec (`NAME` | `sb3:PATH` | `lstm:PATH` |
    `py:MODULE_OR_FILE.py:CLASS`, see `lbs_pz.agents.load_blueprint`); identity is the
    {"spec", "fingerprint"} that belief and value checkpoints record as `trained_for`."""
    blueprint = load_blueprint(spec)
    return blueprint, blueprint_identity(blueprint)

