"""The games trainers learn from, and where they are played: in this process, or on Ray
workers that stream them to the learner.

    data = generate_games(config, blueprint, 32, seed=0)        # beliefs: every seat's
    x, y = generate_positions(config, blueprint, 32, seed=0)    # values: every position
    data = replay_games(config, records)     # a search's recorded games, for a belief
    games = teacher_games(config, teacher, 32, seed=0, explore=0.5)   # distillation's
    with GameSource("belief", "strong", config, seed=0, backend="ray", workers=4) as source:
        data = source.games(first_game=0, n=32)     # = generate_games(..., 32, seed=0)

A trainer's data for one step is a function of the game indices alone: game i is deal i
of the TRAIN stream of the run seed (`lbs_pz.engine.seeds.deal_seeds`), played by the
blueprint (deterministic) in self-play, a teacher's exploring move drawn from game i's
own RNG. So `GameSource`'s "ray" backend cuts each step's
games into one chunk per worker, plays the chunks on the workers (each loads the
blueprint once), and joins them in game order (`join_games`, `join_positions`, a list): the
learner gets the same arrays, and the run the same results, as from the in-process
source ("inline") for a fixed seed. While the learner updates, the workers already play
the next `ahead` steps. Ray comes from the [distributed] extra, on a cluster at `address`
(`ray start --head` on one machine, `ray start --address HEAD:6379` on the others) or a
local Ray with `workers` CPUs.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lbs_pz.agents.features import convention_feature_size, convention_features
from lbs_pz.checks import as_choice, as_int
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.features import private_size
from lbs_pz.engine.seeds import EVAL, TRAIN, deal_seeds
from lbs_pz.optional import ray_lost, ray_session
from lbs_pz.search.beliefs.learned import LearnedBelief
from lbs_pz.search.value import value_features
from lbs_pz.train.common import load_training_blueprint

# --- the games ------------------------------------------------------------------------------

def generate_games(config, blueprint, num_games: int, seed: int,
                   first_game: int = 0) -> Dict[str, np.ndarray]:
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


def replay_games(config, records: Sequence[dict]) -> Dict[str, np.ndarray]:
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


def _record(config, batch, moves, who: str) -> Dict[str, np.ndarray]:
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


STREAM_CODES = {TRAIN: 1, EVAL: 2}       # a game's exploration RNG: [seed, game, stream code]
OFF_POLICY_CODE = 7                       # ... and its off-policy move's: [..., OFF_POLICY_CODE]


def generate_positions(config, blueprint, num_games: int, seed: int, first_game: int = 0,
                       with_moves: bool = False, off_policy: float = 0.0,
                       ) -> Tuple[np.ndarray, ...]:
    """Every position of games first_game .. first_game + num_games - 1 of the TRAIN deal
    stream of run `seed`, played by `blueprint` (any Blueprint: `act_batch` on a
    HanabiBatch): (features (N, F) float32 `value_features`, final scores (N,) float32),
    ordered by move number, then game. with_moves: also each position's move number
    (N,) int64, which `join_positions` orders by.

    off_policy: the fraction of games that make one uniformly random legal move instead of
    the blueprint's, at a move number drawn uniformly from [0, 2 * deck size); only the
    positions after it are kept (their final score is the blueprint's continuation from
    them). These are the positions a search's value is asked about after a candidate
    move the blueprint would not make. Game i's draws come from its own RNG, so any cut of
    the games into chunks gives the same positions."""
    if not 0.0 <= off_policy <= 1.0:
        raise ValueError(f"off_policy must be in [0, 1], got {off_policy}")
    batch = HanabiBatch(config, num_games, seeds=deal_seeds(TRAIN, seed, first_game, num_games))
    deviate_at = np.full(num_games, -1, dtype=np.int64)      # -1: the blueprint's game
    picks = np.zeros(num_games)                              # which legal move, in [0, 1)
    if off_policy > 0:
        horizon = 2 * config.deck_size
        for i in range(num_games):
            rng = np.random.default_rng([int(seed), first_game + i, STREAM_CODES[TRAIN],
                                         OFF_POLICY_CODE])
            if rng.random() < off_policy:
                deviate_at[i] = rng.integers(horizon)
                picks[i] = rng.random()
    deviated = np.zeros(num_games, dtype=bool)
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
        now = open_games[deviate_at[open_games] == t]
        if len(now):
            masks = batch.legal_masks()                      # once per step, not per game
            for i in now:
                legal = np.flatnonzero(masks[i])
                moves[i] = legal[int(picks[i] * len(legal))]
            deviated[now] = True
        moves[batch.terminals()] = -1
        batch.step(moves)
        t += 1
    scores = batch.scores().astype(np.float32)
    owner, made = np.concatenate(owners), np.concatenate(moves_made)
    # a game that deviated: its positions after the random move; else all of them
    kept = ~deviated[owner] | (made > deviate_at[owner])
    out = (np.concatenate(feats)[kept], scores[owner[kept]])
    return out + (made[kept],) if with_moves else out


def join_positions(chunks: Sequence[Tuple[np.ndarray, ...]],
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positions of consecutive chunks of games (each `generate_positions(...,
    with_moves=True)`, in game order) as `generate_positions` gives them for all those
    games at once: (features, scores, move numbers), ordered by move number, then game."""
    x, y, t = (np.concatenate([c[i] for c in chunks]) for i in range(3))
    order = np.argsort(t, kind="stable")       # within a move number: the chunks' order
    return x[order], y[order], t[order]


