"""Train the public-LSTM blueprint (`lbs_pz.agents.public_lstm`) by recurrent Q-learning.

    lbs-pz train-blueprint --minutes 30 --out public_lstm.pt
    lbs-pz train-blueprint --minutes 30 --demo-bot strong --demo-fraction 0.25 --margin 0.8
    lbs-pz train-blueprint --init distilled.pt --minutes 60 --out ft.pt     # fine-tune a start

R2D2-style, kept readable (Kapturowski et al. 2019; the paper's blueprints are trained so):

- actors: `num_actors` games in one `HanabiBatch`, stepped together: one batched encode,
  one batched forward of the net (each game carries its LSTM state) and one batched step
  per move; actor i explores with eps_i = eps ** (1 + alpha * i / (N - 1)) (eps = 0.4,
  alpha = 7, the paper's appendix). Finished games go to the replay whole.
- prioritized replay of whole games (a 2-player game is under 100 moves, so there is no
  need for R2D2's fixed-length chunks and burn-in: every sequence starts from the true
  empty-history state). Priority of a game = eta * max |TD| + (1 - eta) * mean |TD|,
  sampled with probability ~ priority ** priority_exponent, importance weights with
  exponent is_exponent.
- VDN: the team's Q at move t is the sum over seats of each seat's Q of its own action;
  the seats not to move take the no-op (the net's last output), so
  Q_tot(t) = Q_mover(t, a_t) + sum_others Q_p(t, no-op). n-step double-Q target:
  sum_k gamma^k r_{t+k} + gamma^n sum_p Q_target,p(t+n, argmax_legal Q_online,p(t+n)).
  The blueprint's value (`PublicLSTMBlueprint.value`) is score + the same greedy sum.
- target network copied every `target_every` updates; Adam; gradient clipping.
- optional reward shaping for training only, off by default: `--life-penalty x` takes x
  points off the reward of every misplay (a lost life), so that bombing costs something
  even while scores are still near 0. Evaluation always uses the true score.
- optional learning from demonstrations (DQfD, Hester et al. 2018), off by default:
  `--demo-bot strong` plays games alongside (batched C rule bot) into a second replay;
  a `demo_fraction` of every batch comes from it, and on those games the loss adds the
  large-margin term  max_a [Q(a) + margin * (a != a_demo)] - Q(a_demo)  (legal a, mover's
  Q). The first `pretrain_updates` updates use demonstrations only (DQfD's pre-training
  phase; the agent does not act meanwhile), as do all updates until `learning_starts`
  games of the agent's own are stored.

Fine-tuning a start (`--init`): the net (architecture included) and the target net start
from a checkpoint of `distill` or `train-blueprint` (PATH or lstm:PATH; `distill:SPEC`
distils SPEC for `init_minutes` first). The options left unset (None) take the FINETUNE
preset instead of SCRATCH: lr 5e-5, actor epsilons 0.05 ** (1 + 3 i / (N - 1)) (0.05 down
to 6e-6) and the anchor: a frozen copy of the start net, and the loss adds
anchor_weight (1.0) * mean over moves of  max_a [Q(a) + anchor_margin * (a != a0)] - Q(a0),
a0 the start net's greedy legal move (DQfD's margin, toward the start policy; constant
unless `anchor_half_life`). The start needs a Q on the return scale (distill's
value_weight > 0, the default since its value term). What drifts and what fixes it,
measured from a 6-minute distilled start (strong bot, 80% agreement, 18.77 +- 0.39 greedy
self-play on 300 EVAL deals), 4-minute runs (~800 updates) on one loaded core, self-play
on the same 300 EVAL deals every 100 updates (`python benchmarks/finetune.py --init
START --minutes 4 --eval-every 100 --eval-games 300 --set KEY=VALUE ...`):

    run                                         min    (update)  end    (update)
    scratch settings (lr 2.5e-4, eps 0.4/7)     13.35  (400)     killed at 400
    lr 5e-5, eps 0.05/3                         17.39  (800)     17.99  (1020)
    lr 5e-5, eps 0.05/3, anchor 1.0             18.77  (0)       19.38  (814)
    same + strong-bot demos (DQfD, margin 0.8)  18.14  (400)     18.80  (821)
    lr 5e-5, eps 0.4/7, anchor 1.0              18.77  (0)       19.63  (786)
    lr 2.5e-4, eps 0.05/3, anchor 1.0           18.33  (500)     19.06  (700+)
    lr 5e-5, eps 0.05/3, anchor half-life 600   18.73  (600)     18.79  (853)
    lr 5e-5, eps 0.05/3, anchor, target 1000    18.77  (0)       19.37  (903)
    lr 2.5e-4, eps 0.4/7, anchor 1.0            18.13  (200)     20.00  (938)

(s.e.m. of each figure ~0.3; the deals are the same at every evaluation.) So: without the
anchor the greedy policy drifts within a few hundred updates even at a low lr and
exploration (TD moves the Q of the actions it sees; the start's Q of the others is only
ordered by imitation, and the argmax flips to them); the anchor stops it, a low lr keeps
it smooth (at 2.5e-4 it dips by 0.4-0.6 first), and a decaying anchor lets the drift come
back as it fades. The preset is the smoothest of these (no evaluation below the start);
the 60-minute run from the 30-minute distilled start (85% agreement; `python
benchmarks/finetune.py --init START`, one thread, loaded machine, 13,285 updates, 1.7M env
steps, 500 EVAL deals every 400 updates): start 19.60 +- 0.27, lowest 19.57 (update 800),
20.27 by 7 minutes, best 20.67, end 20.48 +- 0.19; on 2,000 EVAL deals, paired, start
19.49 -> end 20.47 (+0.99 +- 0.15).

Deals: the agent plays the TRAIN stream of the run seed (`lbs_pz.engine.seeds`), games
0, 1, 2, ..., the demonstrations from game 2**31; the greedy evaluations during training
play EVAL deals 0 .. eval_games-1 of the run seed (those of `lbs-pz eval` and of
distill's self-play figure, so a fine-tuning run's first row is its start's figure).

Learning curve: every evaluation (and one before the first update of a fresh run) adds a
row (`CURVE_COLUMNS`: minutes, updates, env steps, games, greedy self-play mean and
s.e.m., recent TD / anchor / margin losses, anchor weight, mean Q_tot, own games' score)
to info["progress"]["curve"] and rewrites the CSV `--curve` (default OUT's stem +
".curve.csv") and a PNG beside it; a resumed run goes on with the same rows.

Checkpoints (`--out`) use the lbs_pz layout (`lbs_pz.models.checkpoint`, kind
"public_lstm"; `torch.load(weights_only=True)`), written every
`save_every` updates and at the end, and hold everything needed to resume (`--resume`)
except the replay, which refills from fresh games. `--slim-out` also writes a small
float16 copy with the weights only (what `lbs_pz/models/public_lstm_2p.pt` is);
`load_blueprint(path)` reads either as a `PublicLSTMBlueprint`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import time
from typing import Dict, List, Optional

import numpy as np

from lbs_pz.engine.seeds import TRAIN, check_run_seed, deal_seeds
from lbs_pz.models.checkpoint import game_to_dict
from lbs_pz.search.stats import mean_sem
from lbs_pz.train.config_args import command_line, torch_setup

KIND = "public_lstm"          # its kind in the lbs_pz checkpoint layout
DEMO_GAMES = 2**31            # the demonstrations' first game in the TRAIN deal stream


@dataclasses.dataclass
class BlueprintTrainConfig:
    """Every hyper-parameter of a run (the `lbs-pz train-blueprint` options)."""
    players: int = 2
    colors: int = 5
    ranks: int = 5
    hand_size: int = 0            # 0: the standard rule (5, or 4 with 4+ players)
    init: str = ""                # start: PATH (distill / train-blueprint) | lstm:PATH | distill:SPEC
    init_minutes: float = 3.0     # with --init distill:SPEC: minutes of that distillation first
    minutes: float = 30.0         # wall-clock budget of this invocation
    updates: int = 0              # stop after this many updates in total (0: no limit)
    hidden: int = 256
    num_actors: int = 64          # games played at once
    act_steps: int = 2            # batched moves of every actor between two updates
    batch_size: int = 32          # games per update
    lr: Optional[float] = None    # None: SCRATCH 2.5e-4, or FINETUNE's with --init
    adam_eps: float = 1.5e-5
    gamma: float = 0.999
    n_step: int = 3
    target_every: int = 250       # updates between target-network copies
    grad_clip: float = 5.0
    eps: Optional[float] = None   # actor 0's epsilon (None: SCRATCH 0.4, or FINETUNE's with --init)
    eps_alpha: Optional[float] = None  # actor i: eps ** (1 + alpha i / (N - 1)) (None: preset)
    anchor_weight: Optional[float] = None  # hinge toward the start net's greedy move (None: preset)
    anchor_margin: float = 0.5    # margin of that hinge (points of Q)
    anchor_half_life: float = 0.0  # updates over which the anchor weight halves (0: constant)
    replay_games: int = 4000
    learning_starts: int = 64     # own games stored before batches use them
    priority_exponent: float = 0.9
    priority_eta: float = 0.9
    is_exponent: float = 0.6
    demo_bot: str = ""            # "" (off) or a rule bot: random simple weak medium strong
    demo_fraction: float = 0.25
    margin: float = 0.8
    life_penalty: float = 0.0     # training reward shaping: points lost per misplay (0: off)
    demo_weight: float = 1.0
    demo_actors: int = 64
    pretrain_updates: int = 0     # updates on demonstrations only before the agent acts
    demo_replay_games: int = 2000
    eval_every: int = 500         # updates (0: only at the end)
    eval_games: int = 500
    save_every: int = 500
    seed: int = 0
    threads: int = 1
    device: str = "cpu"
    resume: str = ""
    out: str = "public_lstm.pt"
    slim_out: str = ""
    curve: str = ""               # curve CSV (+ PNG); "": OUT stem + .curve.csv; "none": off

    def resolved(self) -> "BlueprintTrainConfig":
        """A copy whose None fields take their preset: FINETUNE with `init`, SCRATCH without."""
        preset = FINETUNE if self.init else SCRATCH
        return dataclasses.replace(self, **{k: v for k, v in preset.items()
                                            if getattr(self, k) is None})

    def curve_path(self) -> str:
        """Where the learning curve's CSV goes ("" when off); the PNG has the same stem."""
        if self.curve.lower() == "none":
            return ""
        if self.curve:
            return self.curve
        stem = self.out[:-3] if self.out.endswith(".pt") else self.out
        return stem + ".curve.csv"

    def check(self) -> None:
        def need(ok, msg):
            if not ok:
                raise ValueError(msg)
        self = self.resolved()
        need(self.players in (2, 3, 4, 5), f"players must be 2..5, got {self.players}")
        need(1 <= self.colors <= 5 and 1 <= self.ranks <= 5,
             f"colors and ranks must be 1..5, got {self.colors}, {self.ranks}")
        need(self.hand_size >= 0, f"hand_size must be >= 0, got {self.hand_size}")
        need(isinstance(self.init, str), f"init must be a string, got {self.init!r}")
        if self.init.startswith("distill:"):
            need(self.init[len("distill:"):].strip() != "",
                 "--init distill:SPEC needs a teacher blueprint spec after 'distill:'")
            need(self.init_minutes > 0, f"init_minutes must be > 0, got {self.init_minutes}")
        need(self.anchor_weight >= 0, f"anchor_weight must be >= 0, got {self.anchor_weight}")
        need(self.anchor_margin >= 0, f"anchor_margin must be >= 0, got {self.anchor_margin}")
        need(self.anchor_half_life >= 0,
             f"anchor_half_life must be >= 0, got {self.anchor_half_life}")
        need(self.anchor_weight == 0 or self.init or self.resume,
             "anchor_weight > 0 needs a start net: give --init")
        check_run_seed(self.seed)
        need(self.minutes > 0 or self.updates > 0, "give --minutes > 0 or --updates > 0")
        for name in ("hidden", "num_actors", "act_steps", "batch_size", "n_step", "target_every",
                     "replay_games", "learning_starts", "eval_games", "save_every",
                     "demo_actors", "demo_replay_games", "threads"):
            need(getattr(self, name) >= 1, f"{name} must be >= 1, got {getattr(self, name)}")
        need(self.learning_starts <= self.replay_games,
             f"learning_starts ({self.learning_starts}) must be <= replay_games ({self.replay_games})")
        need(self.batch_size <= self.replay_games, "batch_size must be <= replay_games")
        need(self.lr > 0, f"lr must be > 0, got {self.lr}")
        need(0 < self.gamma <= 1, f"gamma must be in (0, 1], got {self.gamma}")
        need(0 <= self.eps <= 1, f"eps must be in [0, 1], got {self.eps}")
        need(self.eps_alpha >= 0, f"eps_alpha must be >= 0, got {self.eps_alpha}")
        need(0 <= self.demo_fraction <= 1, f"demo_fraction must be in [0, 1], got {self.demo_fraction}")
        need(self.margin >= 0, f"margin must be >= 0, got {self.margin}")
        need(self.life_penalty >= 0, f"life_penalty must be >= 0, got {self.life_penalty}")
        need(self.eval_every >= 0 and self.updates >= 0 and self.pretrain_updates >= 0,
             "eval_every, updates and pretrain_updates must be >= 0")
        need(self.device == "cpu" or self.device.startswith("cuda"),
             f"device must be cpu or cuda[:i], got {self.device!r}")
        if self.demo_bot:
            from lbs_pz.agents.rule_bots import BOT_NAMES
            need(self.demo_bot in BOT_NAMES,
                 f"demo_bot must be one of {', '.join(BOT_NAMES)} (or empty), got {self.demo_bot!r}")


