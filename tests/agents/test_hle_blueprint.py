"""`hle:` blueprints: agents written against HLE's rl_env, run here unchanged.

Against the real HLE (skipped without it): the observation dict built here is HLE's own,
field by field, at every position of games at 2 to 5 players; HLE's SimpleAgent makes
here the move it makes inside HLE at every position of 200 + 200 of HLE's deals, and its
self-play scores the same on them (and so does a stronger rl_env agent written here, whose
games score points); the adapter never peeks at the seat's own cards or the deck; bad
input is a clear BlueprintError; `lbs-pz eval --blueprint hle:...` runs. The HLE side is
driven by benchmarks/hle_agents.py (the figure's own driver).
"""

from __future__ import annotations

import json
import pickle
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("hanabi_learning_environment.rl_env")

from hanabi_learning_environment.agents.random_agent import RandomAgent  # noqa: E402
from hanabi_learning_environment.agents.simple_agent import SimpleAgent  # noqa: E402

from tests.helpers.engine import sample_consistent_hand  # noqa: E402
from tests.helpers.scripts import load_script  # noqa: E402
from lbs_pz.agents import BLUEPRINT_KINDS, BlueprintError, load_blueprint, spec_help  # noqa: E402
from lbs_pz.agents.hle_blueprint import (HLEAgentAdapter, HLEBlueprint,  # noqa: E402
                                         hle_move_dict, hle_move_id, hle_observation)
from lbs_pz.cli import main  # noqa: E402
from lbs_pz.engine import HanabiConfig  # noqa: E402
from lbs_pz.web.games import ApiError, GameStore  # noqa: E402

hle = load_script("benchmarks/hle_agents.py")

SIMPLE = "hle:hanabi_learning_environment.agents.simple_agent.SimpleAgent"
RANDOM = "hle:hanabi_learning_environment.agents.random_agent:RandomAgent"
FIELDS = ["current_player", "current_player_offset", "life_tokens", "information_tokens",
          "num_players", "deck_size", "fireworks", "legal_moves", "legal_moves_as_int",
          "observed_hands", "discard_pile", "card_knowledge", "vectorized"]

# examples/hle_agent.py's CarefulAgent, written against rl_env's interface, reads most of the
# dict's fields and answers with dicts and ids: its games last and score, unlike SimpleAgent's.
CAREFUL_FILE = "examples/hle_agent.py"


@pytest.fixture(scope="module")
def careful_file():
    return CAREFUL_FILE


@pytest.fixture(scope="module")
def careful(careful_file):
    """(the blueprint, the agent class) of examples/hle_agent.py's CarefulAgent."""
    bp = load_blueprint(f"hle:{careful_file}:CarefulAgent")
    return bp, type(bp.obj.agent(2))


def variant(config):
    return (f"{config.players}p-{config.colors}x{config.ranks}-h{config.hand_size}-"
            f"{config.observation_type}{'-random-start' if config.random_start_player else ''}")


def _without_pyhanabi(obs):
    assert obs.pop("pyhanabi") is None
    return obs


# --- (a) the observation dict is HLE's ------------------------------------------------------

OBSERVATION_CONFIGS = [HanabiConfig(players=2), HanabiConfig(players=3),
                       HanabiConfig(players=4), HanabiConfig(players=5),
                       HanabiConfig(players=3, random_start_player=True),
                       HanabiConfig(players=2, observation_type="minimal"),
                       HanabiConfig(players=3, colors=3, ranks=4, hand_size=3,
                                    max_information_tokens=5, max_life_tokens=2)]


@pytest.mark.parametrize("config", OBSERVATION_CONFIGS, ids=variant)
def test_the_observation_dict_is_hles_field_by_field(config, careful):
    _, agent = careful
    compared = 0
    for seed in range(4):
        policy = hle.uniform_policy if seed % 2 else None
        game = hle.play_in_hle(config, seed, agent, every_seat=True, policy=policy)
        state = hle.start_state(game)
        for t, (mover, theirs) in enumerate(game.observations):
            assert state.current_player == mover
            for seat in range(config.players):
                ours = _without_pyhanabi(hle_observation(state, seat))
                assert list(ours) == list(theirs[seat]), "the fields and their order"
                for field in FIELDS:
                    assert ours[field] == theirs[seat][field], \
                        (field, seat, t, game.deck, game.moves[:t])
                compared += 1
            state.apply(game.moves[t])
        assert state.is_terminal and state.score == game.score
    assert compared > 100


def test_move_dicts_and_ids_round_trip():
    for config in (HanabiConfig(), HanabiConfig(players=4, colors=3, ranks=3)):
        for move in range(config.num_moves):
            assert hle_move_id(config, hle_move_dict(config, move)) == move
            assert hle_move_id(config, move) == move and hle_move_id(config, np.int64(move)) == move


# --- (b), (c) the same moves and scores as inside HLE ---------------------------------------

