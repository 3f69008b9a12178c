"""The local page in a real browser: playing and reviewing (headless Chromium through
Playwright, the real app under uvicorn; the browser, the server, the pages and their
checks for console errors are tests/web/test_browser.py's and tests/web/test_browser_review.py's).

- hanab.live's slot order (new cards on the left, slots numbered from 1 there), a setting
  the browser remembers, with every move text naming slots as the hands show them;
- pace and efficiency (hanab.live's definitions), useless cards marked, and a seat's own
  cards it knows from the clues counted in the pips of its other cards;
- "Continue with bots from here": a new watch game from a position of a replay or of a
  finished game, the server replaying the record's moves on its deal;
- cards labelled in words for screen readers, the number pad's digits, Escape, and a whole
  short game played by keyboard alone.

Games are tiny or played by rule bots without a search."""

import re
import warnings

import pytest

from tests.web import test_browser as shared
from tests.web import test_browser_review as review
from tests.web.test_browser import _expected_pips, _idle, _no_error, _reload, _shown_pips, \
    _start_play, _start_watch
from tests.web.test_browser_review import _at, _exported_replay, _played, _tiny_play

with warnings.catch_warnings():
    warnings.simplefilter("ignore")     # starlette's notice about httpx
    from starlette.testclient import TestClient

from lbs_pz.web.app import create_app  # noqa: E402

pytestmark = shared.pytestmark
browser, server_url = shared.browser, shared.server_url     # the fixtures, shared
watched = review.watched

COLOR_NAMES = {"R": "red", "Y": "yellow", "G": "green", "W": "white", "B": "blue"}


def _snap(page):
    return page.evaluate("app.snap")


def _jump(page, at):
    page.fill("#jump-input", str(at))
    page.click("#btn-jump")
    _idle(page)
    _no_error(page)
    assert _at(page) == at


def _played_out_watch(page, seed):
    """A watch game of two strong bots on deal `seed`, played out: its length."""
    _start_watch(page, seed)
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    return _played(page)


# --- 1. hanab.live's slot order ---------------------------------------------------------------

def _shown_slot(n, slot, newest_left):
    return n - slot if newest_left else slot


def _expected_text(entry, newest_left):
    """A history entry's text with its slots named as the hands show them."""
    text = entry["text"]
    if not newest_left:
        return text
    if entry["kind"] in ("play", "discard"):
        n = entry["hand_sizes"][entry["seat"]]
        return text.replace(f"from slot {entry['slot']}", f"from slot {n - entry['slot']}")
    n = entry["hand_sizes"][entry["target"]]
    slots = sorted(n - t for t in entry["touched"])
    named = f"slot {slots[0]}" if len(slots) == 1 else \
        f"slots {', '.join(map(str, slots[:-1]))} and {slots[-1]}"
    return re.sub(r"slots? [\d, and]+$", named, text)


def _check_hands_and_history(page, newest_left):
    snap = _snap(page)
    for seat, info in enumerate(snap["seats"]):
        n = len(info["hand"])
        ids = page.locator(f"#hand-{seat} .card").evaluate_all("(cs) => cs.map((c) => c.id)")
        order = list(range(n))[::-1] if newest_left else list(range(n))
        assert ids == [f"card-{seat}-{i}" for i in order]
        for i in range(n):
            shown = page.text_content(f"#card-{seat}-{i} .slot")
            assert shown == f"#{_shown_slot(n, i, newest_left)}"
    for entry in snap["history"]:
        shown = page.text_content(f"#goto-{entry['k']}")
        assert shown == f"{entry['k']}. {_expected_text(entry, newest_left)}", entry
    last = snap["history"][snap["at"] - 1]
    assert page.text_content("#last-move") == f"Last move: {_expected_text(last, newest_left)}"


