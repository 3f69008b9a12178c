"""Train the centralized value function (`lbs_pz.search.value`) by regression on the
final scores of the self-play of ANY blueprint.

    lbs-pz train-value --blueprint strong --minutes 10 --out value.pt
    lbs-pz train-value --blueprint py:my_blueprint.py:MyBlueprint --minutes 5 --out mine.pt

`--blueprint SPEC`: a rule bot `NAME`, `sb3:PATH`, `lstm:PATH` or
`py:MODULE_OR_FILE.py:CLASS` (`lbs_pz.agents.load_blueprint`). Each step plays fresh games
(one `HanabiBatch` stepped with `blueprint.act_batch(batch)`; an endless stream, never
reused), takes every position of every game with its final score as the target, and fits
by mean squared error. Deals come from the TRAIN stream (`lbs_pz.engine.seeds`), disjoint
from the EVAL stream of `eval` and `compare`: training games 0, 1, 2, ... of the run seed,
validation games the last `--val-games` of the stream's range. The checkpoint (kind
"value") records the blueprint (spec and fingerprint), the variant and the command;
`CentralValue(path, blueprint=bp)` refuses it for another blueprint or variant.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from lbs_pz.engine.seeds import MAX_GAMES, TRAIN, deal_seeds
from lbs_pz.train.config_args import command_line, load_training_blueprint


def generate_positions(config, blueprint, num_games: int, seed: int, first_game: int = 0):
    """Every position of games first_game .. first_game + num_games - 1 of the TRAIN deal
    stream of run `seed`, played by `blueprint` (any Blueprint: `act_batch` on a
    HanabiBatch): (features (N, F) float32 `value_features`, final scores (N,) float32)."""
    from lbs_pz.engine import HanabiBatch
    from lbs_pz.search.value import value_features

    batch = HanabiBatch(config, num_games, seeds=deal_seeds(TRAIN, seed, first_game, num_games))
    feats, owners = [], []
    while True:
        open_games = np.flatnonzero(~batch.terminals())
        if not len(open_games):
            break
        feats.append(value_features(batch)[open_games])
        owners.append(open_games)
        moves = np.asarray(blueprint.act_batch(batch), dtype=np.int64)
        moves[batch.terminals()] = -1
        batch.step(moves)
    scores = batch.scores().astype(np.float32)
    return np.concatenate(feats), scores[np.concatenate(owners)]


@dataclasses.dataclass
class ValueTrainConfig:
    """Every hyper-parameter of a `lbs-pz train-value` run (one option each)."""
    blueprint: str = "strong"     # blueprint spec: NAME | sb3:PATH | lstm:PATH | py:FILE.py:CLASS
    players: int = 2              # players of the game variant
    hand_size: int = 0            # 0: the standard rule
    minutes: float = 10.0         # wall-clock budget (0: no limit)
    steps: int = 0                # 0: until the time budget
    games_per_step: int = 64      # fresh self-play games of the blueprint per step
    batch_size: int = 1024        # positions per optimisation step
    lr: float = 1e-3              # Adam learning rate
    hidden: int = 256             # width of the two hidden layers
    val_games: int = 200          # held-out games for the validation MSE
    seed: int = 0                 # run seed of the TRAIN deal stream
    threads: int = 1              # torch threads
    out: str = "value.pt"         # checkpoint file written
    progress: bool = True         # a progress bar


def train_value(tc: ValueTrainConfig, log=print) -> dict:
    """Train a value for the blueprint `tc.blueprint`, save it to `tc.out`; returns the
    run's info (as stored in the checkpoint) plus "history" [(step, validation MSE)]."""
    import torch
    from tqdm import tqdm

    from lbs_pz.engine import HanabiConfig
    from lbs_pz.search.value import ValueNetConfig, make_value_net, save_value

    if tc.games_per_step < 1 or tc.val_games < 1 or tc.batch_size < 1:
        raise ValueError("games_per_step, val_games and batch_size must be >= 1")
    torch.set_num_threads(tc.threads)
    torch.manual_seed(tc.seed)
    config = HanabiConfig(players=tc.players, hand_size=tc.hand_size or None)
    blueprint, identity = load_training_blueprint(tc.blueprint)
    val_x, val_y = generate_positions(config, blueprint, tc.val_games, seed=tc.seed,
                                      first_game=MAX_GAMES - tc.val_games)
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
               unit="s" if not tc.steps else "step", disable=not tc.progress)
    while True:
        x, y = generate_positions(config, blueprint, tc.games_per_step, seed=tc.seed,
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
    info = {"command": command_line("train-value", tc), "steps": step, "games": games,
            "val_mse": final, "baseline_mse": baseline, "val_games": tc.val_games,
            "deals": (f"TRAIN stream (lbs_pz.engine.seeds.deal_seeds), run seed {tc.seed}: "
                      f"training games 0..{games - 1}, validation games "
                      f"{MAX_GAMES - tc.val_games}..{MAX_GAMES - 1}"),
            "seconds": time.perf_counter() - start, "seed": tc.seed}
    save_value(tc.out, net, net_cfg, config, identity, info)
    log(f"value: {step} steps on {games:,} games in {info['seconds'] / 60:.1f} min; "
        f"validation MSE {final:.3f} (predicting the mean: {baseline:.3f}); saved {tc.out} "
        f"(trained for {identity['spec']})")
    return {**info, "history": history}
