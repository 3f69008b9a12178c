"""The file of a search's recorded games: what `lbs_pz.eval.search_games` writes and
`lbs-pz distill --search-games` / `lbs-pz train-belief --search-games` read. One JSON line
per game:

    {"game": its index in the training stream, "deal": engine seed, "seat": the (first)
     searching seat, "seats": every searching seat (older files lack it), "moves": [every
     move played], "searched": [move numbers the search chose], "deviated": [those where it
     left the blueprint's move], "score": final score,
     "run": JSON of [the search's MethodSpec.to_dict(), the game variant's HanabiConfig
     fields, the run seed], "blueprint_fingerprint": the blueprint's fingerprint}

"run" and "blueprint_fingerprint" say what made the game (a file written by hand may
lack them; older files lack the fingerprint): a reader for one variant and blueprint
refuses games of another (`check_recorded_for`). The file is appended one whole line per
game; a last line cut by a killed run is dropped with a warning (`lbs_pz.files.json_lines`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import BinaryIO, List, Optional, Tuple

from lbs_pz.engine import HanabiConfig
from lbs_pz.files import json_lines, open_regular


def run_key(spec: dict, config_kwargs: dict, seed: int) -> str:
    """The "run" a recorded game holds: JSON of [the search's `MethodSpec.to_dict()`, the
    game variant's fields as given, the run seed], keys sorted (one text per run)."""
    return json.dumps([spec, config_kwargs, seed], sort_keys=True)


def recorded_run(g: dict) -> Optional[Tuple[dict, dict, int]]:
    """(search spec dict, game variant fields, run seed) that the game `g` records in its
    "run", or None if it records none; ValueError if "run" is not of that form."""
    if "run" not in g:
        return None
    try:
        run = json.loads(g["run"]) if isinstance(g["run"], str) else None
    except (ValueError, RecursionError):
        run = None
    if not (isinstance(run, list) and len(run) == 3 and isinstance(run[0], dict)
            and isinstance(run[0].get("blueprint"), str) and isinstance(run[1], dict)
            and isinstance(run[2], int)):
        raise ValueError("its 'run' is not [search, variant, seed]")
    return run[0], run[1], run[2]


def _is_game(g) -> bool:
    if not (isinstance(g, dict) and all(isinstance(g.get(k), int) for k in
                                        ("game", "deal", "seat", "score"))
            and all(isinstance(g.get(k), list) and all(isinstance(x, int) for x in g[k])
                    for k in ("moves", "searched", "deviated"))
            and set(g["deviated"]) <= set(g["searched"])
            and all(0 <= x < len(g["moves"]) for x in g["searched"])
            and isinstance(g.get("blueprint_fingerprint", ""), str)
            and isinstance(g.get("seats", []), list)
            and all(isinstance(x, int) for x in g.get("seats", []))):
        return False
    try:
        recorded_run(g)
    except ValueError:
        return False
    return True


def read_search_games(path: str, f: Optional[BinaryIO] = None,
                      option: str = "--search-games", repair: bool = False) -> List[dict]:
    """The games of a `record_search_games` file, each checked field by field: read from
    the binary file `f` (from its start) when given, else from `path`, which must be a
    regular file. ValueError naming `path` and the line for a line that is not a recorded
    game (or is longer than `lbs_pz.files.MAX_LINE_BYTES`). A last line cut short (no
    newline, not JSON: a run killed while writing it) is left out with a warning naming
    the file and line; with `repair` (`f` open to read and append) it is also removed
    from the file, so that the games appended next stay valid lines."""
    if f is None:
        try:
            fd = open_regular(path, os.O_RDONLY, option)
        except OSError as err:
            raise ValueError(f"{option} {path!r}: cannot read it ({err.strerror})") from None
        with os.fdopen(fd, "rb", buffering=0) as own:
            return read_search_games(path, own, option)
    f.seek(0)
    games = []
    dropped = "its game is played again" if repair else "its game is left out"
    for n, g in json_lines(f, path, option, "a recorded search game", repair, dropped,
                           unterminated_only=True):
        if not _is_game(g):
            raise ValueError(f"{path}, line {n}: not a recorded search game")
        games.append(g)
    return games


def _variant_fields(config_kwargs: dict) -> Optional[dict]:
    try:
        return dataclasses.asdict(HanabiConfig(**config_kwargs))
    except (TypeError, ValueError):
        return None


def searched_every_move(g: dict) -> bool:
    """Whether every move of the recorded game `g` is the search's (it searched at every
    seat): then no move of it is its blueprint's own."""
    return len(g["searched"]) == len(g["moves"])


def check_recorded_for(path: str, games: List[dict], config: HanabiConfig, blueprint: dict,
                       option: str = "--search-games", asked: str = "",
                       moves_only: bool = False) -> None:
    """ValueError (one line naming `option`, `path` and both sides) unless every game of
    `games` that records what made it was recorded in the game variant `config` and with
    the blueprint `blueprint` (its {"spec", "fingerprint"}, `lbs_pz.agents.
    blueprint_identity`): replayed in another variant or for another blueprint, the games
    would teach positions of another game, with no error. The blueprint is compared by
    fingerprint where the game records one, else by spec (`asked`, the spec as given, or
    the identity's canonical one). A game that records neither (a file written by hand)
    is taken as it is. With `moves_only` (a reader that learns only the moves played, as
    distillation does), a game whose every move is the search's (`searched_every_move`)
    may come from a search over any blueprint: none of its moves is that blueprint's."""
    want = dataclasses.asdict(config)
    names = {blueprint.get("spec"), asked or blueprint.get("spec")}
    for g in games:
        run = recorded_run(g)
        if run is None:
            continue
        spec, variant, _ = run
        fields = _variant_fields(variant)
        if fields is None:
            raise ValueError(f"{option} {path!r}: game {g['game']} records a game variant "
                             f"this program cannot build ({json.dumps(variant)[:120]})")
        if fields != want:
            diff = sorted(k for k in want if fields.get(k) != want[k])
            raise ValueError(
                f"{option} {path!r}: its games were recorded in another game variant ("
                + ", ".join(f"{k}={fields.get(k)}" for k in diff) + "); this run is "
                + ", ".join(f"{k}={want[k]}" for k in diff)
                + ": record games in this variant (lbs-pz search-games), or train for theirs")
        if moves_only and searched_every_move(g):
            continue
        fingerprint = g.get("blueprint_fingerprint")
        same = fingerprint == blueprint.get("fingerprint") if fingerprint \
            else spec["blueprint"] in names
        if not same:
            raise ValueError(
                f"{option} {path!r}: its games were recorded with blueprint "
                f"{spec['blueprint']!r}" + (f" (fingerprint {fingerprint[:12]})"
                                            if fingerprint else "")
                + f"; this run trains for {asked or blueprint.get('spec')!r}"
                + (f" (fingerprint {str(blueprint.get('fingerprint'))[:12]})"
                   if fingerprint else "")
                + ": record games with this blueprint (lbs-pz search-games), or train for "
                  "theirs")
