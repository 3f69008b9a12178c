"""The search's decision explained in its own terms, and a review one can navigate, in a
real browser (the browser, the server and the helpers are tests/web/test_browser.py's and
tests/web/test_browser_review.py's; every page checks it logs no console error, gets no
response of 400 or more and raises no JavaScript error).

The panel's threshold, margin, bar and reason are checked against the search's own record
(GET /api/games/{id}/decisions/{k}), never recomputed here. Searches are LBS over the strong
rule bot with 16 worlds: a decision takes well under a second."""

import json

import pytest

from tests.web import test_browser as shared
from tests.web import test_browser_review as review
from lbs_pz.agents.rule_bots import RuleBot
from lbs_pz.search.config import SearchConfig
from lbs_pz.search.rollout_search import FEW_WORLDS
from lbs_pz.search.methods import MethodSpec
from tests.web.test_browser import _idle, _no_error

pytestmark = shared.pytestmark
browser, server_url = shared.browser, shared.server_url     # the fixtures, shared
watched = review.watched

SEED = 1            # deal 1: seat 0's LBS-16 keeps and leaves the blueprint's move


def _api(page, path):
    """GET `path` of the game on screen, through the page."""
    return page.evaluate("(p) => fetch(`/api/games/${app.game.id}${p}`).then(r => r.json())",
                         path)


def _text(page, selector):
    """The text of the one element `selector` names (failing at once if there is none)."""
    assert page.locator(selector).count() == 1, f"no {selector} on the page"
    return " ".join(page.text_content(selector).split())


def _searched_watch(page, seed=SEED):
    """A watch game on deal `seed`: seat 0 the strong bot with LBS-16 over 16 worlds, seat 1
    the strong bot."""
    page.select_option("#mode", "watch")
    page.fill("#seed", str(seed))
    page.fill("#seat-0-blueprint", "strong")
    page.select_option("#seat-0-search", "lbs-16")
    page.fill("#seat-0-rollouts", "16")
    page.fill("#seat-1-blueprint", "strong")
    page.select_option("#seat-1-search", "blueprint")
    page.click("#start")
    _idle(page)
    _no_error(page)


def _played_out(page):
    _searched_watch(page)
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    assert page.evaluate("app.snap.over")


def _open(page, k):
    page.click(f"#decision-{k}")
    _idle(page)
    _no_error(page)
    page.wait_for_selector(f"#decision-panel[data-k='{k}']")
    return _api(page, f"/decisions/{k}")


def _decisions(page):
    """{k: DECISION} of every search decision of the game on screen."""
    return {k: _api(page, f"/decisions/{k}") for k in page.evaluate("app.snap.decisions")}


def _check_test_shown(page, d):
    """The panel of decision `d` shows the search's test as its record holds it."""
    assert _text(page, "#decision-depth") == ("to the end of the game" if d["depth"] < 0 else
                                              f"{d['depth']} blueprint moves, then the value")
    assert _text(page, "#decision-delta") == f"{d['delta']:.3f}"
    margin = _text(page, "#decision-margin")
    assert margin.startswith(f"{d['margin']:.3f} ")
    worlds = d["tested_worlds"]
    counted = f"{worlds:.0f}" if float(worlds).is_integer() else f"{worlds:.1f}"
    assert f"{counted} worlds counted" in margin
    assert (f"capped at {d['margin_worlds']} worlds" if d["margin_worlds"] else "no cap") \
        in margin
    assert _text(page, "#decision-bar") == f"{d['bar']:.3f}"
    assert _text(page, "#decision-tested-gain") == f"{d['tested_gain']:+.3f}"
    assert _text(page, "#decision-why") == " ".join(d["why"].split())
    assert f"{d['bar']:.3f}" in d["why"] and d["tested_move_text"] in d["why"]
    for c in d["candidates"]:
        mark = _text(page, f"#cand-{c['id']} td.bar-mark")
        assert mark.startswith("clears" if c["clears"] else "does not"), (c, mark)


def test_the_panel_shows_the_threshold_margin_marks_and_why(watched):
    """(1) A deviation and a kept blueprint move: delta, the margin (its world cap and the
    worlds it counted), the bar, each candidate against it and one line of why, all as the
    search's record says; the record's decision is its own rule's."""
    page = watched.page
    _played_out(page)
    decisions = _decisions(page)
    for d in decisions.values():        # the record is consistent with the search's rule
        if not d["fallback"] and d["tested_move"] is not None:
            assert d["deviated"] == (d["tested_gain"] > d["delta"]
                                     and d["tested_gain"] > d["margin"])
    deviated = [k for k, d in decisions.items() if d["deviated"]]
    kept = [k for k, d in decisions.items() if not d["deviated"] and not d["fallback"]
            and d["tested_move"] not in (None, d["blueprint_move"])]
    assert deviated and kept
    d = _open(page, deviated[0])
    _check_test_shown(page, d)
    assert _text(page, "#decision-why").startswith(f"Deviated to {d['tested_move_text']}")
    assert _text(page, f"#cand-{d['move']} td.bar-mark").startswith("clears")
    d = _open(page, kept[0])
    _check_test_shown(page, d)
    assert _text(page, "#decision-why").startswith("Kept the blueprint's move")
    assert "missed the bar" in d["why"]
    assert _text(page, "#decision-verify-gain") == "no verification"