# The values of the None fields of BlueprintTrainConfig: from scratch, and fine-tuning a
# start (--init); the experiments behind FINETUNE are in the module docstring.
SCRATCH = dict(lr=2.5e-4, eps=0.4, eps_alpha=7.0, anchor_weight=0.0)
FINETUNE = dict(lr=5e-5, eps=0.05, eps_alpha=3.0, anchor_weight=1.0)


def game_config(players: int, hand_size: int = 0, colors: int = 5, ranks: int = 5):
    from lbs_pz.engine import HanabiConfig
    return HanabiConfig(players=players, colors=colors, ranks=ranks, hand_size=hand_size or None)


def actor_epsilons(n: int, eps: float = 0.4, alpha: float = 7.0) -> np.ndarray:
    """eps_i = eps ** (1 + alpha * i / (n - 1)) for actors i = 0 .. n-1 (float64 (n,))."""
    i = np.arange(n, dtype=np.float64)
    return eps ** (1.0 + alpha * i / max(n - 1, 1))


def max_game_length(config) -> int:
    """An upper bound on the moves of a game: plays and discards draw the D cards left
    after the deal, hints are paid by tokens (start, discards, completed colors), plus one
    final round."""
    d = config.deck_size - config.players * config.hand_size
    return 2 * d + 2 * config.players + config.max_information_tokens + config.colors + 1


