"""Train the public-LSTM blueprint (`lbs_pz.agents.public_lstm`) by recurrent Q-learning.

    lbs-pz train-blueprint --minutes 30 --out public_lstm.pt
    lbs-pz train-blueprint --minutes 30 --demo-bot strong --demo-fraction 0.25 --margin 0.8

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

Deals: the TRAIN stream of the run seed (`lbs_pz.engine.seeds`), disjoint from the EVAL
stream of `eval` and `compare`: the agent's games 0, 1, 2, ..., the demonstrations' from
2**31, the greedy evaluations during training the last `eval_games` of the stream's range.

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
import time
from typing import Dict, List, Optional

import numpy as np

from lbs_pz.engine.seeds import MAX_GAMES, TRAIN, check_run_seed, deal_seeds
from lbs_pz.models.checkpoint import game_to_dict
from lbs_pz.search.stats import mean_sem
from lbs_pz.train.config_args import command_line, torch_setup

KIND = "public_lstm"          # its kind in the lbs_pz checkpoint layout
DEMO_GAMES = 2**31            # the demonstrations' first game in the TRAIN deal stream


@dataclasses.dataclass
class BlueprintTrainConfig:
    """Every hyper-parameter of a run (the `lbs-pz train-blueprint` options)."""
    players: int = 2
    hand_size: int = 0            # 0: the standard rule (5, or 4 with 4+ players)
    minutes: float = 30.0         # wall-clock budget of this invocation
    updates: int = 0              # stop after this many updates in total (0: no limit)
    hidden: int = 256
    num_actors: int = 64          # games played at once
    act_steps: int = 2            # batched moves of every actor between two updates
    batch_size: int = 32          # games per update
    lr: float = 2.5e-4
    adam_eps: float = 1.5e-5
    gamma: float = 0.999
    n_step: int = 3
    target_every: int = 250       # updates between target-network copies
    grad_clip: float = 5.0
    eps: float = 0.4
    eps_alpha: float = 7.0
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

    def check(self) -> None:
        def need(ok, msg):
            if not ok:
                raise ValueError(msg)
        need(self.players in (2, 3, 4, 5), f"players must be 2..5, got {self.players}")
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


def game_config(players: int, hand_size: int = 0):
    from lbs_pz.engine import HanabiConfig
    return HanabiConfig(players=players, hand_size=hand_size or None)


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
    current player, action, reward; `length[g]`.
    """

    def __init__(self, capacity: int, max_len: int, obs_dim: int, players: int,
                 num_moves: int):
        self.capacity, self.max_len = capacity, max_len
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
        for name in ("obs", "legal", "cur", "action", "reward"):
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
        out = {name: getattr(self, name)[idx, :t]
               for name in ("obs", "legal", "cur", "action", "reward")}
        out["length"] = self.length[idx]
        return out


# --- actors ---------------------------------------------------------------------------------


class Actors:
    """`n` games played at once in a HanabiBatch, by the net (epsilon-greedy per game) or
    by a C rule bot; each step is one batched encode / forward / step. Finished games are
    returned whole by `step` and their slots restart with fresh deals: games first_game,
    first_game + 1, ... of the TRAIN deal stream of run `deal_seed` (default `seed`),
    never an evaluation deal. `seed` seeds the exploration."""

    def __init__(self, config, n: int, seed: int, epsilons: Optional[np.ndarray] = None,
                 bot: str = "", life_penalty: float = 0.0, deal_seed: Optional[int] = None,
                 first_game: int = 0):
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
        enc = encode_batch(self.batch)                               # (n, P, E)
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
        self.buf["obs"][rows, t] = enc
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
    return t