@pytest.mark.parametrize("players", [2, 3])
def test_simple_agent_makes_hles_moves_and_scores_on_200_deals(players):
    bp = load_blueprint(SIMPLE)
    config = HanabiConfig(players=players)
    games = [hle.play_in_hle(config, seed, SimpleAgent) for seed in range(200)]
    assert [d for g in games for d in hle.replay_moves(bp, g)] == []
    assert sum(len(g.moves) for g in games) > 2000
    here = hle.self_play_here(bp, games)
    assert here.tolist() == [g.score for g in games]
    # positions SimpleAgent does not reach in its own games: random play, the agent asked
    mixed = [hle.play_in_hle(config, seed, SimpleAgent, policy=hle.uniform_policy)
             for seed in range(200, 240)]
    assert [d for g in mixed for d in hle.replay_moves(bp, g)] == []


@pytest.mark.parametrize("config", [HanabiConfig(players=2), HanabiConfig(players=3),
                                    HanabiConfig(players=4)], ids=variant)
def test_an_agent_whose_games_score_makes_hles_moves_and_scores(config, careful):
    bp, agent = careful
    games = [hle.play_in_hle(config, seed, agent) for seed in range(25)]
    assert [d for g in games for d in hle.replay_moves(bp, g)] == []
    scores = [g.score for g in games]
    assert np.mean(scores) > 5                    # the comparison covers real games
    assert hle.self_play_here(bp, games).tolist() == scores


# --- (d) no peeking -------------------------------------------------------------------------

@pytest.mark.parametrize("config", [HanabiConfig(players=2), HanabiConfig(players=3)], ids=variant)
def test_the_adapter_never_peeks_at_its_own_hand_or_the_deck(config, careful):
    """The seat's own hand replaced by another it cannot tell apart, the deck re-dealt:
    the observation dict (vectorized included) and every agent's move stay the same."""
    rng = random.Random(5)
    blueprints = [careful[0], load_blueprint(SIMPLE)]
    checked = 0
    for seed in range(6):
        game = hle.play_in_hle(config, seed, careful[1])
        state = hle.start_state(game)
        for move in game.moves:
            seat = state.current_player
            before = hle_observation(state, seat)
            moves = [bp.act(state) for bp in blueprints]
            for _ in range(2):
                hand = sample_consistent_hand(state, seat, rng)
                if hand is None:
                    continue
                other = state.clone()
                other.set_hand(seat, hand, seed=rng.randrange(2**32))
                assert hle_observation(other, seat) == before
                assert [bp.act(other) for bp in blueprints] == moves
                checked += other.hand(seat) != state.hand(seat) or other.deck != state.deck
            state.apply(move)
    assert checked > 50


# --- loading, determinism, pickling -----------------------------------------------------------

def test_the_kind_is_registered_and_loads_in_both_forms():
    kind = BLUEPRINT_KINDS["hle"]
    assert kind.runs_code and not kind.reads_file           # the page: only with --allow-code
    with pytest.raises(ApiError) as err:
        GameStore().check_spec(SIMPLE, "seat 0")
    assert err.value.status == 403 and "--allow-code" in str(err.value)
    assert GameStore(allow_code=True).check_spec(SIMPLE, "seat 0") == SIMPLE
    assert "hle:MODULE_OR_FILE.py:CLASS" in spec_help()
    canonical = "hle:hanabi_learning_environment.agents.simple_agent:SimpleAgent"
    for spec in (SIMPLE, canonical):
        bp = load_blueprint(spec)
        assert isinstance(bp, HLEBlueprint) and bp.spec == canonical
        assert bp.name == "SimpleAgent" and bp.deterministic and bp.fingerprint
    assert isinstance(bp.obj.agent(3), SimpleAgent) and bp.obj.agent(3).config == {"players": 3}
    again = pickle.loads(pickle.dumps(bp))
    assert isinstance(again, HLEBlueprint) and again.spec == canonical


def test_randomness_is_declared():
    assert load_blueprint(RANDOM).deterministic is False      # HLE's RandomAgent, known
    assert isinstance(load_blueprint(RANDOM).obj.agent(2), RandomAgent)

    class Agent:
        deterministic = False

        def act(self, observation):
            return observation["legal_moves"][0]
    assert HLEAgentAdapter(lambda players: Agent(), "a").deterministic is False
    state = hle.start_state(hle.play_in_hle(HanabiConfig(), 0, SimpleAgent))
    bp = load_blueprint(RANDOM)
    assert all(bp.act(state) in state.legal_moves() for _ in range(20))


# --- (e) bad input --------------------------------------------------------------------------

