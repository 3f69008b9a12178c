"""Train the centralized value function (`lbs_pz.search.value`) by regression on the
final scores of blueprint self-play, generated with the batched engine.

    lbs-pz train-value --blueprint strong --minutes 10 --out value.pt

Each step plays fresh games (an endless stream, never reused), takes every position of
every game with its final score as the target, and fits by mean squared error.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from lbs_pz.train.config_args import add_config_arguments, config_from_args


def generate_positions(config, blueprint: str, num_games: int, seed: int, first_game: int = 0):
    """Positions of `num_games` self-play games: (features (N, F) float32, final scores (N,))."""
    from lbs_pz.engine import HanabiBatch, game_seeds
    from lbs_pz.agents.rule_bots import _bots as bots
    from lbs_pz.search.value import value_features

    seeds = game_seeds(seed, first_game, num_games)
    batch = HanabiBatch(config, num_games, seeds=[int(x) for x in seeds])
    feats, owners = [], []
    while True:
        states = [batch.get_state(i) for i in range(num_games)]
        open_games = [i for i, st in enumerate(states) if not st.is_terminal]
        if not open_games:
            break
        feats.append(value_features([states[i] for i in open_games]))
        owners.append(np.asarray(open_games))
        moves = bots.act_states(blueprint, states)
        batch.step(moves)
    scores = batch.scores().astype(np.float32)
    return np.concatenate(feats), scores[np.concatenate(owners)]


@dataclasses.dataclass
class ValueTrainConfig:
    blueprint: str = "strong"
    players: int = 2
    hand_size: int = 0            # 0: the standard rule
    minutes: float = 10.0
    steps: int = 0                # 0: until the time budget
    games_per_step: int = 64
    batch_size: int = 1024
    lr: float = 1e-3
    hidden: int = 256
    val_games: int = 200
    seed: int = 0
    threads: int = 1
    out: str = "value.pt"


def train(tc: ValueTrainConfig, log=print) -> dict:
    import torch
    from tqdm import tqdm

    from lbs_pz.engine import HanabiConfig
    from lbs_pz.search.value import ValueNetConfig, make_value_net, save_value

    torch.set_num_threads(tc.threads)
    torch.manual_seed(tc.seed)
    config = HanabiConfig(players=tc.players, hand_size=tc.hand_size or None)
    val_x, val_y = generate_positions(config, tc.blueprint, tc.val_games, seed=tc.seed + 1)
    val_x, val_y = torch.from_numpy(val_x), torch.from_numpy(val_y)
    net_cfg = ValueNetConfig(inputs=val_x.shape[1], hidden=tc.hidden)
    net = make_value_net(net_cfg)
    with torch.no_grad():  # start from the mean score: the fit then learns the deviations
        net[-1].bias.fill_(float(val_y.mean()))
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr)
    baseline = float(((val_y - val_y.mean()) ** 2).mean())  # predicting the mean score

    def validate() -> float:
        with torch.no_grad():
            return float(((net(val_x).squeeze(1) - val_y) ** 2).mean())

    start, step, games, history = time.perf_counter(), 0, 0, []
    bar = tqdm(total=int(tc.minutes * 60) if not tc.steps else tc.steps, desc="train-value",
               unit="s" if not tc.steps else "step")
    while True:
        x, y = generate_positions(config, tc.blueprint, tc.games_per_step, seed=tc.seed,
                                  first_game=games)
        games += tc.games_per_step
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        for idx in torch.randperm(len(y)).split(tc.batch_size):
            loss = ((net(x[idx]).squeeze(1) - y[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        step += 1
        elapsed = time.perf_counter() - start
        if step % 10 == 1:
            history.append((step, validate()))
            bar.set_postfix(val_mse=f"{history[-1][1]:.3f}", baseline=f"{baseline:.3f}")
        bar.update(1 if tc.steps else max(0, min(int(elapsed), bar.total) - bar.n))
        if (tc.steps and step >= tc.steps) or (not tc.steps and elapsed >= tc.minutes * 60):
            break
    bar.close()
    final = validate()
    info = {"steps": step, "games": games, "val_mse": final, "baseline_mse": baseline,
            "seconds": time.perf_counter() - start, "seed": tc.seed}
    save_value(tc.out, net, net_cfg, config, tc.blueprint, info)
    log(f"value: {step} steps on {games:,} games in {info['seconds'] / 60:.1f} min; "
        f"validation MSE {final:.3f} (predicting the mean: {baseline:.3f}); saved {tc.out}")
    return {**info, "history": history}


def add_train_value_command(sub) -> None:
    parser = sub.add_parser("train-value", help="train the centralized value function used "
                                                "to bootstrap LBS-k rollouts",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(parser, ValueTrainConfig)
    parser.set_defaults(func=lambda args: train(config_from_args(ValueTrainConfig, args)) and 0)
