"""The file of a search's recorded games: what `lbs_pz.eval.search_games` writes and
`lbs-pz distill --search-games` reads. One JSON line per game:

    {"game": its index in the training stream, "deal": engine seed, "seat": the
     searching seat, "moves": [every move played], "searched": [move numbers the search
     chose], "deviated": [those where it left the blueprint's move], "score": final score}
"""

from __future__ import annotations

import json
from typing import List


def read_search_games(path: str) -> List[dict]:
    """The games of a `record_search_games` file, each checked field by field."""
    games = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                g = json.loads(line)
                ok = isinstance(g, dict) and all(isinstance(g.get(k), int) for k in
                                                 ("game", "deal", "seat", "score")) \
                    and all(isinstance(g.get(k), list) and all(isinstance(x, int) for x in g[k])
                            for k in ("moves", "searched", "deviated")) \
                    and set(g["deviated"]) <= set(g["searched"]) \
                    and all(0 <= x < len(g["moves"]) for x in g["searched"])
            except json.JSONDecodeError:
                ok = False
            if not ok:
                raise ValueError(f"{path}, line {n}: not a recorded search game")
            games.append(g)
    return games
