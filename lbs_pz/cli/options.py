"""Options shared by the subcommands: the game variant, the blueprint spec, the run seed,
the count of games (one parser, one maximum), the check of every output path
(`check_output_path`, from `lbs_pz.files`: a regular file or nothing yet), and
options generated from a trainer's hyper-parameter dataclass."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import os
import re
import signal
import sys
import textwrap
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Type, TypeVar

from lbs_pz.agents import spec_forms, spec_help
from lbs_pz.checks import as_int, as_real
from lbs_pz.engine import HanabiConfig
from lbs_pz.engine.seeds import MAX_GAMES, MAX_SEED, check_run_seed
from lbs_pz.eval.backends import BACKENDS
from lbs_pz.files import check_input_path, check_output_path, output_errors  # noqa: F401
from lbs_pz.optional import RAY_TIMEOUT, RAY_TIMEOUT_VARIABLE, install_hint, ray_available
from lbs_pz.search.beliefs import BELIEF_KINDS
from lbs_pz.search.config import (ADVANCED, DEFAULTS as SEARCH_DEFAULTS, PRECISIONS, PRUNING_RULES,
                                  SearchConfig)
from lbs_pz.search.methods import MethodSpec
from lbs_pz.train.board import check_board
from lbs_pz.train.configs import (ARCH_FIELDS, ARCH_PRESETS, SAVE_MINUTES, curve_path,
                                  curve_png_path)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Config = TypeVar("Config", bound="DataclassInstance")   # a hyper-parameter dataclass


def blueprint_help() -> str:
    """The spec list that ends every command's help (from `lbs_pz.agents.BLUEPRINT_KINDS`)."""
    return "blueprint SPEC (--blueprint), one of:\n" + spec_help()


def add_game_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("game variant (HLE parameter names)")
    group.add_argument("--players", type=int, default=2, help="2..5 (default 2)")
    group.add_argument("--colors", type=int, default=5, help="1..5 (default 5)")
    group.add_argument("--ranks", type=int, default=5, help="1..5 (default 5)")
    group.add_argument("--hand-size", type=int, default=None,
                       help="1..8 (default: 5, or 4 with 4+ players)")
    group.add_argument("--max-information-tokens", type=int, default=8, help="default 8")
    group.add_argument("--max-life-tokens", type=int, default=3, help="default 3")


def game_from(args) -> HanabiConfig:
    return HanabiConfig(
        players=args.players, colors=args.colors, ranks=args.ranks, hand_size=args.hand_size,
        max_information_tokens=args.max_information_tokens, max_life_tokens=args.max_life_tokens,
    )


CHECKPOINT_HELP = f"""\
checkpoints: --out is written once --save-minutes (default {SAVE_MINUTES:g}) minutes of
training have passed since the last one, after every --save-every-th update where the
command has --save-every, at the end and on Ctrl-C, so that a killed run loses at most
those minutes (--resume OUT goes on from its checkpoint). One run writes an --out at a
time: it locks OUT.lock, and a second run on it is refused."""


def add_blueprint_option(parser: argparse.ArgumentParser, default: str = "strong",
                         what: str = "the blueprint") -> None:
    parser.add_argument("--blueprint", default=default, metavar="SPEC",
                        help=f"{what}: {spec_forms()} (default {default}; see the "
                             f"spec list below)")


def run_seed(text: str) -> int:
    """argparse type of --seed: an integer in [0, 2**31)."""
    try:
        return check_run_seed(int(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err) if "must" in str(err) else
                                         f"seed must be an integer in [0, {MAX_SEED}), "
                                         f"got {text!r}")


def _parsed(text: str, words: str, check, **bounds):
    """`text` read as an int (`check` as_int) or a float (as_real) and checked by
    lbs_pz.checks with `bounds`; argparse's one-line "expected WORDS, got TEXT" otherwise."""
    try:
        return check((int if check is as_int else float)(text), "value", **bounds)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected {words}, got {text!r}") from None


