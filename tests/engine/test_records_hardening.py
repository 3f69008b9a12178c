"""hanab.live import hardening (issue 12): every malformed field is a ValueError naming the
field and the action, never another move, another card, KeyError, TypeError or RecursionError.

Each misuse runs in a child process (tests/helpers/isolated.py), so a crash fails the test
instead of the run; independent cases share one child and report what each raised on stdout.
"""

from tests.helpers.isolated import assert_raises_cleanly, assert_runs_cleanly

# A valid 2-player game (first moves: rank clue, color clue, play), shared by the children.
_SETUP = """
import copy, json
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.records import from_hanablive, to_hanablive
state = HanabiState(HanabiConfig(), seed=3)
for move in (15, 10, 5):   # reveal rank 1 to player 1, player 1 hints R, player 0 plays slot 0
    state.apply(move)
GOOD = to_hanablive(state)
assert GOOD["actions"][0] == {"type": 3, "target": 1, "value": 1}
assert GOOD["actions"][1] == {"type": 2, "target": 0, "value": 0}

def nest(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value

def outcome(mutate):
    record = copy.deepcopy(GOOD)
    mutate(record)
    try:
        from_hanablive(record)
        return "ok"
    except Exception as err:
        return f"{type(err).__name__}: {err}"
"""


def _run_cases(cases: str) -> dict:
    """Run `cases` (a dict literal name -> mutate(record)) in one child; name -> outcome."""
    out = assert_runs_cleanly(_SETUP + f"""
cases = {cases}
for name, mutate in cases.items():
    print(name, "=>", outcome(mutate).replace("\\n", " "))
""")
    return dict(line.split(" => ", 1) for line in out.splitlines() if " => " in line)


def _assert_value_errors(results: dict, expected: dict):
    for name, fragment in expected.items():
        got = results[name]
        assert got.startswith("ValueError: "), f"{name}: {got}"
        assert fragment in got, f"{name}: {got!r} does not name {fragment!r}"


def test_issue_findings_are_value_errors_naming_field_and_action():
    """The issue's findings: each used to become another move or card silently."""
    results = _run_cases("""{
        "color -1": lambda r: r["actions"][1].update(value=-1),
        "color 5 of 5": lambda r: r["actions"][1].update(value=5),
        "rank 0": lambda r: r["actions"][0].update(value=0),
        "rank 6": lambda r: r["actions"][0].update(value=6),
        "target 201": lambda r: r["actions"][0].update(target=201),
        "target True": lambda r: r["actions"][0].update(target=True),
        "target 1.0": lambda r: r["actions"][0].update(target=1.0),
        "value 1.9": lambda r: r["actions"][0].update(value=1.9),
        "play order 0.0": lambda r: r["actions"][2].update(target=0.0),
        "card rank 6": lambda r: r["deck"][7].update(rank=6),
        "card rank 0": lambda r: r["deck"][7].update(rank=0),
        "card suit 5": lambda r: r["deck"][7].update(suitIndex=5),
        "card suit True": lambda r: r["deck"][7].update(suitIndex=True),
        "card rank 2.0": lambda r: r["deck"][7].update(rank=2.0),
    }""")
    _assert_value_errors(results, {
        "color -1": "actions[1].value (color)", "color 5 of 5": "actions[1].value (color)",
        "rank 0": "actions[0].value (rank)", "rank 6": "actions[0].value (rank)",
        "target 201": "actions[0].target", "target True": "actions[0].target",
        "target 1.0": "actions[0].target", "value 1.9": "actions[0].value",
        "play order 0.0": "actions[2].target", "card rank 6": "deck[7].rank",
        "card rank 0": "deck[7].rank", "card suit 5": "deck[7].suitIndex",
        "card suit True": "deck[7].suitIndex", "card rank 2.0": "deck[7].rank",
    })
    assert "got True (bool)" in results["target True"]
    assert "got 1.0 (float)" in results["target 1.0"]


