"""Distil any blueprint into the public-LSTM net (`lbs_pz.agents.public_lstm`).

    lbs-pz distill --teacher strong --out distilled.pt --minutes 30
    lbs-pz eval --blueprint lstm:distilled.pt

Supervised imitation, driven by the one training loop (`lbs_pz.train.loop`).

Data: the teacher (any blueprint spec, `lbs_pz.agents.load_blueprint`) plays `num_actors`
games at once in a `HanabiBatch` (`TeacherGames`, one `act_batch` per move), fresh deals
from the TRAIN stream of the run seed (nothing is stored on disk); finished games go to
an in-memory ring of `buffer_games` whole games, and every update draws `batch_size`
games from it after `act_steps` more teacher moves in every game. `explore` plays one
random move in a fraction of the games (the teacher plays on from there), so that the
value sees returns off the teacher's path; with `world_belief` some of those games go on
in a world the belief drew, as a search's worlds are built. `search_games` (a search's
recorded games, `lbs_pz.eval.search_games`) makes a fraction of every batch, its moves the
labels (`replayed_games`).

Objective (`imitation_loss`): the cross-entropy of the teacher's move under a softmax of
the mover's Q over its LEGAL moves only (the no-op column and illegal moves masked out),

    loss = mean over moves t of  -log softmax_{a legal at t}(Q_mover(t, a)) [a_teacher(t)]

plus value_weight * the mean squared error of the VDN Q-sum (the mover's Q of the move
played plus every other seat's no-op Q) against the return to go, which fixes the
per-position level of Q that the cross-entropy cannot see, so that the net's own value
(score + sum of greedy Q) predicts the final score. `value_only` fits the value head alone
(every move stays the same): the start's, or the new one that `arch` names (`init_net`:
e.g. the value MLP of "conventions_value" on a public LSTM of its own). The learning rate
falls linearly to
lr * lr_final over the budget. The public stream runs over the whole game (the LSTM state
starts empty at every deal, as in acting).

The net (`start_net`): the preset `arch` of `lbs_pz.agents.public_lstm.ARCHITECTURES`
("card_features" by default), `hidden` wide if set. With `init` the net is the start's;
an `arch` given too may differ from it only in the value head (`VALUE_HEAD`: dueling,
value_hidden, value_lstm), which the start then takes from the preset: over a
"conventions" start, "conventions_maxq" re-centres Q on the best legal move; over a
"conventions_maxq" start, "conventions_value" gives V a public LSTM of its own. Any other
difference (or a `hidden` that is not the start's) is a ValueError. A value head that no
preset has is built in Python (`init_net(start, value_hidden, dueling, value_lstm)`),
saved (`lbs_pz.models.checkpoint.save_checkpoint`) and fitted as the start of a run
without `arch` (`--init THAT.pt --value-only`).

    lbs-pz distill --teacher lstm:conventions_strong_2p --init conventions_strong_2p \\
        --value-only --arch conventions_maxq --minutes 15 --out maxq.pt

Evaluation (every `eval_every` updates and at the end): held-out move agreement (the
net's greedy legal move against the teacher's, on the teacher's games of EVAL deals) and
greedy self-play on EVAL deals 0 .. eval_games-1 of the run seed.

Outputs: the checkpoint `--out` (the lbs_pz layout, kind "public_lstm"; `lstm:PATH` loads
it as a blueprint), whose info holds the hyper-parameters ("train_config"), the command,
the teacher's identity and "progress" (counters; "evals" rows [update, seconds, teacher
moves seen, held-out agreement, self-play mean, s.e.m.]; the learning curve), and whose
"resume" entry lets `--resume` continue a run; the learning curve as CSV and PNG
(`--curve`). `carry_belief_over` copies a learned belief to a net whose value alone was
refitted.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Dict, List, Optional

import numpy as np
import torch

from lbs_pz.agents import blueprint_identity, load_blueprint
from lbs_pz.agents.features import convention_feature_size, convention_features
from lbs_pz.agents.public_lstm import PublicLSTMNet, seat_masks
from lbs_pz.engine import HanabiBatch
from lbs_pz.engine.features import private_size
from lbs_pz.engine.seeds import EVAL, TRAIN, deal_seeds
from lbs_pz.models.checkpoint import (check_trained_for, game_of, game_to_dict,
                                      load_checkpoint, save_checkpoint)
from lbs_pz.search.beliefs.learned import LearnedBelief
from lbs_pz.search.recorded_games import read_search_games
from lbs_pz.train.common import (command_line, game_config, named_options, net_options,
                                 self_play, start_mismatch, torch_setup)
from lbs_pz.train.configs import DISTILL_ARCH, DistillConfig, curve_path
from lbs_pz.train.loop import Budget, Trainer, read_resume, run

KIND = "public_lstm"


# --- the teacher's games --------------------------------------------------------------------


class TeacherGames:
    """`n` games the teacher plays at once (one `act_batch` per move). Per move it keeps
    the public features (Dpub,), every seat's canonical vector (P, E) (both uint8: the
    features are 0/1; "obs", the mover's, is `seat_obs[t, cur[t]]`), the legal mask (M,),
    the mover, the teacher's move ("action", the label), the move played ("taken") and the
    score before it ("score"; the game's final score is "final"); `step`
    returns the games that ended, each a dict of arrays with a leading length axis (and
    "deal", the game's engine seed), and
    restarts their slots with the next deals of `stream` (TRAIN or EVAL) of run `seed`,
    games first_game, first_game + 1, ...

    explore: the fraction of games in which ONE move, at a uniformly random move number
    in [0, deck size), is a uniformly random legal move other than the teacher's (the teacher
    plays on from there; its label at that position is still its own move). Such a game
    has "value_from" = that move number: from there on its returns are those of the
    teacher after an arbitrary move, the Q-values LBS needs for candidates the teacher
    would not play (before it, they are not the teacher's; 0 in other games).

    world_belief (a `Belief`, e.g. the teacher's `LearnedBelief`), world_fraction: in
    that fraction of the explore games, the mover's hand is first replaced by one drawn
    from the belief (the undrawn deck re-dealt), as a search's world is built, and the
    move there is the teacher's own or, with probability 1/2, a random other one. The
    game goes on in that world, so from then on its returns are those LBS-k's value
    stands in for: the teacher's, in a world the belief drew (which the teacher's own
    games may never reach). Such games have "redealt" = 1."""

    def __init__(self, teacher, config, n: int, seed: int, stream: str = TRAIN,
                 first_game: int = 0, explore: float = 0.0, conventions: bool = False,
                 world_belief=None, world_fraction: float = 0.0):

        self.teacher, self.config, self.n = teacher, config, n
        self.stream, self.seed, self.next_game = stream, seed, first_game
        self.deal = self._seeds(n)                  # each slot's deal seed
        self.batch = HanabiBatch(config, n, seeds=self.deal)
        self.k = private_size(config)
        self.max_len = config.max_game_length
        e, m = config.encoding_size, config.num_moves
        self.buf = {"pub": np.zeros((n, self.max_len, e - self.k), dtype=np.uint8),
                    "seat_obs": np.zeros((n, self.max_len, config.players, e), dtype=np.uint8),
                    "score": np.zeros((n, self.max_len), dtype=np.int8),
                    "legal": np.zeros((n, self.max_len, m), dtype=bool),
                    "cur": np.zeros((n, self.max_len), dtype=np.int64),
                    "action": np.zeros((n, self.max_len), dtype=np.int64)}
        self.buf["taken"] = np.zeros((n, self.max_len), dtype=np.int64)
        if conventions:
            self.conv = np.zeros((n, convention_feature_size(config)), dtype=np.float32)
            self.buf["seat_conv"] = np.zeros((n, self.max_len, config.players,
                                              self.conv.shape[1]), dtype=np.float32)
        self.t = np.zeros(n, dtype=np.int64)
        self.explore = float(explore)
        self.world_belief = world_belief
        self.world_fraction = float(world_fraction) if world_belief is not None else 0.0
        self.rng = np.random.default_rng([int(seed), first_game, 1 if stream == TRAIN else 2])
        self.redeal = np.zeros(n, dtype=bool)
        self.perturb_at = self._perturb_times(n)
        self.seat0 = np.zeros(n, dtype=np.int64)
        self.scores: List[int] = []
        self.moves = 0

    def _seeds(self, k: int) -> np.ndarray:
        seeds = deal_seeds(self.stream, self.seed, self.next_game, k)
        self.next_game += k
        return seeds

    def _perturb_times(self, k: int, slots=slice(None)) -> np.ndarray:
        """Each new game's perturbed move number, or -1 (none); sets the games' slots
        (`slots`) of self.redeal: whether that move is made in a belief's world."""
        at = self.rng.integers(0, self.config.deck_size, size=k)
        at = np.where(self.rng.random(k) < self.explore, at, -1)
        self.redeal[slots] = (at >= 0) & (self.rng.random(k) < self.world_fraction)
        return at

    def _redeal(self, games: np.ndarray) -> None:
        """Give the mover of each game in `games` a hand drawn from self.world_belief
        (the undrawn deck re-dealt); a game whose draw the belief rejects stays as it was
        (and is no longer marked re-dealt)."""
        for i in games:
            state = self.batch.get_state(int(i))
            seat = state.current_player
            hands = self.world_belief.reset(state, seat).sample(1, self.rng)
            if not len(hands):
                self.redeal[i] = False
                continue
            state.set_hand(seat, [int(c) for c in hands[0]],
                           seed=int(self.rng.integers(0, 2**63)))
            self.batch.set_state(int(i), state)

    def _observe(self, rows: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Store what every seat sees in each game at its move number t (rows: every
        game); returns the legal masks, bool (n, M)."""
        self.buf["pub"][rows, t] = self.batch.encode(players=self.seat0)[:, self.k:]
        for p in range(self.config.players):
            seats = np.full(self.n, p, dtype=np.int64)
            self.buf["seat_obs"][rows, t, p] = self.batch.encode(players=seats)
            if "seat_conv" in self.buf:
                self.buf["seat_conv"][rows, t, p] = convention_features(self.batch, seats,
                                                                        self.conv)
        self.buf["score"][rows, t] = self.batch.scores()
        legal = self.batch.legal_masks().astype(bool)
        self.buf["legal"][rows, t] = legal
        self.buf["cur"][rows, t] = self.batch.current_players()
        return legal

    def step(self) -> List[Dict[str, np.ndarray]]:
        rows, t = np.arange(self.n), self.t
        if t.max() >= self.max_len:
            raise RuntimeError(f"a game exceeded {self.max_len} moves")
        if self.world_fraction:
            self._redeal(np.flatnonzero((self.perturb_at == t) & self.redeal))
        legal = self._observe(rows, t)
        actions = np.asarray(self.teacher.act_batch(self.batch), dtype=np.int64)
        if actions.shape != (self.n,) or not legal[rows, np.clip(actions, 0, None)].all() \
                or (actions < 0).any():
            raise ValueError(f"teacher {getattr(self.teacher, 'name', self.teacher)!r}: "
                             f"act_batch gave an illegal move")
        self.buf["action"][rows, t] = actions
        taken = actions
        swap = np.flatnonzero(self.perturb_at == t)
        if swap.size:
            taken = actions.copy()
            for i in swap:
                if self.redeal[i] and self.rng.random() < 0.5:
                    continue                  # the teacher's own move, in the belief's world
                others = np.flatnonzero(legal[i])
                others = others[others != actions[i]]
                if others.size:
                    taken[i] = self.rng.choice(others)
        self.buf["taken"][rows, t] = taken
        self.batch.step(taken)
        self.t += 1
        self.moves += self.n
        finished = []
        done = np.flatnonzero(self.batch.terminals())
        if done.size:
            scores = self.batch.scores()
            for i in done:
                length = int(self.t[i])
                game = {k: v[i, :length].copy() for k, v in self.buf.items()}
                game["deal"] = int(self.deal[i])
                game["final"] = int(scores[i])
                game["value_from"] = int(self.perturb_at[i]) if 0 <= self.perturb_at[i] < length \
                    else 0
                game["redealt"] = int(bool(self.redeal[i]) and 0 <= self.perturb_at[i] < length)
                finished.append(game)
                self.scores.append(int(scores[i]))
                self.deal[i] = self._seeds(1)[0]
                self.batch.reset_game(int(i), self.deal[i])
            self.t[done] = 0
            self.perturb_at[done] = self._perturb_times(done.size, done)
        return finished

    def games(self, count: int) -> List[Dict[str, np.ndarray]]:
        """Play until `count` games have ended; returns the first `count` of them."""
        out: List[Dict[str, np.ndarray]] = []
        while len(out) < count:
            out.extend(self.step())
        return out[:count]


def replayed_games(records: List[dict], config, conventions: bool = False,
                   deviation_weight: float = 1.0) -> List[Dict[str, np.ndarray]]:
    """Training games (`TeacherGames`' format) from recorded games
    (`lbs_pz.search.recorded_games`): each label is the move the recorded game played there,
    the search's where it searched; "weight" (T,) float32 is the cross-entropy weight of
    each move, `deviation_weight` where the search left the blueprint's move, else 1.
    They carry no value targets (their returns are the search's, not the net's own):
    "value_from" is past their end. Raises ValueError for a record whose moves are not a
    legal game of its deal."""
    n = len(records)
    if not n:
        return []
    games = TeacherGames(None, config, n, seed=0, conventions=conventions)
    games.batch = HanabiBatch(config, n, seeds=[r["deal"] for r in records])
    rows, length = np.arange(n), np.array([len(r["moves"]) for r in records])
    if length.max() > games.max_len:
        raise ValueError(f"a recorded game has more than {games.max_len} moves")
    moves = np.full((n, games.max_len + 1), -1, dtype=np.int64)
    for i, r in enumerate(records):
        moves[i, :length[i]] = r["moves"]
    for t in range(int(length.max())):
        games._observe(rows, np.full(n, t))
        actions = moves[:, t]
        live = actions >= 0
        if (games.batch.terminals() == live).any():
            raise ValueError("a recorded game ends before or after its recorded moves")
        games.buf["action"][:, t] = games.buf["taken"][:, t] = actions
        try:
            games.batch.step(actions)
        except ValueError as err:
            raise ValueError(f"a recorded game is not a legal game of its deal: {err}") from None
    if not games.batch.terminals().all():
        raise ValueError("a recorded game ends before or after its recorded moves")
    scores = games.batch.scores()
    out = []
    for i, r in enumerate(records):
        game = {k: v[i, :length[i]].copy() for k, v in games.buf.items()}
        game.update(deal=int(r["deal"]), final=int(scores[i]), value_from=int(length[i]),
                    redealt=0, weight=np.ones(length[i], dtype=np.float32))
        game["weight"][r["deviated"]] = deviation_weight
        out.append(game)
    return out


def collate(games: List[Dict[str, np.ndarray]], device, seats: int = 0) -> Dict:
    """Games padded to the longest: pub (B, T, Dpub), obs (B, T, E) the mover's vector,
    float32; legal (B, T, M) bool; cur, action (the label), taken (the move played) (B, T)
    int64; valid (B, T) bool; rtg (B, T) float32, the return to go (final score - score
    before the move); value_valid (B, T) bool, valid from each game's "value_from" on
    (`TeacherGames`' explore); with `seats` > 0,
    also seat_obs (seats, T, P, E) float32, every seat's vector in the first `seats` games
    (what the value term needs). Games with "seat_conv" (`TeacherGames(conventions=True)`)
    have it appended to every seat's vector: obs (B, T, E + F), seat_obs (.., E + F)."""
    b, t_max = len(games), max(len(g["action"]) for g in games)
    out = {}

    def padded(name):
        first = games[0][name]
        arr = np.zeros((b, t_max) + first.shape[1:], dtype=first.dtype)
        for i, g in enumerate(games):
            arr[i, :len(g[name])] = g[name]
        return arr

    for name in ("pub", "legal", "cur", "action", "taken", "score", "seat_obs"):
        arr = padded(name)
        if name == "seat_obs":
            if "seat_conv" in games[0]:
                arr = np.concatenate([arr.astype(np.float32),
                                      padded("seat_conv").astype(np.float32)], axis=-1)
            obs = arr[np.arange(b)[:, None], np.arange(t_max)[None], out["cur"].cpu().numpy()]
            out["obs"] = torch.from_numpy(obs).to(device).float()
            if seats:
                out["seat_obs"] = torch.from_numpy(arr[:seats]).to(device).float()
            continue
        out[name] = torch.from_numpy(arr).to(device)
    out["pub"] = out["pub"].float()
    if any("weight" in g for g in games):        # recorded games' per-move weights, else 1
        weight = np.ones((b, t_max), dtype=np.float32)
        for i, g in enumerate(games):
            if "weight" in g:
                weight[i, :len(g["weight"])] = g["weight"]
        out["weight"] = torch.from_numpy(weight).to(device)
    final = torch.tensor([g["final"] for g in games], device=device, dtype=torch.float32)
    out["rtg"] = final[:, None] - out.pop("score").float()
    lengths = torch.tensor([len(g["action"]) for g in games], device=device)
    steps = torch.arange(t_max, device=device)[None]
    out["valid"] = steps < lengths[:, None]
    start = torch.tensor([g.get("value_from", 0) for g in games], device=device)
    out["value_valid"] = out["valid"] & (steps >= start[:, None])
    return out


def mover_logits(net, b, out=None):
    """The mover's Q of its M moves at every position, illegal moves at -1e9: (B, T, M).
    `out`: the public stream's output (B, T, H) if already computed."""
    if out is None:
        out, _ = net.public(b["pub"])                                 # (B, T, H)
    bsz, t_max = b["action"].shape
    q = net.q_seat(out.reshape(bsz * t_max, -1), b["obs"].reshape(bsz * t_max, -1),
                   b["cur"].reshape(-1).cpu().numpy(), value=False)   # V cancels in a softmax
    q = q[:, :net.num_moves].reshape(bsz, t_max, net.num_moves)
    return q.masked_fill(~b["legal"], -1e9)


def seat_legal(b, k: int):
    """Every seat's legal outputs in the first k games of a collated batch, bool
    (k, T, P, M + 1): `seat_masks` at every position (the mover's legal moves, the other
    seats' no-op; padding is masked out of the loss by value_valid)."""
    legal, cur = b["legal"][:k], b["cur"][:k]
    masks = seat_masks(legal.reshape(-1, legal.shape[-1]).cpu().numpy(),
                       cur.reshape(-1).cpu().numpy(), b["seat_obs"].shape[2])
    return torch.from_numpy(masks).reshape(*cur.shape, *masks.shape[1:]).to(legal.device)


def value_errors(net, b, out=None, teacher_moves_only: bool = False):
    """The VDN Q-sum (the mover's Q of the move played plus every other seat's no-op Q)
    minus the return to go, at the value-valid positions of the games b["seat_obs"]
    covers: float (count,). `out`: the public stream's output if already computed.
    teacher_moves_only: leave out the positions where the move played is not the
    teacher's (an explore game's random move): with the advantages frozen (`--value-only`)
    that move's Q is V plus an imitation logit gap, which V, blind to the move, can only
    absorb as noise; the positions after it are kept (their returns are the ones LBS-k's
    value stands in for)."""
    if out is None:
        out, _ = net.public(b["pub"])
    k, m = b["seat_obs"].shape[0], net.num_moves
    q = net.q(out[:k], b["seat_obs"], seat_legal(b, k))                # (k, T, P, M + 1)
    seat_action = torch.full(q.shape[:3], m, dtype=torch.long, device=q.device)
    seat_action.scatter_(2, b["cur"][:k, :, None], b["taken"][:k, :, None])
    q_tot = q.gather(3, seat_action[..., None]).squeeze(-1).sum(-1)    # (k, T)
    keep = b["value_valid"][:k]
    if teacher_moves_only:
        keep = keep & (b["taken"][:k] == b["action"][:k])
    return (q_tot - b["rtg"][:k])[keep]


def level_value_head(net, b) -> float:
    """Shift the value head's output bias so that the Q-sum's mean error on the collated
    batch b (at the positions a value-only fit uses: `value_errors(teacher_moves_only=True)`)
    is 0 (a new or re-centred head starts at the right level instead of spending
    its first thousands of updates walking there). Returns the shift of the Q-sum."""
    with torch.no_grad():
        shift = -float(value_errors(net, b, teacher_moves_only=True).mean())
        last = net.v_head if not net.value_hidden else net.v_head[-1]
        last.bias += shift / net.players          # every seat's Q carries one V
    return shift


def imitation_loss(net, b, value_weight: float = 0.0, value_only: bool = False):
    """(loss, agreement count, valid moves, value loss (float; 0.0 when off)).

    loss = mean cross-entropy of the teacher's move over the mover's legal moves
         + value_weight * mean squared error of the VDN Q-sum (the mover's Q of the
           move played plus every other seat's no-op Q) against the return to go,
           over the games that b["seat_obs"] covers (a quarter of the batch by default:
           every seat's Q costs P times the mover's).
    The cross-entropy is blind to a per-position shift of the mover's Q; the value term
    fixes that shift, so the net's own `value` (score + sum of greedy Q) predicts the
    final score and LBS-k can bootstrap with it. value_only: the loss is the value term
    alone, over the positions where the teacher's own move was played (`value_errors`;
    the cross-entropy is still computed for the agreement count)."""
    valid = b["valid"]
    out, _ = net.public(b["pub"])                                     # (B, T, H)
    logits = mover_logits(net, b, out)
    if "weight" in b:
        ce = torch.nn.functional.cross_entropy(logits[valid], b["action"][valid],
                                               reduction="none")
        ce = (ce * b["weight"][valid]).sum() / b["weight"][valid].sum()
    else:
        ce = torch.nn.functional.cross_entropy(logits[valid], b["action"][valid])
    agree = int((logits.argmax(-1) == b["action"])[valid].sum())
    if (value_weight <= 0 and not value_only) or "seat_obs" not in b:
        return ce, agree, int(valid.sum()), 0.0
    errors = value_errors(net, b, out, teacher_moves_only=value_only)
    # recorded games carry no value targets: a batch may have none (a zero term, not NaN)
    value = 0.5 * (errors ** 2).mean() if errors.numel() else errors.sum()
    if value_only:
        return value, agree, int(valid.sum()), float(value.detach())
    return ce + value_weight * value, agree, int(valid.sum()), float(value.detach())


def agreement(net, games: List[Dict[str, np.ndarray]], chunk: int = 64) -> float:
    """Fraction of the teacher's moves in `games` that the net's greedy legal move matches."""
    device = next(net.parameters()).device
    was = net.training
    net.eval()
    agree = total = 0
    with torch.inference_mode():
        for i in range(0, len(games), chunk):
            b = collate(games[i:i + chunk], device)
            logits = mover_logits(net, b)
            agree += int((logits.argmax(-1) == b["action"])[b["valid"]].sum())
            total += int(b["valid"].sum())
    net.train(was)
    return agree / max(total, 1)



def init_net(start: dict, value_hidden: Optional[int] = None, dueling: str = "",
             value_lstm: int = 0):
    """The net of a loaded checkpoint (its architecture, not the run's options). With
    value_hidden not None and (value_hidden, value_lstm) different from the checkpoint's:
    the same net with a new value head of that width (0: linear), on a public LSTM of its
    own of width value_lstm (0: none; as wide as the policy's: a copy of the policy's
    stream to start from), every other weight loaded, the head's output bias taken from
    the old head (the value level it had). dueling "mean" | "max": the
    same weights under that centring of Q (its value head then needs refitting:
    `--value-only`); "": the checkpoint's."""
    arch = dict(start["architecture"])
    if dueling:
        arch.pop("dueling", None)
        if dueling != "mean":
            arch["dueling"] = dueling
    weights = {k: v.float() for k, v in start["weights"].items()}
    if value_hidden is None or (arch.get("value_hidden", 0), arch.get("value_lstm", 0)) \
            == (value_hidden, value_lstm):
        net = PublicLSTMNet(**arch)
        net.load_state_dict(weights)
        return net
    arch.pop("value_hidden", None)
    arch.pop("value_lstm", None)
    net = PublicLSTMNet(**arch, **({"value_hidden": value_hidden} if value_hidden else {}),
                        **({"value_lstm": value_lstm} if value_lstm else {}))
    old_bias = [v for k, v in weights.items() if k.startswith("v_head.") and k.endswith("bias")]
    # the value's own parts (v_head, v_pub_in, v_lstm) are new; the policy's are loaded
    missing, unexpected = net.load_state_dict(
        {k: v for k, v in weights.items() if not k.startswith("v_")}, strict=False)
    if unexpected or any(not k.startswith("v_") for k in missing):
        raise ValueError(f"weights do not fit the net: missing {missing}, unexpected {unexpected}")
    last = net.v_head if value_hidden == 0 else net.v_head[-1]
    with torch.no_grad():
        last.bias.copy_(old_bias[-1].reshape(last.bias.shape))
        if value_lstm == net.hidden:
            # a value stream as wide as the policy's starts as a copy of it: from the
            # features the policy learned, which the value then reshapes for itself
            net.v_pub_in.load_state_dict(net.pub_in.state_dict())
            net.v_lstm.load_state_dict(net.lstm.state_dict())
    return net



# --- the run --------------------------------------------------------------------------------

VALUE_HEAD = ("dueling", "value_hidden", "value_lstm")
"""The architecture options in which `--arch` may differ from an `--init` start: its value
head and the centring of its Q, which the start then takes from the preset; every other
option (and the width) is the start's."""


def start_net(dc: DistillConfig, config, log=print):
    """(net, start): the net a run starts from, before `--resume`, for the game `config`,
    and the loaded `--init` checkpoint (None without one). Without --init: a new net of
    the options `net_options(dc, DISTILL_ARCH)`. With --init: the start's net
    (`init_net`); with `dc.arch`, the centring and value head (`VALUE_HEAD`) of that
    preset where they differ from the start's. ValueError for a start made for another
    game, or one that differs from the options the run names (`named_options`: --arch's
    preset, --hidden) in anything but `VALUE_HEAD`."""
    if not dc.init:
        return PublicLSTMNet.for_config(config, **net_options(dc, DISTILL_ARCH)), None
    start = load_checkpoint(dc.init, KIND)
    if start["game"] != game_to_dict(config):
        raise ValueError(f"--init {dc.init}: made for {start['game']}, this run is "
                         f"{game_to_dict(config)}")
    net = init_net(start)
    mismatch = start_mismatch(f"--init {dc.init}", net.options(), dc, VALUE_HEAD)
    if mismatch:
        raise ValueError(mismatch)
    head = {k: v for k, v in named_options(dc).items() if k in VALUE_HEAD}
    if any(getattr(net, k) != v for k, v in head.items()):
        net = init_net(start, head["value_hidden"], head["dueling"], head["value_lstm"])
    old = start["architecture"]
    log(f"starting from {dc.init}"
        + (f" with a new value MLP of width {net.value_hidden}"
           if net.value_hidden != old.get("value_hidden", 0) else "")
        + (f" on a public LSTM of its own of width {net.value_lstm}"
           if net.value_lstm != old.get("value_lstm", 0) else "")
        + (f" with Q centred on the {net.dueling} of A"
           if net.dueling != old.get("dueling", "mean") else ""))
    return net, start


def distill(dc: DistillConfig, log=print, progress_bar: bool = True) -> str:
    """Run distillation as configured (`lbs_pz.train.loop.run`); returns the checkpoint
    path (`dc.out`)."""
    dc.check()
    device = torch_setup(dc)
    config = game_config(dc)
    teacher = load_blueprint(dc.teacher)
    teacher_id = blueprint_identity(teacher)
    net, start = start_net(dc, config, log)
    # a new value MLP or a new centring
    new_head = start is not None and net.arch() != start["architecture"]
    net = net.to(device)
    if dc.value_only:
        # Q = V + A - mean(A) (or max): the moves are the argmax of A, so fitting V alone
        # (a linear layer on the frozen features, or an MLP of its own: value_hidden)
        # recalibrates the net's value without changing a move; with a public stream of
        # the value's own (value_lstm), that stream (v_pub_in, v_lstm) trains too.
        for name, param in net.named_parameters():
            param.requires_grad_(name.startswith("v_"))
    optimizer = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=dc.lr)
    progress = {"updates": 0, "games": 0, "moves": 0, "seconds": 0.0, "evals": []}
    ckpt = read_resume(dc.resume, KIND, "distill") if dc.resume else None
    if ckpt is not None:
        if ckpt["game"] != game_to_dict(config) or ckpt["architecture"] != net.arch():
            raise ValueError(f"--resume {dc.resume}: made for {ckpt['game']} "
                             f"{ckpt['architecture']}, this run is {game_to_dict(config)} "
                             f"{net.arch()}")
        if "teacher" not in ckpt["info"] or "evals" not in ckpt["info"].get("progress", {}):
            raise ValueError(f"--resume {dc.resume}: not a checkpoint of `lbs-pz distill`")
        net.load_state_dict({k: v.float() for k, v in ckpt["weights"].items()})
        progress.update(ckpt["info"]["progress"])

    conventions = net.conventions > 0        # from the options, or --init's / --resume's net
    world_belief = None
    if dc.world_belief:
        world_belief = LearnedBelief(dc.world_belief, blueprint=teacher)
        log(f"{dc.world_fraction:.0%} of the explore games go on in a world drawn from "
            f"{dc.world_belief}")
    actors = TeacherGames(teacher, config, dc.num_actors, dc.seed, TRAIN, progress["games"],
                          explore=dc.explore, conventions=conventions,
                          world_belief=world_belief, world_fraction=dc.world_fraction)
    held_out = TeacherGames(teacher, config, min(dc.eval_games, 256), dc.seed, EVAL,
                            conventions=conventions).games(dc.eval_games)
    searched: List[Dict[str, np.ndarray]] = []
    if dc.search_games:
        searched = replayed_games(read_search_games(dc.search_games), config, conventions,
                                  dc.deviation_weight)
        if not searched:
            raise ValueError(f"--search-games {dc.search_games}: no games in it")
        log(f"{len(searched)} recorded search games ({sum(len(g['action']) for g in searched):,} "
            f"moves) make {dc.search_fraction:.0%} of every batch")
    n_searched = round(dc.batch_size * dc.search_fraction) if searched else 0   # fraction <= 1
    rng = np.random.default_rng(dc.seed + 7919 * progress["updates"])
    ring: List[Dict[str, np.ndarray]] = []
    at = 0

    def fill(game):
        nonlocal at
        if len(ring) < dc.buffer_games:
            ring.append(game)
        else:
            ring[at] = game
            at = (at + 1) % dc.buffer_games
        progress["games"] += 1

    while len(ring) < dc.batch_size:
        for game in actors.step():
            fill(game)
    if dc.value_only and new_head and ckpt is None:
        shift = level_value_head(net, collate(ring[:dc.batch_size], device, seats=dc.batch_size))
        log(f"the new value head starts levelled on {dc.batch_size} games: Q-sum {shift:+.2f}")
    losses: List[float] = []
    value_losses: List[float] = []
    net.train()

    def update(clock):
        for _ in range(dc.act_steps):
            for game in actors.step():
                fill(game)
            progress["moves"] += actors.n
        pick = rng.choice(len(ring), size=dc.batch_size - n_searched, replace=False)
        extra = rng.choice(len(searched), size=n_searched, replace=n_searched > len(searched)) \
            if n_searched else []
        # the teacher's games first: the value term reads the first games of a batch
        b = collate([ring[i] for i in pick] + [searched[i] for i in extra], device,
                    seats=dc.batch_size if dc.value_only else
                    max(1, dc.batch_size // 4) if dc.value_weight > 0 else 0)
        for group in optimizer.param_groups:       # linear decay over the budget
            group["lr"] = dc.lr * (1 - (1 - dc.lr_final) * clock.fraction())
        loss, _, _, value_loss = imitation_loss(net, b, dc.value_weight, dc.value_only)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), dc.grad_clip)
        optimizer.step()
        losses.append(float(loss.detach()))
        value_losses.append(value_loss)
        out = {"loss": losses[-1]}
        if dc.value_weight > 0 or dc.value_only:
            out["value_loss"] = value_loss
        return out

    def evaluate(clock):
        acc = agreement(net, held_out)
        sp = self_play(net, config, dc.eval_games, dc.seed)
        row = [progress["updates"], round(clock.seconds(), 1), progress["moves"], round(acc, 4),
               round(sp[0], 3), round(sp[1], 3)]
        progress["evals"].append(row)
        loss = float(np.mean(losses[-50:])) if losses else None
        # the value loss is half the squared error: report the mean squared error itself
        mse = 2 * float(np.mean(value_losses[-50:])) if value_losses and dc.value_weight > 0 \
            else None
        log(f"update {row[0]}: {row[1]:.0f} s, held-out agreement {acc:.3f}, greedy "
            f"self-play {sp[0]:.2f} +- {sp[1]:.2f} ({dc.eval_games} EVAL deals); loss "
            f"{loss if loss is not None else float('nan'):.3f}"
            + (f", value mse {mse:.2f}" if mse is not None else ""))
        return {"moves": progress["moves"], "agreement": row[3], "selfplay_mean": row[4],
                "selfplay_sem": row[5], "loss": loss, "value_mse": mse}

    def finish():
        progress["teacher_score"] = float(np.mean(actors.scores)) if actors.scores else None

    def checkpoint():
        return dict(kind=KIND, game=config, architecture=net.arch(), weights=net.state_dict(),
                    trained_for=None, info={"command": command_line("distill", dc),
                                            "train_config": dataclasses.asdict(dc),
                                            "teacher": teacher_id})

    trainer = Trainer("distill", KIND, update, checkpoint, optimizer, progress, evaluate,
                      plot=("agreement", "selfplay_mean"), finish=finish)
    run(trainer, Budget(dc.minutes, dc.updates), dc.out, resume=ckpt,
        eval_every=dc.eval_every, save_every=dc.save_every, curve=curve_path(dc.out, dc.curve),
        title=f"{os.path.basename(dc.out)}: {command_line('distill', dc)}",
        progress_bar=progress_bar, log=log)
    last = progress["evals"][-1]
    log(f"done: {progress['updates']:,} updates, {progress['moves']:,} teacher moves; "
        f"held-out agreement {last[3]:.3f}, greedy self-play {last[4]:.2f} +- {last[5]:.2f}; "
        f"saved {dc.out}")
    return dc.out


# --- a belief for a net whose value alone was refitted ------------------------------------


def carry_belief_over(belief: str, old_spec: str, new_spec: str, out: str,
                      games: int = 200, seed: int = 0) -> dict:
    """Copy a learned belief trained for blueprint `old_spec` to `out`, recorded as
    trained for `new_spec`, after checking that both blueprints make the same move in
    every position of `games` self-play games (EVAL deals 0 .. games-1 of run `seed`;
    with the same move at every position, the two blueprints' games are the same games).
    A belief is learned from its blueprint's games; `--value-only` refits a net's value
    and keeps every move, so its belief carries over. Raises ValueError at the first
    differing move. Returns the checkpoint written (info["carried_over"] records the
    check)."""
    ckpt = load_checkpoint(belief, "belief")
    old, new = load_blueprint(old_spec), load_blueprint(new_spec)
    check_trained_for(ckpt, blueprint_identity(old))
    batch = HanabiBatch(game_of(ckpt), games, seeds=deal_seeds(EVAL, seed, 0, games))
    positions = 0
    while not batch.terminals().all():
        a, b = old.act_batch(batch), new.act_batch(batch)
        if (a != b).any():
            i = int(np.flatnonzero(a != b)[0])
            raise ValueError(f"{old_spec} and {new_spec} differ in game {i} after "
                             f"{batch.get_state(i).num_moves_played} moves ({a[i]} "
                             f"against {b[i]}): the belief does not carry over")
        positions += int((a >= 0).sum())
        batch.step(a)
    info = dict(ckpt["info"], carried_over={
        "from": ckpt["trained_for"], "same_moves_in_positions": positions,
        "games": games, "deals": f"EVAL stream, run seed {seed}, games 0..{games - 1}"})
    return save_checkpoint(out, "belief", ckpt["game"], ckpt["architecture"], ckpt["weights"],
                           blueprint_identity(new), info)