# --- replay --------------------------------------------------------------------------------


class GameReplay:
    """Prioritized replay of whole games, stored padded to `max_len` moves.

    Per game g and move t: every seat's canonical vector obs (P, E) as uint8 (the
    features are 0/1; the public features are `public_part(obs)`), legal (M,) bool,
    current player, action, reward; `length[g]`. With conventions = F > 0 (a net with
    convention features) also every seat's `convention_features`, conv (P, F) float32.
    """

    def __init__(self, capacity: int, max_len: int, obs_dim: int, players: int,
                 num_moves: int, conventions: int = 0):
        self.capacity, self.max_len = capacity, max_len
        self.fields = ("obs", "legal", "cur", "action", "reward") + (
            ("conv",) if conventions else ())
        if conventions:
            self.conv = np.zeros((capacity, max_len, players, conventions), dtype=np.float32)
        self.obs = np.zeros((capacity, max_len, players, obs_dim), dtype=np.uint8)
        self.legal = np.zeros((capacity, max_len, num_moves), dtype=bool)
        self.cur = np.zeros((capacity, max_len), dtype=np.int64)
        self.action = np.zeros((capacity, max_len), dtype=np.int64)
        self.reward = np.zeros((capacity, max_len), dtype=np.float32)
        self.length = np.zeros(capacity, dtype=np.int64)
        self.priority = np.zeros(capacity, dtype=np.float64)
        self.count = self.next = 0

    def __len__(self) -> int:
        return self.count

    def add(self, game: Dict[str, np.ndarray]) -> None:
        """Store one game (arrays with a leading length axis L), overwriting the oldest;
        new games get the current maximum priority."""
        g, n = self.next, len(game["action"])
        for name in self.fields:
            arr = getattr(self, name)
            arr[g, :n] = game[name]
            arr[g, n:] = 0
        self.length[g] = n
        self.priority[g] = self.priority[: self.count].max() if self.count else 1.0
        self.next = (g + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)

    def sample(self, k: int, rng: np.random.Generator, exponent: float, is_exponent: float):
        """k game indices drawn ~ priority ** exponent, and their importance weights
        (max-normalised), float32 (k,)."""
        p = self.priority[: self.count] ** exponent
        p /= p.sum()
        idx = rng.choice(self.count, size=k, p=p)
        w = (self.count * p[idx]) ** (-is_exponent)
        return idx, (w / w.max()).astype(np.float32)

    def batch(self, idx: np.ndarray) -> Dict[str, np.ndarray]:
        """The games `idx`, cut to the longest of them: arrays (k, T, ...)."""
        t = int(self.length[idx].max())
        out = {name: getattr(self, name)[idx, :t] for name in self.fields}
        out["length"] = self.length[idx]
        return out


# --- actors ---------------------------------------------------------------------------------