def test_hanablive_slot_order_is_remembered_and_the_moves_name_slots_as_shown(watched):
    """The box "New cards on the left" shows each hand newest first, slots numbered from 1
    on the left; the history, the last move and the note name slots that way; a reload
    keeps it (localStorage); unticked, the engine's order (slot #0 the oldest) is back."""
    page = watched.page
    _start_watch(page, 5)
    _jump(page, 24)
    assert not page.is_checked("#slot-order")
    _check_hands_and_history(page, False)
    assert "Slot #0 is each hand's oldest card" in page.text_content("#slot-convention")
    page.check("#slot-order")
    _check_hands_and_history(page, True)
    note = page.text_content("#slot-convention")
    assert "slot #1 is each hand's newest card, on the left" in note
    history = _snap(page)["history"]
    assert any(e["kind"].startswith("reveal") and len(e["touched"]) > 1 for e in history)
    _reload(page)
    assert page.is_checked("#slot-order")
    _check_hands_and_history(page, True)
    page.uncheck("#slot-order")
    _check_hands_and_history(page, False)
    _reload(page)
    assert not page.is_checked("#slot-order")


def test_hanablive_order_in_play_the_buttons_and_keys_name_the_shown_slot(watched):
    """In play, under hanab.live's order, "Play 1" plays the newest card (the leftmost), the
    digit 1 selects it, and the move is logged as made from slot 1."""
    page = watched.page
    page.evaluate("localStorage.setItem('lbs_pz.slot_order', 'hanablive')")
    _reload(page)                       # the setting is read as the page loads
    assert page.is_checked("#slot-order")
    _start_play(page, 9)
    _no_error(page)
    snap = _snap(page)
    n = len(snap["seats"][0]["hand"])
    for move in snap["legal_moves"]:
        if move["kind"] in ("play", "discard"):
            verb = "Play" if move["kind"] == "play" else "Discard"
            assert page.text_content(f"#move-{move['id']}") == f"{verb} {n - move['slot']}"
    page.locator("#board-title").click()
    page.keyboard.press("1")
    assert "selected" in page.get_attribute(f"#card-0-{n - 1}", "class")
    assert page.text_content("#selected-moves .group-name") == "Your slot 1"
    before = snap["moves_played"]
    page.keyboard.press("p")
    _idle(page)
    _no_error(page)
    entry = _snap(page)["history"][before]
    assert entry["slot"] == n - 1 and f"from slot {n - 1}" in entry["text"]
    assert page.text_content(f"#goto-{before}") == \
        f"{before}. {entry['text'].replace(f'from slot {n - 1}', 'from slot 1')}"


def _renamed(text, sizes, mover):
    """A move text of the server (engine slots) with its slots in hanab.live's order."""
    clue = re.search(r"(?:Reveal|->) seat (\d+):", text)
    n = sizes[int(clue.group(1)) if clue else mover]
    verb = re.fullmatch(r"(Play|Discard) (\d+)", text)
    if verb:
        return f"{verb.group(1)} {n - int(verb.group(2))}"
    slots = re.search(r", slots? ([\d, and]+)$", text)
    if not slots:
        return text
    shown = sorted(n - int(i) for i in re.split(r", | and ", slots.group(1)))
    named = f"slot {shown[0]}" if len(shown) == 1 else \
        f"slots {', '.join(map(str, shown[:-1]))} and {shown[-1]}"
    return text[:slots.start()] + ", " + named


