"""Train the learned belief (`lbs_pz.search.beliefs.model.BeliefNet`) by maximum likelihood
on blueprint self-play.

Data: a stream of fresh self-play games of the blueprint, generated with the batched
engine (`HanabiBatch`, bots acting in C): every game yields one training sequence per
seat, the seat's canonical observation after each move and the seat's true hand at that
time. Each optimisation step trains on newly generated games (an endless stream, the
equivalent of the paper's continuously refilled replay buffer without reuse), so the
model never sees the same game twice; validation games come from a separate seed.

    lbs-pz train-belief --blueprint strong --minutes 35 --out belief.pt

Checkpoints are plain dicts of tensors / numbers / strings (see `save_checkpoint`),
loadable with `torch.load(path, weights_only=True)`; `load_checkpoint` checks them.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from typing import Dict, Optional

import numpy as np

from lbs_pz.models.checkpoint import CheckpointError, load_plain, save_plain

CHECKPOINT_FORMAT = "lbs_pz.belief"
CHECKPOINT_VERSION = 1
CONFIG_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
                 "max_life_tokens", "random_start_player", "observation_type")


# --- data --------------------------------------------------------------------------------

def generate_games(config, blueprint: str, num_games: int, seed: int, first_game: int = 0):
    """Self-play `num_games` games of the rule bot `blueprint` and record, for every seat,
    its observation sequence and its true hand.

    Returns a dict of numpy arrays over S = num_games * players sequences:
        obs     (S, T, E) uint8   canonical observation of the seat after each move
                                  (t = 0: before the first move); HLE's vector is 0/1
        hands   (S, T, H) int64   the seat's true hand at that time, -1 for empty slots
        lengths (S,)      int64   number of valid time steps (moves + 1)
        scores  (num_games,) int32
    Sequence s = game * players + seat. T is the longest game in the batch + 1.
    """
    from lbs_pz.engine import HanabiBatch, game_seeds
    from lbs_pz.agents.rule_bots import _bots as bots

    P, H, E = config.players, config.hand_size, config.encoding_size
    seeds = game_seeds(seed, first_game, num_games)
    batch = HanabiBatch(config, num_games, seeds=[int(x) for x in seeds])
    cap = 200
    obs = np.zeros((P, num_games, cap, E), dtype=np.uint8)
    hands = np.full((P, num_games, cap, H), -1, dtype=np.int64)
    lengths = np.zeros(num_games, dtype=np.int64)
    enc = np.empty((num_games, E), dtype=np.float32)
    seat_arrays = [np.full(num_games, p, dtype=np.int64) for p in range(P)]
    active = np.ones(num_games, dtype=bool)
    t = 0
    while True:
        states = [batch.get_state(i) for i in range(num_games)]
        for p in range(P):
            batch.encode(out=enc, players=seat_arrays[p])
            obs[p, active, t] = enc[active]
        for i in np.flatnonzero(active):
            for p, hand in enumerate(states[i].hands):
                hands[p, i, t, :len(hand)] = hand
        lengths[active] = t + 1
        term = batch.terminals()
        active = ~term
        if not active.any():
            break
        moves = bots.act_states(blueprint, states)
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


# --- checkpoints -----------------------------------------------------------------------------

def config_to_dict(config) -> Dict:
    return {f: getattr(config, f) for f in CONFIG_FIELDS}


def save_checkpoint(path: str, model, config, blueprint: str, info: Optional[Dict] = None,
                    half: bool = False) -> None:
    """Write a checkpoint dict (plain types + tensors) atomically."""
    state = {k: (v.half() if half and v.is_floating_point() else v).detach().cpu().clone()
             for k, v in model.state_dict().items()}
    ckpt = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "game_config": config_to_dict(config),
        "net_config": dataclasses.asdict(model.cfg),
        "blueprint": blueprint,
        "state_dict": state,
        "info": dict(info or {}),
    }
    save_plain(path, ckpt)


def load_checkpoint(path: str, map_location="cpu"):
    """Load a belief checkpoint -> (BeliefNet in eval mode, HanabiConfig, checkpoint dict).

    Uses `torch.load(weights_only=True)`: a file is never able to run code. Raises
    CheckpointError (a ValueError) for a missing, corrupt or foreign file."""
    from lbs_pz.engine import HanabiConfig
    from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig

    ckpt = load_plain(path, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, "belief", map_location)
    try:
        config = HanabiConfig(**ckpt["game_config"])
        net_cfg = BeliefNetConfig(**ckpt["net_config"])
        model = BeliefNet(net_cfg, config)
        model.load_state_dict({k: v.float() for k, v in ckpt["state_dict"].items()})
    except Exception as err:
        raise CheckpointError(f"{path!r}: belief checkpoint does not match the network: "
                              f"{type(err).__name__}: {err}") from None
    model.eval()
    return model, config, ckpt


# --- training ------------------------------------------------------------------------------

@dataclasses.dataclass
class TrainConfig:
    blueprint: str = "strong"
    players: int = 2
    hand_size: Optional[int] = None
    games_per_step: int = 32          # fresh games per optimisation step (x players sequences)
    steps: int = 0                    # 0: until the time budget is spent
    minutes: float = 30.0             # wall-clock budget (0: no limit)
    lr: float = 1e-3
    lr_final: float = 1e-4            # cosine decay to this over the budget
    val_games: int = 128
    val_every: int = 100
    seed: int = 0
    embed: int = 256
    hidden: int = 256
    layers: int = 1
    decoder: int = 128
    prior: bool = True                # decoder logits on top of the grounded prior
    threads: int = 0                  # torch threads (0: torch default)
    device: str = "auto"
    out: str = "belief.pt"
    half: bool = False                # store float16 weights (half the file size)
    progress: bool = True


def train(tc: TrainConfig, log=print):
    """Train a belief; returns (model, history of (step, train_loss, val_loss))."""
    import torch

    from lbs_pz.engine import HanabiConfig
    from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig, count_parameters

    if tc.threads > 0:
        torch.set_num_threads(tc.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if tc.device == "auto" else tc.device
    config = HanabiConfig(players=tc.players, hand_size=tc.hand_size)
    from lbs_pz.agents.rule_bots import _bots as bots
    bots.bot_kind(tc.blueprint)  # validate the name early
    torch.manual_seed(tc.seed)
    model = BeliefNet(BeliefNetConfig(
        encoding_size=config.encoding_size, hand_size=config.hand_size,
        card_types=config.num_card_types, embed=tc.embed, hidden=tc.hidden,
        layers=tc.layers, decoder=tc.decoder, prior=tc.prior), config).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
    val = generate_games(config, tc.blueprint, tc.val_games, seed=tc.seed + 1_000_003)
    val_obs, val_hands = to_tensors(val, device)
    log(f"belief net: {count_parameters(model):,} parameters on {device}; blueprint "
        f"{tc.blueprint}, {config.players}p {config.hand_size}-card; validation "
        f"{tc.val_games} games (mean score {val['scores'].mean():.2f})")

    budget = tc.minutes * 60 if tc.minutes > 0 else math.inf
    total = tc.steps if tc.steps > 0 else None
    bar = None
    if tc.progress:
        from tqdm import tqdm
        bar = tqdm(total=total, unit="step", dynamic_ncols=True)
    start = time.perf_counter()
    history = []
    step, game_index, ema = 0, 0, None

    def validate():
        model.eval()
        with torch.no_grad():
            v = float(mean_nll(model, val_obs, val_hands))
        model.train()
        return v

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
        data = generate_games(config, tc.blueprint, tc.games_per_step, seed=tc.seed,
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
            info = {"steps": step, "games": game_index, "val_loss": v, "train_loss": ema,
                    "seconds": time.perf_counter() - start}
            save_checkpoint(tc.out, model, config, tc.blueprint, info, half=tc.half)
    if bar is not None:
        bar.close()
    v = validate()
    history.append((step, ema, v))
    info = {"steps": step, "games": game_index, "val_loss": v,
            "train_loss": ema if ema is not None else float("nan"),
            "seconds": time.perf_counter() - start}
    save_checkpoint(tc.out, model, config, tc.blueprint, info, half=tc.half)
    log(f"done: {step} steps, {game_index:,} games, val {v:.4f} nats/card, saved {tc.out}")
    return model, history


# --- CLI -------------------------------------------------------------------------------------

def add_train_belief_command(sub) -> None:
    """Register `lbs-pz train-belief` on an argparse subparsers object."""
    p = sub.add_parser("train-belief", help="train a learned belief on blueprint self-play",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    d = TrainConfig()
    p.add_argument("--blueprint", default=d.blueprint, help="rule bot to imitate (default strong)")
    p.add_argument("--players", type=int, default=d.players)
    p.add_argument("--hand-size", type=int, default=d.hand_size)
    p.add_argument("--minutes", type=float, default=d.minutes, help="wall-clock budget (0: none)")
    p.add_argument("--steps", type=int, default=d.steps, help="optimisation steps (0: budget)")
    p.add_argument("--games-per-step", type=int, default=d.games_per_step)
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--lr-final", type=float, default=d.lr_final)
    p.add_argument("--val-games", type=int, default=d.val_games)
    p.add_argument("--val-every", type=int, default=d.val_every)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--embed", type=int, default=d.embed)
    p.add_argument("--hidden", type=int, default=d.hidden)
    p.add_argument("--layers", type=int, default=d.layers)
    p.add_argument("--decoder", type=int, default=d.decoder)
    p.add_argument("--no-prior", action="store_true",
                   help="plain decoder, without the grounded prior added to its logits")
    p.add_argument("--threads", type=int, default=d.threads)
    p.add_argument("--device", default=d.device, help="auto (GPU if present), cpu, cuda")
    p.add_argument("--half", action="store_true", help="store float16 weights")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=d.out, help="checkpoint path (written at every validation)")
    p.set_defaults(func=_cmd_train_belief)


def _cmd_train_belief(args) -> int:
    tc = TrainConfig(
        blueprint=args.blueprint, players=args.players, hand_size=args.hand_size,
        games_per_step=args.games_per_step, steps=args.steps, minutes=args.minutes, lr=args.lr,
        lr_final=args.lr_final, val_games=args.val_games, val_every=args.val_every,
        seed=args.seed, embed=args.embed, hidden=args.hidden, layers=args.layers,
        decoder=args.decoder, prior=not args.no_prior, threads=args.threads,
        device=args.device, out=args.out,
        half=args.half, progress=not args.no_progress)
    train(tc)
    return 0