class Actors:
    """`n` games played at once in a HanabiBatch, by the net (epsilon-greedy per game) or
    by a C rule bot; each step is one batched encode / forward / step. Finished games are
    returned whole by `step` and their slots restart with fresh deals: games first_game,
    first_game + 1, ... of the TRAIN deal stream of run `deal_seed` (default `seed`),
    never an evaluation deal. `seed` seeds the exploration. conventions: store every seat's
    `convention_features` too ("conv"; what a net with conventions reads)."""

    def __init__(self, config, n: int, seed: int, epsilons: Optional[np.ndarray] = None,
                 bot: str = "", life_penalty: float = 0.0, deal_seed: Optional[int] = None,
                 first_game: int = 0, conventions: bool = False):
        from lbs_pz.engine import HanabiBatch
        self.config, self.n, self.bot = config, n, bot
        self.life_penalty = life_penalty
        self.rng = np.random.default_rng(seed)
        self.deal_seed = seed if deal_seed is None else deal_seed
        self.next_game = first_game
        self.eps = np.zeros(n) if epsilons is None else np.asarray(epsilons, dtype=np.float64)
        self.batch = HanabiBatch(config, n, seeds=self._seeds(n))
        self.max_len = max_game_length(config)
        p, e, m = config.players, config.encoding_size, config.num_moves
        self.buf = {
            "obs": np.zeros((n, self.max_len, p, e), dtype=np.uint8),
            "legal": np.zeros((n, self.max_len, m), dtype=bool),
            "cur": np.zeros((n, self.max_len), dtype=np.int64),
            "action": np.zeros((n, self.max_len), dtype=np.int64),
            "reward": np.zeros((n, self.max_len), dtype=np.float32),
        }
        self.conventions = bool(conventions)
        if self.conventions:
            from lbs_pz.agents.rule_bots._bots import convention_feature_size
            self.buf["conv"] = np.zeros((n, self.max_len, p, convention_feature_size(config)),
                                        dtype=np.float32)
        self.t = np.zeros(n, dtype=np.int64)
        self.hc = None                              # LSTM state per game (net actors)
        self.scores: List[int] = []                 # final scores of finished games
        self.moves = 0

    def _seeds(self, k: int) -> np.ndarray:
        seeds = deal_seeds(TRAIN, self.deal_seed, self.next_game, k)
        self.next_game += k
        return seeds

    def step(self, net=None) -> List[Dict[str, np.ndarray]]:
        """One move in every game. Returns the games that ended (dicts of arrays)."""
        import torch
        from lbs_pz.agents.public_lstm import encode_batch, epsilon_greedy, public_part
        from lbs_pz.agents.rule_bots import _bots as bots

        rows = np.arange(self.n)
        enc = encode_batch(self.batch, self.conventions)             # (n, P, E [+ F])
        e = self.config.encoding_size
        legal = self.batch.legal_masks().astype(bool)                # (n, M)
        cur = self.batch.current_players().astype(np.int64)
        if self.bot:
            actions = bots.act_batch(self.bot, self.batch)
        else:
            device = next(net.parameters()).device
            with torch.inference_mode():
                obs = torch.from_numpy(enc).to(device)
                pub = torch.from_numpy(np.ascontiguousarray(public_part(enc, self.config)))
                out, self.hc = net.public(pub.to(device)[:, None], self.hc)
                q = net.q(out[:, 0], obs)
                q_cur = q[torch.from_numpy(rows), torch.from_numpy(cur), : self.config.num_moves]
            actions = epsilon_greedy(q_cur, legal, self.eps, self.rng)
        t = self.t
        if t.max() >= self.max_len:
            raise RuntimeError(f"a game exceeded {self.max_len} moves")
        self.buf["obs"][rows, t] = enc[..., :e]
        if self.conventions:
            self.buf["conv"][rows, t] = enc[..., e:]
        self.buf["legal"][rows, t] = legal
        self.buf["cur"][rows, t] = cur
        self.buf["action"][rows, t] = actions
        reward = self.batch.step(actions)
        if self.life_penalty:
            # a play that does not score lost a life (the last one also costs the score)
            hs = self.config.hand_size
            misplay = (actions >= hs) & (actions < 2 * hs) & (reward <= 0)
            reward = reward - self.life_penalty * misplay
        self.buf["reward"][rows, t] = reward
        self.t += 1
        self.moves += self.n
        done = np.flatnonzero(self.batch.terminals())
        finished = []
        if done.size:
            scores = self.batch.scores()
            for i in done:                       # only the games that ended this move
                L = int(self.t[i])
                finished.append({name: arr[i, :L].copy() for name, arr in self.buf.items()})
                self.scores.append(int(scores[i]))
                self.batch.reset_game(int(i), self._seeds(1)[0])
            self.t[done] = 0
            if self.hc is not None:
                keep = torch.ones(self.n, 1, device=self.hc[0].device)
                keep[torch.from_numpy(done)] = 0
                self.hc = (self.hc[0] * keep, self.hc[1] * keep)
        return finished


# --- the loss --------------------------------------------------------------------------------


def _tensors(games: Dict[str, np.ndarray], device, pub_dim: int):
    import torch
    t = {k: torch.from_numpy(np.ascontiguousarray(v)).to(device) for k, v in games.items()}
    t["obs"] = t["obs"].float()
    t["pub"] = t["obs"][:, :, 0, t["obs"].shape[-1] - pub_dim:]
    if "conv" in t:          # a net with convention features reads them after the vector
        t["obs"] = torch.cat([t["obs"], t.pop("conv")], dim=-1)
    return t


def margin_gap(q_mover, legal, action, margin: float):
    """DQfD's large-margin term per move: max over legal a of [Q(a) + margin * (a != a*)]
    - Q(a*). q_mover (k, T, M) the mover's Q, legal (k, T, M) bool, action (k, T) int64
    a* -> (k, T) (>= 0; 0 once Q(a*) leads every other legal move by the margin)."""
    import torch
    M = q_mover.shape[-1]
    bonus = margin * (1 - torch.nn.functional.one_hot(action, M).to(q_mover.dtype))
    best = (q_mover + bonus).masked_fill(~legal, -1e9).max(-1).values
    return best - q_mover.gather(2, action[..., None]).squeeze(-1)


