"""Distil any blueprint into the public-LSTM net (`lbs_pz.agents.public_lstm`).

    lbs-pz distill --teacher strong --out distilled.pt --minutes 30
    lbs-pz eval --blueprint lstm:distilled.pt

Supervised imitation, driven by the one training loop (`lbs_pz.train.loop`).

Data: the teacher (any blueprint spec, `lbs_pz.agents.load_blueprint`) plays blocks of
`num_actors` games together (`lbs_pz.train.games.teacher_games`, one `act_batch` per
move), fresh deals from the TRAIN stream of the run seed (nothing is stored on disk), in
this process or on Ray workers (`backend`: the same games, so the same run); the games go,
in game order, to an in-memory ring of `buffer_games` whole games, and every update draws
`batch_size` games from it after act_steps x num_actors more teacher moves (whole games,
the remainder carried over). `explore` plays one
random move in a fraction of the games (the teacher plays on from there), so that the
value sees returns off the teacher's path; with `world_belief` some of those games go on
in a world the belief drew, as a search's worlds are built. `search_games` (a search's
recorded games, `lbs_pz.eval.search_games`) makes a fraction of every batch, its moves the
labels (`lbs_pz.train.games.replayed_teacher_games`): a search over the teacher, or, when
it searched at every seat (no move of its games is its blueprint's), over any blueprint.

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
it as a blueprint; written every `save_every` updates, every few minutes of training,
at the end and on Ctrl-C: `lbs_pz.train.loop.run`), whose info holds the
hyper-parameters ("train_config"), the command, the teacher's identity and "progress"
(counters; "evals" rows [update, seconds, teacher moves seen, held-out agreement,
self-play mean, s.e.m.]; the learning curve), and whose "resume" entry lets `--resume`
continue a run, to the weights of a run never stopped (the buffer's games are played
again; with a constant learning rate or a run stopped by Ctrl-C); the learning curve as
CSV and PNG (`--curve`). `carry_belief_over` copies a learned belief to a net whose value
alone was refitted.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple, Union, cast

import numpy as np
import torch

from lbs_pz.agents import blueprint_identity, load_blueprint
from lbs_pz.agents.public_lstm import PublicLSTMNet, seat_masks
from lbs_pz.engine import HanabiBatch
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.models.checkpoint import (check_trained_for, game_of, game_to_dict,
                                      load_checkpoint, save_checkpoint)
from lbs_pz.search.recorded_games import check_recorded_for, read_search_games
from lbs_pz.train.common import (clipped_step, command_line, game_config, lstm_checkpoint,
                                 named_options, net_options, self_play, start_mismatch,
                                 torch_setup)
from lbs_pz.train.configs import DISTILL_ARCH, DistillConfig, curve_path
from lbs_pz.train.games import GameSource, replayed_teacher_games, teacher_games
from lbs_pz.train.loop import Budget, Trainer, claims_out, read_resume, run

KIND = "public_lstm"


def collate(games: List[Dict[str, np.ndarray]], device, seats: int = 0) -> Dict:
    """Games padded to the longest: pub (B, T, Dpub), obs (B, T, E) the mover's vector,
    float32; legal (B, T, M) bool; cur, action (the label), taken (the move played) (B, T)
    int64; valid (B, T) bool; rtg (B, T) float32, the return to go (final score - score
    before the move); value_valid (B, T) bool, valid from each game's "value_from" on
    (`teacher_games`' explore); with `seats` > 0,
    also seat_obs (seats, T, P, E) float32, every seat's vector in the first `seats` games
    (what the value term needs). Games with "seat_conv" (`teacher_games(conventions=True)`)
    have it appended to every seat's vector: obs (B, T, E + F), seat_obs (.., E + F)."""
    b, t_max = len(games), max(len(g["action"]) for g in games)
    out: Dict[str, Any] = {}                    # arrays, then tensors

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


def mover_logits(net, b, out=None) -> torch.Tensor:
    """The mover's Q of its M moves at every position, illegal moves at -1e9: (B, T, M).
    `out`: the public stream's output (B, T, H) if already computed."""
    if out is None:
        out, _ = net.public(b["pub"])                                 # (B, T, H)
    bsz, t_max = b["action"].shape
    q = net.q_seat(out.reshape(bsz * t_max, -1), b["obs"].reshape(bsz * t_max, -1),
                   b["cur"].reshape(-1).cpu().numpy(), value=False)   # V cancels in a softmax
    q = q[:, :net.num_moves].reshape(bsz, t_max, net.num_moves)
    return q.masked_fill(~b["legal"], -1e9)


def seat_legal(b, k: int) -> torch.Tensor:
    """Every seat's legal outputs in the first k games of a collated batch, bool
    (k, T, P, M + 1): `seat_masks` at every position (the mover's legal moves, the other
    seats' no-op; padding is masked out of the loss by value_valid)."""
    legal, cur = b["legal"][:k], b["cur"][:k]
    masks = seat_masks(legal.reshape(-1, legal.shape[-1]).cpu().numpy(),
                       cur.reshape(-1).cpu().numpy(), b["seat_obs"].shape[2])
    return torch.from_numpy(masks).reshape(*cur.shape, *masks.shape[1:]).to(legal.device)


def value_errors(net, b, out=None, teacher_moves_only: bool = False) -> torch.Tensor:
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


def imitation_loss(net, b, value_weight: float = 0.0,
                   value_only: bool = False) -> Tuple[torch.Tensor, int, int, float]:
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
             value_lstm: int = 0) -> PublicLSTMNet:
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
    head: Dict[str, Any] = {}
    if value_hidden:
        head["value_hidden"] = value_hidden
    if value_lstm:
        head["value_lstm"] = value_lstm
    net = PublicLSTMNet(**arch, **head)
    old_bias = [v for k, v in weights.items() if k.startswith("v_head.") and k.endswith("bias")]
    # the value's own parts (v_head, v_pub_in, v_lstm) are new; the policy's are loaded
    missing, unexpected = net.load_state_dict(
        {k: v for k, v in weights.items() if not k.startswith("v_")}, strict=False)
    if unexpected or any(not k.startswith("v_") for k in missing):
        raise ValueError(f"weights do not fit the net: missing {missing}, unexpected {unexpected}")
    # value_hidden 0: one linear head, else an MLP (its last layer)
    last = cast(torch.nn.Linear,
                net.v_head[-1] if isinstance(net.v_head, torch.nn.Sequential) else net.v_head)
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