# --- a teacher's games, for distillation -----------------------------------------------------


class _MoveRecord:
    """Per-move arrays of the n games of `batch` as distillation learns from them
    (`teacher_games`' format), filled one move number at a time (every game at the same
    move number t: the games of a batch start together)."""

    def __init__(self, config, batch, conventions: bool):
        n, e, m = len(batch), config.encoding_size, config.num_moves
        self.config, self.batch, self.n = config, batch, n
        self.k = private_size(config)
        self.max_len = config.max_game_length
        self.buf = {"pub": np.zeros((n, self.max_len, e - self.k), dtype=np.uint8),
                    "seat_obs": np.zeros((n, self.max_len, config.players, e), dtype=np.uint8),
                    "score": np.zeros((n, self.max_len), dtype=np.int8),
                    "legal": np.zeros((n, self.max_len, m), dtype=bool),
                    "cur": np.zeros((n, self.max_len), dtype=np.int64),
                    "action": np.zeros((n, self.max_len), dtype=np.int64),
                    "taken": np.zeros((n, self.max_len), dtype=np.int64)}
        self.conv = None
        if conventions:
            self.conv = np.zeros((n, convention_feature_size(config)), dtype=np.float32)
            self.buf["seat_conv"] = np.zeros((n, self.max_len, config.players,
                                              self.conv.shape[1]), dtype=np.float32)
        self.seats = [np.full(n, p, dtype=np.int64) for p in range(config.players)]

    def observe(self, t: int) -> np.ndarray:
        """Store what every seat sees in every game at move number t; returns the legal
        masks, bool (n, M)."""
        if t >= self.max_len:
            raise RuntimeError(f"a game exceeded {self.max_len} moves")
        self.buf["pub"][:, t] = self.batch.encode(players=self.seats[0])[:, self.k:]
        for p, seats in enumerate(self.seats):
            self.buf["seat_obs"][:, t, p] = self.batch.encode(players=seats)
            if self.conv is not None:
                self.buf["seat_conv"][:, t, p] = convention_features(self.batch, seats,
                                                                     self.conv)
        self.buf["score"][:, t] = self.batch.scores()
        legal = self.batch.legal_masks().astype(bool)
        self.buf["legal"][:, t] = legal
        self.buf["cur"][:, t] = self.batch.current_players()
        return legal

    def game(self, i: int, length: int) -> Dict[str, np.ndarray]:
        return {k: v[i, :length].copy() for k, v in self.buf.items()}


