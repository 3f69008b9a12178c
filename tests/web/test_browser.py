"""The local page in a real browser: headless Chromium (Debian's `chromium`) driven by
Playwright with the system browser (no `playwright install` download).

It starts the real server (`lbs_pz.web.app.create_app` under uvicorn on a free port, in a
thread), opens the page, plays a whole game in play mode by clicking the legal-move buttons
(partner: the strong bot), opens the search panel of one LBS decision in a watch game, and
saves screenshots of the watch and play views into results/screenshots/ (ignored by git).
The README's pictures are regenerated with
`LBS_PZ_SCREENSHOT_DIR=docs/screenshots python -m pytest tests/web/test_browser.py`.

Skipped, with the reason, only when Chromium or Playwright is missing (`.ci/run` installs
both)."""

import os
import random
import shutil
import socket
import threading
import time

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.waiting import HANG_SECONDS

WAIT_MS = HANG_SECONDS * 1000       # every wait of a page (Playwright's timeouts are in ms)
SHOTS = os.environ.get("LBS_PZ_SCREENSHOT_DIR") or os.path.join(ROOT, "results", "screenshots")


def _chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _chromium()
try:
    from playwright.sync_api import sync_playwright
except ImportError:                                   # pragma: no cover - CI installs it
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install "
                       "chromium; .ci/run installs it)"),
    pytest.mark.skipif(sync_playwright is None, reason="playwright is not installed (pip "
                       "install -e '.[test]'; .ci/run installs it)"),
]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    uvicorn = pytest.importorskip("uvicorn")
    from lbs_pz.web.app import create_app

    app = create_app(blueprint="strong", search="none")
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=HANG_SECONDS)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu",
                                           "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, server_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server_url + "/")
    page.wait_for_selector("body[data-ready='1']")
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _idle(page):
    page.wait_for_function("!document.body.classList.contains('busy')")


def _no_error(page):
    box = page.locator("#error")
    assert box.is_hidden(), f"the page shows an error: {box.text_content()}"


def _shot(page, name):
    os.makedirs(SHOTS, exist_ok=True)
    path = os.path.join(SHOTS, name)
    page.screenshot(path=path, full_page=True)
    assert os.path.getsize(path) > 10_000
    return path


