"""`lbs-pz paper`: the table builder and the figures on a tiny variant (3 colours, 3 ranks,
2-3 deals per cell), resume after an interrupted run, and SPARTA's memory guard."""

import json
import os
import re

import pytest

from tests.helpers.paths import ROOT
from lbs_pz.cli import main
from lbs_pz.eval.paper import (DEPTHS, HIGHEST_SCORE, HIGHEST_SEARCH, RETRAINED,
                               RETRAINED_BELIEF, RETRAINED_GAMES, ROUNDS, Cell, belief_curves,
                               build_report, headline, plan, run_cells, schedule, sparta_fits,
                               variants, SIZES)
from lbs_pz.host import machine
from lbs_pz.models.checkpoint import load_checkpoint
from lbs_pz.search.methods import MethodSpec

TINY = plan("tiny")


def _figures(report):
    """Every cell's figures but its timings (a rerun plays the same games, not as fast)."""
    return [{k: v for k, v in cell.items() if k not in ("seconds_per_game", "speedup")}
            for cell in report["cells"]]


def test_the_plan_holds_every_table_of_the_issue():
    tables = {c.table for c in TINY}
    assert tables == {"variants", "depths", "beyond"}
    names = list(variants(SIZES["tiny"]))
    assert names[-1].endswith("4 tokens")
    for name in names:                      # Table 1: blueprint, SPARTA, LBS-16 per variant
        assert {c.row for c in TINY if c.table == "variants" and c.variant == name} == \
            {"blueprint", "sparta", "lbs-16"}
    depth_rows = {c.row for c in TINY if c.table == "depths"}
    assert {"blueprint", "sparta", *DEPTHS} <= depth_rows
    full = plan("full")
    assert {c.column for c in full if c.table == "depths"} >= {"weak", "medium", "strong"}
    assert min(c.deals for c in full if c.spec.blueprint == "strong" and c.table == "variants"
               and c.variant == "5-card") >= 500


def test_a_full_run_plays_the_headline_cells_first_then_every_cell_in_rounds():
    full = plan("full")
    passes = schedule(full)
    firsts = [c for c in full if c.headline]
    assert passes[0] == [(c, c.deals) for c in firsts]        # all their deals, first
    # every figure rests on them: all of Table 1, SPARTA on the larger hands included
    assert {(c.variant, c.row) for c in firsts if c.table == "variants"} == \
        {(v, r) for v in variants(SIZES["full"]) for r in ("blueprint", "sparta", "lbs-16")}
    second = passes[1]
    assert {c for c, _ in second} == set(full) - set(firsts)
    assert all(deals == min(c.deals, ROUNDS[0]) for c, deals in second)
    tables = [c.table for c, _ in second]          # the rows beyond the paper, then Table 2
    assert tables == sorted(tables, key=["beyond", "depths"].index)
    reached = dict(second)
    for step in passes[2:]:
        for cell, deals in step:
            assert deals > reached[cell]                # a pass only adds deals
            reached[cell] = deals
    assert reached == {c: c.deals for c in full if not c.headline}   # the last reaches all
    best = next(c for c in full if c.row == HIGHEST_SCORE)
    assert best.deals >= 1000 and best.spec.search_seats == (0, 1) and best.headline
    assert (best.spec.method, best.spec.blueprint) == HIGHEST_SEARCH


def test_belief_curves_are_read_back_from_their_cache(tmp_path):
    cache = str(tmp_path / "curves.json")
    made = belief_curves("tiny", seed=0, progress=False, cache=cache)
    data = json.load(open(cache))
    data["scores"] = [123]                          # a mark only the cache carries
    json.dump(data, open(cache, "w"))
    again = belief_curves("tiny", seed=0, progress=False, cache=cache)
    assert list(again["scores"]) == [123]
    for b in made["ce"]:
        assert all((x == y).all() for x, y in zip(made["ce"][b], again["ce"][b]))
    other = belief_curves("tiny", seed=1, progress=False, cache=cache)   # another seed
    assert list(other["scores"]) != [123]


