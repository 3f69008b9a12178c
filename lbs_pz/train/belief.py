"""Train the learned belief (`lbs_pz.search.beliefs.model.BeliefNet`) by maximum likelihood
on the self-play of ANY blueprint, driven by the one training loop (`lbs_pz.train.loop`).

    lbs-pz train-belief --blueprint strong --minutes 35 --out belief.pt
    lbs-pz train-belief --blueprint py:my_blueprint.py:MyBlueprint --minutes 10 --out mine.pt

`--blueprint SPEC` names the blueprint: a rule bot (`NAME`), `sb3:PATH`, `lstm:PATH` or
`py:MODULE_OR_FILE.py:CLASS` (`lbs_pz.agents.load_blueprint`).

Data (`generate_games`): every update plays `games_per_step` fresh self-play games of the
blueprint, as one `HanabiBatch` stepped with `blueprint.act_batch(batch)` (an endless
stream, never reused); every game yields one training sequence per seat: the seat's
canonical observation after each move and the seat's true hand at that time. Deals come
from the TRAIN stream (`lbs_pz.engine.seeds.deal_seeds(TRAIN, seed, ...)`), disjoint from
the EVAL stream that `eval` and `compare` play: training games 0, 1, 2, ... of the run
seed, validation games the last `--val-games` of the stream's range (2**32 - val_games ..
2**32 - 1), never reached by training. With `--search-games` (a search's own games on
training deals, `lbs-pz search-games`) part of every step replays them (`replay_games`):
the belief then also learns the positions the search leads to, where the blueprint's
games never go (the LBS paper's first future direction). Games recorded in another game
variant or with another blueprint are refused (`check_recorded_for`).

Objective (`mean_nll`): the mean negative log-likelihood per card of the true hand under
the belief's auto-regressive decoder; Adam, the learning rate cosine-decayed from `lr` to
`lr_final` over the budget, gradients clipped at norm 5. Evaluation: the same loss on the
validation games, before the first update, every `val_every` updates and at the end.

Outputs: the checkpoint `--out` (`lbs_pz.models.checkpoint`, kind "belief"; written at
every validation, at the end and on Ctrl-C), which records the blueprint it was trained
for (spec and fingerprint), the game variant, the command and the run's counters and
losses; `LearnedBelief(path, blueprint=bp)` refuses it for another blueprint or variant
(CheckpointMismatchError) unless allow_mismatch=True. Its "resume" entry (the optimizer
state) lets `--resume` continue the run exactly where it stopped; `--half` writes float16
weights without it (a file to ship). The learning curve goes to CSV and PNG (`--curve`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Tuple

import numpy as np
import torch

from lbs_pz.engine.seeds import MAX_GAMES
from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig, count_parameters, load_belief
from lbs_pz.search.recorded_games import check_recorded_for, read_search_games
from lbs_pz.train.common import (clipped_step, command_line, game_config,
                                 load_training_blueprint)
from lbs_pz.train.configs import BeliefTrainConfig, check_games_held, curve_path
from lbs_pz.train.games import GameSource, generate_games, join_games, replay_games
from lbs_pz.train.loop import Budget, Trainer, claims_out, read_resume, run

KIND = "belief"


# --- data --------------------------------------------------------------------------------

def to_tensors(data: Dict[str, np.ndarray],
               device: Any = "cpu") -> Tuple[torch.Tensor, torch.Tensor]:
    return (torch.as_tensor(data["obs"], device=device).float(),
            torch.as_tensor(data["hands"], device=device))


def mean_nll(model, obs, hands) -> torch.Tensor:
    """Mean negative log-likelihood per card (nats) over all valid (step, slot) cards."""
    lp = model(obs, hands)
    valid = (hands >= 0)
    return -(lp * valid).sum() / valid.sum().clamp(min=1)


# --- training ------------------------------------------------------------------------------

def deals_note(seed: int, games: int, val_games: int) -> str:
    """Which deals a run used, as its checkpoint records it."""
    return (f"TRAIN stream (lbs_pz.engine.seeds.deal_seeds), run seed {seed}: training games "
            f"0..{games - 1}, validation games {MAX_GAMES - val_games}..{MAX_GAMES - 1}")


def split_search_games(path: str, val_games: int, config=None, blueprint=None,
                       asked: str = "") -> Tuple[List[dict], List[dict]]:
    """(training records, validation records) of the recorded search games at `path`:
    the last tenth (at least one, at most `val_games`) held out for validation, never
    trained on. ValueError for a file with fewer than 2 games and, given the run's game
    `config` and `blueprint` identity ({"spec", "fingerprint"}; `asked`: its spec as
    given), for games recorded in another variant or with another blueprint
    (`check_recorded_for`)."""
    records = read_search_games(path)
    if config is not None:
        check_recorded_for(path, records, config, blueprint, asked=asked)
    if len(records) < 2:
        raise ValueError(f"--search-games {path}: {len(records)} recorded games; at least 2 "
                         f"are needed (one held out for validation)")
    held = min(max(1, len(records) // 10), val_games)
    return records[:-held], records[-held:]


def check_belief_run(tc: BeliefTrainConfig) -> None:
    """ValueError for settings a belief run cannot train with (before any work)."""
    check_games_held(tc)
    if tc.val_every < 1:
        raise ValueError("val_every must be >= 1")
    if tc.search_games and not 0 < tc.search_fraction <= 1:
        raise ValueError(f"search_fraction must be in (0, 1], got {tc.search_fraction}")


def start_model(tc: BeliefTrainConfig, config, device, log=print) -> BeliefNet:
    """The belief net a run starts from, in training mode on `device`: the one of
    `--resume` or `--init` (ValueError if made for another game variant than `config`),
    else a new one of the run's sizes."""
    start = tc.resume or tc.init
    if not start:
        return BeliefNet(BeliefNetConfig(
            encoding_size=config.encoding_size, hand_size=config.hand_size,
            card_types=config.num_card_types, embed=tc.embed, hidden=tc.hidden,
            layers=tc.layers, decoder=tc.decoder, prior=tc.prior), config).to(device)
    model, start_config, _ = load_belief(start)
    if start_config != config:
        raise ValueError(f"--{'resume' if tc.resume else 'init'} {start}: a belief for "
                         f"{start_config}, this run is {config}")
    model = model.train().to(device)
    if not tc.resume:
        log(f"starting from {tc.init}")
    return model


