"""The `lbs-pz` command: the demo (the README's main job), help, and bad input."""

from lbs_pz.cli import main


def test_demo_runs_and_prints_every_blueprint_and_lbs(capsys):
    assert main(["demo", "--games", "200", "--search-games", "1", "--rollouts", "8"]) == 0
    out = capsys.readouterr().out
    for name in ("random", "simple", "weak", "medium", "strong", "lbs-16 (learned+cf)"):
        assert f"| {name} |" in out
    assert "GAME OVER" in out


def test_demo_on_another_variant_searches_with_the_grounded_belief(capsys):
    """The shipped belief and value are for 2 players, 5 cards: elsewhere the demo's LBS
    uses the grounded belief, filtered, and rollouts to the end."""
    assert main(["demo", "--players", "3", "--games", "50", "--search-games", "1",
                 "--rollouts", "4", "--show-moves", "0"]) == 0
    assert "| lbs-inf (grounded+cf) |" in capsys.readouterr().out


def test_bad_variant_is_one_clear_line(capsys):
    assert main(["demo", "--players", "9"]) == 2
    err = capsys.readouterr().err
    assert "players must be an integer in [2, 5]" in err and "Traceback" not in err