def start_net(dc: DistillConfig, config,
              log=print) -> Tuple[PublicLSTMNet, Optional[dict]]:
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


def value_only_optimizer(net, dc: DistillConfig) -> torch.optim.Optimizer:
    """Adam (learning rate dc.lr) over the parameters that train: every one, or with
    `dc.value_only` the value's own (those named v_*), the others frozen."""
    if dc.value_only:
        # Q = V + A - mean(A) (or max): the moves are the argmax of A, so fitting V alone
        # (a linear layer on the frozen features, or an MLP of its own: value_hidden)
        # recalibrates the net's value without changing a move; with a public stream of
        # the value's own (value_lstm), that stream (v_pub_in, v_lstm) trains too.
        for name, param in net.named_parameters():
            param.requires_grad_(name.startswith("v_"))
    return torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=dc.lr)


def resume_net(dc: DistillConfig, config, net, ckpt: dict, progress: dict) -> None:
    """Load the weights and counters of the `--resume` checkpoint `ckpt` into `net` and
    `progress`. ValueError for a checkpoint of another game or net, or not of distill."""
    if ckpt["game"] != game_to_dict(config) or ckpt["architecture"] != net.arch():
        raise ValueError(f"--resume {dc.resume}: made for {ckpt['game']} "
                         f"{ckpt['architecture']}, this run is {game_to_dict(config)} "
                         f"{net.arch()}")
    if "teacher" not in ckpt["info"] or "evals" not in ckpt["info"].get("progress", {}):
        raise ValueError(f"--resume {dc.resume}: not a checkpoint of `lbs-pz distill`")
    net.load_state_dict({k: v.float() for k, v in ckpt["weights"].items()})
    progress.update(ckpt["info"]["progress"])


