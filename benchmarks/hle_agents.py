"""HLE's own SimpleAgent as an `hle:` blueprint here against the same agent inside HLE.

    python benchmarks/hle_agents.py --games 200 --players 2,3

For each number of players, plays --games games in HLE (`rl_env`, the agent class
instantiated with {'players': N} once per seat as HLE's runner does, acting on the
observation dict of rl_env's `_extract_dict_from_backend`), on HLE's deals of seeds 0 ..
games-1. Then replays each game's deal (HLE's deal order) here: at every position of HLE's
game, the move `hle:...SimpleAgent` makes here is compared with the one the agent made in
HLE (positions compared, differences); and the blueprint's own self-play on those deals
(batched, `rollout`) is scored. Prints games, positions, differences and both self-play
means +- s.e.m. Then the same comparison at the positions of --random-games games of
uniformly random play inside HLE (the agent asked at each, its move not played), which
reach positions the agent's own games do not (hints on many cards, long games).

`play_in_hle` and `replay_moves` are also what tests/agents/test_hle_blueprint.py drives HLE with.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hanabi_learning_environment import pyhanabi, rl_env  # noqa: E402

from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.search.stats import mean_sem  # noqa: E402

SIMPLE = "hle:hanabi_learning_environment.agents.simple_agent.SimpleAgent"


@dataclasses.dataclass
class HLEGame:
    """One game played inside HLE: its deal (HLE's deal order, then the cards never dealt),
    start player, moves played (move ids), the agent's move at each of those positions
    (the same as the moves played unless another policy played), final score, and every
    decision's observation dicts: (seat to move, [dict of each seat, or of the mover
    only]) before each move (`pyhanabi` removed)."""
    config: HanabiConfig
    deck: List[int]
    start_player: int
    moves: List[int]
    agent_moves: List[int]
    score: int
    observations: List[Tuple[int, List[Dict[str, Any]]]]


def play_in_hle(config: HanabiConfig, seed: int, agent_class, every_seat: bool = False,
                policy=None) -> HLEGame:
    """One game of `agent_class` (an HLE rl_env Agent class, one instance per seat made
    with {'players': N}) inside HLE's rl_env, on HLE's deal of `seed`. `policy(obs,
    rng)`, if given, picks the move played instead (a move dict or id), the agent's own
    choice at each position recorded all the same. `every_seat`: record every seat's
    observation dict at each decision (else only the mover's)."""
    env = rl_env.HanabiEnv(config.hle_params(seed=seed))
    env.state = state = env.game.new_initial_state()
    while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
        state.deal_random_card()
    start = state.cur_player()
    agents = [agent_class({"players": config.players}) for _ in range(config.players)]
    rng = np.random.default_rng(seed)
    moves, agent_moves, observations = [], [], []
    while not state.is_terminal():
        cur = state.cur_player()
        seats = range(config.players) if every_seat else [cur]
        dicts = {p: env._extract_dict_from_backend(p, state.observation(p)) for p in seats}
        for d in dicts.values():
            d.pop("pyhanabi")
        observations.append((cur, [dicts[p] for p in seats]))
        chosen = _uid(env, agents[cur].act(dicts[cur]))
        agent_moves.append(chosen)
        move = env.game.get_move(chosen if policy is None else _uid(env, policy(dicts[cur], rng)))
        moves.append(env.game.get_move_uid(move))
        state.apply_move(move)
        while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
            state.deal_random_card()
    dealt = [item.move().color() * config.ranks + item.move().rank()
             for item in state.move_history()
             if item.move().type() == pyhanabi.HanabiMoveType.DEAL]
    rest: List[int] = []
    for card in range(config.num_card_types):
        rest += [card] * (config.card_count(card) - dealt.count(card))
    return HLEGame(config, dealt + rest, start, moves, agent_moves, state.score(),
                   observations)


def _uid(env, action) -> int:
    """HLE's move uid of a move dict (checked legal by rl_env's own `_build_move`) or id."""
    move = env._build_move(action) if isinstance(action, dict) else env.game.get_move(action)
    return env.game.get_move_uid(move)


def uniform_policy(observation: Dict[str, Any], rng) -> int:
    """A uniformly random legal move id (the games whose positions the agent is asked at)."""
    legal = observation["legal_moves_as_int"]
    return int(legal[rng.integers(len(legal))])


def start_state(game: HLEGame) -> HanabiState:
    """The game's deal here, before its first move."""
    return HanabiState(game.config, deck=game.deck, start_player=game.start_player)


def replay_moves(blueprint, game: HLEGame) -> List[Tuple[int, int, int]]:
    """Replays HLE's game here and asks `blueprint` at every position: (move index, the
    agent's move in HLE, the blueprint's move here) where they differ."""
    state = start_state(game)
    differences = []
    for t, move in enumerate(game.moves):
        ours = blueprint.act(state)
        if ours != game.agent_moves[t]:
            differences.append((t, game.agent_moves[t], ours))
        state.apply(move)
    if not state.is_terminal or state.score != game.score:
        raise AssertionError(f"HLE's game of deck {game.deck} does not replay here")
    return differences


def self_play_here(blueprint, games: List[HLEGame]) -> np.ndarray:
    """The blueprint's self-play scores here on the games' deals (one batch), int (G,)."""
    batch = HanabiBatch.from_states(start_state(g) for g in games)
    blueprint.rollout(batch, -1)
    return batch.scores().astype(np.int64)


def agent_class(spec: str):
    """The rl_env Agent class of an hle: spec (through the blueprint loaded from it)."""
    return type(load_blueprint(spec).obj.agent(2))


def measure(spec: str, players: int, games: int, seed0: int = 0,
            policy=None) -> Dict[str, Any]:
    """HLE's games of the agent on seeds seed0 .. seed0+games-1 (moves played by `policy`
    if given) and the comparison here."""
    config = HanabiConfig(players=players)
    blueprint = load_blueprint(spec)
    cls = agent_class(spec)
    t0 = time.perf_counter()
    played = [play_in_hle(config, seed0 + i, cls, policy=policy) for i in range(games)]
    t1 = time.perf_counter()
    differences = [d for g in played for d in replay_moves(blueprint, g)]
    t2 = time.perf_counter()
    out = {"players": players, "games": games, "positions": sum(len(g.moves) for g in played),
           "differences": len(differences), "hle_s": t1 - t0, "replay_s": t2 - t1}
    if policy is None:
        here = self_play_here(blueprint, played)
        hle = np.array([g.score for g in played], dtype=np.int64)
        out.update(hle=mean_sem(hle.astype(np.float64)), here=mean_sem(here.astype(np.float64)),
                   same_scores=int(np.sum(here == hle)))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=SIMPLE, help=f"the hle: spec (default {SIMPLE})")
    parser.add_argument("--games", type=int, default=200, help="games per player count")
    parser.add_argument("--players", default="2,3", help="comma-separated player counts")
    parser.add_argument("--seed", type=int, default=0, help="HLE seed of the first deal")
    parser.add_argument("--random-games", type=int, default=100,
                        help="games of uniformly random play per player count, the agent "
                             "asked at each position (0: none)")
    args = parser.parse_args(argv)
    if args.games < 2 or args.random_games < 0:
        parser.error("--games must be >= 2 and --random-games >= 0")
    counts = [int(p) for p in args.players.split(",") if p.strip()]
    print(f"{args.spec}: here (hle: blueprint) against inside HLE's rl_env, on HLE's deals of "
          f"seeds {args.seed} .. {args.seed + args.games - 1}")
    print("| players | games | positions compared | differences | self-play in HLE "
          "| self-play here | same score | HLE s | replay s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for players in counts:
        r = measure(args.spec, players, args.games, args.seed)
        print(f"| {players} | {r['games']} | {r['positions']:,} | {r['differences']} | "
              f"{r['hle'][0]:.3f} +- {r['hle'][1]:.3f} | {r['here'][0]:.3f} +- "
              f"{r['here'][1]:.3f} | {r['same_scores']}/{r['games']} | {r['hle_s']:.1f} | "
              f"{r['replay_s']:.1f} |")
    if args.random_games:
        first = args.seed + args.games
        print(f"\nthe agent asked at every position of uniformly random games inside HLE "
              f"(seeds {first} .. {first + args.random_games - 1}), and here")
        print("| players | games | positions compared | differences |")
        print("|---:|---:|---:|---:|")
        for players in counts:
            r = measure(args.spec, players, args.random_games, first, policy=uniform_policy)
            print(f"| {players} | {r['games']} | {r['positions']:,} | {r['differences']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