def teacher_games(config, teacher, n: int, seed: int, first_game: int = 0,
                  stream: str = TRAIN, explore: float = 0.0, conventions: bool = False,
                  world_belief=None, world_fraction: float = 0.0) -> List[Dict[str, np.ndarray]]:
    """Games first_game .. first_game + n - 1 of `stream` (TRAIN or EVAL) of run `seed`,
    played together by `teacher` (any Blueprint: one `act_batch` per move) in every seat,
    in game order. Each game is a dict of arrays with a leading axis of its L moves: the
    public features "pub" (L, Dpub) and every seat's canonical vector "seat_obs" (L, P, E)
    (both uint8: the features are 0/1; the mover's is seat_obs[t, cur[t]]), "legal"
    (L, M) bool, the mover "cur", the teacher's move "action" (the label), the move played
    "taken", the score before it "score"; with `conventions`, "seat_conv" (L, P, F)
    float32; and the ints "deal" (its engine seed), "final" (its final score),
    "value_from" and "redealt".

    A game depends on its index alone (not on n or first_game), so the games of a run
    can be played in any chunks, anywhere: its random choices come from its own RNG,
    seeded by (seed, game, stream). explore: the fraction of games in which ONE move, at
    a uniformly random move number in [0, deck size), is a uniformly random legal move
    other than the teacher's (the teacher plays on; its label there is still its own
    move). Such a game has "value_from" = that move number: from there on its returns
    are those of the teacher after an arbitrary move, the Q-values LBS needs for
    candidates the teacher would not play (0 in other games).

    world_belief (a `Belief`, e.g. the teacher's `LearnedBelief`), world_fraction: in
    that fraction of the explore games, the mover's hand is first replaced by one drawn
    from the belief (the undrawn deck re-dealt), as a search's world is built, and the
    move there is the teacher's own or, with probability 1/2, a random other one. The
    game goes on in that world, so from then on its returns are those LBS-k's value
    stands in for. Such games have "redealt" = 1 (a draw the belief rejects leaves the
    game as it was, not re-dealt)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if stream not in STREAM_CODES:
        raise ValueError(f"stream must be {TRAIN!r} or {EVAL!r}, got {stream!r}")
    deals = deal_seeds(stream, seed, first_game, n)
    batch = HanabiBatch(config, n, seeds=deals)
    record = _MoveRecord(config, batch, conventions)
    world_fraction = float(world_fraction) if world_belief is not None else 0.0
    perturb_at, redeal, rngs = _explore_plan(n, seed, first_game, stream, explore,
                                             world_fraction, config.deck_size)
    lengths = np.zeros(n, dtype=np.int64)
    t = 0
    while True:
        live = ~batch.terminals()
        if not live.any():
            break
        perturbed = np.flatnonzero(live & (perturb_at == t))
        for i in perturbed[redeal[perturbed]]:
            redeal[i] = _redeal(batch, int(i), world_belief, rngs[i])
        legal = record.observe(t)
        actions = _teacher_moves(teacher, batch, legal, live)
        taken = _explored_moves(actions, perturbed, legal, redeal, rngs)
        record.buf["action"][:, t] = actions
        record.buf["taken"][:, t] = taken
        batch.step(taken)
        t += 1
        lengths[live] = t
    return _teacher_game_dicts(record, deals, batch.scores(), lengths, perturb_at, redeal)


def _explore_plan(n: int, seed: int, first_game: int, stream: str, explore: float,
                  world_fraction: float, deck_size: int):
    """Where `teacher_games`' games 0 .. n-1 (games first_game .. of `stream`) explore:
    (perturb_at int64 (n,): the move number of a game's random move, -1 for none; redeal
    bool (n,): whether that move is made in a world the belief draws; rngs: game -> its
    own Generator, seeded by (seed, game, stream code), for each game that explores).
    Every game draws its move number first, then whether it explores, then (if so)
    whether it is redealt, so a game's plan depends on its index alone."""
    perturb_at = np.full(n, -1, dtype=np.int64)
    redeal = np.zeros(n, dtype=bool)
    rngs: Dict[int, np.random.Generator] = {}      # the explore games' own RNGs
    for i in range(n) if explore > 0 else ():
        rng = np.random.default_rng([int(seed), first_game + i, STREAM_CODES[stream]])
        at = int(rng.integers(0, deck_size))
        if rng.random() < explore:
            perturb_at[i], rngs[i] = at, rng
            redeal[i] = rng.random() < world_fraction
    return perturb_at, redeal, rngs


