"""What the trainers share: command-line options from a hyper-parameter dataclass (one
`--field-name` option per field, typed and defaulted by the field's default), the command
line a run records in its checkpoint, and the blueprint a run trains for."""

from __future__ import annotations

import argparse
import dataclasses
import shlex


def add_config_arguments(parser: argparse.ArgumentParser, config_class) -> None:
    """Add `--name` for every field of `config_class` (int, float or str defaults)."""
    for field in dataclasses.fields(config_class):
        kind = type(field.default)
        if kind not in (int, float, str):   # argparse would read "False" as True for bool
            raise TypeError(f"{config_class.__name__}.{field.name}: only int, float and str "
                            f"fields become options, got {kind.__name__}")
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=kind,
                            default=field.default, help=f"default {field.default!r}")


def config_from_args(config_class, args: argparse.Namespace):
    """The `config_class` instance the parsed options describe."""
    return config_class(**{f.name: getattr(args, f.name)
                           for f in dataclasses.fields(config_class)})


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


def load_training_blueprint(spec: str):
    """(blueprint, identity) for a blueprint spec (`NAME` | `sb3:PATH` | `lstm:PATH` |
    `py:MODULE_OR_FILE.py:CLASS`, see `lbs_pz.agents.load_blueprint`); identity is the
    {"spec", "fingerprint"} that belief and value checkpoints record as `trained_for`."""
    from lbs_pz.search.beliefs.learned import blueprint_identity_of

    try:
        from lbs_pz.agents import load_blueprint
    except ImportError:       # an agents layer without blueprint specs: rule bots only
        from lbs_pz.agents import RuleBot
        blueprint = RuleBot(spec)
    else:
        blueprint = load_blueprint(spec)
    return blueprint, blueprint_identity_of(blueprint)