def test_structure_errors_are_value_errors():
    results = _run_cases("""{
        "clue to self": lambda r: r["actions"][0].update(target=0),
        "type 9": lambda r: r["actions"][0].update(type=9),
        "type True": lambda r: r["actions"][0].update(type=True),
        "type '0'": lambda r: r["actions"][0].update(type="0"),
        "no type": lambda r: r["actions"][0].pop("type"),
        "no target": lambda r: r["actions"][0].pop("target"),
        "no value": lambda r: r["actions"][0].pop("value"),
        "action list": lambda r: r["actions"].__setitem__(0, [3, 1, 1]),
        "actions dict": lambda r: r.__setitem__("actions", {"0": 1}),
        "no players": lambda r: r.pop("players"),
        "no deck": lambda r: r.pop("deck"),
        "one player": lambda r: r.__setitem__("players", ["solo"]),
        "seven players": lambda r: r.__setitem__("players", list("abcdefg")),
        "players str": lambda r: r.__setitem__("players", "ab"),
        "player name int": lambda r: r.__setitem__("players", ["a", 2]),
        "3 names 2p config": lambda r: r.__setitem__("players", ["a", "b", "c"]),
        "deck str": lambda r: r.__setitem__("deck", "R1R1"),
        "deck short": lambda r: r["deck"].pop(),
        "deck card int": lambda r: r["deck"].__setitem__(0, 0),
        "deck no rank": lambda r: r["deck"][0].pop("rank"),
        "deck wrong mix": lambda r: r["deck"].__setitem__(
            0, next(dict(c) for c in r["deck"] if c != r["deck"][0])),
        "config list": lambda r: r.__setitem__("config", [2]),
        "config players 7": lambda r: r["config"].update(players=7),
        "config hand 0": lambda r: r["config"].update(hand_size=0),
        "config obs type": lambda r: r["config"].update(observation_type="x-ray"),
        "variant": lambda r: r.__setitem__("options", {"variant": "Rainbow (6 Suits)"}),
        "variant vs config": lambda r: r.__setitem__("options", {"variant": "3 Suits"}),
        "options list": lambda r: r.__setitem__("options", ["No Variant"]),
        "firstPlayer 2": lambda r: r.__setitem__("firstPlayer", 2),
        "firstPlayer 1.0": lambda r: r.__setitem__("firstPlayer", 1.0),
        "not a dict": lambda r: r.clear() or r.update(x=1),
        "deep actions": lambda r: r["actions"].__setitem__(0, nest(5000)),
        "deep value": lambda r: r["actions"][0].update(value=nest(5000)),
        "deep deck": lambda r: r.__setitem__("deck", nest(5000)),
        "deep config": lambda r: r["config"].update(players=nest(5000)),
        "config float": lambda r: r["config"].update(ranks=5.0),
    }""")
    _assert_value_errors(results, {
        "clue to self": "cannot clue themself", "type 9": "actions[0].type",
        "type True": "actions[0].type", "type '0'": "actions[0].type",
        "no type": "actions[0] lacks 'type'", "no target": "actions[0] lacks 'target'",
        "no value": "actions[0] lacks 'value'", "action list": "actions[0] must be an object",
        "actions dict": "actions must be a list", "no players": "missing 'players'",
        "no deck": "missing 'deck'", "one player": "2 to 5 players",
        "seven players": "2 to 5 players", "players str": "players must be a list",
        "player name int": "players must be a list", "3 names 2p config": "config.players",
        "deck str": "deck must be a list", "deck short": "deck must hold 50 cards",
        "deck card int": "deck[0] must be an object", "deck no rank": "deck[0] lacks 'rank'",
        "deck wrong mix": "copies of", "config list": "config must be an object",
        "config players 7": "players", "config hand 0": "hand_size",
        "config obs type": "observation_type", "variant": "unsupported variant",
        "variant vs config": "config.colors", "options list": "options must be an object",
        "firstPlayer 2": "firstPlayer", "firstPlayer 1.0": "firstPlayer",
        "not a dict": "missing 'players'", "deep actions": "actions[0] must be an object",
        "deep value": "actions[0].value", "deep deck": "deck must hold 50 cards",
        "deep config": "config.players", "config float": "config.ranks",
    })