def _teacher_moves(teacher, batch, legal: np.ndarray, live: np.ndarray) -> np.ndarray:
    """The teacher's move in every game of `batch` (one `act_batch`), int64 (n,), -1 in
    the games over (`live` False). ValueError for a move that is not one of `legal` (bool
    (n, M)) in a live game."""
    n = len(live)
    rows = np.arange(n)
    actions = np.asarray(teacher.act_batch(batch), dtype=np.int64)
    if actions.shape != (n,) or (actions[live] < 0).any() \
            or not legal[rows[live], np.clip(actions[live], 0, None)].all():
        raise ValueError(f"teacher {getattr(teacher, 'name', teacher)!r}: act_batch gave "
                         f"an illegal move")
    actions[~live] = -1
    return actions


def _explored_moves(actions: np.ndarray, perturbed: np.ndarray, legal: np.ndarray,
                    redeal: np.ndarray, rngs: Dict[int, np.random.Generator]) -> np.ndarray:
    """The moves played, int64 (n,): the teacher's `actions`, but in each game of
    `perturbed` (indices of the games exploring at this move) a random legal move other
    than the teacher's, drawn from the game's own RNG (in a redealt game, with probability
    1/2 the teacher's own move)."""
    taken = actions.copy()
    for i in perturbed:
        rng = rngs[i]
        if redeal[i] and rng.random() < 0.5:
            continue                      # the teacher's own move, in the belief's world
        others = np.flatnonzero(legal[i])
        others = others[others != actions[i]]
        if others.size:
            taken[i] = rng.choice(others)
    return taken


def _teacher_game_dicts(record: _MoveRecord, deals, scores, lengths: np.ndarray,
                        perturb_at: np.ndarray, redeal: np.ndarray) -> List[Dict[str, np.ndarray]]:
    """Each game of `record` cut to its length (`lengths` (n,)), with its ints "deal",
    "final" (`scores` (n,)), "value_from" (its explored move number, 0 when it made none)
    and "redealt" (1 when that move was made in a world the belief drew)."""
    games = []
    for i in range(len(lengths)):
        game: Dict[str, Any] = record.game(i, int(lengths[i]))      # arrays, and ints
        perturbed = 0 <= perturb_at[i] < lengths[i]
        game.update(deal=int(deals[i]), final=int(scores[i]),
                    value_from=int(perturb_at[i]) if perturbed else 0,
                    redealt=int(bool(redeal[i]) and perturbed))
        games.append(game)
    return games


def _redeal(batch, i: int, world_belief, rng) -> bool:
    """Give the mover of game i a hand drawn from `world_belief` (the undrawn deck
    re-dealt); False (the game unchanged) where the belief rejects the draw."""
    state = batch.get_state(i)
    seat = state.current_player
    hands = world_belief.reset(state, seat).sample(1, rng)
    if not len(hands):
        return False
    state.set_hand(seat, [int(c) for c in hands[0]], seed=int(rng.integers(0, 2**63)))
    batch.set_state(i, state)
    return True


def replayed_teacher_games(records: Sequence[dict], config, conventions: bool = False,
                           deviation_weight: float = 1.0) -> List[Dict[str, np.ndarray]]:
    """Distillation games (`teacher_games`' format) from recorded games
    (`lbs_pz.search.recorded_games`): each label is the move the recorded game played there,
    the search's where it searched; "weight" (L,) float32 is the cross-entropy weight of
    each move, `deviation_weight` where the search left the blueprint's move, else 1.
    They carry no value targets (their returns are the search's, not the net's own):
    "value_from" is past their end. Raises ValueError for a record whose moves are not a
    legal game of its deal."""
    n = len(records)
    if not n:
        return []
    batch = HanabiBatch(config, n, seeds=[r["deal"] for r in records])
    record = _MoveRecord(config, batch, conventions)
    length = np.array([len(r["moves"]) for r in records])
    if length.max() > record.max_len:
        raise ValueError(f"a recorded game has more than {record.max_len} moves")
    moves = np.full((n, record.max_len + 1), -1, dtype=np.int64)
    for i, r in enumerate(records):
        moves[i, :length[i]] = r["moves"]
    for t in range(int(length.max())):
        record.observe(t)
        actions = moves[:, t]
        if (batch.terminals() == (actions >= 0)).any():
            raise ValueError("a recorded game ends before or after its recorded moves")
        record.buf["action"][:, t] = record.buf["taken"][:, t] = actions
        try:
            batch.step(actions)
        except ValueError as err:
            raise ValueError(f"a recorded game is not a legal game of its deal: {err}") from None
    if not batch.terminals().all():
        raise ValueError("a recorded game ends before or after its recorded moves")
    scores = batch.scores()
    out = []
    for i, r in enumerate(records):
        game: Dict[str, Any] = record.game(i, int(length[i]))       # arrays, and ints
        game.update(deal=int(r["deal"]), final=int(scores[i]), value_from=int(length[i]),
                    redealt=0, weight=np.ones(length[i], dtype=np.float32))
        game["weight"][r["deviated"]] = deviation_weight
        out.append(game)
    return out