def vdn_loss(net, target_net, games: Dict[str, np.ndarray], weights: np.ndarray,
             is_demo: np.ndarray, tc: BlueprintTrainConfig):
    """Loss of a batch of k games padded to T moves.

    Returns (loss, td_loss (float), margin_loss (float), per-game priorities (k,))."""
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
    if demo.any() and tc.demo_bot:
        rows = valid & demo[:, None]
        q_mover = q.gather(2, b["cur"][..., None, None].expand(k, T, 1, M + 1))[:, :, 0, :M]
        bonus = tc.margin * (1 - torch.nn.functional.one_hot(b["action"], M).float())
        best = (q_mover + bonus).masked_fill(~b["legal"], -1e9).max(-1).values
        gap = best - q_mover.gather(2, b["action"][..., None]).squeeze(-1)
        margin_loss = (gap * rows).sum() / rows.sum().clamp(min=1)
        loss = loss + tc.demo_weight * margin_loss
        margin_value = float(margin_loss.detach())
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
                    progress: dict, config) -> None:
    """A resumable checkpoint (weights, target network, optimizer state, progress)."""
    from lbs_pz.models.checkpoint import save_checkpoint as save

    save(path, KIND, config, net.arch(), net.state_dict(), trained_for=None,
         info=_info(tc, progress),
         resume={"target": {k: v.detach().cpu() for k, v in target_net.state_dict().items()},
                 "optimizer": optimizer.state_dict()})


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


# --- training ----------------------------------------------------------------------------------


def evaluate_net(net, config, games: int, seed: int = 0):
    """Greedy self-play of `net` on `games` fixed held-out deals: the last `games` of the
    TRAIN stream of run `seed` (2**32 - games .. 2**32 - 1, which the actors never reach).
    Returns (mean, s.e.m.)."""
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    from lbs_pz.engine import HanabiBatch

    was_training = net.training
    device = next(net.parameters()).device
    cpu_net = net if device.type == "cpu" else copy.deepcopy(net).cpu()
    batch = HanabiBatch(config, games, seeds=deal_seeds(TRAIN, seed, MAX_GAMES - games, games))
    PublicLSTMBlueprint(cpu_net, config).rollout(batch)
    scores = batch.scores().astype(np.float64)
    net.train(was_training)
    return mean_sem(scores)