def test_a_search_panel_names_slots_as_shown_and_escape_closes_it(watched):
    """Under hanab.live's order the search panel's candidates, chosen move and reason name
    slots as the hands show them; Escape closes the panel."""
    page = watched.page
    page.evaluate("localStorage.setItem('lbs_pz.slot_order', 'hanablive')")
    _reload(page)
    page.select_option("#mode", "watch")
    page.fill("#seed", "1")
    page.select_option("#seat-0-search", "lbs-16")
    page.fill("#seat-0-rollouts", "16")
    page.select_option("#seat-1-search", "blueprint")
    page.click("#start")
    _idle(page)
    _jump(page, 4)
    k = page.evaluate("app.snap.decisions")[0]
    page.click(f"#decision-{k}")
    _idle(page)
    _no_error(page)
    page.wait_for_selector(f"#decision-panel[data-k='{k}']")
    d = page.evaluate(f"fetch(`/api/games/${{app.game.id}}/decisions/{k}`).then(r => r.json())")
    sizes = [len(seat["hand"]) for seat in _snap(page)["seats"]]
    for c in d["candidates"]:
        assert page.text_content(f"#cand-{c['id']} td") == _renamed(c["text"], sizes, 0)
    assert any(_renamed(c["text"], sizes, 0) != c["text"] for c in d["candidates"])
    why = page.text_content("#decision-why")
    for text in (d["blueprint_move_text"], d["tested_move_text"]):
        if text and _renamed(text, sizes, 0) != text:
            assert _renamed(text, sizes, 0) in why and text not in why, (why, text)
    page.locator("#board-title").click()
    page.keyboard.press("Escape")
    assert page.locator("#decision-panel").is_hidden()


# --- 2. pace, efficiency, useless cards, known cards in the pips ------------------------------

def _copies(rank, ranks):
    return 3 if rank == 1 else 1 if rank == ranks else 2


def _useless(snap, name):
    c, r = name[0], int(name[1:])
    height = snap["fireworks"][snap["colors"].index(c)]
    ranks = snap["variant"]["ranks"]
    return r <= height or any(snap["discards"].count(f"{c}{lower}") >= _copies(lower, ranks)
                              for lower in range(height + 1, r))


def _pace(snap):
    """hanab.live's: score + deck + players - max score; none with an empty deck."""
    if snap["deck_size"] <= 0 or snap["terminal"]:
        return "-"
    ranks, most = snap["variant"]["ranks"], 0
    for c in snap["colors"]:
        for r in range(1, ranks + 1):
            if snap["discards"].count(f"{c}{r}") >= _copies(r, ranks):
                break
            most += 1
    return str(sum(snap["fireworks"]) + snap["deck_size"] + len(snap["seats"]) - most)


def _efficiency(snap):
    """hanab.live's: cards gotten (played; clued in a hand and not surely useless) per clue
    lost (clues given, misplays, a last-rank card played at the most clue tokens)."""
    most, ranks = snap["variant"]["max_information_tokens"], snap["variant"]["ranks"]
    lost, tokens = 0, most
    for h in snap["history"][:snap["at"]]:
        if h["kind"].startswith("reveal"):
            lost, tokens = lost + 1, tokens - 1
        elif h["kind"] == "discard":
            tokens = min(most, tokens + 1)
        elif not h["scored"]:
            lost += 1
        elif int(h["card"][1:]) == ranks:
            lost, tokens = (lost + 1, tokens) if tokens == most else (lost, tokens + 1)
    if not lost:
        return "-"
    gotten = sum(snap["fireworks"]) + sum(
        1 for seat in snap["seats"] for card in seat["hand"]
        if (card["color_hint"] or card["rank_hint"])
        and not all(_useless(snap, f"{c}{r}") for c in card["colors"] for r in card["ranks"]))
    return f"{gotten / lost:.2f}"


def _without_known(snap, seat, slot):
    """The pips of a card were the holder's own known cards not counted."""
    hand = snap["seats"][seat]["hand"]
    plain = dict(snap, seats=[dict(s, hand=[dict(h, colors=list(snap["colors"]), ranks=list(
        range(1, snap["variant"]["ranks"] + 1))) if p == seat and i != slot else h
        for i, h in enumerate(s["hand"])]) for p, s in enumerate(snap["seats"])])
    assert plain["seats"][seat]["hand"][slot] == hand[slot]
    return _expected_pips(plain, seat, slot)