def cosine_lr(tc: BeliefTrainConfig, fraction: float) -> float:
    """The learning rate once `fraction` of the budget is spent: cosine from tc.lr (0) to
    tc.lr_final (1)."""
    return tc.lr_final + 0.5 * (tc.lr - tc.lr_final) * (1 + math.cos(math.pi * fraction))


class BeliefTraining:
    """What `train_belief` hands the training loop: the optimizer, the game source, the
    validation games (and the held-out recorded search games) and the counters, with
    `update`, `evaluate` and `checkpoint`.

    searched, held: the training and validation records of `tc.search_games`
    (`split_search_games`; both [] without it)."""

    def __init__(self, tc: BeliefTrainConfig, config, model: BeliefNet, blueprint,
                 identity: dict, searched: list, held: list, device, command: str, log=print):
        self.tc, self.config, self.model, self.device = tc, config, model, device
        self.identity, self.searched, self.command, self.log = identity, searched, command, log
        self.opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
        self.source = GameSource("belief", tc.blueprint, config, tc.seed, backend=tc.backend,
                                 workers=tc.workers, address=tc.address, blueprint=blueprint)
        val = generate_games(config, blueprint, tc.val_games, seed=tc.seed,
                             first_game=MAX_GAMES - tc.val_games)
        self.val_obs, self.val_hands = to_tensors(val, device)
        self.val_score = float(val["scores"].mean())
        self.val_searched, self.n_replayed = None, 0
        if tc.search_games:
            self.val_searched = to_tensors(replay_games(config, held), device)
            self.order = np.random.default_rng(tc.seed).permutation(len(searched))
            self.n_replayed = max(1, round(tc.games_per_step * tc.search_fraction))
            log(f"{len(searched)} recorded search games ({tc.search_games}) make "
                f"{self.n_replayed} of every step's {tc.games_per_step} games; {len(held)} "
                f"held out for validation")
        log(f"belief net: {count_parameters(model):,} parameters on {device}; blueprint "
            f"{identity['spec']}, {config.players}p {config.hand_size}-card; validation "
            f"{tc.val_games} games (mean score {self.val_score:.2f})")
        self.progress: Dict[str, Any] = {"updates": 0, "games": 0, "train_loss": None,
                                         "seconds": 0.0}

    def step_games(self) -> dict:
        """This update's games (`generate_games`' dict): games_per_step - n_replayed fresh
        self-play games of the stream, then n_replayed recorded search games (the next of
        the fixed shuffled order, cycling)."""
        progress, n_replayed = self.progress, self.n_replayed
        fresh = self.tc.games_per_step - n_replayed
        data = self.source.games(progress["games"], fresh) if fresh else None
        progress["games"] += fresh
        if n_replayed:
            start = progress["updates"] * n_replayed
            picked = self.order[np.arange(start, start + n_replayed) % len(self.order)]
            replayed = replay_games(self.config, [self.searched[i] for i in picked])
            data = replayed if data is None else join_games(data, replayed)
        assert data is not None             # games_per_step >= 1: fresh or replayed games
        return data

    def update(self, clock) -> dict:
        """One step on the mean NLL of this update's games (learning rate `cosine_lr`,
        gradients clipped at norm 5); returns {"loss": the loss's moving average}."""
        lr = cosine_lr(self.tc, clock.fraction())
        for g in self.opt.param_groups:
            g["lr"] = lr
        obs, hands = to_tensors(self.step_games(), self.device)
        loss = mean_nll(self.model, obs, hands)
        clipped_step(self.opt, loss, self.model.parameters(), 5.0)
        lv = float(loss.detach())
        ema = self.progress["train_loss"]
        self.progress["train_loss"] = lv if ema is None else 0.98 * ema + 0.02 * lv
        return {"loss": self.progress["train_loss"]}

    def evaluate(self, clock) -> dict:
        """The validation losses (and the training loss's moving average), logged."""
        model, progress = self.model, self.progress
        model.eval()
        with torch.no_grad():
            v = float(mean_nll(model, self.val_obs, self.val_hands))
            vs = float(mean_nll(model, *self.val_searched)) if self.val_searched else None
        model.train()
        ema = progress["train_loss"]
        trained = f"train {ema:.4f} " if ema is not None else ""
        self.log(f"step {progress['updates']}: {trained}val {v:.4f} nats/card"
                 + (f", on the search's games {vs:.4f}" if vs else "")
                 + f" ({progress['games']:,} games, {clock.seconds():.0f} s)")
        return dict({"train_loss": ema, "val_loss": v},
                    **({"val_search_loss": vs} if self.val_searched else {}))

    def checkpoint(self) -> dict:
        """`make_checkpoint`'s arguments: the net, the blueprint it was trained for, and
        the run's info (command, counters, losses, deals)."""
        tc, progress = self.tc, self.progress
        curve = progress.get("curve") or [[0, 0, None, math.nan]]
        info = {"command": self.command, "steps": progress["updates"],
                "games": progress["games"], "val_loss": curve[-1][3],
                "train_loss": progress["train_loss"] if progress["train_loss"] is not None
                else float("nan"),
                "val_games": tc.val_games, "val_mean_score": self.val_score,
                "deals": deals_note(tc.seed, progress["games"], tc.val_games),
                "search_games": {"path": tc.search_games, "train": len(self.searched),
                                 "per_step": self.n_replayed} if tc.search_games else None,
                "seconds": progress["seconds"], "seed": tc.seed}
        return dict(kind=KIND, game=self.config, architecture=dataclasses.asdict(self.model.cfg),
                    weights=self.model.state_dict(), trained_for=self.identity, info=info,
                    half=tc.half)