def held_out_games(config, teacher, dc: DistillConfig, conventions: bool) -> list:
    """The teacher's games of EVAL deals 0 .. dc.eval_games - 1 (`teacher_games`, in
    blocks of dc.num_actors): what the held-out agreement is measured on."""
    return [game for first in range(0, dc.eval_games, dc.num_actors)
            for game in teacher_games(config, teacher, min(dc.num_actors,
                                                           dc.eval_games - first),
                                      dc.seed, first, EVAL, conventions=conventions)]


def searched_games(dc: DistillConfig, config, teacher_id: dict, conventions: bool,
                   log=print) -> list:
    """The recorded search games of `dc.search_games` as distillation games
    (`replayed_teacher_games`), [] without them. ValueError for a file of none, or of
    games recorded in another variant or whose unsearched moves are not the teacher's."""
    if not dc.search_games:
        return []
    records = read_search_games(dc.search_games)
    # games of another variant, or whose unsearched moves are another blueprint's than
    # the teacher's, would teach moves of another game: refused, naming both (a game
    # searched at every seat may come from a search over any blueprint)
    check_recorded_for(dc.search_games, records, config, teacher_id, asked=dc.teacher,
                       moves_only=True)
    searched = replayed_teacher_games(records, config, conventions, dc.deviation_weight)
    if not searched:
        raise ValueError(f"--search-games {dc.search_games}: no games in it")
    log(f"{len(searched)} recorded search games ({sum(len(g['action']) for g in searched):,} "
        f"moves) make {dc.search_fraction:.0%} of every batch")
    return searched


class TeacherRing:
    """The last `buffer_games` teacher games of the stream, game i in slot i % buffer_games,
    played by `source` in blocks of `num_actors` games. Teacher games are a function of
    their index alone (on every backend) and the stream's position, its debt of moves and
    its score are counters in `progress` ("games", "debt", "score_sum", "moves"), so a
    resumed run, which plays the ring's games again (`play_again`), makes the updates of
    a run never stopped."""

    def __init__(self, source: GameSource, progress: dict, buffer_games: int, num_actors: int):
        self.source, self.progress = source, progress
        self.buffer_games, self.num_actors = buffer_games, num_actors
        self.games: List[Dict[str, np.ndarray]] = []
        self.block: List[Dict[str, np.ndarray]] = []    # played, not yet in the ring (reversed)
        progress.setdefault("debt", 0)
        progress.setdefault("score_sum", 0)

    def put(self, game) -> None:
        """Game progress["games"] into its slot; the stream moves on by one game."""
        i = self.progress["games"]
        if len(self.games) < self.buffer_games:
            self.games.append(game)
        else:
            self.games[i % self.buffer_games] = game
        self.progress["games"] += 1

    def fill(self) -> int:
        """The next teacher game into the ring; returns its number of moves."""
        if not self.block:  # every game played before is in the ring: the next is games'
            self.block = self.source.games(self.progress["games"], self.num_actors)[::-1]
        game = self.block.pop()
        self.put(game)
        self.progress["score_sum"] += int(game["final"])
        return len(game["action"])

    def advance(self, moves: int) -> None:
        """`moves` more teacher moves into the ring, in whole games: the moves past them
        are carried over (progress["debt"])."""
        progress = self.progress
        progress["debt"] += moves
        while progress["debt"] > 0:
            played = self.fill()
            progress["debt"] -= played
            progress["moves"] += played

    def play_again(self) -> None:
        """A resumed run's ring: the last min(games, buffer_games) games of the stream,
        played again."""
        progress = self.progress
        if not progress["games"]:
            return
        held = min(progress["games"], self.buffer_games)
        first = progress["games"] - held
        progress["games"] = first
        for start in range(first, first + held, self.num_actors):
            for game in self.source.games(start, min(self.num_actors, first + held - start)):
                self.put(game)

    def top_up(self, games: int) -> None:
        """Teacher games into the ring until it holds `games`."""
        while len(self.games) < games:
            self.fill()


