"""Train the public-LSTM blueprint (`lbs_pz.agents.public_lstm`) by recurrent Q-learning.

    lbs-pz train-blueprint --minutes 30 --out public_lstm.pt
    lbs-pz train-blueprint --minutes 30 --demo-bot strong --demo-fraction 0.25 --margin 0.8
    lbs-pz train-blueprint --init distilled.pt --minutes 60 --out ft.pt     # fine-tune a start

R2D2-style (Kapturowski et al. 2019), driven by the one training loop (`lbs_pz.train.loop`):

- data: `num_actors` games in one `HanabiBatch` (`Actors`), stepped together: one batched
  encode, one batched forward of the net (each game carries its LSTM state) and one
  batched step per move; actor i explores with eps_i = eps ** (1 + alpha * i / (N - 1)).
  Finished games go whole into a prioritized replay (`GameReplay`): every sequence starts
  from the empty-history state, so there are no fixed-length chunks and no burn-in.
  Priority of a game = eta * max |TD| + (1 - eta) * mean |TD|, sampled with probability
  ~ priority ** priority_exponent, importance weights with exponent is_exponent.
- objective (`vdn_loss`): VDN, the team's Q at move t is the sum over seats of each
  seat's Q of its own action (the seats not to move take the no-op, the net's last
  output); n-step double-Q target
  sum_k gamma^k r_{t+k} + gamma^n sum_p Q_target,p(t+n, argmax_legal Q_online,p(t+n)).
  The target network is copied every `target_every` updates; Adam; gradient clipping.
- optional reward shaping for training only: `--life-penalty x` takes x points off the
  reward of every misplay. Evaluation always uses the true score.
- optional demonstrations (DQfD, Hester et al. 2018): `--demo-bot NAME` plays games
  alongside (batched C rule bot) into a second replay; a `demo_fraction` of every batch
  comes from it, and on those games the loss adds the large-margin term
  max_a [Q(a) + margin * (a != a_demo)] - Q(a_demo) (legal a, mover's Q). The first
  `pretrain_updates` updates use demonstrations only, as do all updates until
  `learning_starts` games of the agent's own are stored.
- the net: the preset `arch` of `lbs_pz.agents.public_lstm.ARCHITECTURES` ("paper" by
  default), `hidden` wide if set (`scratch_net`). Q-learning takes every seat's Q without
  legal masks, so it trains mean-centred heads only ("paper", "card_features",
  "conventions"; not those of `MAX_CENTRED`).
- fine-tuning a start (`--init`, `init_checkpoint`): the net (architecture included) and
  the target net start from a checkpoint of `distill` or `train-blueprint` (PATH or
  lstm:PATH, whose net an `arch` or `hidden` given too must match; `distill:SPEC` distils
  SPEC for `init_minutes` first into the net of `arch`, else distill's default, `hidden`
  wide if set). The options left unset (None) take the FINETUNE preset instead of
  SCRATCH, which adds the anchor: a frozen copy of the start net, and the loss adds
  anchor_weight * the mean over moves of
  max_a [Q(a) + anchor_margin * (a != a0)] - Q(a0), a0 the start net's greedy legal move
  (halving every `anchor_half_life` updates when that is > 0).

Deals: the agent plays the TRAIN stream of the run seed (`lbs_pz.engine.seeds`), games
0, 1, 2, ..., the demonstrations from game 2**31; the evaluations play greedy self-play on
EVAL deals 0 .. eval_games-1 of the run seed (before the first update of a fresh run,
every `eval_every` updates and at the end).

Outputs: the checkpoint `--out` (the lbs_pz layout, kind "public_lstm"; written every
`save_every` updates, every few minutes of training, at the end and on Ctrl-C:
`lbs_pz.train.loop.run`), whose info holds the hyper-parameters
("train_config"), the command and "progress" (counters, "evals" rows [update, env steps,
seconds, greedy mean, s.e.m.] and the learning curve, `CURVE_COLUMNS`), and whose
"resume" entry (optimizer, target network, the anchor of a fine-tuning run) lets
`--resume` go on; the replay refills from fresh games. `--slim-out` also writes a float16
copy with the weights only. The learning curve is also written as CSV and PNG (`--curve`).
`PublicLSTMBlueprint.load(path)` (or `--blueprint lstm:PATH`) reads either checkpoint.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Dict, List, Optional, Tuple, TypeVar

import numpy as np
import torch

from lbs_pz.agents.base import file_sha256
from lbs_pz.agents.features import convention_feature_size
from lbs_pz.agents.public_lstm import PublicLSTMNet, encode_batch, epsilon_greedy, public_part
from lbs_pz.agents.rule_bots import RuleBot
from lbs_pz.engine import HanabiBatch
from lbs_pz.engine.seeds import TRAIN, deal_seeds
from lbs_pz.models.checkpoint import CheckpointError, game_to_dict, load_checkpoint
from lbs_pz.train.common import (clipped_step, command_line, game_config, lstm_checkpoint,
                                 net_options, self_play, start_mismatch, torch_setup)
from lbs_pz.train.configs import (BLUEPRINT_ARCH, FINETUNE, SCRATCH,  # noqa: F401 (the presets)
                                  MAX_CENTRED, BlueprintTrainConfig, DistillConfig)
from lbs_pz.train.distill import distill
from lbs_pz.train.loop import Budget, Clock, Trainer, claims_out, read_resume, run

KIND = "public_lstm"          # its kind in the lbs_pz checkpoint layout
Module = TypeVar("Module", bound=torch.nn.Module)
DEMO_GAMES = 2**31            # the demonstrations' first game in the TRAIN deal stream


def actor_epsilons(n: int, eps: float = 0.4, alpha: float = 7.0) -> np.ndarray:
    """eps_i = eps ** (1 + alpha * i / (n - 1)) for actors i = 0 .. n-1 (float64 (n,))."""
    i = np.arange(n, dtype=np.float64)
    return eps ** (1.0 + alpha * i / max(n - 1, 1))



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

    def sample(self, k: int, rng: np.random.Generator, exponent: float,
               is_exponent: float) -> Tuple[np.ndarray, np.ndarray]:
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
        self.config, self.n, self.bot = config, n, bot
        self.bot_player = RuleBot(bot) if bot else None
        self.life_penalty = life_penalty
        self.rng = np.random.default_rng(seed)
        self.deal_seed = seed if deal_seed is None else deal_seed
        self.next_game = first_game
        self.eps = np.zeros(n) if epsilons is None else np.asarray(epsilons, dtype=np.float64)
        self.batch = HanabiBatch(config, n, seeds=self._seeds(n))
        self.max_len = config.max_game_length
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
        rows = np.arange(self.n)
        enc = encode_batch(self.batch, self.conventions)             # (n, P, E [+ F])
        e = self.config.encoding_size
        legal = self.batch.legal_masks().astype(bool)                # (n, M)
        cur = self.batch.current_players().astype(np.int64)
        if self.bot_player is not None:                               # self.bot set
            actions = self.bot_player.act_batch(self.batch)
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
    t = {k: torch.from_numpy(np.ascontiguousarray(v)).to(device) for k, v in games.items()}
    t["obs"] = t["obs"].float()
    t["pub"] = t["obs"][:, :, 0, t["obs"].shape[-1] - pub_dim:]
    if "conv" in t:          # a net with convention features reads them after the vector
        t["obs"] = torch.cat([t["obs"], t.pop("conv")], dim=-1)
    return t


def margin_gap(q_mover: torch.Tensor, legal: torch.Tensor, action: torch.Tensor,
               margin: float) -> torch.Tensor:
    """DQfD's large-margin term per move: max over legal a of [Q(a) + margin * (a != a*)]
    - Q(a*). q_mover (k, T, M) the mover's Q, legal (k, T, M) bool, action (k, T) int64
    a* -> (k, T) (>= 0; 0 once Q(a*) leads every other legal move by the margin)."""
    M = q_mover.shape[-1]
    bonus = margin * (1 - torch.nn.functional.one_hot(action, M).to(q_mover.dtype))
    best = (q_mover + bonus).masked_fill(~legal, -1e9).max(-1).values
    return best - q_mover.gather(2, action[..., None]).squeeze(-1)


def vdn_loss(net, target_net, games: Dict[str, np.ndarray], weights: np.ndarray,
             is_demo: np.ndarray, tc: BlueprintTrainConfig, anchor_net=None,
             anchor_weight: float = 0.0, stats: Optional[dict] = None,
             ) -> Tuple[torch.Tensor, float, float, np.ndarray]:
    """Loss of a batch of k games padded to T moves.

    With `anchor_net` (the frozen start net of a fine-tuning run) and anchor_weight > 0
    the loss adds anchor_weight * the mean over valid moves of `margin_gap` toward the
    anchor net's greedy legal move (margin tc.anchor_margin).

    Returns (loss, td_loss (float), margin_loss (float), per-game priorities (k,)); a
    `stats` dict gets "anchor" (the anchor term, float) and "q_mean" (the mean Q_tot)."""

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



# --- the start of a fine-tuning run (--init) ---------------------------------------------------


def init_checkpoint(tc: BlueprintTrainConfig, config, log=print) -> dict:
    """The checkpoint `tc.init` names, loaded and checked against the run's game:
    PATH or lstm:PATH (a checkpoint of `distill` or `train-blueprint`, full or slim), or
    distill:SPEC (a distillation of the blueprint SPEC for `tc.init_minutes`, of the
    architecture `tc` names (`tc.arch`, else distill's default, `tc.hidden` wide if set),
    written to OUT's stem + ".init.pt", then loaded). Adds "net" (the `PublicLSTMNet`
    with its weights) and "init" = {"spec", "path", "sha256"}. CheckpointError for a file
    that is not a public-LSTM checkpoint, one made for another game, one whose Q is not
    mean-centred, or one whose net is not the one `tc` names (`named_options`: every
    option of the preset `tc.arch` but the width, and the width `tc.hidden`, where set):
    the start sets the architecture."""
    spec = tc.init
    if spec.startswith("distill:"):
        stem = tc.out[:-3] if tc.out.endswith(".pt") else tc.out
        path = stem + ".init.pt"
        log(f"--init {spec}: distilling {spec[len('distill:'):]} for {tc.init_minutes:g} "
            f"minutes into {path}")
        distill(DistillConfig(teacher=spec[len("distill:"):], out=path, players=tc.players,
                              colors=tc.colors, ranks=tc.ranks, hand_size=tc.hand_size,
                              minutes=tc.init_minutes, seed=tc.seed, threads=tc.threads,
                              device=tc.device, eval_games=min(tc.eval_games, 200),
                              curve="none", arch=tc.arch, hidden=tc.hidden),
                log=log, progress_bar=False)
    else:
        path = spec[len("lstm:"):] if spec.startswith("lstm:") else spec
    try:
        ckpt = load_checkpoint(path, KIND)
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
                              f"heads: start from a mean-centred net (not one of --arch "
                              f"{' or '.join(MAX_CENTRED)})")
    mismatch = start_mismatch(f"--init {spec}", net.options(), tc)
    if mismatch:
        raise CheckpointError(mismatch)
    try:
        net.load_state_dict({k: v.float() for k, v in ckpt["weights"].items()})
    except RuntimeError as err:
        raise CheckpointError(f"--init {spec}: weights do not fit the architecture: "
                              f"{str(err).splitlines()[0][:160]}") from None
    ckpt["net"] = net
    ckpt["init"] = {"spec": spec, "path": path, "sha256": file_sha256(ckpt["path"])}
    return ckpt


# --- the run ------------------------------------------------------------------------------------

CURVE_COLUMNS = ("minutes", "updates", "env_steps", "games", "selfplay_mean", "selfplay_sem",
                 "td_loss", "anchor_loss", "margin_loss", "anchor_weight", "q_tot_mean",
                 "own_score")


def scratch_net(tc: BlueprintTrainConfig, config) -> PublicLSTMNet:
    """The new net of a run without --init: the preset `tc.arch` (None: "paper"),
    `tc.hidden` wide if set, for the game `config`. ValueError for a net whose Q is not
    mean-centred (the TD targets take every seat's Q without legal masks)."""
    options = net_options(tc, BLUEPRINT_ARCH)
    if options["dueling"] != "mean":
        raise ValueError(f"--arch {tc.arch or BLUEPRINT_ARCH} centres Q on the best legal "
                         f"move (dueling={options['dueling']!r}); Q-learning trains "
                         f"mean-centred heads: choose another --arch")
    return PublicLSTMNet.for_config(config, **options)


def frozen(net: Module) -> Module:
    """`net` in eval mode with no gradients (a target or anchor network)."""
    net.eval()
    for p in net.parameters():
        p.requires_grad_(False)
    return net


def fresh_progress() -> dict:
    """The counters of a new run (info["progress"])."""
    return {"updates": 0, "env_steps": 0, "demo_steps": 0, "games": 0, "demo_games": 0,
            "seconds": 0.0, "evals": [], "train_scores": [], "curve": []}


def resumed_nets(tc: BlueprintTrainConfig, config, ckpt: dict, device,
                 progress: dict) -> Tuple[PublicLSTMNet, Optional[PublicLSTMNet]]:
    """(net, anchor net or None) of the checkpoint `ckpt` that `--resume` names, its
    counters put into `progress`. ValueError for a checkpoint of another game or (a run
    without --init) another net than `scratch_net`, or not of train-blueprint."""
    expected = game_to_dict(config)
    scratch = None if tc.init else scratch_net(tc, config).arch()
    if ckpt["game"] != expected or (not tc.init and ckpt["architecture"] != scratch):
        raise ValueError(f"--resume {tc.resume}: trained for {ckpt['game']} "
                         f"{ckpt['architecture']}, this run is {expected}"
                         + (f" {scratch}" if scratch else ""))
    if "target" not in ckpt["resume"]:
        raise ValueError(f"--resume {tc.resume}: not a checkpoint of train-blueprint "
                         f"(use it as --init instead)")
    try:
        net = PublicLSTMNet(**ckpt["architecture"]).to(device)
    except (TypeError, ValueError) as err:
        raise ValueError(f"--resume {tc.resume}: bad architecture: {err}") from None
    net.load_state_dict({k: v.float() for k, v in ckpt["weights"].items()})
    progress.update(ckpt["info"].get("progress", {}))
    anchor_net = None
    if "anchor" in ckpt["resume"]:
        anchor_net = copy.deepcopy(net)
        anchor_net.load_state_dict(ckpt["resume"]["anchor"])
    return net, anchor_net


def start_nets(tc: BlueprintTrainConfig, config, ckpt: Optional[dict], device,
               progress: dict, log=print,
               ) -> Tuple[PublicLSTMNet, PublicLSTMNet, Optional[PublicLSTMNet], Optional[dict]]:
    """(net, target net, anchor net or None, the loaded --init checkpoint or None) of a
    run: resumed (`resumed_nets`), started from --init (`init_checkpoint`; its copy is
    the anchor, progress["init"] says where it came from) or new (`scratch_net`). The
    target net is a copy of the net (resumed: its saved weights), in eval mode; the
    anchor is `frozen`. ValueError for anchor_weight > 0 without an anchor."""
    init = anchor_net = None
    if ckpt is not None:
        net, anchor_net = resumed_nets(tc, config, ckpt, device, progress)
    elif tc.init:
        init = init_checkpoint(tc, config, log)
        net = init["net"].to(device)
        log(f"start: {init['init']['path']} ({init['architecture']})")
        progress["init"] = init["init"]
        anchor_net = copy.deepcopy(net)
    else:
        net = scratch_net(tc, config).to(device)
    assert tc.anchor_weight is not None                 # tc is resolved(): a preset's
    if anchor_net is None and tc.anchor_weight > 0:
        raise ValueError(f"--resume {tc.resume}: anchor_weight > 0 needs a start net, and "
                         f"this run has none (it was not started with --init)")
    if anchor_net is not None:
        frozen(anchor_net)
    target_net = copy.deepcopy(net)
    if ckpt is not None:
        target_net.load_state_dict(ckpt["resume"]["target"])
    target_net.eval()
    return net, target_net, anchor_net, init


def mean100(xs) -> Optional[float]:
    """The mean of the last 100 values of `xs` (None for none)."""
    return float(np.mean(xs[-100:])) if xs else None


class QLearning:
    """What `train_blueprint` hands the training loop: the nets, the optimizer, the
    actors and replays (the agent's, and the demonstrations' with `tc.demo_bot`), the
    counters and the recent losses, with `update`, `evaluate`, `finish` and
    `checkpoint`. Exploration is seeded by tc.seed + 1000 * the updates done (fresh after
    a resume); the agent's games go on after those it has finished, the demonstrations'
    from game DEMO_GAMES on."""

    def __init__(self, tc: BlueprintTrainConfig, config, net, target_net, anchor_net,
                 progress: dict, init: Optional[dict] = None, log=print):
        self.tc, self.config, self.progress, self.init, self.log = tc, config, progress, init, log
        self.net, self.target_net, self.anchor_net = net, target_net, anchor_net
        net.train()
        assert tc.lr is not None and tc.eps is not None and tc.eps_alpha is not None, \
            "QLearning takes a resolved() config"
        self.optimizer = torch.optim.Adam(net.parameters(), lr=tc.lr, eps=tc.adam_eps)
        seed = tc.seed + 1000 * progress["updates"]      # fresh exploration after a resume
        self.rng = np.random.default_rng(seed)
        # deals: the TRAIN stream of run tc.seed, the agent's games from 0, the
        # demonstrations' from 2**31; a resumed run goes on after the games it has finished
        self.actors = Actors(config, tc.num_actors, seed + 1,
                             actor_epsilons(tc.num_actors, tc.eps, tc.eps_alpha),
                             life_penalty=tc.life_penalty, deal_seed=tc.seed,
                             first_game=progress["games"], conventions=net.conventions > 0)
        dims = (config.encoding_size, config.players, config.num_moves, net.conventions)
        self.replay = GameReplay(tc.replay_games, self.actors.max_len, *dims)
        self.demo_actors = self.demo_replay = None
        if tc.demo_bot:
            self.demo_actors = Actors(config, tc.demo_actors, seed + 2, bot=tc.demo_bot,
                                      deal_seed=tc.seed,
                                      first_game=DEMO_GAMES + progress["demo_games"],
                                      conventions=net.conventions > 0)
            self.demo_replay = GameReplay(tc.demo_replay_games, self.actors.max_len, *dims)
        self.recent: Dict[str, List[float]] = {"td": [], "margin": [], "anchor": [],
                                               "q_mean": []}
        self.stats: Dict[str, float] = {}

    def anchor_weight(self) -> float:
        """The anchor's weight now: tc.anchor_weight, halving every anchor_half_life
        updates when that is > 0 (0 without an anchor net)."""
        tc = self.tc
        assert tc.anchor_weight is not None                 # tc is resolved(): a preset's
        if self.anchor_net is None or tc.anchor_weight == 0:
            return 0.0
        if tc.anchor_half_life <= 0:
            return tc.anchor_weight
        return tc.anchor_weight * 0.5 ** (self.progress["updates"] / tc.anchor_half_life)

    def act(self, pretraining: bool) -> None:
        """Every actor game moves act_steps times (one batched call each), finished games
        into their replay; during the demonstration-only pre-training the agent's own
        actors wait."""
        progress = self.progress
        for _ in range(self.tc.act_steps):
            if not pretraining:
                for game in self.actors.step(self.net):
                    self.replay.add(game)
                    progress["games"] += 1
                progress["env_steps"] += self.actors.n
            if self.demo_actors is not None and self.demo_replay is not None:  # made together
                for game in self.demo_actors.step():
                    self.demo_replay.add(game)
                    progress["demo_games"] += 1
                progress["demo_steps"] += self.demo_actors.n

    def demo_count(self, pretraining: bool) -> Optional[int]:
        """How many of a batch's games are demonstrations: all of them until the agent has
        stored learning_starts games of its own (and while pre-training), then a
        demo_fraction of the batch; None while there is not enough to learn from."""
        tc = self.tc
        if self.demo_replay is not None:
            if len(self.demo_replay) < min(tc.learning_starts, tc.batch_size):
                return None
            own_ready = not pretraining and len(self.replay) >= tc.learning_starts
            return round(tc.batch_size * tc.demo_fraction) if own_ready else tc.batch_size
        return 0 if len(self.replay) >= tc.learning_starts else None

    def sample(self, n_demo: int) -> Tuple[List[Tuple[GameReplay, np.ndarray]],
                                           Dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """A batch of games drawn by priority: batch_size - n_demo of the agent's, n_demo
        demonstrations. Returns (parts: [(replay, game indices)], games: arrays (k, T, ...)
        cut to the longest game, importance weights float32 (k,), is_demo bool (k,))."""
        tc, rng = self.tc, self.rng
        parts: List[Tuple[GameReplay, np.ndarray]] = []
        weights = []
        sources = [(self.replay, tc.batch_size - n_demo)]
        if self.demo_replay is not None:        # none: no demonstrations (n_demo is 0)
            sources.append((self.demo_replay, n_demo))
        for buf, n in sources:
            if n > 0:
                idx, w = buf.sample(n, rng, tc.priority_exponent, tc.is_exponent)
                parts.append((buf, idx))
                weights.append(w)
        t_max = max(int(buf.length[idx].max()) for buf, idx in parts)
        games = {name: np.concatenate([getattr(buf, name)[idx, :t_max] for buf, idx in parts])
                 for name in self.replay.fields}
        games["length"] = np.concatenate([buf.length[idx] for buf, idx in parts])
        is_demo = np.concatenate([np.full(len(idx), buf is self.demo_replay)
                                  for buf, idx in parts])
        return parts, games, np.concatenate(weights), is_demo

    def update(self, clock: Clock) -> Optional[Dict[str, float]]:
        """Act, then one step on `vdn_loss` of a sampled batch (None while there is not
        enough to learn from): the sampled games' priorities renewed, the target net
        copied every target_every updates. Returns the losses {"td", "margin", "anchor"}."""
        tc, net, stats = self.tc, self.net, self.stats
        pretraining = self.demo_replay is not None and \
            self.progress["updates"] < tc.pretrain_updates
        self.act(pretraining)
        n_demo = self.demo_count(pretraining)
        if n_demo is None:
            return None
        parts, games, weights, is_demo = self.sample(n_demo)
        loss, td, margin, prio = vdn_loss(net, self.target_net, games, weights, is_demo, tc,
                                          self.anchor_net, self.anchor_weight(), stats)
        clipped_step(self.optimizer, loss, net.parameters(), tc.grad_clip)
        at = 0
        for buf, idx in parts:
            buf.priority[idx] = prio[at:at + len(idx)]
            at += len(idx)
        for key, value in (("td", td), ("margin", margin), ("anchor", stats["anchor"]),
                           ("q_mean", stats["q_mean"])):
            self.recent[key].append(value)
        if (self.progress["updates"] + 1) % tc.target_every == 0:
            self.target_net.load_state_dict(net.state_dict())
        return {"td": td, "margin": margin, "anchor": stats["anchor"]}

    def evaluate(self, clock) -> dict:
        """Greedy self-play on EVAL deals (a row of progress["evals"]; the first of a
        --init run is the start's level), logged, with the recent losses: a curve row."""
        tc, progress, recent = self.tc, self.progress, self.recent
        mean, sem = self_play(self.net, self.config, tc.eval_games, tc.seed)
        u = progress["updates"]
        progress["evals"].append([u, progress["env_steps"], round(clock.seconds(), 1), mean, sem])
        if self.init is not None and "selfplay" not in progress["init"]:
            progress["init"]["selfplay"] = [mean, sem]      # the start's level
        own = self.actors.scores[-200:]
        self.log(f"update {u}: greedy self-play {mean:.2f} +- {sem:.2f} over {tc.eval_games} "
                 f"EVAL games; env steps {progress['env_steps']:,}; td "
                 f"{mean100(recent['td']) or 0:.4f}")
        return {"env_steps": progress["env_steps"], "games": progress["games"],
                "selfplay_mean": mean, "selfplay_sem": sem, "td_loss": mean100(recent["td"]),
                "anchor_loss": mean100(recent["anchor"]),
                "margin_loss": mean100(recent["margin"]), "anchor_weight": self.anchor_weight(),
                "q_tot_mean": mean100(recent["q_mean"]),
                "own_score": float(np.mean(own)) if own else None}

    def finish(self) -> None:
        """The run's last training scores and TD losses, into the counters."""
        scores = self.actors.scores
        self.progress["train_scores"] = [float(np.mean(scores[-500:]))] if scores else []
        self.progress["td_losses"] = [float(x) for x in self.recent["td"][-2000:]]

    def checkpoint(self) -> dict:
        """`make_checkpoint`'s arguments: the net, the hyper-parameters, and in "resume"
        the target net (and the anchor net)."""
        resume = {"target": {k: v.detach().cpu()
                             for k, v in self.target_net.state_dict().items()}}
        if self.anchor_net is not None:
            resume["anchor"] = {k: v.detach().cpu()
                                for k, v in self.anchor_net.state_dict().items()}
        return lstm_checkpoint(KIND, self.net, self.config, "train-blueprint", self.tc,
                               resume=resume)


@claims_out
def train_blueprint(tc: BlueprintTrainConfig, log=print, progress_bar: bool = True) -> dict:
    """Run training as configured (`lbs_pz.train.loop.run`); returns the progress dict
    (also in the checkpoint's info).

    With `tc.init` the net (architecture and weights) and the target net start from that
    checkpoint, the None fields take the FINETUNE preset, and a frozen copy of the start
    net anchors the greedy policy (`vdn_loss`). A fresh run evaluates the start first, so
    the curve's first row is the starting level."""
    tc.check()
    ckpt = read_resume(tc.resume, KIND, "train-blueprint") if tc.resume else None
    if ckpt is not None and not tc.init:
        # resuming a fine-tuning run: its start (and so its preset) carries over
        tc = dataclasses.replace(tc, init=str(ckpt["info"].get("train_config", {}).get("init", "")))
    tc = tc.resolved()
    device = torch_setup(tc)
    config = game_config(tc)
    progress = fresh_progress()
    net, target_net, anchor_net, init = start_nets(tc, config, ckpt, device, progress, log)
    learning = QLearning(tc, config, net, target_net, anchor_net, progress, init, log)
    trainer = Trainer("train-blueprint", KIND, learning.update, learning.checkpoint,
                      learning.optimizer, progress, learning.evaluate, eval_at_start=True,
                      plot=("selfplay_mean",), plot_start=bool(tc.init), finish=learning.finish)
    run(trainer, Budget(tc.minutes, tc.updates), tc.out, resume=ckpt,
        eval_every=tc.eval_every, save_every=tc.save_every, save_minutes=tc.save_minutes,
        curve=tc.curve_path(), slim_out=tc.slim_out, title=f"{os.path.basename(tc.out)}: "
                                    f"{command_line('train-blueprint', tc)}",
        progress_bar=progress_bar, tensorboard=tc.tensorboard, log=log)
    last = progress["evals"][-1]
    log(f"done: {progress['updates']:,} updates, {progress['env_steps']:,} env steps; greedy "
        f"self-play {last[3]:.2f} +- {last[4]:.2f} over {tc.eval_games} EVAL games; saved "
        f"{tc.out}" + (f", curve {tc.curve_path()}" if tc.curve_path() else ""))
    return progress