@claims_out
def train_belief(tc: BeliefTrainConfig,
                 log=print) -> Tuple[BeliefNet, List[Tuple[int, float, float]]]:
    """Train a belief for the blueprint `tc.blueprint` and save it to `tc.out`; returns
    (model, history of (step, train_loss, val_loss)), one entry per validation.

    With `tc.search_games` (a search's recorded games with this blueprint, on training
    deals, in this game variant: a file recorded in another variant or with another
    blueprint is refused before anything is trained), round(games_per_step *
    search_fraction) of every step's games are replayed from them (`replay_games`, in a
    fixed shuffled order of run seed `tc.seed` that cycles) and the rest are fresh
    self-play; their held-out tail gives a second validation loss, "val_search_loss"."""
    check_belief_run(tc)
    budget = Budget(tc.minutes, tc.steps)
    budget.check()
    if tc.threads > 0:
        torch.set_num_threads(tc.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if tc.device == "auto" else tc.device
    config = game_config(tc)
    blueprint, identity = load_training_blueprint(tc.blueprint)
    searched, held = split_search_games(tc.search_games, tc.val_games, config, identity,
                                        tc.blueprint) if tc.search_games else ([], [])
    command = command_line("train-belief", tc)
    torch.manual_seed(tc.seed)
    ckpt = read_resume(tc.resume, KIND, "train-belief") if tc.resume else None
    model = start_model(tc, config, device, log)
    training = BeliefTraining(tc, config, model, blueprint, identity, searched, held, device,
                              command, log)
    progress = training.progress
    trainer = Trainer("train-belief", KIND, training.update, training.checkpoint, training.opt,
                      progress, training.evaluate, eval_at_start=True,
                      plot=("val_loss", "train_loss", "val_search_loss"))
    with training.source:
        run(trainer, budget, tc.out, resume=ckpt, eval_every=tc.val_every,
            save_every=tc.val_every, save_minutes=tc.save_minutes,
            curve=curve_path(tc.out, tc.curve), title=command, tensorboard=tc.tensorboard,
            progress_bar=tc.progress, log=log)
    history = [(row[1], math.nan if row[2] is None else row[2], row[3])
               for row in progress["curve"]]
    log(f"done: {progress['updates']} steps, {progress['games']:,} games, val "
        f"{history[-1][2]:.4f} nats/card, saved {tc.out} (trained for {identity['spec']})")
    return model, history
