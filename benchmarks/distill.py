"""Distillation of a blueprint into the public-LSTM net: agreement and self-play over time.

    OMP_NUM_THREADS=1 python benchmarks/distill.py --minutes 20            # the full 2p game
    OMP_NUM_THREADS=1 python benchmarks/distill.py --arch conventions --minutes 30
    OMP_NUM_THREADS=1 python benchmarks/distill.py --diagnose --updates 600 --arch paper

The first forms run `lbs_pz.train.distill.distill` on one core with the net `--arch`
(a preset of `lbs_pz.agents.public_lstm.ARCHITECTURES`, distill's default
"card_features" unless given) of width `--hidden`, and print its curve (update, seconds,
teacher moves, held-out agreement, greedy self-play) as a table and, with --json, write
it. `--diagnose` trains that net for a fixed number of updates and prints the final
agreement plus the size of the LSTM output and of the fused features at the start (the
measurements behind the diagnosis in `lbs_pz.train.distill`'s docstring); other
combinations of the net's options are `PublicLSTMNet.from_preset(name, config,
**overrides)` in Python.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.agents.public_lstm import PublicLSTMNet  # noqa: E402
from lbs_pz.engine.seeds import EVAL  # noqa: E402
from lbs_pz.models.checkpoint import load_checkpoint  # noqa: E402
from lbs_pz.train.common import net_options  # noqa: E402
from lbs_pz.train.configs import ARCH_PRESETS, DISTILL_ARCH  # noqa: E402
from lbs_pz.train.distill import (DistillConfig, agreement, collate, distill,  # noqa: E402
                                  game_config, imitation_loss, self_play)
from lbs_pz.train.games import teacher_games  # noqa: E402


def diagnose(args) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dc = DistillConfig(teacher=args.teacher, arch=args.arch, hidden=args.hidden,
                       colors=args.colors, ranks=args.ranks, hand_size=args.hand_size)
    config = game_config(dc)
    teacher = load_blueprint(dc.teacher)
    net = PublicLSTMNet.for_config(config, **net_options(dc, DISTILL_ARCH))
    if args.no_lstm:        # public stream replaced by ones: the MLP alone decides
        ones = torch.ones(1, 1, net.hidden)
        net.public = lambda pub, hc=None: (torch.ones(*pub.shape[:-1], net.hidden),
                                           (ones.expand(1, pub.shape[0], -1),) * 2)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    held = teacher_games(config, teacher, 200, 0, stream=EVAL)
    b = collate(held[:16], "cpu")
    with torch.no_grad():
        h, _ = net.public(b["pub"])
        m = net.mlp(net._private_in(b["obs"], torch.nn.functional.one_hot(
            b["cur"], config.players).float()))
        fused = net._fused(h, m)
    print(f"at init: mean |h| {h.abs().mean():.4f}, mean |m| {m.abs().mean():.4f}, "
          f"mean |fused| {fused.abs().mean():.4f}")
    start = time.perf_counter()
    for u in range(1, args.updates + 1):
        games = teacher_games(config, teacher, 16, 0, first_game=16 * (u - 1))
        loss, _, _, _ = imitation_loss(net, collate(games, "cpu"))
        opt.zero_grad()
        loss.backward()
        if u == 1 or u == args.updates:
            grads = {n: float(p.grad.norm()) for n, p in net.named_parameters()
                     if p.grad is not None and n.endswith("weight")}
            print(f"update {u}: grad norms " + ", ".join(f"{n} {g:.2e}" for n, g in grads.items()))
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        opt.step()
        if u % max(args.updates // 4, 1) == 0:
            print(f"update {u} ({time.perf_counter() - start:.0f} s): loss {float(loss.detach()):.3f}, "
                  f"held-out agreement {agreement(net, held):.3f}", flush=True)
    sp = self_play(net, config, 200)
    print(f"arch {dc.arch or DISTILL_ARCH} hidden {net.hidden} "
          f"lr {args.lr} teacher {args.teacher}: agreement "
          f"{agreement(net, held):.3f}, self-play {sp[0]:.2f} +- {sp[1]:.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--teacher", default="strong")
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--arch", choices=list(ARCH_PRESETS), default=None,
                        help=f"the net's architecture, a preset as for distill's --arch "
                             f"(default {DISTILL_ARCH})")
    parser.add_argument("--hidden", type=int, default=None,
                        help="width of the LSTM and the MLP (default: the preset's, 256)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--colors", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=5)
    parser.add_argument("--hand-size", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--num-actors", type=int, default=DistillConfig.num_actors)
    parser.add_argument("--act-steps", type=int, default=DistillConfig.act_steps)
    parser.add_argument("--buffer-games", type=int, default=DistillConfig.buffer_games)
    parser.add_argument("--out", default="/tmp/distill_bench.pt")
    parser.add_argument("--json", default="")
    parser.add_argument("--diagnose", action="store_true")
    parser.add_argument("--updates", type=int, default=600)
    parser.add_argument("--no-lstm", action="store_true",
                        help="--diagnose: replace the public stream by ones (MLP alone)")
    args = parser.parse_args(argv)
    if args.diagnose:
        diagnose(args)
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    dc = DistillConfig(teacher=args.teacher, out=args.out, minutes=args.minutes,
                       arch=args.arch, hidden=args.hidden, lr=args.lr, colors=args.colors,
                       num_actors=args.num_actors, act_steps=args.act_steps,
                       buffer_games=args.buffer_games, ranks=args.ranks,
                       hand_size=args.hand_size, eval_every=args.eval_every, threads=1)
    distill(dc, progress_bar=False, log=lambda s: print(s, flush=True))
    evals = load_checkpoint(args.out, "public_lstm")["info"]["progress"]["evals"]
    print(f"{'update':>7} {'seconds':>8} {'moves':>10} {'agreement':>9} {'self-play':>12}")
    for u, s, moves, acc, mean, sem in evals:
        print(f"{u:>7} {s:>8.0f} {moves:>10,} {acc:>9.3f} {mean:>7.2f} +- {sem:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": vars(args), "evals": evals}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