def _check_position(page):
    """Pace, efficiency and useless marks as computed here; the number of cards whose pips
    the holder's known cards changed, each checked."""
    snap = _snap(page)
    assert page.text_content("#pace") == _pace(snap)
    assert page.text_content("#efficiency") == _efficiency(snap)
    changed = useless = 0
    for seat, info in enumerate(snap["seats"]):
        for slot, card in enumerate(info["hand"]):
            marked = "useless" in page.get_attribute(f"#card-{seat}-{slot}", "class")
            assert marked == _useless(snap, card["card"]), (snap["at"], seat, slot)
            useless += marked
            want = _expected_pips(snap, seat, slot)
            assert _shown_pips(page, seat, slot) == want
            changed += want != _without_known(snap, seat, slot)
    return changed, useless


def test_pace_efficiency_useless_cards_and_known_cards_in_the_pips(watched):
    """The board shows hanab.live's pace and efficiency; every card the view sees that can
    never be played is marked useless; a card a seat knows from the clues (a known Y5)
    crosses its identity out of the pips of the seat's other cards."""
    page = watched.page
    total = _played_out_watch(page, 5)
    changed = useless = 0
    for at in [0, 3, 12] + list(range(31, 35)) + list(range(40, total + 1, 8)) + [total]:
        _jump(page, at)
        c, u = _check_position(page)
        changed, useless = changed + c, useless + u
    assert changed and useless
    assert page.text_content("#pace") == "-" and page.text_content("#efficiency") != "-"


SNAPSHOTS = """([id, total, view]) => Promise.all([...Array(total + 1).keys()].map((at) =>
    fetch(`/api/games/${id}?at=${at}&view=${view}`).then((r) => r.json())))"""


def _known_useless(snap, card):
    """Whether a card's clues alone (its possible colours and ranks, with the fireworks and
    the discards) prove it can never be played."""
    return all(_useless(snap, f"{c}{r}") for c in card["colors"] for r in card["ranks"])


def test_a_seats_own_card_is_marked_useless_from_its_clues_alone(watched):
    """In a seat's view its own hidden cards are marked useless exactly when their clues
    prove it (a card known to be a 1 once every 1 it could be is played); a hidden card
    whose face is useless but whose clues leave a playable identity is not marked, so the
    mark never tells the seat more than it knows. The other seats' cards keep theirs."""
    page = watched.page
    total = _played_out_watch(page, 5)
    game = page.evaluate("app.game.id")
    faces = page.evaluate(SNAPSHOTS, [game, total, "spectator"])
    proven, withheld = {}, {}
    for view in (0, 1):
        for at, snap in enumerate(page.evaluate(SNAPSHOTS, [game, total, view])):
            for slot, card in enumerate(snap["seats"][view]["hand"]):
                assert card["card"] is None                    # the page never gets its face
                face = faces[at]["seats"][view]["hand"][slot]["card"]
                if _known_useless(snap, card):
                    proven.setdefault(view, at)
                elif _useless(snap, face):
                    withheld.setdefault(view, at)
    assert proven and withheld, (proven, withheld)
    for view in (0, 1):
        page.select_option("#view-select", str(view))
        _idle(page)
        for at in sorted({proven.get(view, 0), withheld.get(view, 0), total}):
            _jump(page, at)
            snap = _snap(page)
            for seat, info in enumerate(snap["seats"]):
                for slot, card in enumerate(info["hand"]):
                    want = _known_useless(snap, card) if seat == view else \
                        _useless(snap, card["card"])
                    shown = page.locator(f"#card-{seat}-{slot}")
                    where = (view, at, seat, slot)
                    assert ("useless" in shown.get_attribute("class")) == want, where
                    assert shown.locator(".useless-mark").count() == want
                    assert ("useless" in shown.get_attribute("aria-label")) == want


# --- 3. continue with bots from here ----------------------------------------------------------