def train_blueprint(tc: BlueprintTrainConfig, log=print, progress_bar: bool = True) -> dict:
    """Run training as configured; returns the progress dict (also in the checkpoint)."""
    import torch
    from tqdm import tqdm

    from lbs_pz.agents.public_lstm import PublicLSTMNet
    tc.check()
    device = torch_setup(tc)
    config = game_config(tc.players, tc.hand_size)
    net = PublicLSTMNet.for_config(config, tc.hidden).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=tc.lr, eps=tc.adam_eps)
    # evals: [update, env steps, training seconds, greedy mean, s.e.m.]
    progress = {"updates": 0, "env_steps": 0, "demo_steps": 0, "games": 0, "demo_games": 0,
                "seconds": 0.0,
                "evals": [], "train_scores": []}
    if tc.resume:
        ckpt = load_checkpoint(tc.resume)
        if ckpt["game"] != game_to_dict(config) or ckpt["architecture"] != net.arch():
            raise ValueError(f"--resume {tc.resume}: trained for {ckpt['game']} "
                             f"{ckpt['architecture']}, this run is {game_to_dict(config)} "
                             f"{net.arch()}")
        if not isinstance(ckpt.get("resume"), dict) or "optimizer" not in ckpt["resume"]:
            raise ValueError(f"--resume {tc.resume}: a slim (weights-only) checkpoint cannot "
                             f"be resumed; use the full one written by --out")
        net.load_state_dict(ckpt["weights"])
        optimizer.load_state_dict(ckpt["resume"]["optimizer"])
        for group in optimizer.param_groups:         # this run's learning rate
            group["lr"] = tc.lr
        progress.update(ckpt["info"].get("progress", {}))
        progress.setdefault("demo_games", 0)
        log(f"resumed from {tc.resume} at update {progress['updates']}")
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
                    first_game=progress["games"])
    dims = (config.encoding_size, config.players, config.num_moves)
    replay = GameReplay(tc.replay_games, actors.max_len, *dims)
    demo_actors = demo_replay = None
    if tc.demo_bot:
        demo_actors = Actors(config, tc.demo_actors, seed + 2, bot=tc.demo_bot,
                             deal_seed=tc.seed, first_game=DEMO_GAMES + progress["demo_games"])
        demo_replay = GameReplay(tc.demo_replay_games, actors.max_len, *dims)

    start = time.perf_counter()
    first_steps, first_updates = progress["env_steps"], progress["updates"]
    budget = tc.minutes * 60 if tc.minutes > 0 else math.inf
    bar = tqdm(total=tc.updates or None, initial=progress["updates"], unit="upd",
               disable=not progress_bar, dynamic_ncols=True)
    losses: List[float] = []
    margins: List[float] = []
    last_eval = None

    def checkpoint():
        progress["seconds"] += time.perf_counter() - checkpoint.t
        checkpoint.t = time.perf_counter()
        save_checkpoint(tc.out, net, target_net, optimizer, tc, progress, config)
        if tc.slim_out:
            save_slim(tc.slim_out, net, tc, progress, config)
    checkpoint.t = start

    def run_seconds():          # training time so far, over every resumed run
        return progress["seconds"] + time.perf_counter() - checkpoint.t

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
        for name in ("obs", "legal", "cur", "action", "reward"):
            games[name] = np.concatenate([getattr(buf, name)[idx, :t_max] for buf, idx in parts])
        games["length"] = np.concatenate([buf.length[idx] for buf, idx in parts])
        is_demo = np.concatenate([np.full(len(idx), buf is demo_replay) for buf, idx in parts])
        loss, td, margin, prio = vdn_loss(net, target_net, games, np.concatenate(weights),
                                          is_demo, tc)
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
        if u % tc.target_every == 0:
            target_net.load_state_dict(net.state_dict())
        if tc.eval_every and u % tc.eval_every == 0:
            last_eval = evaluate_net(net, config, tc.eval_games, tc.seed)
            progress["evals"].append([u, progress["env_steps"], round(run_seconds(), 1),
                                      last_eval[0], last_eval[1]])
            log(f"update {u}: greedy self-play {last_eval[0]:.2f} +- {last_eval[1]:.2f} "
                f"over {tc.eval_games} games; env steps {progress['env_steps']:,}; "
                f"td {np.mean(losses[-100:]):.4f}")
        if u % tc.save_every == 0:
            checkpoint()
        bar.update(1)
        if u % 20 == 0:
            recent = actors.scores[-200:]
            bar.set_postfix(td=f"{np.mean(losses[-100:]):.3f}",
                            margin=f"{np.mean(margins[-100:]):.3f}",
                            own=f"{np.mean(recent):.1f}" if recent else "-",
                            eval=f"{last_eval[0]:.2f}" if last_eval else "-")
    bar.close()
    elapsed = time.perf_counter() - start
    last_eval = evaluate_net(net, config, tc.eval_games, tc.seed)
    progress["evals"].append([progress["updates"], progress["env_steps"], round(run_seconds(), 1),
                              last_eval[0], last_eval[1]])
    progress["train_scores"] = [float(np.mean(actors.scores[-500:]))] if actors.scores else []
    progress["td_losses"] = [float(x) for x in losses[-2000:]]
    checkpoint()
    steps, updates = progress["env_steps"] - first_steps, progress["updates"] - first_updates
    log(f"done: {progress['updates']:,} updates, {progress['env_steps']:,} env steps; this run "
        f"{steps / elapsed:,.0f} env steps/s, {updates / elapsed:.2f} updates/s over "
        f"{elapsed / 60:.1f} min; greedy self-play {last_eval[0]:.2f} +- {last_eval[1]:.2f} "
        f"over {tc.eval_games} games; saved {tc.out}")
    return progress