def test_play_a_whole_game_by_clicking(page):
    """A person (seat 0) plays a whole 2-player game against the strong bot by clicking."""
    page.select_option("#mode", "play")
    page.fill("#seed", "3")
    page.check("#seat-0-human")
    assert page.is_disabled("#seat-0-blueprint")
    page.fill("#seat-1-blueprint", "strong")
    page.select_option("#seat-1-search", "blueprint")
    page.click("#start")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-mode") == "play"
    # The deal the person asked for is marked as chosen.
    assert page.text_content("#deal-label") == "deal #3, chosen"
    # The person's own cards are never shown: every card of seat 0 is hidden.
    assert page.locator("#hand-0 .card").count() == 5
    assert page.locator("#hand-0 .card.hidden-card").count() == 5
    assert page.locator("#hand-1 .card.hidden-card").count() == 0

    rng = random.Random(0)
    clicks = 0
    shot_taken = False
    while page.get_attribute("#board", "data-terminal") != "1":
        buttons = page.locator("#legal-moves button.move")
        count = buttons.count()
        assert count > 0, "the person's turn shows no legal-move buttons"
        # Prefer plays of clued cards and clues, else discard: a game that lasts a while.
        names = buttons.all_text_contents()
        plays = [i for i, n in enumerate(names) if n.startswith("Play")]
        clues = [i for i, n in enumerate(names) if n.startswith("Reveal")]
        discards = [i for i, n in enumerate(names) if n.startswith("Discard")]
        roll = rng.random()
        if clues and roll < 0.55:
            choice = rng.choice(clues)
        elif discards and roll < 0.9:
            choice = rng.choice(discards)
        else:
            choice = rng.choice(plays or discards or clues)
        before = int(page.get_attribute("#board", "data-moves-played"))
        if not shot_taken and clicks == 4:
            _shot(page, "play.png")
            shot_taken = True
        if clicks == 0:
            # Click the partner's first card, then a clue that touches it.
            page.click("#card-1-0")
            offered = page.locator("#selected-moves button")
            assert offered.count() >= 1
            assert all(n.startswith("Reveal") for n in offered.all_text_contents())
            offered.first.click()
        elif clicks == 1:
            # Click one's own (hidden) first card: play or discard it.
            page.click("#card-0-0")
            offered = page.locator("#selected-moves button")
            names = offered.all_text_contents()
            assert names and set(names) <= {"Play 0", "Discard 0"}, names
            offered.last.click()
        else:
            buttons.nth(choice).click()
        _idle(page)
        _no_error(page)
        after = int(page.get_attribute("#board", "data-moves-played"))
        assert after > before, "a click did not play a move"
        clicks += 1
        assert clicks < 100
    assert clicks >= 3
    assert page.locator("#game-over").is_visible()
    assert "Game over" in page.text_content("#game-over")
    # Once the game is over the export is allowed and works.
    assert page.is_enabled("#btn-export")
    with page.expect_download() as info:
        page.click("#btn-export")
    _idle(page)
    _no_error(page)
    assert info.value.suggested_filename.endswith(".json")
    if not shot_taken:
        _shot(page, "play.png")
    # Review: a history line shows that position with the whole game still listed, the
    # controls work, no move is offered, and the end is one click away.
    total = int(page.get_attribute("#board", "data-moves-played"))
    score = page.text_content("#score")
    page.click("#goto-9")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-at") == "10"
    assert page.locator("#history li").count() == total
    assert page.locator("#history li.future").count() == total - 10
    assert page.locator("#legal-moves button").count() == 0
    assert "waiting" not in page.text_content("#legal-moves")
    last = page.evaluate("app.snap")["history"][9]       # its card lights up where it went
    if last.get("card"):
        assert page.locator(".just-moved").count() == 1
        where = page.locator(".just-moved").get_attribute("class")
        assert ("firework" in where) == (last["kind"] == "play" and last["scored"])
    assert page.is_enabled("#btn-back") and page.is_enabled("#btn-forward")
    page.click("#btn-back")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "9"
    page.click("#btn-playout")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == str(total)
    assert page.text_content("#score") == score
    # The timeline and the keys: Home, End, Left.
    page.locator("#timeline").fill("5")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "5"
    page.locator("#board-title").click()            # focus outside the inputs
    for key, at in (("Home", "0"), ("End", str(total)), ("ArrowLeft", str(total - 1))):
        page.keyboard.press(key)
        _idle(page)
        assert page.get_attribute("#board", "data-at") == at, key
        assert page.input_value("#timeline") == at


def test_the_form_leaves_the_hand_size_to_the_engine(page):
    """The hand-size box starts empty, so a 4-player game gets the engine's 4 cards (the
    form used to send the 2-player default of 5)."""
    assert page.input_value("#hand_size") == ""
    page.select_option("#mode", "watch")
    page.fill("#players", "4")
    page.dispatch_event("#players", "input")
    for seat in range(4):
        page.fill(f"#seat-{seat}-blueprint", "strong")
        page.select_option(f"#seat-{seat}-search", "blueprint")
    with page.expect_response("**/api/games") as created:
        page.click("#start")
    _idle(page)
    _no_error(page)
    assert created.value.json()["state"]["variant"]["hand_size"] == 4
    assert page.locator("#hand-0 .card").count() == 4


def test_play_mode_keeps_the_searches_closed_until_the_end(page):
    """Against a searching partner, the searches of the game (the panel button and the
    history chips) stay disabled while it runs: their estimates roll out through the
    person's real hand. An error banner does not outlive a switch of section."""
    page.select_option("#mode", "play")
    page.fill("#seed", "2")
    page.check("#seat-0-human")
    page.fill("#seat-1-blueprint", "strong")
    page.select_option("#seat-1-search", "lbs-16")
    page.fill("#seat-1-rollouts", "8")
    page.click("#start")
    _idle(page)
    _no_error(page)
    for _ in range(2):              # the person moves, the searching partner answers
        page.locator("#legal-moves button.move").last.click()
        _idle(page)
        _no_error(page)
    chips = page.locator("#history button.chip")
    assert chips.count() >= 1
    assert all(chips.nth(i).is_disabled() for i in range(chips.count()))
    assert page.is_disabled("#btn-decision")
    page.click("#nav-new")
    page.fill("#seat-1-blueprint", "no-such-bot")
    page.click("#start")
    _idle(page)
    assert page.locator("#error").is_visible()
    page.click("#nav-replay")
    assert page.locator("#error").is_hidden()


