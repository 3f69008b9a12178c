"""`lbs-pz compare`: backends agree, summaries are right, the CLI writes its outputs,
checkpoints are checked against the blueprint, and LBS's defaults never lose."""

import dataclasses
import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

from tests.helpers.paths import ROOT
from lbs_pz.agents import RuleBot, as_blueprint
from lbs_pz.cli import main
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState, Move, encode_move
from lbs_pz.engine.seeds import EVAL, deal_seeds
from lbs_pz.eval.backends import collect
from lbs_pz.eval.report import summarize
from lbs_pz.search.methods import MethodSpec, parse_method
from lbs_pz.models import path as model_path
from lbs_pz.search.agents import LBSAgent
from lbs_pz.search.config import DEFAULTS

CONFIG = {"players": 2}
SPECS = [MethodSpec("blueprint"), MethodSpec("lbs-4", belief="grounded", rollouts=8, seed=3)]


def _scores(results):
    return {label: [g["score"] for g in games] for label, games in results.items()}


def test_inline_and_process_pool_agree():
    inline = collect(SPECS, CONFIG, games=3, seed=5, backend="inline", show_progress=False)
    pooled = collect(SPECS, CONFIG, games=3, seed=5, backend="process", workers=2,
                     show_progress=False)
    assert _scores(inline) == _scores(pooled)
    assert [g["game"] for g in pooled["blueprint"]] == [0, 1, 2]
    # The blueprint rows are the rule bot's own self-play on the evaluation deals.
    batch = HanabiBatch(HanabiConfig(), 3, seeds=deal_seeds(EVAL, 5, 0, 3))
    RuleBot("strong").rollout(batch)
    assert _scores(inline)["blueprint"] == batch.scores().tolist()


def test_a_stopped_process_pool_leaves_no_thread_for_the_exit_hook():
    """A run stopped early (Ctrl-C, an error, the consumer leaving) must not leave the
    pool's manager thread running: the interpreter's exit hook would write to the pipe
    that thread is closing ("OSError: Bad file descriptor" printed after Ctrl-C)."""
    from concurrent.futures.process import _threads_wakeups

    from lbs_pz.eval.backends import _process_pool

    slow = MethodSpec("lbs-inf", belief="grounded", rollouts=16)
    games = _process_pool([(slow, CONFIG, game, 0) for game in range(40)], 2, None)
    assert next(games)["score"] >= 0
    games.close()                   # GeneratorExit inside the pool's loop: stopped early
    assert not [thread for thread in _threads_wakeups if thread.is_alive()]