def test_tables_json_and_figures_from_a_tiny_run(tmp_path, capsys):
    out = str(tmp_path / "paper")
    assert main(["paper", "--tiny", "--backend", "inline", "--no-progress", "--out", out]) == 0
    printed = capsys.readouterr().out
    figures = [line for line in printed.splitlines() if line.startswith("figure: ")]
    assert len(figures) == 4 and any(HIGHEST_SCORE in f for f in figures)
    assert all(re.search(r"\): (reached|NOT reached|not judged yet)", f) for f in figures)
    assert all("so far" in f for f in figures if "reached" in f)    # tiny: too few deals
    # the belief retrained on LBS-16's own games (recorded on training deals), then its row
    info = load_checkpoint(os.path.join(out, RETRAINED_BELIEF))["info"]
    assert info["search_games"]["train"] == SIZES["tiny"].retrain_games - 1
    assert info["steps"] == SIZES["tiny"].retrain_steps
    assert len(open(os.path.join(out, RETRAINED_GAMES)).read().splitlines()) == \
        SIZES["tiny"].retrain_games
    assert any(line.startswith(f"beyond: {RETRAINED}") and "same deals" in line
               for line in printed.splitlines())
    played = json.load(open(os.path.join(out, "paper.json")))["cells"]
    lines = len(open(os.path.join(out, "games.jsonl")).read().splitlines())
    assert main(["paper", "--tiny", "--report-only", "--no-progress", "--out", out]) == 0
    assert capsys.readouterr().out.count("figure: ") == 4
    assert json.load(open(os.path.join(out, "paper.json")))["cells"] == played
    assert len(open(os.path.join(out, "games.jsonl")).read().splitlines()) == lines
    with pytest.raises(SystemExit, match="does not exist"):
        main(["paper", "--tiny", "--report-only", "--out", str(tmp_path / "none")])
    assert not os.path.exists(tmp_path / "none")
    text = open(os.path.join(out, "paper.md")).read()
    for heading in ("Table 1: variants", "Table 2: depths and strengths", "Beyond the paper",
                    "% of SPARTA's gain", "speed-up", "lbs-16 on both seats"):
        assert heading in text
    data = json.load(open(os.path.join(out, "paper.json")))
    assert data["size"] == "tiny" and len(data["cells"]) == len(TINY) + 1
    assert RETRAINED in text
    assert f"| {HIGHEST_SCORE}: {HIGHEST_SEARCH[0]} (default belief, seats 0,1) |" in text
    for cell in data["cells"]:
        assert cell["deals"] == cell["deals_asked"] and 0 <= cell["mean"] <= 9
        assert ("gain" in cell) == (cell["row"] != "blueprint")
    assert "Belief quality" in text and "exact" in text and "grounded" in text
    pngs = [f for f in os.listdir(out) if f.endswith(".png")]
    assert len(pngs) == len(variants(SIZES["tiny"])) + 2
    assert {"belief_quality.png", "fixed_budget.png"} <= set(pngs)
    assert all(os.path.getsize(os.path.join(out, f)) > 5_000 for f in pngs)