# --- the sources ----------------------------------------------------------------------------

KINDS = ("belief", "value", "teacher")   # generate_games, generate_positions, teacher_games
TEACHER_OPTIONS = ("explore", "conventions", "world_belief", "world_fraction")
VALUE_OPTIONS = ("off_policy",)
SOURCE_BACKENDS = ("inline", "ray")
RERUN = ("the run's last checkpoint, if it wrote one (--out, every --save-minutes of "
         "training), is kept: run the same command with --resume OUT to go on")
# per worker process: spec -> blueprint, (belief, spec) -> belief
_LOADED: Dict[object, object] = {}


def _load(spec: str, world_belief: str = ""):
    """(blueprint, its world belief or None) for specs, each loaded once per process."""
    if spec not in _LOADED:
        _LOADED[spec] = load_training_blueprint(spec)[0]
    if not world_belief:
        return _LOADED[spec], None
    if (world_belief, spec) not in _LOADED:
        _LOADED[world_belief, spec] = LearnedBelief(world_belief, blueprint=_LOADED[spec])
    return _LOADED[spec], _LOADED[world_belief, spec]


def play_chunk(kind: str, spec: str, config_kwargs: dict, seed: int, first_game: int,
               n: int, options: dict) -> Any:
    """Games first_game .. first_game + n - 1 of run `seed`'s TRAIN stream, played by the
    blueprint `spec` in the game `config_kwargs`, as trainer `kind` records them (a Ray
    task; the blueprint, and a teacher's world belief, are loaded once per worker)."""
    blueprint, belief = _load(spec, options.get("world_belief", ""))
    return _play(kind, blueprint, HanabiConfig(**config_kwargs), seed, first_game, n,
                 options, belief)


def _play(kind: str, blueprint, config: HanabiConfig, seed: int, first_game: int, n: int,
          options: dict, world_belief=None):
    """Trainer `kind`'s record of games first_game .. first_game + n - 1 (value positions
    with their move numbers, which `join_positions` orders by)."""
    if kind == "belief":
        return generate_games(config, blueprint, n, seed=seed, first_game=first_game)
    if kind == "value":
        return generate_positions(config, blueprint, n, seed=seed, first_game=first_game,
                                  with_moves=True, off_policy=options.get("off_policy", 0.0))
    return teacher_games(config, blueprint, n, seed, first_game, TRAIN,
                         options.get("explore", 0.0), options.get("conventions", False),
                         world_belief, options.get("world_fraction", 0.0))


def _join(kind: str, chunks: List):
    """The chunks of one step, in game order, as one step's data (new, writable arrays:
    Ray hands out read-only views of its object store)."""
    if kind == "belief":
        data = {k: np.array(v) for k, v in chunks[0].items()}
        for chunk in chunks[1:]:
            data = join_games(data, chunk)
        return data
    if kind == "teacher":
        return [{k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in game.items()}
                for chunk in chunks for game in chunk]
    return join_positions(chunks)