def vdn_loss(net, target_net, games: Dict[str, np.ndarray], weights: np.ndarray,
             is_demo: np.ndarray, tc: BlueprintTrainConfig, anchor_net=None,
             anchor_weight: float = 0.0, stats: Optional[dict] = None):
    """Loss of a batch of k games padded to T moves.

    With `anchor_net` (the frozen start net of a fine-tuning run) and anchor_weight > 0
    the loss adds anchor_weight * the mean over valid moves of `margin_gap` toward the
    anchor net's greedy legal move (margin tc.anchor_margin).

    Returns (loss, td_loss (float), margin_loss (float), per-game priorities (k,)); a
    `stats` dict gets "anchor" (the anchor term, float) and "q_mean" (the mean Q_tot)."""
    import torch

    device = next(net.parameters()).device
    b = _tensors(games, device, net.pub_dim)
    k, T = b["action"].shape
    P, M = net.players, net.num_moves
    valid = torch.arange(T, device=device)[None] < b["length"][:, None]         # (k, T)
    q, _ = net(b["pub"], b["obs"])                                               # (k, T, P, M+1)
    # each seat's action: the mover's move, the others' no-op
    seat_action = torch.full((k, T, P), M, dtype=torch.long, device=device)
    seat_action.scatter_(2, b["cur"][..., None], b["action"][..., None])
    q_tot = q.gather(3, seat_action[..., None]).squeeze(-1).sum(-1)              # (k, T)
    with torch.no_grad():
        noop_only = torch.zeros(M + 1, dtype=torch.bool, device=device)
        noop_only[M] = True
        mover_legal = torch.nn.functional.pad(b["legal"], (0, 1))                # (k, T, M+1)
        mover = torch.nn.functional.one_hot(b["cur"], P).bool()[..., None]        # (k, T, P, 1)
        mask = torch.where(mover, mover_legal[:, :, None], noop_only)             # (k, T, P, M+1)
        greedy = q.masked_fill(~mask, -1e9).argmax(-1, keepdim=True)
        tq, _ = target_net(b["pub"], b["obs"])
        v_tot = tq.gather(3, greedy).squeeze(-1).sum(-1) * valid                 # (k, T)
        n, g = tc.n_step, tc.gamma
        rew = torch.nn.functional.pad(b["reward"], (0, n))
        boot = torch.nn.functional.pad(v_tot, (0, n))
        target = sum(g ** j * rew[:, j:j + T] for j in range(n)) + g ** n * boot[:, n:n + T]
    td = (target - q_tot) * valid
    w = torch.from_numpy(weights).to(device)
    steps = valid.sum().clamp(min=1)
    td_loss = (w[:, None] * 0.5 * td ** 2).sum() / steps
    loss = td_loss
    margin_value = 0.0
    demo = torch.from_numpy(is_demo).to(device)
    q_mover = q.gather(2, b["cur"][..., None, None].expand(k, T, 1, M + 1))[:, :, 0, :M]
    if demo.any() and tc.demo_bot:
        rows = valid & demo[:, None]
        gap = margin_gap(q_mover, b["legal"], b["action"], tc.margin)
        margin_loss = (gap * rows).sum() / rows.sum().clamp(min=1)
        loss = loss + tc.demo_weight * margin_loss
        margin_value = float(margin_loss.detach())
    anchor_value = 0.0
    if anchor_net is not None and anchor_weight > 0:
        with torch.no_grad():
            aq, _ = anchor_net(b["pub"], b["obs"])
            a_mover = aq.gather(2, b["cur"][..., None, None].expand(k, T, 1, M + 1))[:, :, 0, :M]
            a_star = a_mover.masked_fill(~b["legal"], -1e9).argmax(-1)
        gap = margin_gap(q_mover, b["legal"], a_star, tc.anchor_margin)
        anchor_loss = (gap * valid).sum() / steps
        loss = loss + anchor_weight * anchor_loss
        anchor_value = float(anchor_loss.detach())
    if stats is not None:
        stats["anchor"] = anchor_value
        stats["q_mean"] = float((q_tot.detach() * valid).sum() / steps)
    with torch.no_grad():
        a = td.abs()
        mean = a.sum(1) / valid.sum(1).clamp(min=1)
        prio = tc.priority_eta * a.max(1).values + (1 - tc.priority_eta) * mean
    return loss, float(td_loss.detach()), margin_value, prio.cpu().numpy().astype(np.float64) + 1e-6


# --- checkpoints -----------------------------------------------------------------------------
# The lbs_pz layout (`lbs_pz.models.checkpoint`, kind "public_lstm"): "architecture" is
# `PublicLSTMNet.arch()`, "weights" its state_dict, "info" the run's hyper-parameters
# ("train_config"), counters and curve ("progress") and command; a full checkpoint adds
# "resume" (target network and optimizer state), which a slim one leaves out.


def save_checkpoint(path: str, net, target_net, optimizer, tc: BlueprintTrainConfig,
                    progress: dict, config, anchor_net=None) -> None:
    """A resumable checkpoint (weights, target network, optimizer state, progress; the
    start net of a fine-tuning run as "anchor")."""
    from lbs_pz.models.checkpoint import save_checkpoint as save

    resume = {"target": {k: v.detach().cpu() for k, v in target_net.state_dict().items()},
              "optimizer": optimizer.state_dict()}
    if anchor_net is not None:
        resume["anchor"] = {k: v.detach().cpu() for k, v in anchor_net.state_dict().items()}
    save(path, KIND, config, net.arch(), net.state_dict(), trained_for=None,
         info=_info(tc, progress), resume=resume)


def save_slim(path: str, net, tc: BlueprintTrainConfig, progress: dict, config) -> None:
    """Weights only, float16: a small file for shipping (not resumable)."""
    from lbs_pz.models.checkpoint import save_checkpoint as save

    save(path, KIND, config, net.arch(), net.state_dict(), trained_for=None,
         info=_info(tc, progress), half=True)


def _info(tc: BlueprintTrainConfig, progress: dict) -> dict:
    return {"command": command_line("train-blueprint", tc), "train_config": dataclasses.asdict(tc),
            "progress": progress}


def load_checkpoint(path: str, map_location="cpu") -> dict:
    """Read and check a public-LSTM checkpoint (CheckpointError if it is not one)."""
    from lbs_pz.models.checkpoint import load_checkpoint as load

    return load(path, KIND, map_location=map_location)