BAD_AGENTS = textwrap.dedent('''
    class Illegal:
        def __init__(self, config):
            pass
        def act(self, observation):
            return {"action_type": "PLAY", "card_index": 4} if observation["deck_size"] < 0 \\
                else {"action_type": "REVEAL_COLOR", "color": "R", "target_offset": 1,
                      "note": "ignored"} if observation["information_tokens"] == 0 \\
                else {"action_type": "DISCARD", "card_index": 0}
    class Garbage:
        def __init__(self, config):
            self.answer = config.get("answer")
        def act(self, observation):
            return "play the red one"
    class OutOfRange:
        def act(self, observation):
            return {"action_type": "PLAY", "card_index": 9}
    class BadColor:
        def act(self, observation):
            return {"action_type": "REVEAL_COLOR", "color": "X", "target_offset": 1}
    class NoneMove:
        def act(self, observation):
            return None
    class Raises:
        def act(self, observation):
            return observation["pyhanabi"].legal_moves()
    class Broken:
        def __init__(self, config):
            raise RuntimeError("no config for me")
    class NoAct:
        pass
    instance = Garbage({})
''')


@pytest.fixture(scope="module")
def bad_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("hle_bad") / "bad_agents.py"
    path.write_text(BAD_AGENTS)
    return str(path)


@pytest.mark.parametrize("name, words", [
    ("Illegal", ["illegal", "(Discard 0)"]),
    ("Garbage", ["'play the red one'", "not a move of this game", "move dict"]),
    ("OutOfRange", ["card_index must be an int in [0, 5), got 9"]),
    ("BadColor", ["color must be one of the letters R, Y, G, W, B, got 'X'"]),
    ("NoneMove", ["returned None"]),
    ("Raises", ["AttributeError", "'pyhanabi' is None here"]),
])
def test_a_bad_move_is_a_blueprint_error_naming_it(bad_file, name, words):
    bp = load_blueprint(f"hle:{bad_file}:{name}")
    state = hle.start_state(hle.play_in_hle(HanabiConfig(), 0, SimpleAgent))
    with pytest.raises(BlueprintError) as err:
        bp.act(state)             # 8 information tokens: a discard is illegal
    text = str(err.value)
    assert f"blueprint {name!r}" in text and "seat 0 to move" in text, text
    for word in words:
        assert word in text, (word, text)


@pytest.mark.parametrize("spec, words", [
    ("hle:no_such_file.py:Agent", ["does not exist"]),
    ("hle:{bad}:Missing", ["has no 'Missing'", "Garbage"]),
    ("hle:{bad}:Broken", ["Broken({'players': 2}) raised RuntimeError: no config for me"]),
    ("hle:{bad}:NoAct", ["NoAct() (its constructor takes no config) made a NoAct, which has "
                         "no act method"]),
    ("hle:hanabi_learning_environment.agents.no_such_agent.Agent", ["cannot import module"]),
    ("hle:SimpleAgent", ["expected hle:MODULE_OR_FILE.py:CLASS"]),
])
def test_a_bad_spec_is_a_blueprint_error_naming_it(bad_file, spec, words):
    spec = spec.format(bad=bad_file)
    with pytest.raises(BlueprintError) as err:
        load_blueprint(spec)
    text = str(err.value)
    assert "blueprint spec" in text, text
    for word in words:
        assert word in text, (word, text)


class _NoHLE:
    """A meta-path finder for which HLE is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "hanabi_learning_environment":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def test_without_hle_its_agents_are_a_clear_error(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "hanabi_learning_environment"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoHLE(), *sys.meta_path])
    with pytest.raises(BlueprintError, match="not installed .pip install "
                                             "hanabi-learning-environment"):
        load_blueprint(SIMPLE)


def test_an_instance_in_a_file_is_used_as_it_is(bad_file):
    bp = load_blueprint(f"hle:{bad_file}:instance")
    assert bp.name == "Garbage" and bp.obj.agent(2) is bp.obj.agent(4)


def test_an_agent_that_cannot_be_made_for_a_game_size_is_a_blueprint_error():
    def factory(players):
        if players > 2:
            raise ValueError("two players only")
        return SimpleAgent({"players": players})
    bp = HLEBlueprint(HLEAgentAdapter(factory, "two-only"))
    state = hle.start_state(hle.play_in_hle(HanabiConfig(players=3), 0, SimpleAgent))
    with pytest.raises(BlueprintError, match="'two-only': the agent for 3 players raised "
                                             "ValueError: two players only"):
        bp.act(state)


# --- (f) the command line -------------------------------------------------------------------

def test_lbs_pz_eval_runs_an_hle_agent(tmp_path, capsys, careful_file):
    out_json = tmp_path / "r.json"
    spec = f"hle:{careful_file}:CarefulAgent"
    assert main(["eval", "--blueprint", spec, "--games", "30", "--players", "3",
                 "--no-progress", "--json", str(out_json)]) == 0
    assert "CarefulAgent" in capsys.readouterr().out
    data = json.loads(out_json.read_text())
    assert data["games"] == 30 and data["blueprint_spec"] == spec and data["mean"] > 5
    done = subprocess.run([sys.executable, "-m", "lbs_pz.cli", "eval", "--blueprint", SIMPLE,
                           "--games", "20", "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"SimpleAgent ({SIMPLE})" in done.stdout and "games          20" in done.stdout