def int_at_least(minimum: int) -> Callable[[str], int]:
    """argparse type: an integer >= `minimum` (e.g. --workers, --first-game; a count of
    games is `game_count`)."""
    def parse(text: str) -> int:
        return _parsed(text, f"an integer >= {minimum}", as_int, lo=minimum)
    parse.__name__ = f"integer >= {minimum}"
    return parse


def finite_float_at_least(minimum: float) -> Callable[[str], float]:
    """argparse type: a finite number >= `minimum` (no nan, no inf)."""
    def parse(text: str) -> float:
        return _parsed(text, f"a finite number >= {minimum:g}", as_real, lo=minimum)
    parse.__name__ = f"number >= {minimum:g}"
    return parse


MAX_GAMES_TEXT = f"2**{MAX_GAMES.bit_length() - 1}"     # how --help writes MAX_GAMES


def game_count(minimum: int = 1) -> Callable[[str], int]:
    """argparse type of every option that counts games (--games, --search-games, a
    trainer's --val-games, ...): an integer in [`minimum`, MAX_GAMES]. MAX_GAMES (2**32)
    is the number of deals in a run's stream, so no run can ask for more; the commands
    that play a run's games (eval, compare, search-games, belief-quality, demo) play them
    as a stream, so that memory does not grow with the count."""
    def parse(text: str) -> int:
        return _parsed(text, f"an integer in [{minimum}, {MAX_GAMES_TEXT}]", as_int,
                       lo=minimum, hi=MAX_GAMES)
    parse.__name__ = f"game count >= {minimum}"
    return parse


def add_games_option(parser, default: int, about: str, flag: str = "--games",
                     minimum: int = 1) -> None:
    """`flag` (a count of games, `game_count(minimum)`): its help says `about`, the
    default and the maximum."""
    parser.add_argument(flag, type=game_count(minimum), default=default, metavar="N",
                        help=f"{about} (default {default:,}; at most {MAX_GAMES_TEXT})")


def check_trainer_outputs(config) -> None:
    """Every file a trainer's `config` makes it write, checked with `check_output_path`
    before any training: --out, --slim-out (where the config has it), the learning
    curve's CSV and the PNG beside it (same stem; unless --curve none), and the
    --tensorboard folder (`check_board`: a missing tensorboard package is one line
    naming its extra)."""
    check_output_path(config.out, "--out")
    if getattr(config, "slim_out", ""):
        check_output_path(config.slim_out, "--slim-out")
    curve = curve_path(config.out, getattr(config, "curve", "none"))
    if curve:
        check_output_path(curve, "--curve")
        check_output_path(curve_png_path(curve), "--curve")
    check_board(getattr(config, "tensorboard", ""))


def check_distinct_outputs(**paths) -> None:
    """ValueError if two output options name the same file (one would overwrite the
    other): check_distinct_outputs(json=args.json, jsonl=args.jsonl)."""
    seen: Dict[str, str] = {}                   # real path -> the option naming it
    for option, path in paths.items():
        if not path:
            continue
        real = os.path.realpath(path)
        if real in seen:
            raise ValueError(f"--{seen[real]} and --{option} are the same file {path!r}; "
                             f"give each its own path")
        seen[real] = option


@contextlib.contextmanager
def one_interrupt() -> Iterator[None]:
    """Ctrl-C in this block: the FIRST SIGINT raises KeyboardInterrupt and ignores every
    later one, so that stopping (cancelling queued games, terminating workers) cannot be
    cut short or hung by a second Ctrl-C. Left normally, the previous handler is back;
    after an interrupt SIGINT stays ignored until the command exits (`interrupted`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def first(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is first:    # not interrupted: as it was
            signal.signal(signal.SIGINT, previous)


def interrupted(command: str, note: str = "") -> int:
    """What a command returns on Ctrl-C, once its work is stopped: one line on stderr and
    the conventional exit status 130 (128 + SIGINT); SIGINT stays ignored until exit."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(f"lbs-pz {command}: interrupted{': ' + note if note else ''}", file=sys.stderr)
    return 130


