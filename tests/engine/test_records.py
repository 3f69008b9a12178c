"""hanab.live JSON replays: export, import, round trip, bad records."""

import json

import numpy as np
import pytest

from lbs_pz.engine import HanabiConfig, HanabiState, move_name
from lbs_pz.engine.records import from_hanablive, to_hanablive


def _random_game(config, seed, moves=None):
    rng = np.random.default_rng(seed)
    state = HanabiState(config, seed=seed)
    while not state.is_terminal and (moves is None or state.num_moves_played < moves):
        state.apply(int(rng.choice(state.legal_moves())))
    return state


@pytest.mark.parametrize("config", [
    HanabiConfig(), HanabiConfig(players=4, random_start_player=True),
    HanabiConfig(players=3, colors=3, ranks=4, hand_size=6, max_information_tokens=4),
])
def test_round_trip_reproduces_the_game(config):
    for seed in range(40):
        state = _random_game(config, seed, moves=None if seed % 2 else 15)
        record = json.loads(json.dumps(to_hanablive(state)))
        again = from_hanablive(record)
        assert again.deck == state.deck and again.move_history == state.move_history
        assert (again.score, again.is_terminal) == (state.score, state.is_terminal)
        for seat in range(config.players):
            np.testing.assert_array_equal(again.encode(seat), state.encode(seat))


def test_record_follows_the_hanablive_conventions():
    config = HanabiConfig()
    state = HanabiState(config, seed=3)
    state.apply(15)        # reveal rank 1 to player 1 (ranks are written from 1)
    state.apply(10)        # player 1 hints color R to player 0
    state.apply(5)         # player 0 plays its oldest card: deck position 0
    record = to_hanablive(state, player_names=["Alice", "Bob"])
    assert record["players"] == ["Alice", "Bob"] and "firstPlayer" not in record
    assert len(record["deck"]) == 50
    # hanab.live's "No Variant" suits: Red, Yellow, Green, Blue, Purple; the engine's
    # colors: R, Y, G, W, B. Blue stays Blue (4 -> 3), White becomes Purple (3 -> 4).
    suit = {0: 0, 1: 1, 2: 2, 3: 4, 4: 3}
    assert [c["suitIndex"] for c in record["deck"]] == [suit[c // 5] for c in state.deck]
    assert record["deck"][0]["rank"] == state.deck[0] % 5 + 1
    assert record["actions"] == [
        {"type": 3, "target": 1, "value": 1},
        {"type": 2, "target": 0, "value": 0},
        {"type": 0, "target": 0},
    ]
    blue = HanabiState(config, seed=3)
    blue.apply(next(m for m in blue.legal_moves()
                    if move_name(config, m) == "(Reveal player +1 color B)"))
    assert to_hanablive(blue)["actions"] == [{"type": 2, "target": 1, "value": 3}]
    assert from_hanablive(to_hanablive(blue)).move_history == blue.move_history
    fewer = HanabiState(HanabiConfig(colors=4), seed=3)     # "4 Suits": the same indices
    assert [c["suitIndex"] for c in to_hanablive(fewer)["deck"]] == \
        [c // 5 for c in fewer.deck]


def test_bad_records_are_clear_errors():
    record = to_hanablive(_random_game(HanabiConfig(), 0, moves=6))
    with pytest.raises(ValueError, match="not a hanab.live game record"):
        from_hanablive({"players": ["a", "b"]})
    broken = json.loads(json.dumps(record))
    broken["actions"][0] = {"type": 0, "target": 49}
    with pytest.raises(ValueError, match="not in player"):
        from_hanablive(broken)
    broken["actions"][0] = {"type": 7, "target": 0}
    with pytest.raises(ValueError, match="unknown action type"):
        from_hanablive(broken)
    broken["deck"] = broken["deck"][:-1]
    with pytest.raises(ValueError, match="deck must hold 50 cards"):
        from_hanablive(broken)
    with pytest.raises(ValueError, match="player names"):
        to_hanablive(HanabiState(HanabiConfig(), seed=0), player_names=["solo"])
