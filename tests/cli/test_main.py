"""The `lbs-pz` command: the demo (the README's main job), eval with any blueprint spec,
help, and bad input."""

import json
import subprocess
import sys
import textwrap

import pytest

from lbs_pz.cli import main

USER_BLUEPRINT = textwrap.dedent('''
    class FirstLegal:
        """Plays its oldest card's discard when it may, else the first legal move."""
        name = "first-legal"

        def act(self, state, seat=None):
            legal = state.view(seat).legal_moves
            return 0 if 0 in legal else legal[0]
''')


def test_demo_runs_and_prints_every_blueprint_and_lbs(capsys):
    assert main(["demo", "--games", "200", "--search-games", "1", "--rollouts", "8"]) == 0
    out = capsys.readouterr().out
    for name in ("random", "simple", "weak", "medium", "strong", "lbs-16 (default belief)"):
        assert f"| {name} |" in out
    assert "GAME OVER" in out
    assert "learned+cf" in out and "value_strong_2p" in out     # what the defaults chose


def test_demo_on_another_variant_rolls_out_to_the_end_and_says_so(capsys):
    """Beliefs and values ship for the engine's default hand sizes: in a variant with none
    (3 players, 4 cards) the demo's LBS uses the grounded belief, filtered, and rollouts to
    the end."""
    assert main(["demo", "--players", "3", "--hand-size", "4", "--games", "50",
                 "--search-games", "1", "--rollouts", "4", "--show-moves", "0"]) == 0
    out = capsys.readouterr().out
    assert "grounded+cf" in out and "rollouts to the end]" in out


def test_eval_takes_a_users_python_blueprint(tmp_path, capsys, monkeypatch):
    path = tmp_path / "my_bot.py"
    path.write_text(USER_BLUEPRINT)
    out_json = tmp_path / "r.json"
    assert main(["eval", "--blueprint", f"py:{path}:FirstLegal", "--games", "20",
                 "--no-progress", "--json", str(out_json)]) == 0
    assert "first-legal" in capsys.readouterr().out
    data = json.loads(out_json.read_text())
    assert data["games"] == 20 and sum(data["histogram"]) == 20
    assert data["blueprint_spec"] == f"py:{path}:FirstLegal"


def test_eval_of_a_rule_bot_matches_the_evaluator(tmp_path):
    from lbs_pz.agents import RuleBot
    from lbs_pz.eval.evaluate import evaluate

    out_json = tmp_path / "r.json"
    assert main(["eval", "--blueprint", "medium", "--games", "300", "--seed", "4",
                 "--no-progress", "--json", str(out_json)]) == 0
    data = json.loads(out_json.read_text())
    assert data["histogram"] == evaluate(RuleBot("medium"), games=300, seed=4).histogram


@pytest.mark.parametrize("seed", ["-1", str(2**31), "x"])
def test_bad_seed_is_rejected_by_the_parser(seed, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--seed", seed, "--games", "1"])
    assert exit_info.value.code == 2
    assert "seed" in capsys.readouterr().err


def test_bad_blueprint_spec_is_one_clear_line(capsys):
    assert main(["eval", "--blueprint", "py:no_such_file.py:Bot", "--games", "1",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lbs-pz eval: error:") and err.count("\n") == 1
    assert "Traceback" not in err


def test_help_explains_the_blueprint_spec():
    for command in ("eval", "compare", "demo", "train-belief", "train-value",
                    "belief-quality", "search-games"):
        out = subprocess.run([sys.executable, "-m", "lbs_pz.cli", command, "--help"],
                             capture_output=True, text=True, check=True).stdout
        assert "--blueprint SPEC" in out and "py:MODULE_OR_FILE.py:CLASS" in out, command


def test_bad_variant_is_one_clear_line(capsys):
    assert main(["demo", "--players", "9"]) == 2
    err = capsys.readouterr().err
    assert "players must be an integer in [2, 5]" in err and "Traceback" not in err


@pytest.mark.slow
def test_bring_your_own_blueprint_end_to_end(tmp_path, capsys, monkeypatch):
    """A user's class -> eval -> train-belief -> train-value -> compare with both
    checkpoints; the same checkpoints with another blueprint are a one-line error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_bot.py").write_text(USER_BLUEPRINT)
    spec = "py:my_bot.py:FirstLegal"
    assert main(["eval", "--blueprint", spec, "--games", "10", "--no-progress"]) == 0
    assert main(["train-belief", "--blueprint", spec, "--steps", "2", "--minutes", "0",
                 "--games-per-step", "4", "--val-games", "4", "--val-every", "1",
                 "--out", "belief.pt", "--no-progress"]) == 0
    assert main(["train-value", "--blueprint", spec, "--steps", "2", "--minutes", "0",
                 "--games-per-step", "4", "--val-games", "4", "--out", "value.pt",
                 "--no-progress"]) == 0
    capsys.readouterr()
    compare = ["compare", "--methods", "lbs-2", "--rollouts", "4", "--games", "1",
               "--backend", "inline", "--no-progress", "--belief-checkpoint", "belief.pt",
               "--value-checkpoint", "value.pt"]
    assert main(compare + ["--blueprint", spec]) == 0
    assert "| lbs-2 (learned+cf: belief.pt, value value.pt) |" in capsys.readouterr().out
    assert main(compare + ["--blueprint", "strong"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "FirstLegal" in err and "--allow-mismatch" in err
