"""Train the centralized value function (`lbs_pz.search.value`) by regression on the
final scores of the self-play of ANY blueprint, driven by the one training loop
(`lbs_pz.train.loop`).

    lbs-pz train-value --blueprint strong --minutes 10 --out value.pt
    lbs-pz train-value --blueprint py:my_blueprint.py:MyBlueprint --minutes 5 --out mine.pt

`--blueprint SPEC`: a rule bot `NAME`, `sb3:PATH`, `lstm:PATH` or
`py:MODULE_OR_FILE.py:CLASS` (`lbs_pz.agents.load_blueprint`).

Data (`generate_positions`): every update plays `games_per_step` fresh games of the
blueprint (one `HanabiBatch` stepped with `blueprint.act_batch(batch)`; an endless stream,
never reused) and takes every position of every game (`value_features`) with its final
score as the target. Deals come from the TRAIN stream (`lbs_pz.engine.seeds`), disjoint
from the EVAL stream of `eval` and `compare`: training games 0, 1, 2, ... of the run
seed, validation games the last `--val-games` of the stream's range.

Objective: mean squared error, one Adam step per shuffled minibatch of `batch_size`
positions of the update's games; the network's output bias starts at the validation
games' mean score. Evaluation: the validation MSE before the first update, every
`EVAL_EVERY` updates and at the end (predicting the mean score gives "baseline_mse").

Outputs: the checkpoint `--out` (kind "value"; written every few minutes of training,
at the end and on Ctrl-C: `lbs_pz.train.loop.run`), which records the blueprint
(spec and fingerprint), the variant, the command and the run's counters;
`CentralValue(path, blueprint=bp)` refuses it for another blueprint or variant. Its
"resume" entry (optimizer and torch random state) lets `--resume` continue the run
exactly. The learning curve goes to CSV and PNG (`--curve`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, cast

import torch

from lbs_pz.engine.seeds import MAX_GAMES
from lbs_pz.search.value import ValueNetConfig, load_value, make_value_net
from lbs_pz.train.common import command_line, game_config, load_training_blueprint
from lbs_pz.train.configs import ValueTrainConfig, check_games_held, curve_path
from lbs_pz.train.games import GameSource, generate_positions
from lbs_pz.train.loop import Budget, Trainer, claims_out, read_resume, run

KIND = "value"
EVAL_EVERY = 10               # updates between validations


@claims_out
def train_value(tc: ValueTrainConfig, log=print) -> dict:
    """Train a value for the blueprint `tc.blueprint`, save it to `tc.out`; returns the
    run's info (as stored in the checkpoint) plus "history" [(step, validation MSE)]."""
    check_games_held(tc)
    if tc.batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    budget = Budget(tc.minutes, tc.steps)
    budget.check()
    torch.set_num_threads(tc.threads)
    torch.manual_seed(tc.seed)
    config = game_config(tc)
    blueprint, identity = load_training_blueprint(tc.blueprint)
    val_x, val_y = map(torch.from_numpy, generate_positions(
        config, blueprint, tc.val_games, seed=tc.seed, first_game=MAX_GAMES - tc.val_games,
        off_policy=tc.off_policy))
    net_cfg = ValueNetConfig(inputs=val_x.shape[1], hidden=tc.hidden)
    ckpt = read_resume(tc.resume, KIND, "train-value") if tc.resume else None
    if ckpt is not None:
        net, resumed_config, _ = load_value(tc.resume)
        if resumed_config != config or ckpt["architecture"] != dataclasses.asdict(net_cfg):
            raise ValueError(f"--resume {tc.resume}: a value for {resumed_config} "
                             f"{ckpt['architecture']}, this run is {config} "
                             f"{dataclasses.asdict(net_cfg)}")
        net.train()
        torch.set_rng_state(ckpt["resume"]["torch_rng"])
    else:
        net = make_value_net(net_cfg)
        with torch.no_grad():  # start from the mean score: the fit then learns the deviations
            cast(torch.nn.Linear, net[-1]).bias.fill_(float(val_y.mean()))   # the output
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr)
    source = GameSource("value", tc.blueprint, config, tc.seed, backend=tc.backend,
                        workers=tc.workers, address=tc.address, blueprint=blueprint,
                        options={"off_policy": tc.off_policy})
    baseline = float(((val_y - val_y.mean()) ** 2).mean())  # predicting the mean score
    progress: Dict[str, Any] = {"updates": 0, "games": 0, "seconds": 0.0}

    def update(clock):
        x, y = source.games(progress["games"], tc.games_per_step)
        progress["games"] += tc.games_per_step
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        for idx in torch.randperm(len(y)).split(tc.batch_size):
            loss = ((net(x[idx]).squeeze(1) - y[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return {"mse": float(loss.detach())}

    def validate() -> float:
        with torch.no_grad():
            return float(((net(val_x).squeeze(1) - val_y) ** 2).mean())

    def evaluate(clock):
        return {"val_mse": validate(), "baseline_mse": baseline}

    def info():
        return {"command": command_line("train-value", tc), "steps": progress["updates"],
                "games": progress["games"], "val_mse": validate(), "baseline_mse": baseline,
                "val_games": tc.val_games,
                "deals": (f"TRAIN stream (lbs_pz.engine.seeds.deal_seeds), run seed {tc.seed}: "
                          f"training games 0..{progress['games'] - 1}, validation games "
                          f"{MAX_GAMES - tc.val_games}..{MAX_GAMES - 1}"),
                "seconds": progress["seconds"], "seed": tc.seed}

    def checkpoint():
        return dict(kind=KIND, game=config, architecture=dataclasses.asdict(net_cfg),
                    weights=net.state_dict(), trained_for=identity, info=info(),
                    resume={"torch_rng": torch.get_rng_state()})

    trainer = Trainer("train-value", KIND, update, checkpoint, opt, progress, evaluate,
                      eval_at_start=True, plot=("val_mse",))
    with source:
        run(trainer, budget, tc.out, resume=ckpt, eval_every=EVAL_EVERY,
            save_minutes=tc.save_minutes, curve=curve_path(tc.out, tc.curve),
            title=command_line("train-value", tc), tensorboard=tc.tensorboard,
            progress_bar=tc.progress, log=log)
    result = info()
    log(f"value: {result['steps']} steps on {result['games']:,} games in "
        f"{result['seconds'] / 60:.1f} min; validation MSE {result['val_mse']:.3f} (predicting "
        f"the mean: {baseline:.3f}); saved {tc.out} (trained for {identity['spec']})")
    return {**result, "history": [(row[1], row[2]) for row in progress["curve"]]}