class GameSource:
    """The games of trainer `kind` ("belief", "value" or "teacher") for the blueprint
    `spec` in the game `config`, from run `seed`'s TRAIN stream: `games(first_game, n)`
    returns what `generate_games` / `generate_positions` / `teacher_games` would for those
    games (value positions come without their move numbers; a teacher's games take
    `options`: explore, conventions, world_belief (a belief spec, loaded for the
    blueprint) and world_fraction; value positions take off_policy). backend "inline"
    plays them in this process; "ray" on Ray workers (`workers` chunks per step, at most
    `ahead` steps played in advance), in a `with source:` block that holds the Ray session."""

    def __init__(self, kind: str, spec: str, config: HanabiConfig, seed: int,
                 backend: str = "inline", workers: int = 0, address: str = "",
                 ahead: int = 2, blueprint=None, options: Optional[dict] = None):
        as_choice(kind, "kind", KINDS)
        as_choice(backend, "backend", SOURCE_BACKENDS)
        workers = as_int(workers, "workers", lo=0, what="an int >= 0 (0: every CPU)",
                         error=ValueError)
        if address and backend != "ray":
            raise ValueError(f"address {address!r} is for the ray backend (the backend is "
                             f"{backend!r})")
        if ahead < 0:
            raise ValueError(f"ahead must be >= 0, got {ahead}")
        self.kind, self.spec, self.config, self.seed = kind, spec, config, seed
        self.backend, self.workers, self.address, self.ahead = backend, workers, address, ahead
        self.blueprint = blueprint          # inline: the trainer's own, else loaded here
        self.options = dict(options or {})
        unknown = set(self.options) - set({"teacher": TEACHER_OPTIONS,
                                           "value": VALUE_OPTIONS}.get(kind, ()))
        if unknown:
            raise ValueError(f"options {sorted(unknown)} are not options of {kind!r} games")
        self._world_belief = None
        if self.options.get("world_belief") and blueprint is not None:
            # loaded here: a belief not made for the blueprint fails before any game
            self._world_belief = LearnedBelief(self.options["world_belief"],
                                               blueprint=blueprint)
        self._config_kwargs = dataclasses.asdict(config)
        self._ray: Any = None               # the ray module while a session is open
        self._remote: Any = None            # play_chunk as a Ray task, meanwhile
        self._stack: Optional[contextlib.ExitStack] = None
        self._pending: Dict[Tuple[int, int], list] = {}

    def __enter__(self) -> "GameSource":
        if self.backend == "ray":
            self._stack = contextlib.ExitStack()
            self._ray = self._stack.enter_context(
                ray_session(self.address, self.workers or None, "--backend ray",
                            rerun=RERUN))
            self._remote = self._ray.remote(play_chunk)
            if not self.workers:
                self.workers = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
            # one game per worker now: the workers start (import, load the blueprint)
            # while the learner sets up, not in its first step
            self._pending[(-1, 1)] = [self._remote.remote(self.kind, self.spec,
                                                          self._config_kwargs, self.seed, 0, 1,
                                                          self.options)
                                      for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> Optional[bool]:
        if self._stack is None:
            return False
        stack, ray, pending = self._stack, self._ray, self._pending
        self._stack = self._ray = self._remote = None
        self._pending = {}
        try:
            for refs in pending.values():
                for ref in refs:
                    ray.cancel(ref, force=True)
        except Exception:
            if exc[1] is None or not ray_lost(ray, exc[1]):  # a lost raylet cannot cancel
                stack.close()
                raise
        # the session sees the exception: a lost worker or raylet becomes one line
        return stack.__exit__(*exc)

    def games(self, first_game: int, n: int) -> Any:
        """The data of games first_game .. first_game + n - 1 (see the class)."""
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if self.backend == "inline":
            if self.blueprint is None:
                self.blueprint = load_training_blueprint(self.spec)[0]
            if self.options.get("world_belief") and self._world_belief is None:
                self._world_belief = LearnedBelief(self.options["world_belief"],
                                                   blueprint=self.blueprint)
            data = _play(self.kind, self.blueprint, self.config, self.seed, first_game, n,
                         self.options, self._world_belief)
        else:
            if self._remote is None:
                raise RuntimeError("a ray GameSource plays inside `with source:`")
            refs = self._pending.pop((first_game, n), None) or self._submit(first_game, n)
            for k in range(1, self.ahead + 1):      # the next steps, while the learner updates
                step = (first_game + k * n, n)
                if step not in self._pending:
                    self._pending[step] = self._submit(*step)
            data = _join(self.kind, self._ray.get(refs))
        return data[:2] if self.kind == "value" else data

    def _submit(self, first_game: int, n: int) -> list:
        bounds = np.linspace(first_game, first_game + n, min(self.workers, n) + 1).astype(int)
        return [self._remote.remote(self.kind, self.spec, self._config_kwargs, self.seed,
                                    int(a), int(b - a), self.options)
                for a, b in zip(bounds[:-1], bounds[1:])]