class Imitation:
    """What `distill` hands the training loop: the net, its optimizer, the ring of teacher
    games, the recorded search games and the held-out games, the counters and the recent
    losses, with `update`, `evaluate`, `finish` and `checkpoint`."""

    def __init__(self, dc: DistillConfig, config, net, optimizer, ring: TeacherRing,
                 searched: list, held_out: list, teacher_id: dict, device, log=print):
        self.dc, self.config, self.net, self.optimizer = dc, config, net, optimizer
        self.ring, self.searched, self.held_out = ring, searched, held_out
        self.teacher_id, self.device, self.log = teacher_id, device, log
        self.progress = ring.progress
        # the recorded games' share of a batch (search_fraction <= 1)
        self.n_searched = round(dc.batch_size * dc.search_fraction) if searched else 0
        self.losses: List[float] = []
        self.value_losses: List[float] = []
        net.train()

    def value_seats(self) -> int:
        """How many of a batch's games get every seat's vector (`collate`'s seats): all of
        them for a value-only fit, a quarter with a value term, else none."""
        dc = self.dc
        return dc.batch_size if dc.value_only else \
            max(1, dc.batch_size // 4) if dc.value_weight > 0 else 0

    def batch(self) -> Dict:
        """This update's batch, collated: batch_size - n_searched games of the ring and
        n_searched recorded games, drawn by a generator of (seed, update) (the teacher's
        games first: the value term reads the first games of a batch)."""
        dc, ring_games = self.dc, self.ring.games
        rng = np.random.default_rng([dc.seed, 7919, self.progress["updates"]])
        pick = rng.choice(len(ring_games), size=dc.batch_size - self.n_searched, replace=False)
        extra: Union[np.ndarray, List[int]] = []
        if self.n_searched:
            extra = rng.choice(len(self.searched), size=self.n_searched,
                               replace=self.n_searched > len(self.searched))
        return collate([ring_games[i] for i in pick] + [self.searched[i] for i in extra],
                       self.device, seats=self.value_seats())

    def update(self, clock) -> dict:
        """act_steps moves of every one of num_actors games into the ring, then one step on
        `imitation_loss` of a batch, the learning rate falling linearly to lr * lr_final
        over the budget. Returns {"loss"} (and "value_loss" with a value term)."""
        dc = self.dc
        self.ring.advance(dc.act_steps * dc.num_actors)
        b = self.batch()
        for group in self.optimizer.param_groups:       # linear decay over the budget
            group["lr"] = dc.lr * (1 - (1 - dc.lr_final) * clock.fraction())
        loss, _, _, value_loss = imitation_loss(self.net, b, dc.value_weight, dc.value_only)
        clipped_step(self.optimizer, loss, self.net.parameters(), dc.grad_clip)
        self.losses.append(float(loss.detach()))
        self.value_losses.append(value_loss)
        out = {"loss": self.losses[-1]}
        if dc.value_weight > 0 or dc.value_only:
            out["value_loss"] = value_loss
        return out

    def level_head(self) -> None:
        """Level a new value head on the ring's first batch_size games
        (`level_value_head`), logged."""
        batch_size = self.dc.batch_size
        shift = level_value_head(self.net, collate(self.ring.games[:batch_size], self.device,
                                                   seats=batch_size))
        self.log(f"the new value head starts levelled on {batch_size} games: Q-sum "
                 f"{shift:+.2f}")

    def evaluate(self, clock) -> dict:
        """Held-out agreement and greedy self-play (a row of progress["evals"]), logged,
        with the recent losses: a curve row."""
        dc, progress = self.dc, self.progress
        acc = agreement(self.net, self.held_out)
        sp = self_play(self.net, self.config, dc.eval_games, dc.seed)
        row = [progress["updates"], round(clock.seconds(), 1), progress["moves"], round(acc, 4),
               round(sp[0], 3), round(sp[1], 3)]
        progress["evals"].append(row)
        loss = float(np.mean(self.losses[-50:])) if self.losses else None
        # the value loss is half the squared error: report the mean squared error itself
        mse = 2 * float(np.mean(self.value_losses[-50:])) \
            if self.value_losses and dc.value_weight > 0 else None
        self.log(f"update {row[0]}: {row[1]:.0f} s, held-out agreement {acc:.3f}, greedy "
                 f"self-play {sp[0]:.2f} +- {sp[1]:.2f} ({dc.eval_games} EVAL deals); loss "
                 f"{loss if loss is not None else float('nan'):.3f}"
                 + (f", value mse {mse:.2f}" if mse is not None else ""))
        return {"moves": progress["moves"], "agreement": row[3], "selfplay_mean": row[4],
                "selfplay_sem": row[5], "loss": loss, "value_mse": mse}

    def finish(self) -> None:
        """The teacher's mean score over the stream's games, into the counters."""
        progress = self.progress
        progress["teacher_score"] = progress["score_sum"] / progress["games"] \
            if progress["games"] else None

    def checkpoint(self) -> dict:
        """`make_checkpoint`'s arguments: the net, the hyper-parameters, the teacher."""
        return lstm_checkpoint(KIND, self.net, self.config, "distill", self.dc,
                               info={"teacher": self.teacher_id})


@claims_out
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
    optimizer = value_only_optimizer(net, dc)
    progress: Dict[str, Any] = {"updates": 0, "games": 0, "moves": 0, "seconds": 0.0,
                                "evals": []}
    ckpt = read_resume(dc.resume, KIND, "distill") if dc.resume else None
    if ckpt is not None:
        resume_net(dc, config, net, ckpt, progress)
    conventions = net.conventions > 0        # from the options, or --init's / --resume's net
    source = GameSource("teacher", dc.teacher, config, dc.seed, backend=dc.backend,
                        workers=dc.workers, address=dc.address, blueprint=teacher,
                        options=dict(explore=dc.explore, conventions=conventions,
                                     world_belief=dc.world_belief,
                                     world_fraction=dc.world_fraction))
    if dc.world_belief:
        log(f"{dc.world_fraction:.0%} of the explore games go on in a world drawn from "
            f"{dc.world_belief}")
    held_out = held_out_games(config, teacher, dc, conventions)
    searched = searched_games(dc, config, teacher_id, conventions, log)
    ring = TeacherRing(source, progress, dc.buffer_games, dc.num_actors)
    imitation = Imitation(dc, config, net, optimizer, ring, searched, held_out, teacher_id,
                          device, log)
    trainer = Trainer("distill", KIND, imitation.update, imitation.checkpoint, optimizer,
                      progress, imitation.evaluate, plot=("agreement", "selfplay_mean"),
                      finish=imitation.finish)
    with source:
        ring.play_again()               # resumed: the ring's games, played again
        ring.top_up(dc.batch_size)
        if dc.value_only and new_head and ckpt is None:
            imitation.level_head()
        run(trainer, Budget(dc.minutes, dc.updates), dc.out, resume=ckpt,
            eval_every=dc.eval_every, save_every=dc.save_every, save_minutes=dc.save_minutes,
            curve=curve_path(dc.out, dc.curve), tensorboard=dc.tensorboard,
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