def _verified_replay(page):
    """A compare --jsonl line of LBS-16 (16 worlds, 64 fresh ones to verify) on game 1,
    replayed (re-run) and played out."""
    spec = MethodSpec(method="lbs-16", blueprint="strong",
                      search=SearchConfig(rollouts=16, verify=64))
    line = {"key": json.dumps([spec.to_dict(), {"players": 2}, 0]), "game": 1, "result": {}}
    page.click("#nav-replay")
    page.fill("#replay-text", json.dumps(line))
    page.click("#replay-load")
    _idle(page)
    _no_error(page)
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)


def test_a_verified_decision_shows_the_verifications_gain(watched):
    """(1) Where the search verified, the panel shows the verification's gain (the one the
    test used), from the record."""
    page = watched.page
    _verified_replay(page)
    decisions = _decisions(page)
    verified = [k for k, d in decisions.items() if d["verify_gain"] is not None]
    assert verified
    for k in (verified[0], *[k for k in verified if decisions[k]["deviated"]][:1]):
        d = _open(page, k)
        shown = _text(page, "#decision-verify-gain")
        assert shown == f"{d['verify_gain']:+.3f} \u00b1 {d['verify_sem']:.3f} on fresh worlds"
        assert d["tested_gain"] == d["verify_gain"] and "re-measured" in d["why"]
        assert d["margin_worlds"] == 0          # a verified gain's margin has no cap
        _check_test_shown(page, d)


def test_a_deviation_names_the_blueprints_move(watched):
    """(2) Where the search deviated, the history and the panel name the move the blueprint
    would have played, as the other moves are named."""
    page = watched.page
    _played_out(page)
    decisions = _decisions(page)
    deviated = [k for k, d in decisions.items() if d["deviated"]]
    assert deviated
    for k in deviated:
        want = decisions[k]["blueprint_move_text"]
        assert _text(page, f"#bp-move-{k}") == f"blueprint: {want}"
        assert want in _text(page, f"#hist-{k}")
    assert page.locator(".bp-move").count() == len(deviated)
    _open(page, deviated[0])
    assert _text(page, "#decision-blueprint-s-move").startswith(
        decisions[deviated[0]]["blueprint_move_text"])


def test_the_conventions_of_the_blueprint_collapsed(watched):
    """(3) The game's rule-bot blueprint's conventions, served by the API, in a panel that
    starts collapsed and opens on a click."""
    page = watched.page
    _searched_watch(page)
    served = _api(page, "/conventions")["seats"]
    assert [s["conventions"] for s in served] == [RuleBot.conventions("strong")] * 2
    panel = page.locator("#conventions-panel")
    panel.wait_for(state="visible")
    assert panel.evaluate("(p) => p.open") is False
    page.click("#conventions-panel summary")
    assert panel.evaluate("(p) => p.open") is True
    shown = _text(page, "#conventions pre")
    assert shown == " ".join(RuleBot.conventions("strong").split())
    assert "seats 0, 1" in _text(page, "#conventions h4")


def test_next_and_previous_deviation_and_the_search_summary(watched):
    """(4) In review, buttons and the keys ] and [ step through the deviations (the board and
    the panel go there); a summary lists the decisions, the deviations with their gains and
    the fallbacks, for a finished game and for a replay."""
    page = watched.page
    _played_out(page)
    summary = _api(page, "/decisions")
    ks = [d["k"] for d in summary["deviations"]]
    assert len(ks) >= 2
    page.click("#btn-first")
    _idle(page)
    page.click("#btn-next-dev")
    _idle(page)
    _no_error(page)
    assert review._at(page) == ks[0]
    page.wait_for_selector(f"#decision-panel[data-k='{ks[0]}']")
    page.locator("#board-title").click()
    page.keyboard.press("]")
    page.wait_for_selector(f"#decision-panel[data-k='{ks[1]}']")
    _idle(page)
    assert review._at(page) == ks[1]
    page.keyboard.press("[")
    page.wait_for_selector(f"#decision-panel[data-k='{ks[0]}']")
    _idle(page)
    assert page.is_disabled("#btn-prev-dev")
    _check_summary(page, summary)
    _verified_replay(page)
    _check_summary(page, _api(page, "/decisions"))


def _check_summary(page, summary):
    page.wait_for_selector(f"#search-summary[data-decisions='{summary['decisions']}']")
    assert _text(page, "#summary-counts") == (
        f"{summary['decisions']} search decisions: {len(summary['deviations'])} deviations, "
        f"{len(summary['fallbacks'])} fallbacks")
    for d in summary["deviations"]:
        line = _text(page, f"#summary-dev-{d['k']}")
        assert f"gain {d['gain']:+.3f}" in line and f"bar {d['bar']:.3f}" in line
        assert d["blueprint_move"] in line
    assert page.locator("#summary-list li").count() == (len(summary["deviations"])
                                                        + len(summary["fallbacks"]))