def run_trainer(command: str, config_cls, args, train, **train_kwargs) -> int:
    """Run a trainer command: its config from the parsed `args`, every output checked
    before any training (a bad path cannot lose the run), then `train(config,
    **train_kwargs)`; Ctrl-C ends it as `interrupted` (exit 130, with the trainer's note
    of what it saved)."""
    config = dataclass_from(config_cls, args)
    check_trainer_outputs(config)
    try:
        train(config, **train_kwargs)
    except KeyboardInterrupt as stop:
        return interrupted(command, getattr(stop, "note", "nothing saved"))
    return 0


def add_seed_option(parser: argparse.ArgumentParser, help: str = "seed of the deals") -> None:
    parser.add_argument("--seed", type=run_seed, default=0,
                        help=f"{help}, in [0, 2**31) (default 0); evaluation deals come "
                             f"from a stream disjoint from training's")


def field_comments(config_class) -> dict:
    """{field name: its comment in the dataclass source}: the comment lines just above the
    field, or the comment after it on its line. Each hyper-parameter is explained once,
    where it is defined, and `--help` shows that text."""
    try:
        source = inspect.getsource(config_class)
    except (OSError, TypeError):
        return {}
    out, above = {}, []
    for line in source.splitlines():
        comment = re.match(r"\s+#\s*(.*)$", line)
        if comment:
            above.append(comment.group(1).strip())
            continue
        field = re.match(r"\s+(\w+)\s*:[^#=]*(?:=[^#]*)?(?:#\s*(.+))?$", line)
        if field and (field.group(2) or above):
            out[field.group(1)] = (field.group(2) or " ".join(above)).strip()
        above = []
    return out


def add_dataclass_options(parser: argparse.ArgumentParser, config_class, skip=()) -> None:
    """`--field-name` for every field of a hyper-parameter dataclass: typed by its default
    (int, float, str; bools as --name / --no-name), defaulted by it, explained by the
    comment after the field."""
    comments = field_comments(config_class)
    for field in dataclasses.fields(config_class):
        if field.name in skip:
            continue
        flag = f"--{field.name.replace('_', '-')}"
        default = field.default
        if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        about = comments.get(field.name, "")
        about = f"{about} " if about else ""
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=f"{about}(default {default})")
        elif isinstance(default, int) and field.name.endswith("games"):
            parser.add_argument(flag, type=game_count(0), default=default, metavar="N",
                                help=f"{about}(default {default!r}; at most {MAX_GAMES_TEXT})")
        elif isinstance(default, (int, float, str)):
            parser.add_argument(flag, type=type(default), default=default,
                                help=f"{about}(default {default!r})")
        elif default is None:   # Optional[int] / Optional[float] / Optional[str]
            annotation = str(field.type)
            kind = int if "int" in annotation else float if "float" in annotation else str
            parser.add_argument(flag, type=kind, default=None, help=f"{about}(default: none)")
        else:
            raise TypeError(f"{config_class.__name__}.{field.name}: cannot become an option "
                            f"(default {default!r})")


def dataclass_from(config_class: Type[Config], args: argparse.Namespace,
                   **overrides: Any) -> Config:
    """The `config_class` instance the parsed options (and `overrides`) describe."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(config_class)
              if hasattr(args, f.name)}
    values.update(overrides)
    return config_class(**values)


def add_arch_options(parser: argparse.ArgumentParser, config_class) -> None:
    """The net's options under their own heading: --arch (a preset of ARCH_PRESETS, each
    listed with what it is for in the group's description) and --hidden (its width),
    explained by the comments of `config_class`'s fields `arch` and `hidden`."""
    comments = field_comments(config_class)
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    presets = "\n".join(
        textwrap.fill(about, 88, initial_indent=f"  {name:<19}", subsequent_indent=" " * 21,
                      break_on_hyphens=False)
        for name, about in ARCH_PRESETS.items())
    about = textwrap.fill(
        "the public-LSTM net: a preset (--arch; lbs_pz.agents.public_lstm.ARCHITECTURES) "
        "and its width (--hidden); any other combination of the net's options is built in "
        "Python, PublicLSTMNet.from_preset(name, config, **overrides)", 88,
        break_on_hyphens=False)
    group = parser.add_argument_group("architecture", f"{about}:\n{presets}")
    default = fields["arch"].default
    group.add_argument("--arch", choices=list(ARCH_PRESETS), default=default,
                       help=comments.get("arch", "") + ("" if default is None else
                                                        f" (default {default})"))
    group.add_argument("--hidden", type=int_at_least(1), default=fields["hidden"].default,
                       metavar="N", help=comments.get("hidden", ""))


