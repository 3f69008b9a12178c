#!/usr/bin/env python
"""Public-LSTM blueprint figures: training throughput of `lbs-pz train-blueprint` (env
steps/s and updates/s, acting and learning measured apart and together) and the greedy
self-play score of a checkpoint (default: the shipped lbs_pz/models/public_lstm_2p.pt)
over 1,000 two-player games, mean +- s.e.m.

    python benchmarks/blueprint_training.py                  # both, on the CPU, 1 thread
    python benchmarks/blueprint_training.py --device cuda    # throughput on a GPU
    python benchmarks/blueprint_training.py --skip-training --checkpoint my.pt

Fine-tuning from a distilled start (start / min / end self-play, the learning curve):
benchmarks/finetune.py.
"""

import argparse
import os
import sys
import tempfile
import time


import numpy as np

from lbs_pz.engine import HanabiConfig


def throughput(args) -> None:
    import torch

    from lbs_pz.agents.public_lstm import PublicLSTMNet
    from lbs_pz.train import blueprint as tb

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    config = HanabiConfig(players=2)
    net = PublicLSTMNet.for_config(config, args.hidden).to(device)
    tc = tb.BlueprintTrainConfig(hidden=args.hidden, demo_bot="strong",
                                 device=args.device).resolved()

    actors = tb.Actors(config, tc.num_actors, seed=0,
                       epsilons=tb.actor_epsilons(tc.num_actors, tc.eps, tc.eps_alpha))
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < args.seconds / 3:
        actors.step(net)
        steps += actors.n
    acting = steps / (time.perf_counter() - start)

    demo = tb.Actors(config, 64, seed=1, bot="strong")
    replay = tb.GameReplay(256, demo.max_len, net.obs_dim, 2, config.num_moves)
    while len(replay) < 256:
        for game in demo.step():
            replay.add(game)
    target = PublicLSTMNet.for_config(config, args.hidden).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr)
    rng = np.random.default_rng(0)
    start, updates, samples = time.perf_counter(), 0, 0
    while time.perf_counter() - start < args.seconds / 3:
        idx, w = replay.sample(tc.batch_size, rng, tc.priority_exponent, tc.is_exponent)
        games = replay.batch(idx)
        loss, _, _, prio = tb.vdn_loss(net, target, games, w, np.ones(len(idx), bool), tc)
        opt.zero_grad()
        loss.backward()
        opt.step()
        replay.priority[idx] = prio
        updates += 1
        samples += int(games["length"].sum())
    if device.type == "cuda":
        torch.cuda.synchronize()
    learning = updates / (time.perf_counter() - start)

    with tempfile.TemporaryDirectory() as tmp:
        tc = tb.BlueprintTrainConfig(hidden=args.hidden, minutes=args.seconds / 3 / 60,
                                     demo_bot="strong", eval_every=0, eval_games=10,
                                     save_every=10**9, device=args.device, threads=args.threads,
                                     out=os.path.join(tmp, "bp.pt"), curve="none")
        progress = tb.train_blueprint(tc, log=lambda *_: None, progress_bar=False)
        # the run's own clock covers acting, learning and checkpointing
        seconds = progress["seconds"]
    print(f"device {args.device}, {args.threads} torch thread(s), hidden {args.hidden}, "
          f"{tc.num_actors} actor games, batch {tc.batch_size} games")
    print("| part | throughput |")
    print("|---|---:|")
    print(f"| acting only ({tc.num_actors} games, batched forward) | {acting:,.0f} env steps/s |")
    print(f"| learning only ({tc.batch_size} whole games per update) | {learning:.2f} updates/s "
          f"({samples / max(updates, 1):.0f} moves per update) |")
    print(f"| train-blueprint (both, act_steps={tc.act_steps}) | "
          f"{progress['env_steps'] / seconds:,.0f} env steps/s, "
          f"{progress['updates'] / seconds:.2f} updates/s |")


def score(args) -> None:
    import torch

    from lbs_pz.agents import load_blueprint
    from lbs_pz.eval.evaluate import evaluate

    torch.set_num_threads(args.threads)
    spec = f"lstm:{args.checkpoint or 'public_lstm_2p'}"
    r = evaluate(load_blueprint(spec), games=args.games, seed=args.seed, chunk=args.games)
    zero = r.histogram[0] / r.games
    print(f"{spec}: greedy 2p self-play over {r.games:,} evaluation games (seed {args.seed}): "
          f"{r.mean:.2f} +- {r.sem:.2f} (s.e.m.), perfect {100 * r.perfect_rate:.1f}%, "
          f"zero {100 * zero:.1f}%; {r.games_per_s:.0f} games/s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=None, help="default: the shipped checkpoint")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="time for the three throughput measurements together")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--skip-score", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_training:
        throughput(args)
    if not args.skip_score:
        score(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