def test_an_interrupted_run_resumed_gives_the_uninterrupted_tables(tmp_path):
    whole = build_report(TINY, run_cells(TINY, str(tmp_path / "a.jsonl"), backend="inline",
                                         progress=False))
    log = str(tmp_path / "b.jsonl")
    run_cells(TINY[: len(TINY) // 2], log, backend="inline", progress=False)  # stopped half-way
    lines = len(open(log).read().splitlines())
    resumed = build_report(TINY, run_cells(TINY, log, backend="inline", progress=False))
    assert _figures(resumed) == _figures(whole)
    assert resumed["markdown"].count("|") == whole["markdown"].count("|")
    assert len(open(log).read().splitlines()) > lines        # only the missing games added


def test_sparta_that_would_not_fit_is_not_run_and_says_why():
    seven = next(c for c in plan("full") if c.table == "variants" and c.row == "sparta"
                 and c.variant.startswith("7-card"))
    why = sparta_fits(seven, memory_cap=1 << 20)
    assert why is not None and "exact belief" in why and "GiB" in why and "7 cards" in why
    tiny = Cell("variants", "3-card", (("colors", 3), ("ranks", 3)),
                MethodSpec("sparta", "strong", rollouts=8), 1, "sparta", "3-card")
    assert sparta_fits(tiny) is None
    net = Cell("depths", "5-card", (), MethodSpec("sparta", "lstm:public_lstm_2p"), 1,
               "sparta", "lstm:public_lstm_2p")
    assert "no C filter" in sparta_fits(net)     # a forward pass per candidate hand
    report = build_report([tiny], {tiny: why})
    assert report["cells"][0]["not_run"] == why
    assert "not run: exact belief" in report["markdown"]


def test_bad_sizes_are_clear_errors():
    with pytest.raises(ValueError, match="tiny, quick, full"):
        plan("huge")


def test_the_share_of_spartas_gain_compares_gains_on_spartas_deals():
    """While SPARTA has played fewer deals than LBS-16, LBS-16's share of its gain is
    LBS-16's paired gain on SPARTA's deals, not on all of its own."""
    cells = [c for c in TINY if c.table == "variants" and c.variant == TINY[0].variant]
    by_row = {c.row: c for c in cells}

    def games(scores):
        return [dict(game=g, score=s, seconds=1.0, moves=20, decisions=5, rollouts=10,
                     fallbacks=0, deviations=0) for g, s in enumerate(scores)]
    results = {by_row["blueprint"]: games([5, 5, 5, 5]),
               by_row["sparta"]: games([7, 7]),          # +2 on deals 0 and 1
               by_row["lbs-16"]: games([6, 6, 9, 9])}    # +1 there, +4 on deals 2 and 3
    report = build_report(cells, results)
    row = report["variants"][0]
    assert row["lbs-16"]["gain"] == 2.5                 # on its own 4 deals
    assert row["share_of_sparta_gain"] == pytest.approx(1 / 2)
    results[by_row["sparta"]] = games([7, 7, 7, 7])
    assert build_report(cells, results)["variants"][0]["share_of_sparta_gain"] == \
        pytest.approx(2.5 / 2)


def test_a_speedup_is_timed_on_the_deals_both_played_on_one_machine():
    """Each game records the machine that timed it: Table 1's speed-up divides SPARTA's
    seconds by LBS-16's on the deals both played on one machine, the one with the most
    such deals, and says which and how many; with no such deal it is the ratio of the
    cells' seconds per game, said to mix machines (or an unrecorded one)."""
    cells = [c for c in TINY if c.table == "variants" and c.variant == TINY[0].variant]
    by_row = {c.row: c for c in cells}

    def games(scores, seconds, where, first=0):
        return [dict(game=first + g, score=s, seconds=seconds, moves=20, decisions=5,
                     rollouts=10, fallbacks=0, deviations=0, **where)
                for g, s in enumerate(scores)]
    here, there = {"machine": machine()}, {"machine": "Another CPU (amx_bf16)"}
    results = {by_row["blueprint"]: games([5, 5, 5], 0.1, here),
               by_row["sparta"]: games([7, 7, 6], 8.0, here),
               by_row["lbs-16"]: games([7, 6, 7], 2.0, here)}
    row = build_report(cells, results)["variants"][0]
    assert (row["speedup"], row["timed_on"], row["timed_deals"]) == (4.0, machine(), 3)
    text = headline(build_report(cells, results))
    assert f"4.0x (3 deals on {machine()})" in text and "other machines" not in text
    # SPARTA's first two deals timed elsewhere, at another speed: the third alone counts
    results[by_row["sparta"]] = games([7, 7], 3.0, there) + games([6], 8.0, here, first=2)
    row = build_report(cells, results)["variants"][0]
    assert (row["speedup"], row["timed_on"], row["timed_deals"]) == (4.0, machine(), 1)
    # LBS-16 there too, on more deals: that machine's pairs win
    results[by_row["lbs-16"]] = games([7, 6], 1.0, there) + games([7], 2.0, here, first=2)
    row = build_report(cells, results)["variants"][0]
    assert (row["speedup"], row["timed_on"], row["timed_deals"]) == (3.0, there["machine"], 2)
    # no deal timed on one machine by both: the plain ratio, flagged
    results[by_row["sparta"]] = games([7, 7, 6], 8.0, there)
    results[by_row["lbs-16"]] = games([7, 6, 7], 2.0, here)
    report = build_report(cells, results)
    assert report["variants"][0]["mixed_machines"] == \
        f"SPARTA on Another CPU (amx_bf16), LBS-16 on {machine()}"
    text = headline(report)
    assert "4.0x (timed on other machines: SPARTA on Another CPU (amx_bf16)" in text
    assert re.search(r"figure: .*4\.0x less time \(timed on other machines", text)
    for row in ("sparta", "lbs-16"):            # logged before machines were: never paired
        results[by_row[row]] = games([7, 7, 6], 8.0 if row == "sparta" else 2.0, {})
    assert "an unrecorded machine" in \
        build_report(cells, results)["variants"][0]["mixed_machines"]
    assert machine() and len(machine()) <= 200


def test_the_full_runs_log_in_the_repository_holds_only_games_of_the_plan():
    """results/paper_full/games.jsonl.gz (in the repository, gzipped: RESULTS.md's paper
    tables are built from it, and a run on any clone continues it) reads back whole, and
    each of its games belongs to a cell of today's full plan, within that cell's deals: a
    change to the plan that would strand the games played (a rerun could not find them)
    fails here."""
    from lbs_pz.eval.backends import _jsonl_key, _canonical_key, _log_folder, read_log
    log = os.path.join(ROOT, "results", "paper_full", "games.jsonl.gz")
    assert os.path.isfile(log)
    deals = {}
    for cell in plan("full", os.path.join(os.path.dirname(log), RETRAINED_BELIEF)):
        key = _jsonl_key(cell.spec, cell.game_kwargs, 0, _log_folder(log))
        deals[key] = max(deals.get(key, 0), cell.deals)
    canonical, entries = {}, read_log(log)
    assert entries
    stranded = {e["method"] for e in entries
                if e["game"] >= deals.get(_canonical_key(e["key"], canonical,
                                                          _log_folder(log)), 0)}
    assert not stranded, f"games of no cell of the full plan: {sorted(stranded)}"
