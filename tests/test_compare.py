"""`lbs-pz compare`: backends agree, summaries are right, the CLI writes its outputs."""

import dataclasses
import json

import numpy as np
import pytest

from lbs_pz.bench.compare import MethodSpec, collect, parse_method, summarize
from lbs_pz.cli import main
from lbs_pz.engine import HanabiConfig

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
    # The blueprint rows are the rule bot's own self-play on the same deals.
    from lbs_pz.agents import RuleBot

    expected = RuleBot("strong").selfplay(HanabiConfig(), 3, seed=5)["score"].tolist()
    assert _scores(inline)["blueprint"] == expected


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