def _three_player_play(page):
    """A play game of three players on deal 2: the person on seat 0, two strong bots."""
    page.select_option("#mode", "play")
    page.fill("#players", "3")
    page.dispatch_event("#players", "input")
    page.fill("#seed", "2")
    page.check("#seat-0-human")
    for seat in (1, 2):
        page.fill(f"#seat-{seat}-blueprint", "strong")
        page.select_option(f"#seat-{seat}-search", "blueprint")
    page.click("#start")
    _idle(page)
    _no_error(page)


def test_my_move_shows_at_once_then_every_reply(watched):
    """(5) In a play game the board shows the person's move before the partners' replies
    arrive (their /advance requests are held here), then every move since the person's
    last one, not only the last."""
    page = watched.page
    _three_player_play(page)
    held, holding = [], [True]
    page.route("**/advance", lambda route: held.append(route) if holding[0]
               else route.continue_())
    before = review._played(page)
    page.locator("#legal-moves button.move").first.click()
    page.wait_for_function(f"app.snap.moves_played > {before}")
    assert review._played(page) == before + 1          # the partners have not moved yet
    mine = page.evaluate("app.snap.history")[before]
    assert mine["seat"] == 0 and _text(page, "#last-move") == f"Last move: {mine['text']}"
    holding[0] = False
    for route in held:
        route.continue_()
    _idle(page)
    _no_error(page)
    assert review._played(page) == before + 3 and page.evaluate("app.snap.current_player") == 0
    history = page.evaluate("app.snap.history")
    for k in (before + 1, before + 2):
        assert _text(page, f"#since-{k}") == history[k]["text"]
    assert page.locator("#since-turn li").count() == 2


def test_play_out_shows_each_position_as_it_comes(watched):
    """(6) While "Play out" runs the board advances (several positions between the first
    and the last) and a progress line counts the moves."""
    page = watched.page
    _searched_watch(page)
    page.evaluate("""() => {
        window.seen = {played: [], progress: []};
        const board = document.getElementById("board");
        new MutationObserver(() => seen.played.push(Number(board.dataset.movesPlayed)))
            .observe(board, {attributes: true, attributeFilter: ["data-moves-played"]});
        const progress = document.getElementById("progress");
        new MutationObserver(() => progress.textContent && seen.progress.push(progress.textContent))
            .observe(progress, {childList: true, characterData: true, subtree: true});
    }""")
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    seen = page.evaluate("seen")
    final = review._played(page)
    assert page.evaluate("app.snap.over")
    between = {n for n in seen["played"] if 0 < n < final}
    assert len(between) >= 2, seen
    assert any(text.startswith("playing out: move ") for text in seen["progress"]), seen
    assert page.locator("#progress").is_hidden()


@pytest.mark.parametrize("reply", [True, False])
def test_the_move_api_replies_unless_asked_not_to(watched, reply):
    """(5) POST /move with "reply": false plays only the person's move."""
    page = watched.page
    _three_player_play(page)
    snap = page.evaluate("app.snap")
    move = snap["legal_moves"][0]["id"]
    after = page.evaluate("""([m, t, reply]) => fetch(`/api/games/${app.game.id}/move`, {
        method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({move: m, turn: t, reply})}).then(r => r.json())""",
                          [move, snap["moves_played"], reply])
    assert after["moves_played"] == snap["moves_played"] + (3 if reply else 1)


def test_a_fallback_says_why_in_the_panel_and_the_summary(watched):
    """(1, 4) LBS-16 on both seats of deal 3: at move 11 too few of seat 1's sampled hands
    survive its partner's (searched) moves, so the decision falls back to the blueprint's
    move, and the panel's line and the summary say why, as the record does."""
    page = watched.page
    page.select_option("#mode", "watch")
    page.fill("#seed", "3")
    for seat, search in ((0, "lbs-16"), (1, "lbs-16")):
        page.fill(f"#seat-{seat}-blueprint", "strong")
        page.select_option(f"#seat-{seat}-search", search)
        page.fill(f"#seat-{seat}-rollouts", "16")
    page.click("#start")
    _idle(page)
    page.fill("#jump-input", "40")
    page.click("#btn-jump")
    _idle(page)
    _no_error(page)
    summary = _api(page, "/decisions")
    assert summary["fallbacks"], summary
    first = summary["fallbacks"][0]
    assert first["reason"] == FEW_WORLDS
    page.wait_for_selector(f"#summary-fallback-{first['k']}")
    assert first["reason"] in _text(page, f"#summary-fallback-{first['k']}")
    assert _text(page, "#summary-counts").startswith(f"{summary['decisions']} search decisions "
                                                     f"so far: ")
    d = _open(page, first["k"])
    assert d["fallback"] and d["why"].startswith("Fell back to the blueprint's move")
    assert first["reason"] in d["why"]
    assert _text(page, "#decision-why") == " ".join(d["why"].split())
    assert _text(page, "#decision-fallback-to-blueprint") == f"yes: {d['fallback_reason']}"