def test_the_setup_form_fits_a_phone(browser, server_url):
    """At 400 px the set-up form is no wider than the screen and "Start game" takes the
    tap (a seat row used to overflow to 469 px and cover it)."""
    context = browser.new_context(viewport={"width": 400, "height": 800})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    try:
        page.goto(server_url + "/")
        page.wait_for_selector("body[data-ready='1']")
        widths = page.evaluate("""() => [document.documentElement.scrollWidth,
            ...[...document.querySelectorAll('#setup fieldset, .seat-row')].map(
                (e) => e.getBoundingClientRect().right)]""")
        assert max(widths) <= 400, widths
        page.select_option("#mode", "watch")
        for seat in (0, 1):
            page.select_option(f"#seat-{seat}-search", "blueprint")
        page.click("#start")                        # fails if another element takes the tap
        _idle(page)
        _no_error(page)
        assert page.get_attribute("#board", "data-mode") == "watch"
        page.click("#btn-forward")                  # the board fits too, and works
        _idle(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 400
        assert page.get_attribute("#board", "data-at") == "1"
    finally:
        context.close()


def test_every_game_has_its_own_address(page, server_url):
    """A game's address is /games/ID: a reload (or a new tab) shows the same game as the
    same viewer, a play game included; an unknown id says so and shows the form."""
    _start_watch(page, 4)
    watch_id = page.text_content("#game-id")
    assert page.url == f"{server_url}/games/{watch_id}"
    page.click("#btn-forward")
    _idle(page)
    page.click("#btn-forward")
    _idle(page)
    _reload(page)
    assert page.text_content("#game-id") == watch_id
    assert page.get_attribute("#board", "data-at") == "2"
    assert page.locator("#board").is_visible()

    second = page.context.new_page()            # a second tab on the same address
    second.goto(f"{server_url}/games/{watch_id}")
    second.wait_for_selector("body[data-ready='1']")
    second.wait_for_function("!document.body.classList.contains('busy')")
    assert second.text_content("#game-id") == watch_id
    assert second.get_attribute("#board", "data-at") == "2"
    second.close()

    page.goto(server_url + "/")
    page.wait_for_selector("body[data-ready='1']")
    _start_play(page)
    play_id = page.text_content("#game-id")
    page.locator("#legal-moves button.move").last.click()
    _idle(page)
    played = page.get_attribute("#board", "data-moves-played")
    _reload(page)
    assert page.text_content("#game-id") == play_id
    assert page.get_attribute("#board", "data-mode") == "play"
    assert page.get_attribute("#board", "data-moves-played") == played
    assert page.locator("#hand-0 .card.hidden-card").count() == 5     # still the person's view
    page.go_back()                  # the address before the game: the form
    page.wait_for_url(f"{server_url}/")
    page.wait_for_selector("body[data-ready='1']")
    _idle(page)
    assert page.locator("#setup").is_visible()

    ids = []                        # two games in one tab: Back returns to the first
    for seed in (6, 7):
        page.click("#nav-new")
        _start_watch(page, seed)
        ids.append(page.text_content("#game-id"))
    page.go_back()
    page.wait_for_url(f"{server_url}/games/{ids[0]}")
    _idle(page)
    assert page.text_content("#game-id") == ids[0] and page.locator("#board").is_visible()

    page.click("#nav-new")              # the form lists the server's recent games
    page.wait_for_selector(f"#recent-{ids[1]}")
    listed = page.locator("#recent-list a").evaluate_all("(a) => a.map((x) => x.id)")
    assert listed[:2] == [f"recent-{play_id}", f"recent-{ids[1]}"]     # this browser's first
    # a play game still running: listed in the browser that started it only
    assert "yours, in progress" in page.locator(f"#recent-{play_id} + span").text_content()
    page.click(f"#recent-{ids[0]}")
    page.wait_for_url(f"{server_url}/games/{ids[0]}")
    page.wait_for_selector("body[data-ready='1']")
    _idle(page)
    assert page.text_content("#game-id") == ids[0]

    page.goto(server_url + "/games/no-such-game")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#error").is_visible() and "no game" in page.text_content("#error")
    assert page.locator("#setup").is_visible()


def test_keyboard_play_and_the_busy_indicator(page):
    """On the person's turn a digit selects an own card, p / d play or discard it; a
    partner's selected card takes c / r (the clue that touches it). While the server
    thinks, "thinking..." shows and the controls take no clicks."""
    _start_play(page, 9)
    page.locator("#board-title").click()
    before = int(page.get_attribute("#board", "data-moves-played"))
    page.keyboard.press("0")
    assert "selected" in page.get_attribute("#card-0-0", "class")
    page.keyboard.press("d")                 # no discard with every clue token left: nothing
    assert int(page.get_attribute("#board", "data-moves-played")) == before
    page.keyboard.press("p")
    _idle(page)
    _no_error(page)
    snap = page.evaluate("app.snap")
    assert snap["moves_played"] == before + 2               # the play and the reply
    assert snap["history"][before]["text"].startswith("seat 0 plays ")
    assert snap["history"][before]["text"].endswith("from slot 0")
    page.click("#card-1-0")
    page.keyboard.press("r")
    _idle(page)
    _no_error(page)
    snap = page.evaluate("app.snap")
    rank = snap["history"][before + 2]
    assert rank["kind"] == "reveal_rank" and rank["target"] == 1 and 0 in rank["touched"]
    # ... and the rest of the game by keyboard alone: a rank clue on the partner's oldest
    # card (Shift+0, r) or a discard of one's own oldest (0, d), whichever is legal.
    rng = random.Random(1)
    while not page.evaluate("app.snap.over"):
        snap = page.evaluate("app.snap")
        tokens, before = snap["information_tokens"], snap["moves_played"]
        clue = tokens == 8 or (tokens > 0 and rng.random() < 0.5)
        page.keyboard.press("Shift+Digit0" if clue else "Digit0")
        page.keyboard.press("r" if clue else "d")
        _idle(page)
        _no_error(page)
        assert page.evaluate("app.snap.moves_played") > before, "a key press played no move"
        last = page.evaluate("app.snap")["history"][before]
        assert last["kind"] == ("reveal_rank" if clue else "discard"), last
    assert page.locator("#game-over").is_visible()
    # a guarded task held until the test lets it go: the page is busy meanwhile
    page.evaluate("() => { guarded(() => new Promise((done) => { window.letGo = done; })); }")
    assert page.locator("#busy").is_visible()
    export = page.locator("#btn-export")
    assert export.evaluate("(b) => getComputedStyle(b).pointerEvents") == "none"
    page.evaluate("() => window.letGo()")
    _idle(page)
    assert page.locator("#busy").is_hidden()


def test_three_to_five_players_and_what_a_seat_runs_as(page):
    """3 and 5 players lay out every hand without overflowing the page; a seat whose
    lbs-16 runs as lbs-inf (no value for it in this game) says so under its name."""
    for players, cards in ((3, 5), (5, 4)):
        page.click("#nav-new")
        page.select_option("#mode", "watch")
        page.fill("#players", str(players))
        page.dispatch_event("#players", "input")
        for seat in range(players):
            page.fill(f"#seat-{seat}-blueprint", "medium" if seat == 0 else "strong")
            page.select_option(f"#seat-{seat}-search", "lbs-16" if seat == 0 else "blueprint")
            page.fill(f"#seat-{seat}-rollouts", "4")
        page.click("#start")
        _idle(page)
        _no_error(page)
        for seat in range(players):
            assert page.locator(f"#hand-{seat} .card").count() == cards
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        notes = page.text_content("#seat-notes-0")
        assert "lbs-16 runs as lbs-inf: no value for medium" in notes
        page.click("#btn-forward")
        _idle(page)
        _no_error(page)
    _shot(page, "five_players.png")


def test_stale_move_is_refused_with_the_servers_message(page):
    """A move sent for an old turn is refused (409) and the page shows the server's message.
    The deal box is left empty: a random deal, its number not shown while the game runs."""
    assert page.input_value("#seed") == ""
    page.select_option("#mode", "play")
    page.check("#seat-1-human")
    page.select_option("#seat-0-search", "blueprint")
    page.click("#start")
    _idle(page)
    _no_error(page)
    assert page.text_content("#deal-label") == "random deal"
    assert page.get_attribute("#board", "data-deal") == "random"
    # Make the page believe it is an earlier turn, then click a move.
    page.evaluate("app.snap.moves_played = app.snap.moves_played + 7")
    page.locator("#legal-moves button.move").first.click()
    _idle(page)
    box = page.locator("#error")
    assert box.is_visible()
    assert box.text_content().strip()


def _reload(page):
    """Reload the page and wait until it has opened what its address names."""
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    _idle(page)
    _no_error(page)


def _start_play(page, seed=None):
    """A play game, the person on seat 0 against the strong bot (no search), from the
    form: on deal `seed`, or a random deal."""
    page.select_option("#mode", "play")
    if seed is not None:
        page.fill("#seed", str(seed))
    page.check("#seat-0-human")
    page.fill("#seat-1-blueprint", "strong")
    page.select_option("#seat-1-search", "blueprint")
    page.click("#start")
    _idle(page)


def _start_watch(page, seed):
    """A watch game of two strong bots (no search) on deal `seed`, started from the form."""
    page.select_option("#mode", "watch")
    page.fill("#seed", str(seed))
    for seat in (0, 1):
        page.select_option(f"#seat-{seat}-search", "blueprint")
    page.click("#start")
    _idle(page)


def _check_last_move(page, at):
    """The last-move line and the touched marks at position `at`: the number marked."""
    last = page.evaluate("app.snap")["history"][at - 1]
    assert page.text_content("#last-move") == f"Last move: {last['text']}"
    touched = last.get("touched", [])
    assert page.locator(".card.touched").count() == len(touched)
    for slot in touched:
        assert "touched" in page.get_attribute(f"#card-{last['target']}-{slot}", "class")
    return len(touched)


def _expected_pips(snap, seat, slot):
    """(colours, ranks) pip classes of a card, computed here from the snapshot: "no" when
    the clues rule it out, "counted" when every copy it could be is in sight of its holder
    (fireworks, discards, the other hands, its other cards it knows from the clues), ""
    otherwise."""
    chars, ranks = snap["colors"], snap["variant"]["ranks"]
    card = snap["seats"][seat]["hand"][slot]
    copies = {r: 3 if r == 1 else 1 if r == ranks else 2 for r in range(1, ranks + 1)}
    left = {f"{c}{r}": copies[r] - (r <= snap["fireworks"][i]) for i, c in enumerate(chars)
            for r in range(1, ranks + 1)}
    seen = list(snap["discards"]) + [h["card"] for p, s in enumerate(snap["seats"]) if p != seat
                                     for h in s["hand"] if h["card"]]
    # the holder's other cards it knows from the clues (one colour, one rank)
    seen += [f"{h['colors'][0]}{h['ranks'][0]}" for i, h in enumerate(snap["seats"][seat]["hand"])
             if i != slot and len(h["colors"]) == 1 and len(h["ranks"]) == 1]
    for name in seen:
        left[name] -= 1
    alive = lambda c, r: c in card["colors"] and r in card["ranks"] and left[f"{c}{r}"] > 0  # noqa: E731
    colours = ["no" if c not in card["colors"] else
               "" if any(alive(c, r) for r in card["ranks"]) else "counted" for c in chars]
    rank_classes = ["no" if r not in card["ranks"] else
                    "" if any(alive(c, r) for c in card["colors"]) else "counted"
                    for r in range(1, ranks + 1)]
    return colours, rank_classes


def _shown_pips(page, seat, slot):
    rows = page.locator(f"#pips-{seat}-{slot} .pip-row")
    out = []
    for row in range(2):
        classes = rows.nth(row).locator(".pip").evaluate_all("(ps) => ps.map((p) => p.className)")
        out.append(["no" if " no" in c else "counted" if "counted" in c else "" for c in classes])
    return tuple(out)


def test_knowledge_shows_as_pips_with_counting_and_critical_marks(page):
    """Every card shows its colours and ranks as pips: ruled out by clues, crossed out by
    counting (every copy it could be in sight of its holder), or possible; the last copy
    of a needed card is marked critical. Checked against the snapshot at many positions."""
    _start_watch(page, 8)
    page.click("#btn-playout")
    _idle(page)
    total = int(page.get_attribute("#board", "data-moves-played"))
    counted = critical = clued = 0
    for at in range(10, total + 1, 6):
        page.fill("#jump-input", str(at))
        page.click("#btn-jump")
        _idle(page)
        snap = page.evaluate("app.snap")
        for seat, info in enumerate(snap["seats"]):
            for slot, card in enumerate(info["hand"]):
                want = _expected_pips(snap, seat, slot)
                assert _shown_pips(page, seat, slot) == want, (at, seat, slot)
                counted += sum(x == "counted" for row in want for x in row)
                clued += sum(x == "no" for row in want for x in row)
                name = card["card"]
                c, r = name[0], int(name[1:])
                last = (r > snap["fireworks"][snap["colors"].index(c)] and
                        snap["discards"].count(name) == (3 if r == 1 else 1 if r == 5 else 2) - 1)
                classes = page.get_attribute(f"#card-{seat}-{slot}", "class")
                assert ("critical" in classes) == last, (at, seat, slot, name)
                critical += last
    assert counted and critical and clued       # each kind of mark was seen and checked


def test_watch_game_search_panel(page):
    """A watch game with LBS on seat 0 (few rollouts): the search panel shows the candidates
    with mean +- s.e., the blueprint's move, and the belief heat map of every slot."""
    page.select_option("#mode", "watch")
    page.fill("#seed", "1")
    page.fill("#seat-0-blueprint", "strong")
    page.select_option("#seat-0-search", "lbs-16")
    page.fill("#seat-0-rollouts", "8")
    page.fill("#seat-1-blueprint", "strong")
    page.select_option("#seat-1-search", "blueprint")
    page.click("#start")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-mode") == "watch"
    # Spectator: every card is face up.
    assert page.locator("#hands .card.hidden-card").count() == 0
    for _ in range(4):
        page.click("#btn-forward")
        _idle(page)
        _no_error(page)
    assert page.get_attribute("#board", "data-at") == "4"
    assert page.locator("#history li").count() == 4
    # The last move in words; a clue's touched cards are outlined in its receiver's hand.
    marked = _check_last_move(page, 4)
    # Back and forward through the moves already played.
    page.click("#btn-back")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "3"
    marked += _check_last_move(page, 3)
    assert marked >= 1                                  # moves 0 and 2 are clues here
    page.fill("#jump-input", "1")
    page.click("#btn-jump")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "1"
    # Seat 0's view hides seat 0's cards.
    page.select_option("#view-select", "0")
    _idle(page)
    assert page.locator("#hand-0 .card.hidden-card").count() == 5
    assert page.locator("#hand-1 .card.hidden-card").count() == 0
    page.select_option("#view-select", "spectator")
    _idle(page)
    assert page.locator("#hands .card.hidden-card").count() == 0
    # Seat 0 searched move 0 (and move 2): open the panel of move 0.
    chip = page.locator("#decision-0")
    assert chip.is_visible()
    chip.click()
    _idle(page)
    _no_error(page)
    panel = page.locator("#decision-panel")
    assert panel.is_visible()
    assert panel.get_attribute("data-k") == "0"
    assert page.get_attribute("#board", "data-at") == "0"   # the board moved to the decision
    rows = page.locator("#candidates tbody tr")
    assert rows.count() >= 2
    assert "\u00b1" in rows.first.text_content()
    assert page.locator("#candidates .badge.chosen").count() == 1
    assert page.locator("#candidates .badge.blueprint").count() == 1
    assert page.text_content("#decision-deviated") in ("yes", "no")
    assert page.locator("#belief table.heat").count() == 5
    assert page.locator("#belief-slot-0 td").count() == 25
    assert "follows the blueprint" in " ".join(page.text_content("#decision-legend").split())
    assert page.locator("#belief td.true-card").count() == 0     # not before the game ends
    _shot(page, "watch.png")
    # The panel follows the board: move 1 (seat 1) was not searched, move 2 was.
    page.click("#btn-forward")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "1" and panel.is_hidden()
    page.click("#decision-2")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "2" and panel.get_attribute("data-k") == "2"
    page.click("#btn-back")
    _idle(page)
    assert panel.is_hidden()
    # Once the game is over the heat map outlines the seat's true card in every slot.
    page.click("#btn-playout")
    _idle(page)
    page.click("#decision-0")
    _idle(page)
    assert page.locator("#belief td.true-card").count() == 5


def test_replay_an_exported_game(page):
    """A finished watch game, exported as hanab.live JSON and pasted into the replay form,
    replays move by move to the same final score."""
    page.select_option("#mode", "watch")
    page.fill("#seed", "5")
    for seat in (0, 1):
        page.fill(f"#seat-{seat}-blueprint", "strong")
        page.select_option(f"#seat-{seat}-search", "blueprint")
    page.click("#start")
    _idle(page)
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-terminal") == "1"
    moves = int(page.get_attribute("#board", "data-moves-played"))
    score = page.text_content("#score")
    record = page.evaluate("fetch(`/api/games/${app.game.id}/export`).then(r => r.text())")
    assert '"actions"' in record and '"deck"' in record

    page.click("#nav-replay")
    page.fill("#replay-text", record)
    page.click("#replay-load")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-mode") == "replay"
    assert page.get_attribute("#board", "data-at") == "0"
    assert page.text_content("#moves-played") == str(moves)   # the record's length, at once
    page.click("#btn-forward")
    _idle(page)
    page.click("#btn-forward")
    _idle(page)
    assert page.get_attribute("#board", "data-at") == "2"
    assert page.input_value("#jump-input") == "2"              # the jump box follows the move
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    assert int(page.get_attribute("#board", "data-at")) == moves
    assert page.text_content("#score") == score
    assert page.is_disabled("#btn-forward")
    # The same record from a file.
    page.click("#nav-replay")
    page.fill("#replay-text", "")
    page.set_input_files("#replay-file", files=[{"name": "game.json",
                                                 "mimeType": "application/json",
                                                 "buffer": record.encode()}])
    page.click("#replay-load")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-mode") == "replay"
    assert page.get_attribute("#board", "data-at") == "0"
    # A broken record is refused with the server's message.
    page.click("#nav-replay")
    page.set_input_files("#replay-file", files=[])
    page.fill("#replay-text", '{"actions": [], "deck": "nope"}')
    page.click("#replay-load")
    _idle(page)
    assert page.locator("#error").is_visible()
    assert page.text_content("#error").strip()


def test_replay_a_compare_jsonl_log(page, tmp_path):
    """A two-game `compare --jsonl` log pasted into the replay form: record 1 re-runs to the
    logged score and length."""
    import json
    import subprocess
    import sys

    log = tmp_path / "games.jsonl"
    subprocess.run([sys.executable, "-m", "lbs_pz.cli", "compare", "--methods", "blueprint",
                    "--games", "2", "--jsonl", str(log), "--backend", "inline", "--no-progress"],
                   check=True, capture_output=True, timeout=HANG_SECONDS, cwd=ROOT)
    text = log.read_text()
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert len(records) == 2
    want = records[1]["result"]

    page.click("#nav-replay")
    page.fill("#replay-text", text)
    page.fill("#replay-index", "1")
    page.click("#replay-load")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-mode") == "replay"
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    assert int(page.get_attribute("#board", "data-at")) == want["moves"]
    assert int(page.text_content("#score")) == want["score"]
    assert "replay" in page.text_content("#turn-label")
