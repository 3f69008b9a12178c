"""The games trainers learn from, and where they are played: in this process, or on Ray
workers that stream them to the learner.

    data = generate_games(config, blueprint, 32, seed=0)        # beliefs: every seat's
    x, y = generate_positions(config, blueprint, 32, seed=0)    # values: every position
    data = replay_games(config, records)     # a search's recorded games, for a belief
    with GameSource("belief", "strong", config, seed=0, backend="ray", workers=4) as source:
        data = source.games(first_game=0, n=32)     # = generate_games(..., 32, seed=0)

A trainer's data for one step is a function of the game indices alone: game i is deal i
of the TRAIN stream of the run seed (`lbs_pz.engine.seeds.deal_seeds`), played by the
blueprint (deterministic) in self-play. So `GameSource`'s "ray" backend cuts each step's
games into one chunk per worker, plays the chunks on the workers (each loads the
blueprint once), and joins them in game order (`join_games`, `join_positions`): the
learner gets the same arrays, and the run the same results, as from the in-process
source ("inline") for a fixed seed. While the learner updates, the workers already play
the next `ahead` steps. Ray comes from the [distributed] extra, on a cluster at `address`
(`ray start --head` on one machine, `ray start --address HEAD:6379` on the others) or a
local Ray with `workers` CPUs.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.seeds import TRAIN, deal_seeds
from lbs_pz.optional import ray_session
from lbs_pz.search.value import value_features
from lbs_pz.train.common import load_training_blueprint

# --- the games ------------------------------------------------------------------------------

def generate_games(config, blueprint, num_games: int, seed: int, first_game: int = 0):
    """Self-play games first_game .. first_game + num_games - 1 of the TRAIN deal stream
    of run `seed` with `blueprint` (any Blueprint: `act_batch` on a HanabiBatch) in every
    seat, and record, for every seat, its observation sequence and its true hand.

    Returns a dict of numpy arrays over S = num_games * players sequences:
        obs     (S, T, E) uint8   canonical observation of the seat after each move
                                  (t = 0: before the first move); HLE's vector is 0/1
        hands   (S, T, H) int64   the seat's true hand at that time, -1 for empty slots
        lengths (S,)      int64   number of valid time steps (moves + 1)
        scores  (num_games,) int32
    Sequence s = game * players + seat. T is the longest game in the batch + 1.
    """
    batch = HanabiBatch(config, num_games, seeds=deal_seeds(TRAIN, seed, first_game, num_games))

    def moves(t):
        return np.asarray(blueprint.act_batch(batch), dtype=np.int64)
    return _record(config, batch, moves, f"blueprint {getattr(blueprint, 'name', blueprint)!r}")


def replay_games(config, records: Sequence[dict]):
    """The games of `records` (a search's recorded games, `lbs_pz.search.recorded_games`:
    each its deal and every move), replayed on `config` and recorded as `generate_games`
    records self-play: the same dict over len(records) * players sequences. This is how
    a belief learns the positions a search leads its games to, which the blueprint's own
    games never reach. ValueError for a record whose moves are not a legal game of its
    deal in `config` (a record of another variant), or that ends before or after them."""
    n = len(records)
    if not n:
        raise ValueError("no recorded games to replay")
    length = np.array([len(r["moves"]) for r in records])
    if length.max() >= MAX_MOVES:
        raise ValueError(f"a recorded game has {length.max()} moves, over {MAX_MOVES - 1}")
    played = np.full((n, int(length.max()) + 1), -1, dtype=np.int64)
    for i, r in enumerate(records):
        played[i, :length[i]] = r["moves"]
    batch = HanabiBatch(config, n, seeds=[r["deal"] for r in records])

    def moves(t):
        if ((played[:, t] < 0) != batch.terminals()).any():
            raise ValueError("a recorded game ends before or after its recorded moves "
                             "(a record of another game variant?)")
        return played[:, t].copy()
    try:
        return _record(config, batch, moves, "a recorded game")
    except ValueError as err:
        if "recorded" in str(err):
            raise
        raise ValueError(f"a recorded game is not a legal game of its deal in this "
                         f"variant: {err}") from None


MAX_MOVES = 200
"""The most moves a recorded sequence holds (a game longer than that is an error)."""


def _record(config, batch, moves, who: str):
    """Step `batch` to the end with `moves(t)` ((n,) int64, the move of every game at
    move t; games already over are not stepped) and record every seat's observation and
    hand after each move: `generate_games`' dict."""
    P, H, E = config.players, config.hand_size, config.encoding_size
    n = len(batch)
    obs = np.zeros((P, n, MAX_MOVES, E), dtype=np.uint8)
    hands = np.full((P, n, MAX_MOVES, H), -1, dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    enc = np.empty((n, E), dtype=np.float32)
    seat_arrays = [np.full(n, p, dtype=np.int64) for p in range(P)]
    active = np.ones(n, dtype=bool)
    t = 0
    while True:
        if t >= MAX_MOVES:
            raise RuntimeError(f"{who}: a game lasted over {MAX_MOVES} moves")
        for p in range(P):
            batch.encode(out=enc, players=seat_arrays[p])
            obs[p, active, t] = enc[active]
            hands[p, active, t] = batch.hands(p)[active]
        lengths[active] = t + 1
        term = batch.terminals()
        active = ~term
        if not active.any():
            break
        chosen = moves(t)
        chosen[term] = -1
        batch.step(chosen)
        t += 1
    T = int(lengths.max())
    return {
        "obs": obs[:, :, :T].transpose(1, 0, 2, 3).reshape(n * P, T, E),
        "hands": hands[:, :, :T].transpose(1, 0, 2, 3).reshape(n * P, T, H),
        "lengths": np.repeat(lengths, P),
        "scores": batch.scores(),
    }


def join_games(a: dict, b: dict) -> dict:
    """Two recorded-game dicts of `generate_games`' format as one: the sequences of `a`
    then `b`, padded to the longer T (observations 0, hands -1: padding is never a card,
    so `mean_nll` ignores it)."""
    T = max(a["obs"].shape[1], b["obs"].shape[1])

    def pad(x, value):
        return np.pad(x, ((0, 0), (0, T - x.shape[1]), (0, 0)), constant_values=value)
    return {"obs": np.concatenate([pad(a["obs"], 0), pad(b["obs"], 0)]),
            "hands": np.concatenate([pad(a["hands"], -1), pad(b["hands"], -1)]),
            "lengths": np.concatenate([a["lengths"], b["lengths"]]),
            "scores": np.concatenate([a["scores"], b["scores"]])}


def generate_positions(config, blueprint, num_games: int, seed: int, first_game: int = 0,
                       with_moves: bool = False):
    """Every position of games first_game .. first_game + num_games - 1 of the TRAIN deal
    stream of run `seed`, played by `blueprint` (any Blueprint: `act_batch` on a
    HanabiBatch): (features (N, F) float32 `value_features`, final scores (N,) float32),
    ordered by move number, then game. with_moves: also each position's move number
    (N,) int64, which `join_positions` orders by."""
    batch = HanabiBatch(config, num_games, seeds=deal_seeds(TRAIN, seed, first_game, num_games))
    feats, owners, moves_made = [], [], []
    t = 0
    while True:
        open_games = np.flatnonzero(~batch.terminals())
        if not len(open_games):
            break
        feats.append(value_features(batch)[open_games])
        owners.append(open_games)
        moves_made.append(np.full(len(open_games), t, dtype=np.int64))
        moves = np.asarray(blueprint.act_batch(batch), dtype=np.int64)
        moves[batch.terminals()] = -1
        batch.step(moves)
        t += 1
    scores = batch.scores().astype(np.float32)
    out = (np.concatenate(feats), scores[np.concatenate(owners)])
    return out + (np.concatenate(moves_made),) if with_moves else out


def join_positions(chunks):
    """The positions of consecutive chunks of games (each `generate_positions(...,
    with_moves=True)`, in game order) as `generate_positions` gives them for all those
    games at once: (features, scores, move numbers), ordered by move number, then game."""
    x, y, t = (np.concatenate([c[i] for c in chunks]) for i in range(3))
    order = np.argsort(t, kind="stable")       # within a move number: the chunks' order
    return x[order], y[order], t[order]


# --- the sources ----------------------------------------------------------------------------

KINDS = ("belief", "value")          # generate_games, generate_positions
SOURCE_BACKENDS = ("inline", "ray")
_BLUEPRINTS: Dict[str, object] = {}     # spec -> blueprint, per worker process


def play_chunk(kind: str, spec: str, config_kwargs: dict, seed: int, first_game: int,
               n: int):
    """Games first_game .. first_game + n - 1 of run `seed`'s TRAIN stream, played by the
    blueprint `spec` in the game `config_kwargs`, as trainer `kind` records them (a Ray
    task; the blueprint is loaded once per worker process)."""
    if spec not in _BLUEPRINTS:
        _BLUEPRINTS[spec] = load_training_blueprint(spec)[0]
    return _play(kind, _BLUEPRINTS[spec], HanabiConfig(**config_kwargs), seed, first_game, n)


def _play(kind: str, blueprint, config: HanabiConfig, seed: int, first_game: int, n: int):
    """Trainer `kind`'s record of games first_game .. first_game + n - 1 (value positions
    with their move numbers, which `join_positions` orders by)."""
    if kind == "belief":
        return generate_games(config, blueprint, n, seed=seed, first_game=first_game)
    return generate_positions(config, blueprint, n, seed=seed, first_game=first_game,
                              with_moves=True)


def _join(kind: str, chunks: List):
    """The chunks of one step, in game order, as one step's data (new, writable arrays:
    Ray hands out read-only views of its object store)."""
    if kind == "belief":
        data = {k: np.array(v) for k, v in chunks[0].items()}
        for chunk in chunks[1:]:
            data = join_games(data, chunk)
        return data
    return join_positions(chunks)


class GameSource:
    """The games of trainer `kind` ("belief" or "value") for the blueprint `spec` in the
    game `config`, from run `seed`'s TRAIN stream: `games(first_game, n)` returns what
    `generate_games` / `generate_positions` would for those games (value positions come
    without their move numbers). backend "inline" plays them in this process; "ray" on
    Ray workers (`workers` chunks per step, at most `ahead` steps played in advance),
    in a `with source:` block that holds the Ray session."""

    def __init__(self, kind: str, spec: str, config: HanabiConfig, seed: int,
                 backend: str = "inline", workers: int = 0, address: str = "",
                 ahead: int = 2, blueprint=None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if backend not in SOURCE_BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(SOURCE_BACKENDS)}, got "
                             f"{backend!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError(f"workers must be an int >= 0 (0: every CPU), got {workers!r}")
        if address and backend != "ray":
            raise ValueError(f"address {address!r} is for the ray backend (the backend is "
                             f"{backend!r})")
        if ahead < 0:
            raise ValueError(f"ahead must be >= 0, got {ahead}")
        self.kind, self.spec, self.config, self.seed = kind, spec, config, seed
        self.backend, self.workers, self.address, self.ahead = backend, workers, address, ahead
        self.blueprint = blueprint          # inline: the trainer's own, else loaded here
        self._config_kwargs = dataclasses.asdict(config)
        self._ray = None
        self._remote = None
        self._stack: Optional[contextlib.ExitStack] = None
        self._pending: Dict[Tuple[int, int], list] = {}

    def __enter__(self) -> "GameSource":
        if self.backend == "ray":
            self._stack = contextlib.ExitStack()
            self._ray = self._stack.enter_context(
                ray_session(self.address, self.workers or None, "--backend ray"))
            self._remote = self._ray.remote(play_chunk)
            if not self.workers:
                self.workers = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
            # one game per worker now: the workers start (import, load the blueprint)
            # while the learner sets up, not in its first step
            self._pending[(-1, 1)] = [self._remote.remote(self.kind, self.spec,
                                                          self._config_kwargs, self.seed, 0, 1)
                                      for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> bool:
        if self._stack is not None:
            for refs in self._pending.values():
                for ref in refs:
                    self._ray.cancel(ref, force=True)
            self._pending.clear()
            self._stack.close()
            self._stack = self._ray = self._remote = None
        return False

    def games(self, first_game: int, n: int):
        """The data of games first_game .. first_game + n - 1 (see the class)."""
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if self.backend == "inline":
            if self.blueprint is None:
                self.blueprint = load_training_blueprint(self.spec)[0]
            data = _play(self.kind, self.blueprint, self.config, self.seed, first_game, n)
        else:
            if self._remote is None:
                raise RuntimeError("a ray GameSource plays inside `with source:`")
            refs = self._pending.pop((first_game, n), None) or self._submit(first_game, n)
            for k in range(1, self.ahead + 1):      # the next steps, while the learner updates
                step = (first_game + k * n, n)
                if step not in self._pending:
                    self._pending[step] = self._submit(*step)
            data = _join(self.kind, self._ray.get(refs))
        return data if self.kind == "belief" else data[:2]

    def _submit(self, first_game: int, n: int) -> list:
        bounds = np.linspace(first_game, first_game + n, min(self.workers, n) + 1).astype(int)
        return [self._remote.remote(self.kind, self.spec, self._config_kwargs, self.seed,
                                    int(a), int(b - a))
                for a, b in zip(bounds[:-1], bounds[1:])]
