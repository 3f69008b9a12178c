"""Train a self-play Hanabi policy with RLlib's multi-agent PPO (its new API stack).

One policy, shared by every seat, with action masking, on lbs_pz's PettingZoo env through
RLlib's PettingZooEnv wrapper; on a local Ray cluster, or the cluster at --address (its
nodes need lbs_pz installed). Each iteration prints the env steps it sampled per second
(of the iteration: sampling and the update), the mean episode return (RLlib's, summed
over the seats) and the mean score of its games. The trained module is saved in --out
as an RLModule checkpoint, then scored greedily on evaluation deals; the printed spec
`rllib:OUT` names it in every lbs-pz command:

    pip install -e ".[rllib]"
    python examples/rllib_ppo.py --iterations 50 --env-runners 2 --out results/rllib_ppo_2p
    lbs-pz eval --blueprint rllib:results/rllib_ppo_2p --games 1000
    lbs-pz compare --blueprint rllib:results/rllib_ppo_2p --methods blueprint,lbs-1

A quick check of the whole path on a tiny game (its lbs-pz commands then need the same
variant options, which the script prints):

    python examples/rllib_ppo.py --colors 2 --ranks 3 --hand-size 3 --iterations 2 \\
        --train-batch-size 500 --env-runners 0 --out results/rllib_tiny

The pieces (env creator, masked module, PPO config, saving) are in lbs_pz.train.rllib_ppo
and lbs_pz.agents.rllib_policy.
"""

from __future__ import annotations

import argparse

from lbs_pz.agents import load_blueprint
from lbs_pz.engine import HanabiConfig
from lbs_pz.eval import evaluate
from lbs_pz.train.rllib_ppo import RLlibPPORun, train


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20,
                        help="PPO iterations (default 20; 0: until --minutes)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="wall-clock budget; stops at whichever of this and --iterations "
                             "comes first (default: none)")
    parser.add_argument("--address", default=None,
                        help="a running Ray cluster, e.g. HEAD:6379 (default: a local Ray)")
    parser.add_argument("--out", default="results/rllib_ppo",
                        help="folder for the module checkpoint (created; default %(default)s)")
    parser.add_argument("--tensorboard", default="", metavar="DIR",
                        help="also write each iteration's figures to this TensorBoard folder "
                             "(the [tensorboard] extra; default: none)")
    parser.add_argument("--env-runners", type=int, default=1,
                        help="Ray actors sampling games; 0 samples in this process (default 1)")
    parser.add_argument("--train-batch-size", type=int, default=4000,
                        help="env steps per iteration (default 4000)")
    parser.add_argument("--players", type=int, default=2, help="2..5 (default 2)")
    parser.add_argument("--colors", type=int, default=5, help="1..5 (default 5)")
    parser.add_argument("--ranks", type=int, default=5, help="1..5 (default 5)")
    parser.add_argument("--hand-size", type=int, default=None,
                        help="default: 5, or 4 with 4+ players")
    parser.add_argument("--seed", type=int, default=0, help="RLlib's seed (default 0)")
    parser.add_argument("--eval-games", type=int, default=500,
                        help="greedy self-play games on evaluation deals after training "
                             "(default 500; 0: none)")
    return parser.parse_args()


def variant_options(game: HanabiConfig) -> str:
    """The lbs-pz options that name this variant (empty for the standard 2-player game)."""
    standard = HanabiConfig(players=game.players)
    options = [f"--players {game.players}"] if game.players != 2 else []
    options += [f"--{name.replace('_', '-')} {getattr(game, name)}"
                for name in ("colors", "ranks", "hand_size")
                if getattr(game, name) != getattr(standard, name)]
    return "".join(" " + option for option in options)


def main() -> None:
    args = parse_args()
    run = RLlibPPORun(players=args.players, colors=args.colors, ranks=args.ranks,
                      hand_size=args.hand_size, iterations=args.iterations or None,
                      minutes=args.minutes, address=args.address,
                      env_runners=args.env_runners, train_batch_size=args.train_batch_size,
                      minibatch_size=min(500, args.train_batch_size), seed=args.seed)
    summary = train(run, args.out, tensorboard=args.tensorboard)
    print(f"trained {summary['iterations']} iterations, {summary['env_steps']:,} env steps in "
          f"{summary['seconds'] / 60:.1f} min ({summary['env_steps_per_second']:,.0f} steps/s); "
          f"saved {args.out}")
    game = run.game()
    variant = variant_options(game)
    if args.eval_games > 0:
        result = evaluate(load_blueprint(summary["spec"]), game, games=args.eval_games,
                          progress=False)
        print(f"greedy self-play on evaluation deals: {result.summary()}")
    print(f"blueprint spec: {summary['spec']}")
    print(f"  lbs-pz eval --blueprint {summary['spec']}{variant} --games 1000")
    print(f"  lbs-pz compare --blueprint {summary['spec']}{variant} --methods blueprint,lbs-1")


if __name__ == "__main__":
    main()