def test_json_text_errors():
    """Invalid, non-object and deeply nested JSON text are ValueErrors too."""
    results = _run_cases("""{
        "json garbage": lambda r: None,
    }""")  # the child's setup works; the JSON cases follow as one-liners
    assert results["json garbage"] == "ok"
    for text, fragment in [("'{not json'", "invalid JSON"), ("'[1, 2]'", "expected an object"),
                           ("'[' * 100000 + ']' * 100000", "nested too deeply"),
                           ("b'\\xff\\xfe'", "invalid JSON"), ("42", "expected an object")]:
        assert_raises_cleanly(f"from lbs_pz.engine.records import from_hanablive\n"
                              f"from_hanablive({text})", "ValueError", fragment)


def test_end_of_game_marker_and_export_arguments():
    out = assert_runs_cleanly(_SETUP + """
record = copy.deepcopy(GOOD)
record["actions"].insert(1, {"type": 4, "target": 0, "value": 1})
assert from_hanablive(record).move_history == [15]          # actions after type 4 ignored
for bad in ("ab", [1, 2], 7):
    try:
        to_hanablive(state, player_names=bad)
        print("accepted", bad)
    except ValueError as err:
        print("refused", repr(bad), err)
try:
    to_hanablive("state")
except ValueError as err:
    print("refused state", err)
""")
    assert "accepted" not in out and out.count("refused") == 4
    assert "player_names" in out and "state must be a HanabiState" in out


def test_mutated_records_raise_value_error_or_round_trip():
    """Hypothesis mutates valid records (any field, any JSON-ish value, deletions, deep
    nesting); the importer either raises ValueError or returns a game that exports and
    re-imports to the same deck and moves. Runs in a child: a crash fails the test."""
    assert_runs_cleanly("""
import copy, json
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.records import from_hanablive, to_hanablive

def nest(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value

def game(config, seed, moves):
    rng = np.random.default_rng(seed)
    state = HanabiState(config, seed=seed)
    while not state.is_terminal and state.num_moves_played < moves:
        state.apply(int(rng.choice(state.legal_moves())))
    return to_hanablive(state)

BASES = [game(HanabiConfig(), 1, 12),
         game(HanabiConfig(players=3, colors=3, ranks=4, hand_size=3,
                           random_start_player=True), 2, 10)]
no_config = copy.deepcopy(BASES[0])
del no_config["config"]
BASES.append(no_config)

leaf = st.one_of(st.integers(-3, 60), st.integers(-2**70, 2**70), st.booleans(), st.none(),
                 st.floats(allow_nan=True), st.text(max_size=3),
                 st.integers(1, 3000).map(nest))
value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["type", "target", "value", "rank",
                                                        "suitIndex", "x"]), inner, max_size=3),
                     max_leaves=6)

def containers(record):
    yield record
    for key in ("deck", "actions", "config", "options"):
        part = record.get(key)
        if isinstance(part, (dict, list)):
            yield part
    for key, count in (("deck", 4), ("actions", None)):
        parts = record.get(key)
        for part in parts[:count] if isinstance(parts, list) else []:
            if isinstance(part, (dict, list)):
                yield part

@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(range(len(BASES))),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6),
                          st.sampled_from(["set", "delete", "append"]), value),
                min_size=1, max_size=3))
def check(base, edits):
    record = copy.deepcopy(BASES[base])
    for pick, key_pick, op, new in edits:
        parts = list(containers(record))
        part = parts[pick % len(parts)]
        keys = list(part) if isinstance(part, dict) else list(range(len(part)))
        if op == "append" and isinstance(part, list):
            part.append(new)
        elif not keys:
            continue
        elif op == "delete":
            del part[keys[key_pick % len(keys)]]
        else:
            part[keys[key_pick % len(keys)]] = new
    try:
        state = from_hanablive(record)
    except ValueError:
        return
    again = from_hanablive(json.loads(json.dumps(to_hanablive(state))))
    assert again.deck == state.deck and again.move_history == state.move_history
    assert again.start_player == state.start_player and again.config == state.config

check()
""")