def add_blueprint_command(subparsers, name: str, description: str,
                          help: str) -> argparse.ArgumentParser:
    """A subcommand that takes a blueprint: its --help ends with the spec list."""
    return subparsers.add_parser(name, help=help, description=description,
                                 epilog=blueprint_help(),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


def add_trainer_command(subparsers, name: str, description: str, config_cls, run, help: str,
                        trained_for: Optional[str] = None) -> argparse.ArgumentParser:
    """The subcommand of a trainer, its options generated from `config_cls`. With
    `trained_for` (what the model is trained for, e.g. "the blueprint the belief is trained
    for"), a model made FOR a blueprint: --blueprint, --seed and the config's other fields
    (the config carries --progress). Without, a public-LSTM net: the config's fields, its
    architecture (`add_arch_options`: --arch, --hidden) and --no-progress. Its --help
    ends with when the checkpoint is written (`CHECKPOINT_HELP`) and the spec list."""
    if trained_for is not None:
        parser = add_blueprint_command(subparsers, name, description, help=help)
        parser.epilog = f"{CHECKPOINT_HELP}\n\n{parser.epilog}"
        add_blueprint_option(parser, what=trained_for)
        add_seed_option(parser, "run seed of the training deals")
        add_dataclass_options(parser, config_cls, skip=("blueprint", "seed"))
    else:
        parser = subparsers.add_parser(name, description=description, help=help,
                                       epilog=f"{CHECKPOINT_HELP}\n\n{blueprint_help()}",
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
        add_dataclass_options(parser, config_cls, skip=ARCH_FIELDS)
        add_arch_options(parser, config_cls)
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
    return parser


# How each SearchConfig field becomes an option: its flag (default --field-name) and type.
_SEARCH_FLAGS = {"precision": "--search-precision"}
_SEARCH_TYPES = {"rollouts": int_at_least(1), "budget": int_at_least(1),
                 "batch_size": int_at_least(1), "verify": int_at_least(0),
                 "margin_worlds": int_at_least(0), "deep_worlds": int_at_least(0),
                 "delta": finite_float_at_least(0),
                 "confidence": finite_float_at_least(0),
                 "min_legal_fraction": finite_float_at_least(0),
                 "time_budget": finite_float_at_least(0)}
_SEARCH_CHOICES = {"belief": BELIEF_KINDS, "pruning": PRUNING_RULES, "precision": PRECISIONS}


def add_search_options(parser: argparse.ArgumentParser, defaults: Optional[dict] = None) -> None:
    """One option per `SearchConfig` field but the seed (the run's --seed seeds the
    search): explained by the field's comment, defaulted by the field (or by `defaults`,
    {field: value}, a command's own); the knobs of speed and of the deviation rule grouped
    under their own heading. `search_spec` reads them back."""
    defaults = defaults or {}
    comments = field_comments(SearchConfig)
    main = parser.add_argument_group("search")
    advanced = parser.add_argument_group(
        "search, advanced (unset: the blueprint's recommended setting from `lbs-pz models`, "
        "else the general default)")
    for field in dataclasses.fields(SearchConfig):
        if field.name == "seed":
            continue
        group = advanced if field.name in ADVANCED else main
        flag = _SEARCH_FLAGS.get(field.name, f"--{field.name.replace('_', '-')}")
        about = comments.get(field.name, "")
        if field.name in defaults:
            default_text = f"default {defaults[field.name]!r} here"
        elif field.name in SEARCH_DEFAULTS:
            default_text = f"default: recommended, else {SEARCH_DEFAULTS[field.name]!r}"
        elif field.default is None:
            default_text = "default: none" if field.name not in ("belief", "refill") else ""
        else:
            default_text = f"default {field.default!r}"
        about = f"{about} ({default_text})" if default_text else about
        kwargs = {"dest": field.name, "default": defaults.get(field.name, field.default),
                  "help": about}
        if field.name == "allow_mismatch":
            group.add_argument(flag, action="store_true", **kwargs)
        elif field.name in ("refill", "importance"):
            group.add_argument(flag, action=argparse.BooleanOptionalAction, **kwargs)
        elif field.name in _SEARCH_CHOICES:
            group.add_argument(flag, choices=_SEARCH_CHOICES[field.name], **kwargs)
        elif field.name.endswith("_checkpoint"):
            group.add_argument(flag, metavar="PATH", **kwargs)
        else:
            group.add_argument(flag, type=_SEARCH_TYPES[field.name], **kwargs)


def search_config(args: argparse.Namespace) -> SearchConfig:
    """The `SearchConfig` of the options of `add_search_options` (and --seed)."""
    return SearchConfig(seed=args.seed, **{f.name: getattr(args, f.name)
                                           for f in dataclasses.fields(SearchConfig)
                                           if f.name != "seed"})


def add_search_seats_option(parser: argparse.ArgumentParser, default: str, what: str) -> None:
    """--search-seats: comma-separated seats or 'all' (`search_seats_from` reads it)."""
    parser.add_argument("--search-seats", default=default, metavar="SEATS",
                        help=f"{what}: comma-separated seats, or 'all' (default {default})")


def search_seats_from(text: str, players: int) -> tuple:
    """`MethodSpec.search_seats` of a --search-seats value: ("all",) or distinct seats in
    [0, players); ValueError (one line) otherwise."""
    if text == "all":
        return ("all",)
    try:
        seats = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise ValueError(f"--search-seats: comma-separated seats or 'all', got {text!r}") from None
    for seat in seats:
        if not 0 <= seat < players:
            raise ValueError(f"--search-seats: seat {seat} is not in [0, {players})")
    if len(set(seats)) < len(seats):
        raise ValueError(f"--search-seats {text!r}: a seat is given twice")
    return seats


def search_spec(args: argparse.Namespace, method: str, **fields: Any) -> MethodSpec:
    """The `MethodSpec` of `method` with the options of `add_search_options` (and
    --blueprint, --seed) from args; `fields` sets the others."""
    return MethodSpec(method, blueprint=args.blueprint, search=search_config(args), **fields)


def add_backend_options(parser: argparse.ArgumentParser, workers_help: str,
                        workers_default=None) -> None:
    """--backend (inline | process | ray, default process), --workers and --address: where
    a command's games are played (`lbs_pz.eval.backends`); `check_backend` checks them."""
    parser.add_argument("--backend", default="process", choices=sorted(BACKENDS),
                        help="where games run: inline (this process), process (a local "
                             "process pool) or ray (a Ray cluster: --address, else a local "
                             "Ray); every backend gives the same games (default process)")
    parser.add_argument("--workers", type=int_at_least(1), default=workers_default,
                        help=workers_help)
    parser.add_argument("--address", default=None,
                        help=f"the Ray cluster's address, e.g. HEAD:6379 (--backend ray); "
                             f"a cluster that does not answer there within "
                             f"{RAY_TIMEOUT:g} s is an error (${RAY_TIMEOUT_VARIABLE}=SECONDS "
                             f"to wait otherwise)")


def check_backend(args: argparse.Namespace) -> None:
    """ValueError for --address without --backend ray, or --backend ray without Ray."""
    if args.address and args.backend != "ray":
        raise ValueError(f"--address {args.address!r} is for --backend ray (the backend is "
                         f"{args.backend!r})")
    if args.backend == "ray" and not ray_available():
        raise ValueError(f"--backend ray needs Ray: {install_hint('ray')}")
