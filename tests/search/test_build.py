"""lbs_pz.search.build: a MethodSpec's agents are built once per process and seat, shared by
`describe`, `made_with` and the games, and built again when a file the spec names changes."""

import os
import textwrap

from lbs_pz.engine import HanabiConfig
from lbs_pz.eval.backends import collect
from lbs_pz.search.build import build_agent, built_agents, describe, made_with
from lbs_pz.search.config import DEFAULTS
from lbs_pz.search.methods import MethodSpec

COUNTING = textwrap.dedent('''
    import os

    from lbs_pz.agents import RuleBot


    class Counting:
        """The simple rule bot, appending a line to $LOADS_FILE each time it is built."""

        name = "counting"

        def __init__(self):
            with open(os.environ["LOADS_FILE"], "a") as f:
                f.write("built\\n")
            self.bot = RuleBot("simple")

        def act(self, state, seat=None):
            return self.bot.act(state, seat)
''')


def _counting_blueprint(tmp_path, monkeypatch) -> tuple:
    """(spec of a py: blueprint that counts its builds, a function returning the count)."""
    path = tmp_path / "counting.py"
    path.write_text(COUNTING)
    loads = tmp_path / "loads.txt"
    monkeypatch.setenv("LOADS_FILE", str(loads))
    count = lambda: len(loads.read_text().splitlines()) if loads.exists() else 0  # noqa: E731
    return f"py:{path}:Counting", count


def test_describe_made_with_and_the_games_share_one_build(tmp_path, monkeypatch):
    spec_string, loads = _counting_blueprint(tmp_path, monkeypatch)
    spec = MethodSpec("lbs-inf", blueprint=spec_string, rollouts=4, belief="grounded+cf")
    game = HanabiConfig()
    assert isinstance(describe(spec, game), list) and loads() == 1
    made_with(spec, game)
    results = collect([spec], {}, games=1, backend="inline", show_progress=False)
    assert len(next(iter(results.values()))) == 1
    assert loads() == 1, "describe, made_with and the game each loaded the blueprint"
    blueprint, searcher = built_agents(spec, game)
    assert searcher is built_agents(spec, game, seat=0)[1] and searcher.blueprint is not None
    # another seat follows the game with its own searcher, so it is built for itself
    other = built_agents(spec, game, seat=1)
    assert other[1] is not searcher and loads() == 2


def test_a_rewritten_blueprint_file_is_built_again(tmp_path, monkeypatch):
    spec_string, loads = _counting_blueprint(tmp_path, monkeypatch)
    spec = MethodSpec("blueprint", blueprint=spec_string)
    first = built_agents(spec, HanabiConfig())[0]
    assert built_agents(spec, HanabiConfig())[0] is first and loads() == 1
    path = tmp_path / "counting.py"
    path.write_text(COUNTING + "\n# changed\n")
    os.utime(path, ns=(1, 1))           # a new mtime, whatever the file system's clock
    assert built_agents(spec, HanabiConfig())[0] is not first and loads() == 2


def test_build_agent_builds_anew_and_parses_the_depth_once():
    spec = MethodSpec("LBS-016", blueprint="simple", rollouts=4, belief="grounded+cf")
    assert spec.method == "lbs-16" and spec.depth == 16
    assert MethodSpec("sparta").depth == MethodSpec("lbs-inf").depth == -1
    a, b = build_agent(spec)[1], build_agent(spec)[1]
    assert a is not b and a.config == b.config and a.config.rollouts == 4


def test_a_budget_goes_to_the_end_only_where_one_seat_searches():
    """A budget's rollouts to the end (`deep_worlds`) were measured with one seat
    searching: a spec that searches several seats builds its searchers with it at 0 (and
    records no depth rule with its games) unless the spec sets it; one seat keeps the
    default."""
    game = HanabiConfig(colors=2, ranks=2, hand_size=2)
    one = MethodSpec("lbs-2", blueprint="simple", budget=4000)
    assert build_agent(one, game)[1].config.deep_worlds == DEFAULTS["deep_worlds"] > 0
    assert made_with(one, game)["deep_worlds"] == DEFAULTS["deep_worlds"]
    for seats in (("all",), (0, 1)):
        several = MethodSpec("lbs-2", blueprint="simple", budget=4000, search_seats=seats)
        assert build_agent(several, game)[1].config.deep_worlds == 0
        assert "deep_worlds" not in made_with(several, game)
    chosen = MethodSpec("lbs-2", blueprint="simple", budget=4000, search_seats=("all",),
                        deep_worlds=512)
    assert build_agent(chosen, game)[1].config.deep_worlds == 512