def load_blueprint(path: Optional[str] = None, name: str = "public-lstm", **kwargs):
    """A `PublicLSTMBlueprint` from a checkpoint (full or slim; a path or a shipped name;
    default "public_lstm_2p"): `PublicLSTMBlueprint.load`."""
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint

    return PublicLSTMBlueprint.load(path, name=name, **kwargs)


# --- the start of a fine-tuning run (--init) ---------------------------------------------------


def init_checkpoint(tc: BlueprintTrainConfig, config, log=print) -> dict:
    """The checkpoint `tc.init` names, loaded and checked against the run's game:
    PATH or lstm:PATH (a checkpoint of `distill` or `train-blueprint`, full or slim), or
    distill:SPEC (a distillation of the blueprint SPEC for `tc.init_minutes`, written to
    OUT's stem + ".init.pt", then loaded). Adds "init" = {"spec", "path", "sha256"}.
    ValueError (CheckpointError) for a file that is not a public-LSTM checkpoint, or one
    made for another game or with another hidden size than `tc.hidden`."""
    from lbs_pz.agents.base import file_sha256
    from lbs_pz.agents.public_lstm import PublicLSTMNet
    from lbs_pz.models.checkpoint import CheckpointError

    spec = tc.init
    if spec.startswith("distill:"):
        from lbs_pz.train.distill import DistillConfig, distill
        stem = tc.out[:-3] if tc.out.endswith(".pt") else tc.out
        path = stem + ".init.pt"
        log(f"--init {spec}: distilling {spec[len('distill:'):]} for {tc.init_minutes:g} "
            f"minutes into {path}")
        distill(DistillConfig(teacher=spec[len("distill:"):], out=path, players=tc.players,
                              colors=tc.colors, ranks=tc.ranks, hand_size=tc.hand_size,
                              minutes=tc.init_minutes, hidden=tc.hidden, seed=tc.seed,
                              threads=tc.threads, device=tc.device,
                              eval_games=min(tc.eval_games, 200)),
                log=log, progress_bar=False)
    else:
        path = spec[len("lstm:"):] if spec.startswith("lstm:") else spec
    try:
        ckpt = load_checkpoint(path)
    except CheckpointError as err:
        raise CheckpointError(f"--init {spec}: {err}") from None
    if ckpt["game"] != game_to_dict(config):
        raise CheckpointError(f"--init {spec}: made for the game {ckpt['game']}, this run "
                              f"plays {game_to_dict(config)} (give the same --players, "
                              f"--colors, --ranks, --hand-size)")
    arch = ckpt["architecture"]
    try:
        net = PublicLSTMNet(**arch)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"--init {spec}: architecture {arch} is not a public-LSTM "
                              f"net: {err}") from None
    ref = net.arch_for(config)
    if ref != arch:
        raise CheckpointError(f"--init {spec}: architecture {arch} does not fit the game "
                              f"(expected {ref})")
    if net.dueling != "mean":
        # the TD targets and the anchor here take every seat's Q without legal masks
        raise CheckpointError(f"--init {spec}: its Q is centred on the best legal move "
                              f"(dueling={net.dueling!r}); Q-learning trains mean-centred "
                              f"heads: start from a mean-centred net (made without "
                              f"`distill --dueling max`)")
    if net.hidden != tc.hidden:
        raise CheckpointError(f"--init {spec}: the checkpoint's net has hidden {net.hidden}, "
                              f"this run asks for --hidden {tc.hidden} (the start sets the "
                              f"architecture: pass --hidden {net.hidden})")
    try:
        net.load_state_dict({k: v.float() for k, v in ckpt["weights"].items()})
    except RuntimeError as err:
        raise CheckpointError(f"--init {spec}: weights do not fit the architecture: "
                              f"{str(err).splitlines()[0][:160]}") from None
    ckpt["net"] = net
    ckpt["init"] = {"spec": spec, "path": path, "sha256": file_sha256(ckpt["path"])}
    return ckpt


# --- the learning curve ------------------------------------------------------------------------

CURVE_COLUMNS = ("minutes", "updates", "env_steps", "games", "selfplay_mean", "selfplay_sem",
                 "td_loss", "anchor_loss", "margin_loss", "anchor_weight", "q_tot_mean",
                 "own_score")


def write_curve(path: str, rows: List[list], start: Optional[float] = None,
                title: str = "") -> None:
    """The learning curve as CSV (`CURVE_COLUMNS`, one row per evaluation) at `path` and a
    PNG with the same stem (greedy self-play +- s.e.m. against training minutes; with
    `start`, that level and start - 0.5 drawn as lines)."""
    import csv
    import textwrap

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CURVE_COLUMNS)
        for row in rows:
            w.writerow(["" if v is None else (f"{v:.6g}" if isinstance(v, float) else v)
                        for v in row])
    os.replace(tmp, path)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = path[:-4] if path.endswith(".csv") else path
    x = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[4] for r in rows], dtype=float)
    e = np.array([r[5] for r in rows], dtype=float)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(x, y, yerr=e, marker="o", ms=3, capsize=2, label="greedy self-play (EVAL deals)")
    if start is not None:
        ax.axhline(start, color="grey", lw=0.8, label=f"start {start:.2f}")
        ax.axhline(start - 0.5, color="red", lw=0.8, ls="--", label="start - 0.5")
    ax.set_xlabel("training minutes")
    ax.set_ylabel("score")
    title = title or "train-blueprint learning curve"
    ax.set_title("\n".join(textwrap.wrap(title, 110)[:3]), fontsize=7)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=100)
    plt.close(fig)


# --- training ----------------------------------------------------------------------------------


def evaluate_net(net, config, games: int, seed: int = 0):
    """Greedy self-play of `net` on EVAL deals 0 .. games-1 of run `seed` (the deals of
    `lbs-pz eval` and of distill's self-play figure; the actors play TRAIN deals only).
    Returns (mean, s.e.m.)."""
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    from lbs_pz.engine import HanabiBatch
    from lbs_pz.engine.seeds import EVAL

    was_training = net.training
    device = next(net.parameters()).device
    cpu_net = net if device.type == "cpu" else copy.deepcopy(net).cpu()
    batch = HanabiBatch(config, games, seeds=deal_seeds(EVAL, seed, 0, games))
    PublicLSTMBlueprint(cpu_net, config).rollout(batch)
    scores = batch.scores().astype(np.float64)
    net.train(was_training)
    return mean_sem(scores)


