"""Does the weighted learned belief bias LBS-inf's gains, and by how much? Each move's gain
to the end of the game from the importance-weighted learned+cf belief's worlds against
the same gain from the exact belief's (SPARTA's) worlds.

    python docs/experiments/belief_gains.py --blueprint strong --games 20 --worlds 2048

LBS-inf has no value; its only bias is the belief's. Weighted toward the exact posterior
(`--importance`, its default from 1,024 worlds), its gains converge to the exact belief's
as worlds grow, up to the weights' truncation and whatever the proposal never draws. On
the blueprint's own games (tuning deals: the evaluation deals of run seed 1), at every
--every-th decision of seat 0, this draws --worlds hands from each belief and rolls every
legal move out to the end in each world. Per candidate move other than the blueprint's,
d = (weighted gain) - (exact gain) is the belief's bias plus both estimates' noise; the
noise's variance is known from the worlds (each estimate's squared standard error), so

    var(bias) = var(d) - mean(noise variance)

over the candidates. A deviation margin capped at M worlds is as wide as the bias when a
candidate's standard error at M worlds equals the bias's spread: M = (median per-world
sd / sd of bias)^2, printed last (value_gains.py prints the same for LBS-16's value: 27
worlds, beside the cap of 32 chosen on tuning deals). Its figures: importance_weights.md.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiConfig  # noqa: E402
from lbs_pz.search.agents import SearchAgent  # noqa: E402
from lbs_pz.search.beliefs.base import importance_weights  # noqa: E402
from lbs_pz.search.config import SearchConfig  # noqa: E402
from lbs_pz.search.resolve import resolve  # noqa: E402
from lbs_pz.search.rollout_search import move_returns  # noqa: E402
from value_gains import positions  # noqa: E402


def gains(state, legal, ref, hands, weights, rng, bp):
    """(mean gain, its squared standard error, per-world sd) of every legal move over the
    blueprint's move `ref`, to the end, in worlds `hands` of self-normalised `weights`."""
    seeds = rng.integers(0, 2**63, size=len(hands))
    returns, _ = move_returns(state, 0, legal, hands, seeds, bp, -1, None)
    g = returns - returns[ref]
    w = weights / weights.sum()
    mean = g @ w
    var = ((g - mean[:, None]) ** 2) @ (w ** 2)
    return mean, var, np.sqrt(((g - mean[:, None]) ** 2) @ w)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blueprint", default="strong", help="blueprint spec (default strong)")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--every", type=int, default=4, help="every N-th decision of seat 0")
    parser.add_argument("--worlds", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=1, help="run seed of the deals (1: tuning)")
    args = parser.parse_args(argv)
    config = HanabiConfig()
    bp = load_blueprint(args.blueprint)
    config_w = SearchConfig(rollouts=args.worlds, importance=True)
    weighted = resolve(bp, config, config_w, "lbs-inf")
    exact = resolve(bp, config, SearchConfig(rollouts=args.worlds), "sparta")
    agents = {name: SearchAgent(bp, r.belief, r.config, depth=-1)
              for name, r in (("weighted", weighted), ("exact", exact))}
    print(f"beliefs: weighted {weighted.belief.name}, exact {exact.belief.name}")
    rng = np.random.default_rng(args.seed)
    d, noise, sds, ess, n_pos = [], [], [], [], 0
    for state in positions(bp, config, args.games, args.every, args.seed):
        legal = np.array(state.legal_moves(), dtype=np.int64)
        if len(legal) < 2:
            continue
        ref = int(np.flatnonzero(legal == bp.act(state))[0])
        est = {}
        for name, agent in agents.items():
            agent.sync_belief(state, 0)
            hands, log_w = agent.belief.sample_weighted(args.worlds, rng)
            if len(hands) < 64:
                break
            w = importance_weights(log_w)
            if name == "weighted":
                ess.append(w.sum() ** 2 / (w ** 2).sum())
            est[name] = gains(state, legal, ref, hands, w, rng, agent.rollout_blueprint)
        if len(est) < 2:
            continue
        n_pos += 1
        for i in range(len(legal)):
            if i != ref:
                d.append(est["weighted"][0][i] - est["exact"][0][i])
                noise.append(est["weighted"][1][i] + est["exact"][1][i])
                sds.append(est["exact"][2][i])
    d, noise = np.array(d), np.array(noise)
    bias_var = d.var() - noise.mean()
    print(f"{args.blueprint}: {n_pos} positions of seat 0 in {args.games} games (run seed "
          f"{args.seed}), {len(d)} candidates, {args.worlds} worlds from each belief")
    print(f"weighted minus exact gain: mean {d.mean():+.4f}, sd {d.std():.4f}; noise sd "
          f"{np.sqrt(noise.mean()):.4f}; bias sd {np.sqrt(max(bias_var, 0)):.4f}")
    print(f"effective sample of the weighted worlds: median {np.median(ess):.0f} of "
          f"{args.worlds}")
    if bias_var > 0:
        print(f"worlds whose standard error equals the bias's sd: (median per-world sd "
              f"{np.median(sds):.3f} / {np.sqrt(bias_var):.4f})^2 = "
              f"{(np.median(sds) ** 2 / bias_var):.0f}")
    else:
        print("the bias is below the noise: no world count is as wide as it here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