def _continue(page, blueprints):
    """Open the continue panel, name the blueprints (no search), start: the source's id."""
    source = page.evaluate("app.game.id")
    page.click("#btn-continue")
    assert page.locator("#continue-panel").is_visible()
    assert page.text_content("#continue-at") == str(_at(page))
    for seat, spec in enumerate(blueprints):
        page.fill(f"#continue-{seat}-blueprint", spec)
        page.select_option(f"#continue-{seat}-search", "blueprint")
    page.click("#continue-start")
    page.wait_for_function(f"app.game && app.game.id !== {source!r}")
    _idle(page)
    _no_error(page)
    return source


def test_continue_with_bots_from_a_replay_position(watched):
    """An exported game loaded back, at move 10: "Continue with bots from here" starts a
    watch game on the same deal with the record's first 10 moves, which the chosen
    blueprints play out."""
    page = watched.page
    _exported_replay(page)
    _jump(page, 10)
    replay = _snap(page)
    source = _continue(page, ["simple", "weak"])
    snap = _snap(page)
    assert snap["mode"] == "watch" and snap["at"] == snap["moves_played"] == 10
    assert snap["continued_from"] == {"id": source, "at": 10}
    assert f"continued from game {source} at move 10" in page.text_content("#deal-label")
    assert [h["text"] for h in snap["history"]] == [h["text"] for h in replay["history"][:10]]
    assert [s["hand"] for s in snap["seats"]] == [s["hand"] for s in replay["seats"]]
    assert [s["blueprint"] for s in snap["seats"]] == ["simple", "weak"]
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    assert page.evaluate("app.snap.terminal")
    assert page.url.endswith(f"/games/{page.evaluate('app.game.id')}")


def test_continue_from_a_finished_play_game_and_escape_closes_the_panel(watched):
    """A finished play game reviewed at move 1 goes on with two bots; the button is off
    while the game runs; Escape closes the panel."""
    page = watched.page
    _tiny_play(page)
    assert page.is_disabled("#btn-continue")
    while not page.evaluate("app.snap.over"):
        page.locator("#legal-moves button.move").first.click()
        _idle(page)
        _no_error(page)
    assert page.is_enabled("#btn-continue")
    _jump(page, 1)
    page.click("#btn-continue")
    assert page.locator("#continue-panel").is_visible()
    page.keyboard.press("Escape")
    assert page.locator("#continue-panel").is_hidden()
    _continue(page, ["strong", "strong"])
    snap = _snap(page)
    assert snap["mode"] == "watch" and snap["moves_played"] == 1
    assert all(card["card"] for seat in snap["seats"] for card in seat["hand"])


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = create_app(blueprint="strong", search="none")
        yield app, TestClient(app)


def test_continue_is_refused_cleanly(client):
    """403 for a play game in progress (its deal is secret), 409 for a record without a
    deal, 400 for a human seat or a position past the record."""
    app, c = client
    play = c.post("/api/games", json={"mode": "play", "seats": [{"human": True},
                                                                {"blueprint": "strong"}]}).json()
    bots = [{"blueprint": "strong"}] * 2
    r = c.post(f"/api/games/{play['id']}/continue", json={"at": 0, "seats": bots})
    assert r.status_code == 403 and "secret" in r.json()["error"]
    watch = c.post("/api/games", json={"seed": 1, "seats": bots}).json()
    for body in ({"at": 1, "seats": [{"human": True}, bots[0]]}, {"at": 99, "seats": bots}):
        assert c.post(f"/api/games/{watch['id']}/continue", json=body).status_code == 400
    app.state.games.get(watch["id"]).deal_known = False
    r = c.post(f"/api/games/{watch['id']}/continue", json={"at": 0, "seats": bots})
    assert r.status_code == 409 and "no deal" in r.json()["error"]


# --- 4. screen readers, the number pad, Escape --------------------------------------------------