def train_blueprint(tc: BlueprintTrainConfig, log=print, progress_bar: bool = True) -> dict:
    """Run training as configured; returns the progress dict (also in the checkpoint).

    With `tc.init` the net (architecture and weights) and the target net start from that
    checkpoint, the None fields take the FINETUNE preset, and a frozen copy of the start
    net anchors the greedy policy (`vdn_loss`). A fresh run evaluates the start first, so
    the curve's first row is the starting level."""
    import torch
    from tqdm import tqdm

    from lbs_pz.agents.public_lstm import PublicLSTMNet
    tc.check()
    ckpt = load_checkpoint(tc.resume) if tc.resume else None
    if ckpt is not None and not tc.init:
        # resuming a fine-tuning run: its start (and so its preset) carries over
        tc = dataclasses.replace(tc, init=str(ckpt["info"].get("train_config", {}).get("init", "")))
    tc = tc.resolved()
    device = torch_setup(tc)
    config = game_config(tc.players, tc.hand_size, tc.colors, tc.ranks)
    init = None
    if ckpt is not None:
        expected = game_to_dict(config)
        scratch = PublicLSTMNet.for_config(config, tc.hidden).arch()
        if ckpt["game"] != expected or (not tc.init and ckpt["architecture"] != scratch):
            raise ValueError(f"--resume {tc.resume}: trained for {ckpt['game']} "
                             f"{ckpt['architecture']}, this run is {expected} {scratch}")
        try:
            net = PublicLSTMNet(**ckpt["architecture"]).to(device)
        except (TypeError, ValueError) as err:
            raise ValueError(f"--resume {tc.resume}: bad architecture: {err}") from None
    elif tc.init:
        init = init_checkpoint(tc, config, log)
        net = init["net"].to(device)
        log(f"start: {init['init']['path']} ({init['architecture']})")
    else:
        net = PublicLSTMNet.for_config(config, tc.hidden).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=tc.lr, eps=tc.adam_eps)
    # evals: [update, env steps, training seconds, greedy mean, s.e.m.]; curve: CURVE_COLUMNS
    progress = {"updates": 0, "env_steps": 0, "demo_steps": 0, "games": 0, "demo_games": 0,
                "seconds": 0.0,
                "evals": [], "train_scores": [], "curve": []}
    anchor_net = None
    if ckpt is not None:
        if not isinstance(ckpt.get("resume"), dict) or "optimizer" not in ckpt["resume"]:
            raise ValueError(f"--resume {tc.resume}: a slim (weights-only) checkpoint cannot "
                             f"be resumed; use the full one written by --out")
        if "target" not in ckpt["resume"]:
            raise ValueError(f"--resume {tc.resume}: not a checkpoint of train-blueprint "
                             f"(use it as --init instead)")
        net.load_state_dict({k: v.float() for k, v in ckpt["weights"].items()})
        optimizer.load_state_dict(ckpt["resume"]["optimizer"])
        for group in optimizer.param_groups:         # this run's learning rate
            group["lr"] = tc.lr
        progress.update(ckpt["info"].get("progress", {}))
        progress.setdefault("demo_games", 0)
        progress.setdefault("curve", [])
        if "anchor" in ckpt["resume"]:
            anchor_net = copy.deepcopy(net)
            anchor_net.load_state_dict(ckpt["resume"]["anchor"])
        log(f"resumed from {tc.resume} at update {progress['updates']}")
    elif init is not None:
        progress["init"] = init["init"]
        anchor_net = copy.deepcopy(net)
    if anchor_net is None and tc.anchor_weight > 0:
        raise ValueError(f"--resume {tc.resume}: anchor_weight > 0 needs a start net, and "
                         f"this run has none (it was not started with --init)")
    if anchor_net is not None:
        anchor_net.eval()
        for p in anchor_net.parameters():
            p.requires_grad_(False)
    target_net = copy.deepcopy(net)
    if tc.resume:
        target_net.load_state_dict(ckpt["resume"]["target"])
    target_net.eval()

    seed = tc.seed + 1000 * progress["updates"]          # fresh exploration after a resume
    rng = np.random.default_rng(seed)
    # deals: the TRAIN stream of run tc.seed, the agent's games from 0, the demonstrations'
    # from 2**31; a resumed run goes on after the games it has finished
    actors = Actors(config, tc.num_actors, seed + 1,
                    actor_epsilons(tc.num_actors, tc.eps, tc.eps_alpha),
                    life_penalty=tc.life_penalty, deal_seed=tc.seed,
                    first_game=progress["games"], conventions=net.conventions > 0)
    dims = (config.encoding_size, config.players, config.num_moves, net.conventions)
    replay = GameReplay(tc.replay_games, actors.max_len, *dims)
    demo_actors = demo_replay = None
    if tc.demo_bot:
        demo_actors = Actors(config, tc.demo_actors, seed + 2, bot=tc.demo_bot,
                             deal_seed=tc.seed, first_game=DEMO_GAMES + progress["demo_games"],
                             conventions=net.conventions > 0)
        demo_replay = GameReplay(tc.demo_replay_games, actors.max_len, *dims)

    curve_path = tc.curve_path()
    start = time.perf_counter()
    first_steps, first_updates = progress["env_steps"], progress["updates"]
    budget = tc.minutes * 60 if tc.minutes > 0 else math.inf
    losses: List[float] = []
    margins: List[float] = []
    anchors: List[float] = []
    q_means: List[float] = []
    last_eval = None

    def checkpoint():
        progress["seconds"] += time.perf_counter() - checkpoint.t
        checkpoint.t = time.perf_counter()
        save_checkpoint(tc.out, net, target_net, optimizer, tc, progress, config, anchor_net)
        if tc.slim_out:
            save_slim(tc.slim_out, net, tc, progress, config)
    checkpoint.t = start

    def run_seconds():          # training time so far, over every resumed run
        return progress["seconds"] + time.perf_counter() - checkpoint.t

    def anchor_weight_now():
        if anchor_net is None or tc.anchor_weight == 0:
            return 0.0
        if tc.anchor_half_life <= 0:
            return tc.anchor_weight
        return tc.anchor_weight * 0.5 ** (progress["updates"] / tc.anchor_half_life)

    def evaluate():
        mean, sem = evaluate_net(net, config, tc.eval_games, tc.seed)
        u = progress["updates"]
        progress["evals"].append([u, progress["env_steps"], round(run_seconds(), 1), mean, sem])

        def recent(xs):
            return float(np.mean(xs[-100:])) if xs else None
        own = actors.scores[-200:]
        progress["curve"].append([round(run_seconds() / 60, 3), u, progress["env_steps"],
                                  progress["games"], mean, sem, recent(losses), recent(anchors),
                                  recent(margins), anchor_weight_now(), recent(q_means),
                                  float(np.mean(own)) if own else None])
        if curve_path:
            first = progress["curve"][0][4] if progress["curve"] else None
            write_curve(curve_path, progress["curve"], first if tc.init else None,
                        f"{os.path.basename(tc.out)}: {command_line('train-blueprint', tc)}")
        log(f"update {u}: greedy self-play {mean:.2f} +- {sem:.2f} over {tc.eval_games} EVAL "
            f"games; env steps {progress['env_steps']:,}; td {recent(losses) or 0:.4f}")
        return mean, sem

    if progress["updates"] == 0 and not progress["curve"]:
        last_eval = evaluate()                     # the start (the curve's first row)
        if init is not None:
            progress["init"]["selfplay"] = [last_eval[0], last_eval[1]]
    bar = tqdm(total=tc.updates or None, initial=progress["updates"], unit="upd",
               disable=not progress_bar, dynamic_ncols=True)
    stats: Dict[str, float] = {}
    while time.perf_counter() - start < budget and not (tc.updates and progress["updates"] >= tc.updates):
        # 1. act: every actor game moves act_steps times (one batched call each); during
        #    the demonstration-only pre-training the agent's own actors wait
        pretraining = demo_replay is not None and progress["updates"] < tc.pretrain_updates
        for _ in range(tc.act_steps):
            if not pretraining:
                for game in actors.step(net):
                    replay.add(game)
                    progress["games"] += 1
                progress["env_steps"] += actors.n
            if demo_actors is not None:
                for game in demo_actors.step():
                    demo_replay.add(game)
                    progress["demo_games"] += 1
                progress["demo_steps"] += demo_actors.n
        # 2. learn from a batch of games: demonstrations only until the agent has stored
        #    learning_starts games of its own, then a demo_fraction of the batch
        if demo_replay is not None:
            if len(demo_replay) < min(tc.learning_starts, tc.batch_size):
                continue
            own_ready = not pretraining and len(replay) >= tc.learning_starts
            n_demo = round(tc.batch_size * tc.demo_fraction) if own_ready else tc.batch_size
        elif len(replay) >= tc.learning_starts:
            n_demo = 0
        else:
            continue
        n_own = tc.batch_size - n_demo
        parts, weights = [], []
        for buf, n in ((replay, n_own), (demo_replay, n_demo)):
            if n > 0:
                idx, w = buf.sample(n, rng, tc.priority_exponent, tc.is_exponent)
                parts.append((buf, idx))
                weights.append(w)
        t_max = max(int(buf.length[idx].max()) for buf, idx in parts)
        games = {}
        for name in replay.fields:
            games[name] = np.concatenate([getattr(buf, name)[idx, :t_max] for buf, idx in parts])
        games["length"] = np.concatenate([buf.length[idx] for buf, idx in parts])
        is_demo = np.concatenate([np.full(len(idx), buf is demo_replay) for buf, idx in parts])
        loss, td, margin, prio = vdn_loss(net, target_net, games, np.concatenate(weights),
                                          is_demo, tc, anchor_net, anchor_weight_now(), stats)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), tc.grad_clip)
        optimizer.step()
        at = 0
        for buf, idx in parts:
            buf.priority[idx] = prio[at:at + len(idx)]
            at += len(idx)
        progress["updates"] += 1
        u = progress["updates"]
        losses.append(td)
        margins.append(margin)
        anchors.append(stats["anchor"])
        q_means.append(stats["q_mean"])
        if u % tc.target_every == 0:
            target_net.load_state_dict(net.state_dict())
        if tc.eval_every and u % tc.eval_every == 0:
            last_eval = evaluate()
        if u % tc.save_every == 0:
            checkpoint()
        bar.update(1)
        if u % 20 == 0:
            recent = actors.scores[-200:]
            bar.set_postfix(td=f"{np.mean(losses[-100:]):.3f}",
                            margin=f"{np.mean(margins[-100:]):.3f}",
                            anchor=f"{np.mean(anchors[-100:]):.3f}",
                            own=f"{np.mean(recent):.1f}" if recent else "-",
                            eval=f"{last_eval[0]:.2f}" if last_eval else "-")
    bar.close()
    elapsed = time.perf_counter() - start
    if not (progress["evals"] and progress["evals"][-1][0] == progress["updates"]):
        last_eval = evaluate()
    progress["train_scores"] = [float(np.mean(actors.scores[-500:]))] if actors.scores else []
    progress["td_losses"] = [float(x) for x in losses[-2000:]]
    checkpoint()
    steps, updates = progress["env_steps"] - first_steps, progress["updates"] - first_updates
    log(f"done: {progress['updates']:,} updates, {progress['env_steps']:,} env steps; this run "
        f"{steps / elapsed:,.0f} env steps/s, {updates / elapsed:.2f} updates/s over "
        f"{elapsed / 60:.1f} min; greedy self-play {last_eval[0]:.2f} +- {last_eval[1]:.2f} "
        f"over {tc.eval_games} EVAL games; saved {tc.out}"
        + (f", curve {curve_path}" if curve_path else ""))
    return progress