def test_ray_backend_agrees_with_inline():
    ray = pytest.importorskip("ray")
    inline = collect(SPECS, CONFIG, games=2, seed=1, backend="inline", show_progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = collect(SPECS, CONFIG, games=2, seed=1, backend="ray", show_progress=False)
    finally:
        ray.shutdown()
    assert _scores(inline) == _scores(remote)


def test_jsonl_log_resumes_and_splits_runs(tmp_path):
    """Games logged to the JSONL file are reused: a run split in two parts, then resumed
    over the whole range, plays nothing again and equals one uninterrupted run."""
    log = str(tmp_path / "games.jsonl")
    whole = collect(SPECS, CONFIG, games=4, seed=2, backend="inline", show_progress=False)
    collect(SPECS, CONFIG, games=2, seed=2, backend="inline", show_progress=False, jsonl=log)
    collect(SPECS, CONFIG, games=2, first_game=2, seed=2, backend="inline",
            show_progress=False, jsonl=log)
    lines = open(log).read().splitlines()
    assert len(lines) == 2 * 4
    resumed = collect(SPECS, CONFIG, games=4, seed=2, backend="inline", show_progress=False,
                      jsonl=log)
    assert len(open(log).read().splitlines()) == 2 * 4          # nothing replayed
    assert _scores(resumed) == _scores(whole)
    report = collect(SPECS, CONFIG, games=6, seed=2, backend="inline", show_progress=False,
                     jsonl=log, play=False)                       # only what is logged
    assert _scores(report) == _scores(whole)
    # Another seed is another run: it is played, not read from the log.
    collect(SPECS[:1], CONFIG, games=1, seed=3, backend="inline", show_progress=False, jsonl=log)
    assert len(open(log).read().splitlines()) == 2 * 4 + 1


def test_a_game_has_one_key_whichever_variant_fields_are_named(tmp_path):
    """`paper` names only the fields it changes, `compare` every field of the variant: a
    game logged by either is found by the other, also in a log whose lines name only some
    fields (written before keys named all of them)."""
    log = str(tmp_path / "games.jsonl")
    some = dict(players=2, colors=2, ranks=2, hand_size=2)
    every = dataclasses.asdict(HanabiConfig(**some))
    assert every != some
    first = collect(SPECS, some, games=2, seed=0, backend="inline", show_progress=False,
                    jsonl=log)
    again = collect(SPECS, every, games=2, seed=0, backend="inline", show_progress=False,
                    jsonl=log)
    assert len(open(log).read().splitlines()) == 2 * 2 and _scores(again) == _scores(first)
    old = str(tmp_path / "old.jsonl")           # the keys as they were: the fields named
    with open(old, "w") as f:
        for line in open(log):
            entry = json.loads(line)
            spec, _, seed = json.loads(entry["key"])
            entry["key"] = json.dumps([spec, some, seed], sort_keys=True)
            f.write(json.dumps(entry) + "\n")
    report = collect(SPECS, every, games=2, seed=0, backend="inline", show_progress=False,
                     jsonl=old, play=False)
    assert _scores(report) == _scores(first)
    other = collect(SPECS, dict(some, hand_size=3), games=1, seed=0, backend="inline",
                    show_progress=False, jsonl=old)   # another variant is another game
    assert all(len(games) == 1 for games in other.values())
    assert len(open(old).read().splitlines()) == 2 * 2 + len(SPECS)


def test_every_seat_can_search():
    """--search-seats all: a searcher per seat decides every move; seat 0 alone about
    half of them."""
    spec = MethodSpec("lbs-2", belief="grounded", rollouts=4, seed=1)
    both = dataclasses.replace(spec, search_seats=("all",))
    results = collect([spec, both], CONFIG, games=2, backend="inline", show_progress=False)
    for game in results[both.label()]:
        assert game["decisions"] == game["moves"]
    for game in results[spec.label()]:
        assert game["decisions"] == (game["moves"] + 1) // 2


def test_summary_pairs_games_with_the_blueprint():
    results = {
        "blueprint": [{"game": i, "score": s, "seconds": 0.1, "decisions": 0, "rollouts": 0,
                       "fallbacks": 0, "deviations": 0} for i, s in enumerate([20, 22, 25])],
        "x": [{"game": i, "score": s, "seconds": 1.0, "decisions": 10, "rollouts": 100,
               "fallbacks": 1, "deviations": 2} for i, s in enumerate([21, 22, 25])],
    }
    rows = {r["method"]: r for r in summarize(results, max_score=25)}
    assert rows["x"]["paired_diff"] == pytest.approx(1 / 3)
    assert rows["x"]["paired_diff_se"] == pytest.approx(np.std([1, 0, 0], ddof=1) / np.sqrt(3))
    assert rows["x"]["perfect_rate"] == pytest.approx(1 / 3)
    assert rows["x"]["fallback_rate"] == pytest.approx(0.1)
    assert rows["x"]["rollouts_per_second"] == pytest.approx(100.0)


def test_cli_writes_table_json_and_plot(tmp_path, capsys):
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    code = main(["compare", "--methods", "blueprint,lbs-2", "--belief", "grounded",
                 "--rollouts", "4", "--games", "2", "--backend", "inline", "--no-progress",
                 "--json", str(out_json), "--plot", str(out_png)])
    assert code == 0
    table = capsys.readouterr().out
    assert "| blueprint |" in table and "| lbs-2 (grounded) |" in table
    data = json.loads(out_json.read_text())
    assert len(data["per_game"]["blueprint"]) == 2
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_methods_and_seats_are_clear_errors(capsys):
    with pytest.raises(ValueError, match="unknown method"):
        parse_method("mcts")
    assert main(["compare", "--methods", "lbs-0", "--games", "1"]) == 2
    assert main(["compare", "--search-seats", "3", "--games", "1"]) == 2
    assert "error" in capsys.readouterr().err


# --- checkpoints and defaults ------------------------------------------------------------------

class Cautious:
    """A small user blueprint (only `name` and `act`; 17.3 in self-play): plays a card
    known to be playable; else completes the hints (rank, then color) on a playable card
    of the next player; else discards its oldest unhinted card."""
    name = "cautious"

    def act(self, state, seat=None):
        view, config = state.view(seat), state.config
        me, legal = view.player, view.legal_moves
        mine = view.knowledge[me]
        for i, k in enumerate(mine):
            if all(view.fireworks[c] == r for c in k.colors for r in k.ranks):
                return config.hand_size + i                          # play slot i
        if view.information_tokens > 0:
            partner = (me + 1) % view.num_players
            for i, card in enumerate(view.hands[partner]):
                color, rank = divmod(card, config.ranks)
                k = view.knowledge[partner][i]
                if view.fireworks[color] != rank:
                    continue
                if k.hinted_rank is None:
                    return encode_move(config, Move("reveal_rank", target_offset=1, rank=rank))
                if k.hinted_color is None:
                    return encode_move(config, Move("reveal_color", target_offset=1, color=color))
        for i, k in enumerate(mine):
            if i in legal and k.hinted_rank is None and k.hinted_color is None:
                return i                                             # discard slot i
        return 0 if 0 in legal else max(legal)


def test_lbs_k_without_a_value_rolls_to_the_end_and_says_so(capsys):
    """No value ships for the simple bot: lbs-4 rolls out to the end, in the log and label."""
    code = main(["compare", "--blueprint", "simple", "--methods", "lbs-4", "--rollouts", "4",
                 "--games", "1", "--backend", "inline", "--no-progress"])
    assert code == 0
    captured = capsys.readouterr()
    assert "rollouts go to the end" in captured.err and "--value-checkpoint" in captured.err
    assert "rollouts to the end]" in captured.out


def test_a_checkpoint_for_another_blueprint_is_one_clear_line(capsys):
    """The shipped value and belief were trained for the strong bot: with the weak bot
    they are a mismatch (one line naming the fix), accepted with --allow-mismatch."""
    value = model_path("value_strong_2p")
    base = ["compare", "--blueprint", "weak", "--methods", "lbs-2", "--rollouts", "4",
            "--games", "1", "--backend", "inline", "--no-progress"]
    assert main(base + ["--value-checkpoint", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "strong" in err and "weak" in err and "Traceback" not in err
    assert main(base + ["--belief-checkpoint", model_path("belief_strong_2p")]) == 2
    assert "strong" in capsys.readouterr().err
    assert main(base + ["--value-checkpoint", value, "--allow-mismatch"]) == 0


def test_a_matching_checkpoint_is_used():
    spec = MethodSpec("lbs-2", blueprint="strong", rollouts=4,
                      belief_checkpoint=model_path("belief_strong_2p"),
                      value_checkpoint=model_path("value_strong_2p"))
    results = collect([spec], CONFIG, games=1, backend="inline", show_progress=False)
    (games,) = results.values()
    assert games[0]["depth"] == 2 and games[0]["decisions"] > 0


SMALL = HanabiConfig(colors=2, hand_size=3)    # short games: Python rollouts stay fast


def _paired_gains(blueprint, config, games, rollouts):
    """LBSAgent(blueprint) with its defaults on seat 0 vs the blueprint alone, on the
    first `games` evaluation deals of `config`: the score differences."""
    blueprint = as_blueprint(blueprint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # "no value: rollouts to the end"
        agent = LBSAgent(blueprint, rollouts=rollouts, seed=0, game=config)
    gains = []
    for seed in deal_seeds(EVAL, 0, 0, games):
        alone = HanabiState(config, seed=int(seed))
        searched = alone.clone()
        while not alone.is_terminal:
            alone.apply(blueprint.act(alone))
        while not searched.is_terminal:
            mover = agent if searched.current_player == 0 else blueprint
            searched.apply(mover.act(searched))
        gains.append(searched.score - alone.score)
    return agent, np.array(gains, dtype=np.float64)


def test_lbs_defaults_never_lose_with_the_strong_bot():
    """The strong bot's shipped belief and value are found and used: LBS-16."""
    agent, gains = _paired_gains(RuleBot("strong"), HanabiConfig(), games=4, rollouts=16)
    assert agent.depth == 16 and "learned+cf" in agent.defaults[0]
    assert "value_strong_2p" in agent.defaults[1]
    assert gains.mean() >= 0, gains


def test_lbs_defaults_never_lose_with_a_users_blueprint():
    """Nothing ships for a user's class: grounded+cf and rollouts to the end."""
    agent, gains = _paired_gains(Cautious(), SMALL, games=4, rollouts=8)
    assert agent.depth == -1 and "grounded+cf" in agent.defaults[0]
    assert agent.depth_reason and "--value-checkpoint" in agent.depth_reason
    assert gains.mean() >= 0, gains


@pytest.mark.slow
@pytest.mark.parametrize("blueprint, config, games, rollouts", [
    (RuleBot("strong"), HanabiConfig(), 30, 64),
    (Cautious(), SMALL, 30, 32),
], ids=["strong", "user"])
def test_lbs_defaults_never_lose_over_more_games(blueprint, config, games, rollouts):
    _, gains = _paired_gains(blueprint, config, games, rollouts)
    assert gains.mean() >= 0, gains


def test_lbs_defaults_are_picked_again_for_another_variant():
    """Made for the default game, the agent finds the strong bot's shipped belief and
    value; moved to a 3-player game it finds that game's; moved to a variant where none
    ships (3 players, 4 cards) it switches to grounded+cf and rollouts to the end, with a
    warning."""
    agent = LBSAgent(RuleBot("strong"), rollouts=4, seed=0)
    assert agent.depth == 16 and "learned+cf" in agent.defaults[0]
    three = HanabiState(HanabiConfig(players=3), seed=int(deal_seeds(EVAL, 0, 0, 1)[0]))
    assert agent.act(three) in three.legal_moves()
    assert agent.depth == 16 and "belief_strong_3p" in agent.defaults[0]
    state = HanabiState(HanabiConfig(players=3, hand_size=4),
                        seed=int(deal_seeds(EVAL, 0, 0, 1)[0]))
    with pytest.warns(UserWarning, match="rollouts go to the end"):
        move = agent.act(state)
    assert move in state.legal_moves()
    assert agent.depth == -1 and agent.name == "lbs-inf" and "grounded+cf" in agent.defaults[0]


@pytest.mark.parametrize("rule", ["paired", "threshold"])
def test_pruning_and_search_precision_options(capsys, rule):
    """--pruning and --search-precision reach the search and name themselves in the row;
    bfloat16 on a blueprint without a precision is one clear line, exit status 2."""
    code = main(["compare", "--blueprint", "lstm:public_lstm_2p", "--methods", "lbs-1",
                 "--belief", "grounded", "--rollouts", "4", "--games", "1", "--pruning",
                 rule, "--search-precision", "bfloat16", "--backend", "inline",
                 "--no-progress"])
    assert code == 0
    assert f"| lbs-1 (grounded, pruning {rule}, bfloat16) | 1 |" in capsys.readouterr().out
    assert main(["compare", "--blueprint", "strong", "--methods", "lbs-1", "--belief",
                 "grounded", "--rollouts", "4", "--games", "1", "--search-precision",
                 "bfloat16", "--backend", "inline", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["lbs-pz compare: error: precision 'bfloat16': the blueprint 'strong' "
                   "computes in no settable precision (only neural blueprints, e.g. lstm:, do)"]


def test_delta_reaches_the_search_and_names_the_row():
    """--delta: the paired gain a deviation must exceed (the paper's 0.05 by default); a
    larger one makes the search deviate less, on the same deals."""
    from lbs_pz.search.build import build_agent

    spec = MethodSpec("lbs-1", belief="grounded", rollouts=8, delta=0.5)
    assert build_agent(spec)[1].config.delta == 0.5
    assert spec.label() == "lbs-1 (grounded, delta 0.5)"
    assert MethodSpec("lbs-1", belief="grounded").label() == "lbs-1 (grounded)"
    assert build_agent(MethodSpec("sparta", rollouts=8, delta=0.2))[1].config.delta == 0.2
    deviations = {}
    for delta in (0.05, 1e9):
        out = collect([MethodSpec("lbs-1", belief="grounded", rollouts=16, delta=delta)],
                      {}, games=2, backend="inline", show_progress=False)
        games = next(iter(out.values()))
        deviations[delta] = sum(g["deviations"] for g in games)
    assert deviations[1e9] == 0 < deviations[0.05]


def test_blueprint_games_in_a_log_are_shared_by_every_search_setting(tmp_path):
    """The blueprint searches nothing: its spec keeps the default SearchConfig whatever
    knobs it is given (still validated), so two runs that differ only in search settings
    play the blueprint's games once."""
    assert MethodSpec("blueprint", rollouts=8, delta=0.5) == MethodSpec("blueprint")
    with pytest.raises(ValueError):
        MethodSpec("blueprint", rollouts=0)
    log = str(tmp_path / "g.jsonl")
    small = dict(players=2, colors=2, ranks=2, hand_size=2)
    for rollouts in (4, 8):
        specs = [MethodSpec("blueprint", rollouts=rollouts),
                 MethodSpec("lbs-inf", belief="grounded", rollouts=rollouts)]
        collect(specs, small, games=2, seed=0, backend="inline", show_progress=False,
                jsonl=log)
    methods = [json.loads(line)["method"] for line in open(log)]
    assert methods.count("blueprint") == 2
    assert len(methods) == 2 + 2 * 2


def test_a_setting_recommended_for_one_depth_replays_only_that_depths_games(tmp_path):
    """A log line keeps the recommended settings of its method only: games of LBS-16,
    whose settings did not change, stay when a delta is chosen for LBS-1, including the
    lines of older logs, which kept every method's; LBS-1's games under another delta
    are played again."""
    log = tmp_path / "g.jsonl"
    specs = [MethodSpec("lbs-16", blueprint="strong", rollouts=4),
             MethodSpec("lbs-1", blueprint="strong", rollouts=4)]

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            collect(specs, {}, games=1, seed=0, backend="inline", show_progress=False,
                    jsonl=str(log))
        return len(log.read_text().splitlines()), [str(w.message) for w in caught
                                                    if "played again" in str(w.message)]

    assert run() == (2, [])
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    made = {e["method"]: e["made_with"]["recommended"] for e in entries}
    assert made == {"lbs-16 (default belief)": {}, "lbs-1 (default belief)":
                    {"lbs-1": {"delta": 0.25}}}
    for e in entries:                     # as an older log wrote them: every method's
        e["made_with"]["recommended"] = {"lbs-1": {"delta": 0.25}, "lbs-2": {"delta": 0.5}}
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert run() == (2, [])
    lbs1 = next(e for e in entries if e["method"] == "lbs-1 (default belief)")
    lbs1["made_with"]["recommended"] = {"lbs-1": {"delta": 0.05}}
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    lines, said = run()
    assert lines == 3 and len(said) == 1
    assert "1 games of lbs-1 (default belief) on 'strong' (seed 0)" in said[0]
    assert "before its recommended settings changed" in said[0]


def _play_one_logged(spec: MethodSpec, game: dict, log) -> tuple:
    """Game 0 of `spec` in `game` through a compare log: (the log's lines, the warnings
    that said a logged game is played again)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        collect([spec], game, games=1, seed=0, backend="inline", show_progress=False,
                jsonl=str(log))
    return [json.loads(line) for line in log.read_text().splitlines()], \
        [str(w.message) for w in caught if "played again" in str(w.message)]


def test_games_played_under_other_speed_settings_are_played_again(tmp_path):
    """A search over a blueprint whose kind picks its own speed settings (a user's class,
    one Python call per position: threshold pruning) records them with each game; a line
    without them, as a log wrote under other speed defaults, is played again with a
    warning that names them, and a spec that sets the knob itself records none."""
    small = dict(players=2, colors=2, ranks=2, hand_size=2)
    log = tmp_path / "g.jsonl"
    bot = "py:examples/my_blueprint.py:HintPlayDiscard"

    def run(spec):
        return _play_one_logged(spec, small, log)

    default = MethodSpec("lbs-1", blueprint=bot, rollouts=4)
    entries, said = run(default)
    assert said == [] and entries[0]["made_with"]["speed"] == {"pruning": "threshold"}
    del entries[0]["made_with"]["speed"]
    log.write_text(json.dumps(entries[0]) + "\n")
    entries, said = run(default)
    assert len(entries) == 2 and len(said) == 1 and "before its speed settings changed" in said[0]
    assert run(default) == (entries, [])              # now in the log: nothing again
    entries, said = run(MethodSpec("lbs-1", blueprint=bot, rollouts=4, pruning="threshold"))
    assert said == [] and "speed" not in entries[-1]["made_with"]


@pytest.mark.parametrize("default, key, recorded, rule, unrecorded", [
    (MethodSpec("sparta", blueprint="simple", rollouts=256), "margin_worlds", 0, "margin rule",
     [MethodSpec("sparta", blueprint="simple", rollouts=64),
      MethodSpec("sparta", blueprint="simple", rollouts=256, margin_worlds=0)]),
    (MethodSpec("lbs-2", blueprint="simple", budget=2000), "deep_worlds", DEFAULTS["deep_worlds"],
     "budget's depth rule", [MethodSpec("lbs-2", blueprint="simple", rollouts=8),
                             MethodSpec("lbs-2", blueprint="simple", budget=2000, deep_worlds=0)]),
], ids=["sparta-margin", "budget-depth"])
def test_games_played_before_a_measured_rule_are_played_again(tmp_path, default, key, recorded,
                                                              rule, unrecorded):
    """A setting a measured rule resolves is recorded with each game: SPARTA's margin (0,
    no cap, from 256 worlds up) and a budget's `deep_worlds` (rollouts to the end where it
    affords that many worlds). A line without it, as a log wrote before the rule, is played
    again with a warning naming the rule; where the rule does not apply (fewer worlds, no
    budget) or the spec sets the knob itself, nothing is recorded."""
    small = dict(players=2, colors=2, ranks=2, hand_size=2)
    log = tmp_path / "g.jsonl"

    def run(spec):
        return _play_one_logged(spec, small, log)

    entries, said = run(default)
    assert said == [] and entries[0]["made_with"][key] == recorded
    del entries[0]["made_with"][key]
    log.write_text(json.dumps(entries[0]) + "\n")
    entries, said = run(default)
    assert len(entries) == 2 and len(said) == 1 and f"before its {rule} changed" in said[0]
    assert run(default) == (entries, [])              # now in the log: nothing again
    for spec in unrecorded:
        entries, said = run(spec)
        assert said == [] and key not in entries[-1]["made_with"]


def test_games_made_with_other_files_are_played_again(tmp_path):
    """A log keeps with each game the files its spec resolved to (`made_with`): after a
    user's blueprint file or a value checkpoint changes under the same spec, its games
    are played again (with a warning), never read as the new files' games; unchanged
    files replay nothing, and lines of a log written before `made_with` are reused."""
    import shutil

    from lbs_pz.train.configs import ValueTrainConfig
    from lbs_pz.train.value import train_value
    small = dict(players=2, colors=2, ranks=2, hand_size=2)
    log = str(tmp_path / "g.jsonl")
    bot = tmp_path / "bot.py"
    shutil.copy("examples/my_blueprint.py", bot)
    value = str(tmp_path / "value.pt")

    def make_value(seed):
        train_value(ValueTrainConfig(**small, steps=1, minutes=0.0, games_per_step=4,
                                     val_games=4, hidden=8, seed=seed, out=value,
                                     curve="none", progress=False), log=lambda s: None)

    def run():
        specs = [MethodSpec("blueprint", blueprint=f"py:{bot}:HintPlayDiscard"),
                 MethodSpec("lbs-1", blueprint="strong", value_checkpoint=value, rollouts=4)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            collect(specs, small, games=2, seed=0, backend="inline", show_progress=False,
                    jsonl=log)
        return len(open(log).read().splitlines()), [str(w.message) for w in caught
                                                    if "played again" in str(w.message)]

    make_value(0)
    assert run() == (4, [])
    assert run() == (4, [])                          # the same files: nothing played again
    bot.write_text(bot.read_text() + "\n# the same moves, another file\n")
    lines, said = run()
    assert lines == 6 and len(said) == 1 and "2 games of blueprint" in said[0]
    assert "before its blueprint file changed" in said[0]
    make_value(1)
    lines, said = run()
    assert lines == 8 and len(said) == 1
    assert "2 games of lbs-1 (default belief, value " in said[0]
    assert "on 'strong', colors=2, hand_size=2, players=2, ranks=2 (seed 0)" in said[0]
    assert "before its value file changed" in said[0]
    entries = [json.loads(line) for line in open(log)]
    assert len({json.dumps(e["made_with"], sort_keys=True) for e in entries}) == 4
    legacy = tmp_path / "legacy.jsonl"                # written before made_with existed
    legacy.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "made_with"})
                              + "\n" for e in entries[:2]))
    collect([MethodSpec("blueprint", blueprint=f"py:{bot}:HintPlayDiscard")], small,
            games=2, seed=0, backend="inline", show_progress=False, jsonl=str(legacy))
    assert len(legacy.read_text().splitlines()) == 2


def test_a_log_moved_with_its_checkpoints_keeps_its_games(tmp_path, monkeypatch):
    """A checkpoint inside the log's folder is keyed by its name there, not by the path
    the run was given: the folder copied elsewhere, and read from another working folder
    by a relative path, holds every game (nothing played again), while a checkpoint
    outside the folder keeps its path in the key."""
    import shutil

    from lbs_pz.train.configs import ValueTrainConfig
    from lbs_pz.train.value import train_value
    small = dict(players=2, colors=2, ranks=2, hand_size=2)
    run = tmp_path / "run"
    run.mkdir()
    train_value(ValueTrainConfig(**small, steps=1, minutes=0.0, games_per_step=4, val_games=4,
                                 hidden=8, seed=0, out=str(run / "value.pt"), curve="none",
                                 progress=False), log=lambda s: None)

    def spec(folder):
        return MethodSpec("lbs-1", blueprint="strong", value_checkpoint=str(folder / "value.pt"),
                          rollouts=4)

    first = collect([spec(run)], small, games=2, seed=0, backend="inline", show_progress=False,
                    jsonl=str(run / "games.jsonl"))
    keys = {json.loads(line)["key"] for line in open(run / "games.jsonl")}
    assert len(keys) == 1 and '"value_checkpoint": "<log folder>/value.pt"' in keys.pop()
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(run, moved)
    monkeypatch.chdir(tmp_path / "elsewhere")
    relative = collect([spec(moved.relative_to(tmp_path / "elsewhere"))], small, games=2,
                       seed=0, backend="inline", show_progress=False,
                       jsonl="copy/games.jsonl", play=False)
    assert list(_scores(relative).values()) == list(_scores(first).values())
    assert [len(games) for games in relative.values()] == [2]
    # a checkpoint outside the log's folder: its path as given
    outside = collect([spec(run)], small, games=1, seed=0, backend="inline",
                      show_progress=False, jsonl="copy/games.jsonl")
    assert len(next(iter(outside.values()))) == 1
    lines = [json.loads(line)["key"] for line in open(moved / "games.jsonl")]
    assert len(lines) == 3 and str(run / "value.pt") in lines[-1]


def test_games_logged_without_their_machine_are_timed_again_when_asked(tmp_path):
    """timed=True plays again a logged game that has no `machine`: its new line (same
    score, this machine's time) takes its place; a new score unlike the logged one is
    warned about. Read-only, the old game is reported until a timed line replaces it;
    timed=False keeps it as it is."""
    log, small = tmp_path / "games.jsonl", dict(colors=2, hand_size=3)
    spec = MethodSpec("lbs-1", blueprint="strong", rollouts=4)
    first = collect([spec], small, games=3, seed=0, backend="inline",
                    show_progress=False, jsonl=str(log))[spec.label()]
    assert all("machine" in g for g in first)
    lines = [json.loads(line) for line in open(log)]
    for line in lines[:2]:                              # as a log written before machines
        del line["result"]["machine"]
    lines[1]["result"]["score"] = (first[1]["score"] + 1) % 11      # and one score wrong
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))

    kept = collect([spec], small, games=3, seed=0, backend="inline",
                   show_progress=False, jsonl=str(log))[spec.label()]
    assert ["machine" in g for g in kept] == [False, False, True]     # not asked: kept
    report = collect([spec], small, games=3, seed=0, backend="inline",
                     show_progress=False, jsonl=str(log), play=False, timed=True)
    assert [g["score"] for g in report[spec.label()]] == [lines[i]["result"]["score"]
                                                          for i in range(3)]
    with pytest.warns(UserWarning, match=r"1 games of .* played again to time them scored "
                                         r"otherwise than logged \(games \[1\]\)"):
        timed = collect([spec], small, games=3, seed=0, backend="inline",
                        show_progress=False, jsonl=str(log), timed=True)[spec.label()]
    assert all("machine" in g for g in timed)
    assert [g["score"] for g in timed] == [g["score"] for g in first]
    assert len(open(log).readlines()) == 5                  # two lines added, none lost
    again = collect([spec], small, games=3, seed=0, backend="inline",
                    show_progress=False, jsonl=str(log), play=False, timed=True)
    assert again[spec.label()] == timed


def test_a_log_written_before_a_search_setting_existed_keeps_its_games(tmp_path):
    """A spec in a log line that lacks a SearchConfig field added since (its default then
    was unset) names the same games as today's keys: resuming replays nothing."""
    log = str(tmp_path / "games.jsonl")
    first = collect(SPECS, CONFIG, games=2, seed=0, backend="inline", show_progress=False,
                    jsonl=log)
    old = str(tmp_path / "old.jsonl")
    with open(old, "w") as f:
        for line in open(log):
            entry = json.loads(line)
            spec, game, seed = json.loads(entry["key"])
            for later in ("budget", "importance"):
                spec.pop(later)
            entry["key"] = json.dumps([spec, game, seed], sort_keys=True)
            f.write(json.dumps(entry) + "\n")
    again = collect(SPECS, CONFIG, games=2, seed=0, backend="inline", show_progress=False,
                    jsonl=old)
    assert _scores(again) == _scores(first)
    assert len(open(old).read().splitlines()) == 2 * len(SPECS)      # nothing replayed


def test_the_worlds_report_pairs_each_world_count_with_the_one_before(tmp_path, capsys):
    """benchmarks/worlds.py curve reads a compare log holding one search at two world
    counts (and SPARTA at the first) and prints one row per count, the step between them
    paired on the same deals, and SPARTA's share of the gain; the same search under two
    budgets is one curve of its own, a point per budget."""
    path = os.path.join(ROOT, "benchmarks", "worlds.py")
    spec = importlib.util.spec_from_file_location("worlds_report", path)
    worlds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worlds)
    log = str(tmp_path / "games.jsonl")
    game = {"colors": 3, "hand_size": 3, **CONFIG}
    few, many = (MethodSpec("lbs-inf", belief="grounded+cf", rollouts=w, seed=1)
                 for w in (8, 32))
    small, large = (MethodSpec("lbs-inf", belief="grounded+cf", budget=b, seed=1)
                    for b in (2000, 8000))
    runs = [[MethodSpec("blueprint"), MethodSpec("sparta", rollouts=8, seed=1), few], [many],
            [small], [large]]
    scores = [collect(specs, game, games=3, seed=1, backend="inline", show_progress=False,
                      jsonl=log)[specs[-1].label()] for specs in runs]   # one compare run each
    assert worlds.curve(log) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| lbs-inf (grounded+cf) |")]
    assert len(rows) == 2 and "| 8 | 3 |" in rows[0] and "| 32 | 3 |" in rows[1]
    step = np.mean([b["score"] - a["score"] for a, b in zip(scores[0], scores[1])])
    assert f"{step:+.3f}" in rows[1] and "% (3 deals)" in rows[0]
    assert "32 worlds minus 8, paired over 3 deals" in out
    budgeted = [line for line in out.splitlines()
                if line.startswith("| lbs-inf (grounded+cf) under a budget |")]
    assert len(budgeted) == 2 and "| 2,000 | 3 |" in budgeted[0] and "| 8,000 | 3 |" in budgeted[1]
    step = np.mean([b["score"] - a["score"] for a, b in zip(scores[2], scores[3])])
    assert f"{step:+.3f}" in budgeted[1] and "deals)" not in budgeted[1]   # no SPARTA share
    assert "8,000 moves minus 2,000, paired over 3 deals" in out