def _words(items, every):
    if len(items) == every:
        return None
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _expected_label(snap, seat, slot, newest_left=False):
    card, view = snap["seats"][seat]["hand"][slot], snap["view"]
    n = len(snap["seats"][seat]["hand"])
    owner = "your card" if str(view) == str(seat) else f"seat {seat}'s card"
    parts = [f"{owner}, slot {_shown_slot(n, slot, newest_left)}"]
    if card["card"]:
        parts.append(f"{COLOR_NAMES[card['card'][0]]} {card['card'][1:]}")
    clued = [COLOR_NAMES[card["color_hint"]] if card["color_hint"] else None,
             str(card["rank_hint"]) if card["rank_hint"] else None]
    if any(clued):
        parts.append("clued " + " and ".join(x for x in clued if x))
    colors = [COLOR_NAMES[c] for c in card["colors"]]
    ranks = [str(r) for r in card["ranks"]]
    if len(colors) == 1 and len(ranks) == 1:
        knows = f"known: {colors[0]} {ranks[0]}"
    else:
        knows = (f"could be {_words(colors, len(snap['colors'])) or 'any colour'}, "
                 f"{_words(ranks, snap['variant']['ranks']) or 'any rank'}")
    parts.append(f"its holder knows it {knows}" if card["card"] else knows)
    return parts


def test_cards_are_labelled_in_words(watched):
    """Each card's label reads as words: whose card, its slot as shown, its face when seen,
    its clues, what its holder knows ("your card, slot 2, could be red or blue, 1 or 2")."""
    page = watched.page
    _start_play(page, 4)
    assert page.get_attribute("#card-0-0", "aria-label") == \
        "your card, slot 0, could be any colour, any rank"
    clued = 0
    for _ in range(8):          # clues both ways: some reach the person's cards
        snap = _snap(page)
        for seat, info in enumerate(snap["seats"]):
            for slot in range(len(info["hand"])):
                label = page.get_attribute(f"#card-{seat}-{slot}", "aria-label")
                want = _expected_label(snap, seat, slot)
                assert label.startswith(", ".join(want)), (label, want)
                assert "??" not in label and "hidden" not in label
                clued += seat == 0 and "clued" in label
        page.locator("#legal-moves .move-clue, #legal-moves .move-discard").first.click()
        _idle(page)
        _no_error(page)
    assert clued


def test_a_short_game_by_keyboard_alone_with_the_number_pad(watched):
    """A tiny game (one colour, two ranks, one card a hand) against a rule bot, played with
    the number pad's digits and letter keys only: Numpad0 selects one's own card,
    Shift+Numpad0 the partner's; Escape lets go of a selection."""
    page = watched.page
    _tiny_play(page)
    page.locator("#board-title").click()
    page.keyboard.press("Numpad0")
    assert "selected" in page.get_attribute("#card-0-0", "class")
    page.keyboard.press("Escape")
    assert "selected" not in page.get_attribute("#card-0-0", "class")
    assert page.locator("#selected-moves").count() == 0
    moves = 0
    while not page.evaluate("app.snap.over"):
        snap = _snap(page)
        kinds = {m["kind"] for m in snap["legal_moves"]}
        own = snap["seats"][0]["hand"][0]
        playable = own["ranks"] == [snap["fireworks"][0] + 1]
        if "reveal_rank" in kinds and not playable and (
                "discard" not in kinds or moves % 2 == 0):
            keys = ["Shift+Numpad0", "r"]
        else:
            keys = ["Numpad0", "p" if playable or "discard" not in kinds else "d"]
        for key in keys:
            page.keyboard.press(key)
        _idle(page)
        _no_error(page)
        assert page.evaluate("app.snap.moves_played") > snap["moves_played"], keys
        moves += 1
    assert moves >= 2 and page.locator("#game-over").is_visible()
    assert any(h["kind"] == "reveal_rank" and h["seat"] == 0 for h in _snap(page)["history"])
