"""Command-line options from a training script's hyper-parameter dataclass: one
`--field-name` option per field, typed and defaulted by the field's default."""

from __future__ import annotations

import argparse
import dataclasses


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
