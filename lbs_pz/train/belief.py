"""Train the learned belief (`lbs_pz.search.beliefs.model.BeliefNet`) by maximum likelihood
on the self-play of ANY blueprint.

    lbs-pz train-belief --blueprint strong --minutes 35 --out belief.pt
    lbs-pz train-belief --blueprint py:my_blueprint.py:MyBlueprint --minutes 10 --out mine.pt

`--blueprint SPEC` names the blueprint: a rule bot (`NAME`), `sb3:PATH`, `lstm:PATH` or
`py:MODULE_OR_FILE.py:CLASS` (`lbs_pz.agents.load_blueprint`). Data: a stream of fresh
self-play games of that blueprint, played as one `HanabiBatch` stepped with
`blueprint.act_batch(batch)` (the C rule bots act without a Python object per game):
every game yields one training sequence per seat, the seat's canonical observation after
each move and the seat's true hand at that time. Each optimisation step trains on newly
generated games (an endless stream, never reused).

Deals come from the TRAIN stream (`lbs_pz.engine.seeds.deal_seeds(TRAIN, seed, ...)`),
disjoint from the EVAL stream that `eval` and `compare` play: training games 0, 1, 2, ...
of the run seed, validation games the last `--val-games` of the stream's range
(2**32 - val_games .. 2**32 - 1), never reached by training.

The checkpoint (`lbs_pz.models.checkpoint`, kind "belief") records the blueprint it was
trained for (spec and fingerprint), the game variant, the command and the run's counters
and losses; `LearnedBelief(path, blueprint=bp)` refuses it for another blueprint or
variant (CheckpointMismatchError) unless allow_mismatch=True.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import TYPE_CHECKING, Optional

import numpy as np

from lbs_pz.engine.seeds import MAX_GAMES, TRAIN, deal_seeds
from lbs_pz.train.config_args import command_line, load_training_blueprint

if TYPE_CHECKING:
    import torch


# --- data --------------------------------------------------------------------------------

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
    from lbs_pz.engine import HanabiBatch

    P, H, E = config.players, config.hand_size, config.encoding_size
    batch = HanabiBatch(config, num_games, seeds=deal_seeds(TRAIN, seed, first_game, num_games))
    cap = 200
    obs = np.zeros((P, num_games, cap, E), dtype=np.uint8)
    hands = np.full((P, num_games, cap, H), -1, dtype=np.int64)
    lengths = np.zeros(num_games, dtype=np.int64)
    enc = np.empty((num_games, E), dtype=np.float32)
    seat_arrays = [np.full(num_games, p, dtype=np.int64) for p in range(P)]
    active = np.ones(num_games, dtype=bool)
    t = 0
    while True:
        if t >= cap:
            raise RuntimeError(f"blueprint {getattr(blueprint, 'name', blueprint)!r}: a game "
                               f"lasted over {cap} moves")
        for p in range(P):
            batch.encode(out=enc, players=seat_arrays[p])
            obs[p, active, t] = enc[active]
            hands[p, active, t] = batch.hands(p)[active]
        lengths[active] = t + 1
        term = batch.terminals()
        active = ~term
        if not active.any():
            break
        moves = np.asarray(blueprint.act_batch(batch), dtype=np.int64)
        moves[term] = -1
        batch.step(moves)
        t += 1
    T = int(lengths.max())
    return {
        "obs": obs[:, :, :T].transpose(1, 0, 2, 3).reshape(num_games * P, T, E),
        "hands": hands[:, :, :T].transpose(1, 0, 2, 3).reshape(num_games * P, T, H),
        "lengths": np.repeat(lengths, P),
        "scores": batch.scores(),
    }


def to_tensors(data, device="cpu"):
    import torch

    return (torch.as_tensor(data["obs"], device=device).float(),
            torch.as_tensor(data["hands"], device=device))


def mean_nll(model, obs, hands) -> "torch.Tensor":
    """Mean negative log-likelihood per card (nats) over all valid (step, slot) cards."""
    lp = model(obs, hands)
    valid = (hands >= 0)
    return -(lp * valid).sum() / valid.sum().clamp(min=1)


# --- training ------------------------------------------------------------------------------

@dataclasses.dataclass
class BeliefTrainConfig:
    """Every hyper-parameter of a `lbs-pz train-belief` run."""
    blueprint: str = "strong"        # spec: NAME | sb3:PATH | lstm:PATH | py:FILE.py:CLASS
    players: int = 2                 # players of the game variant
    hand_size: Optional[int] = None  # cards per hand (none: 5, or 4 with 4+ players)
    games_per_step: int = 32         # fresh games per optimisation step (x players sequences)
    steps: int = 0                   # 0: until the time budget is spent
    minutes: float = 30.0            # wall-clock budget (0: no limit)
    lr: float = 1e-3                 # Adam learning rate at the start
    lr_final: float = 1e-4           # cosine decay to this over the budget
    val_games: int = 128             # held-out games (from the end of the run's TRAIN stream) for validation
    val_every: int = 100             # steps between validations
    seed: int = 0                    # run seed of the TRAIN deal stream
    embed: int = 256                 # width of the observation embedding
    hidden: int = 256                # LSTM width
    layers: int = 1                  # LSTM layers
    decoder: int = 128               # width of the auto-regressive decoder
    prior: bool = True               # decoder logits on top of the grounded prior
    threads: int = 0                 # torch threads (0: torch default)
    device: str = "auto"             # "cpu", "cuda" or "auto"
    out: str = "belief.pt"           # checkpoint file written
    half: bool = False               # store float16 weights (half the file size)
    init: str = ""                   # start from this belief (path or shipped name; its architecture and variant), e.g. the one of the net the blueprint was fine-tuned from
    progress: bool = True            # a progress bar


def deals_note(seed: int, games: int, val_games: int) -> str:
    """Which deals a run used, as its checkpoint records it."""
    return (f"TRAIN stream (lbs_pz.engine.seeds.deal_seeds), run seed {seed}: training games "
            f"0..{games - 1}, validation games {MAX_GAMES - val_games}..{MAX_GAMES - 1}")


def train_belief(tc: BeliefTrainConfig, log=print):
    """Train a belief for the blueprint `tc.blueprint` and save it to `tc.out` (at every
    validation and at the end); returns (model, history of (step, train_loss, val_loss))."""
    import torch

    from lbs_pz.engine import HanabiConfig
    from lbs_pz.search.beliefs.model import (BeliefNet, BeliefNetConfig, count_parameters,
                                             save_belief)

    if tc.games_per_step < 1 or tc.val_games < 1 or tc.val_every < 1:
        raise ValueError("games_per_step, val_games and val_every must be >= 1")
    if tc.threads > 0:
        torch.set_num_threads(tc.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if tc.device == "auto" else tc.device
    config = HanabiConfig(players=tc.players, hand_size=tc.hand_size)
    blueprint, identity = load_training_blueprint(tc.blueprint)
    command = command_line("train-belief", tc)
    torch.manual_seed(tc.seed)
    if tc.init:
        from lbs_pz.search.beliefs.model import load_belief
        model, init_config, _ = load_belief(tc.init)
        if init_config != config:
            raise ValueError(f"--init {tc.init}: a belief for {init_config}, this run is "
                             f"{config}")
        model = model.train().to(device)
        log(f"starting from {tc.init}")
    else:
        model = BeliefNet(BeliefNetConfig(
            encoding_size=config.encoding_size, hand_size=config.hand_size,
            card_types=config.num_card_types, embed=tc.embed, hidden=tc.hidden,
            layers=tc.layers, decoder=tc.decoder, prior=tc.prior), config).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
    val = generate_games(config, blueprint, tc.val_games, seed=tc.seed,
                         first_game=MAX_GAMES - tc.val_games)
    val_obs, val_hands = to_tensors(val, device)
    val_score = float(val["scores"].mean())
    log(f"belief net: {count_parameters(model):,} parameters on {device}; blueprint "
        f"{identity['spec']}, {config.players}p {config.hand_size}-card; validation "
        f"{tc.val_games} games (mean score {val_score:.2f})")

    budget = tc.minutes * 60 if tc.minutes > 0 else math.inf
    total = tc.steps if tc.steps > 0 else None
    bar = None
    if tc.progress:
        from tqdm import tqdm
        bar = tqdm(total=total, unit="step", dynamic_ncols=True, desc="train-belief")
    start = time.perf_counter()
    history = []
    step, game_index, ema = 0, 0, None

    def validate():
        model.eval()
        with torch.no_grad():
            v = float(mean_nll(model, val_obs, val_hands))
        model.train()
        return v

    def save(v):
        info = {"command": command, "steps": step, "games": game_index, "val_loss": v,
                "train_loss": ema if ema is not None else float("nan"),
                "val_games": tc.val_games, "val_mean_score": val_score,
                "deals": deals_note(tc.seed, game_index, tc.val_games),
                "seconds": time.perf_counter() - start, "seed": tc.seed}
        save_belief(tc.out, model, config, trained_for=identity, info=info, half=tc.half)

    v0 = validate()
    history.append((0, math.nan, v0))
    log(f"step 0: val {v0:.4f} nats/card")
    while True:
        elapsed = time.perf_counter() - start
        if (total is not None and step >= total) or elapsed >= budget:
            break
        frac = step / total if total else elapsed / budget
        lr = tc.lr_final + 0.5 * (tc.lr - tc.lr_final) * (1 + math.cos(math.pi * min(frac, 1.0)))
        for g in opt.param_groups:
            g["lr"] = lr
        data = generate_games(config, blueprint, tc.games_per_step, seed=tc.seed,
                              first_game=game_index)
        game_index += tc.games_per_step
        obs, hands = to_tensors(data, device)
        loss = mean_nll(model, obs, hands)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        step += 1
        lv = float(loss.detach())
        ema = lv if ema is None else 0.98 * ema + 0.02 * lv
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{ema:.3f}", games=game_index, lr=f"{lr:.1e}")
        if step % tc.val_every == 0:
            v = validate()
            history.append((step, ema, v))
            log(f"step {step}: train {ema:.4f} val {v:.4f} nats/card "
                f"({game_index:,} games, {time.perf_counter() - start:.0f} s)")
            save(v)
    if bar is not None:
        bar.close()
    v = validate()
    history.append((step, ema, v))
    save(v)
    log(f"done: {step} steps, {game_index:,} games, val {v:.4f} nats/card, saved {tc.out} "
        f"(trained for {identity['spec']})")
    return model, history
