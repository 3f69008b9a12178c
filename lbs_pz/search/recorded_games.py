"""The file of a search's recorded games: what `lbs_pz.eval.search_games` writes and
`lbs-pz distill --search-games` reads. One JSON line per game:

    {"game": its index in the training stream, "deal": engine seed, "seat": the
     searching seat, "moves": [every move played], "searched": [move numbers the search
     chose], "deviated": [those where it left the blueprint's move], "score": final score}
"""

from __future__ import annotations

import json
import os
from typing import BinaryIO, List, Optional

from lbs_pz.files import open_regular, read_lines


def _is_game(g) -> bool:
    return isinstance(g, dict) and all(isinstance(g.get(k), int) for k in
                                       ("game", "deal", "seat", "score")) \
        and all(isinstance(g.get(k), list) and all(isinstance(x, int) for x in g[k])
                for k in ("moves", "searched", "deviated")) \
        and set(g["deviated"]) <= set(g["searched"]) \
        and all(0 <= x < len(g["moves"]) for x in g["searched"])


def read_search_games(path: str, f: Optional[BinaryIO] = None,
                      option: str = "--search-games") -> List[dict]:
    """The games of a `record_search_games` file, each checked field by field: read from
    the binary file `f` (from its start) when given, else from `path`, which must be a
    regular file. ValueError naming `path` and the line for a line that is not a recorded
    game (or is longer than `lbs_pz.files.MAX_LINE_BYTES`)."""
    if f is None:
        try:
            fd = open_regular(path, os.O_RDONLY, option)
        except OSError as err:
            raise ValueError(f"{option} {path!r}: cannot read it ({err.strerror})") from None
        with os.fdopen(fd, "rb") as own:
            return read_search_games(path, own, option)
    f.seek(0)
    games = []
    for n, _, line in read_lines(f, path, option):
        if not line.strip():
            continue
        try:
            g = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            g = None
        if not _is_game(g):
            raise ValueError(f"{path}, line {n}: not a recorded search game")
        games.append(g)
    return games
