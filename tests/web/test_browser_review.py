"""The local page in a real browser, bug by bug: each test reproduces one reported fault of
the page (headless Chromium through Playwright, the real app under uvicorn; the browser,
the server and the helpers are tests/web/test_browser.py's) and checks its fix.

Every page opened here also checks that it logs no console error, gets no response of
400 or more (the favicon included) and raises no JavaScript error, on every load. Games are
tiny or played by rule bots without a search, except where a search panel is the point."""

import re

import pytest

from tests.web import test_browser as shared
from tests.web.test_browser import WAIT_MS, _idle, _no_error, _reload, _start_play, _start_watch

pytestmark = shared.pytestmark
browser, server_url = shared.browser, shared.server_url     # the fixtures, shared

LOOK_ALIKES = set("Il1O0")


class Watched:
    """A page in its own browser context, with every console error, failed response and
    page error it meets recorded (`problems`)."""

    def __init__(self, browser, width=1400, height=1000):
        self.context = browser.new_context(viewport={"width": width, "height": height},
                                           accept_downloads=True)
        self.context.set_default_timeout(WAIT_MS)
        self.problems = []
        self.page = self.tab()

    def tab(self):
        page = self.context.new_page()
        page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console: {m.text} ({m.location.get('url')})"))
        page.on("response", lambda r: r.status >= 400 and self.problems.append(
            f"{r.status} {r.url}"))
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        return page

    def close(self):
        self.context.close()
        assert not self.problems, self.problems


def _open(page, url):
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    _idle(page)


@pytest.fixture
def watched(browser, server_url):
    """A 1400 x 1000 page on the form; no console error, failed response or page error."""
    w = Watched(browser)
    _open(w.page, server_url + "/")
    yield w
    w.close()


@pytest.fixture
def phone(browser, server_url):
    """The same at 400 x 800."""
    w = Watched(browser, 400, 800)
    _open(w.page, server_url + "/")
    yield w
    w.close()


def _at(page):
    return int(page.get_attribute("#board", "data-at"))


def _played(page):
    return int(page.get_attribute("#board", "data-moves-played"))


def _tiny_play(page, seed=1, players=2):
    """A play game of one colour, two ranks and one card a hand (the person on seat 0, the
    partners strong bots): a few moves long."""
    page.select_option("#mode", "play")
    page.fill("#players", str(players))
    page.dispatch_event("#players", "input")
    for field, value in (("seed", seed), ("colors", 1), ("ranks", 2), ("hand_size", 1)):
        page.fill(f"#{field}", str(value))
    page.check("#seat-0-human")
    for seat in range(1, players):
        page.fill(f"#seat-{seat}-blueprint", "strong")
        page.select_option(f"#seat-{seat}-search", "blueprint")
    page.click("#start")
    _idle(page)
    _no_error(page)


def _finish_tiny_play(page):
    """`_tiny_play`, played to its end by clicking the first legal move."""
    _tiny_play(page)
    for _ in range(50):
        if page.evaluate("app.snap.over"):
            break
        page.locator("#legal-moves button.move").first.click()
        _idle(page)
        _no_error(page)
    assert page.evaluate("app.snap.over")
    return _played(page)


def _exported_replay(page):
    """A strong-bot watch game played out, exported and opened as a replay: its length."""
    _start_watch(page, 5)
    page.click("#btn-playout")
    _idle(page)
    moves = _played(page)
    record = page.evaluate("fetch(`/api/games/${app.game.id}/export`).then(r => r.text())")
    page.click("#nav-replay")
    page.fill("#replay-text", record)
    page.click("#replay-load")
    _idle(page)
    _no_error(page)
    assert page.get_attribute("#board", "data-mode") == "replay" and _at(page) == 0
    return moves


def test_a_replay_timeline_spans_the_record_before_it_is_stepped(watched):
    """(1) A loaded replay's timeline reaches its last move at once: dragged, by End, and
    by the arrow keys of the timeline itself."""
    page = watched.page
    moves = _exported_replay(page)
    assert page.text_content("#moves-played") == str(moves)
    assert page.get_attribute("#timeline", "max") == str(moves)
    page.locator("#timeline").fill("5")
    _idle(page)
    _no_error(page)
    assert _at(page) == 5
    page.locator("#timeline").focus()
    page.keyboard.press("ArrowRight")
    _idle(page)
    assert _at(page) == 6 and page.input_value("#timeline") == "6"
    page.locator("#board-title").click()
    page.keyboard.press("End")
    _idle(page)
    _no_error(page)
    assert _at(page) == moves and page.input_value("#timeline") == str(moves)


def test_a_finished_play_game_exports_from_any_position(watched):
    """(2) Reviewing a finished play game, the export stays enabled away from its end."""
    page = watched.page
    _finish_tiny_play(page)
    page.click("#goto-0")
    _idle(page)
    assert _at(page) == 1
    assert page.is_enabled("#btn-export")
    with page.expect_download() as info:
        page.click("#btn-export")
    _idle(page)
    _no_error(page)
    assert info.value.suggested_filename.endswith(".json")


def test_the_view_of_a_finished_play_game_is_named(watched):
    """(3) In a finished play game the View box shows the view on screen, and any other
    view can be chosen (the game is over: nothing is secret any more)."""
    page = watched.page
    _finish_tiny_play(page)
    shown = page.evaluate("""() => { const s = document.getElementById('view-select');
        return [s.selectedIndex, s.value, String(app.view)]; }""")
    assert shown[0] >= 0 and shown[1] == shown[2], shown
    assert page.is_enabled("#view-select")
    page.select_option("#view-select", "1")
    _idle(page)
    cards = page.locator("#hand-1 .card").count()
    assert page.locator("#hand-1 .card.hidden-card").count() == cards
    assert page.locator("#hand-0 .card.hidden-card").count() == 0
    page.select_option("#view-select", "spectator")
    _idle(page)
    assert page.locator("#hands .card.hidden-card").count() == 0


def test_the_history_of_a_play_game_in_progress_leads_back(watched):
    """(4) A history line clicked during a play game shows that position, and the
    controls and End bring the game back: the person's move is offered again."""
    page = watched.page
    _start_play(page, 3)
    for _ in range(2):
        page.locator("#legal-moves button.move").last.click()
        _idle(page)
        _no_error(page)
    latest = _played(page)
    page.click("#goto-0")
    _idle(page)
    assert _at(page) == 1
    assert page.locator("#legal-moves button.move").count() == 0
    assert page.is_enabled("#btn-forward") and page.is_enabled("#btn-back")
    assert page.locator("#back-to-game").is_visible()
    page.click("#btn-forward")
    _idle(page)
    assert _at(page) == 2
    page.locator("#board-title").click()
    page.keyboard.press("End")
    _idle(page)
    assert _at(page) == latest
    assert page.locator("#legal-moves button.move").count() > 0
    page.click("#goto-1")
    _idle(page)
    page.click("#back-to-game")
    _idle(page)
    assert _at(page) == latest and page.locator("#legal-moves button.move").count() > 0
    page.locator("#legal-moves button.move").last.click()     # and the game goes on
    _idle(page)
    _no_error(page)
    assert _played(page) > latest


LINES_OF = """(el) => { const range = document.createRange(); range.selectNodeContents(el);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size; }"""


def _inside(page, inner, outer):
    """Whether every element of `inner` lies within `outer`'s content box (its padding
    excluded)."""
    return page.evaluate("""([inner, outer]) => {
        const box = document.querySelector(outer); const b = box.getBoundingClientRect();
        const s = getComputedStyle(box);
        const left = b.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth);
        const right = b.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth);
        return [...document.querySelectorAll(inner)].every((e) => {
            const r = e.getBoundingClientRect();
            return r.left >= left - 0.5 && r.right <= right + 0.5; }); }""", [inner, outer])


def test_a_game_fits_a_phone(phone, server_url):
    """(5) At 400 x 800 a game's address opens at the top of the page; each hand is one row;
    the fireworks stay inside the board's padding; a candidate's "mean +- s.e." is one
    line, and nothing is wider than the screen."""
    page = phone.page
    _start_watch(page, 1)
    page.click("#btn-playout")
    _idle(page)
    _no_error(page)
    _open(page, page.url)
    assert page.evaluate("window.scrollY") == 0
    page.click("#btn-first")                # whole hands
    _idle(page)
    for seat in (0, 1):
        tops = page.locator(f"#hand-{seat} .card").evaluate_all(
            "(cs) => cs.map((c) => Math.round(c.getBoundingClientRect().top))")
        assert len(tops) == 5 and len(set(tops)) == 1, tops
    assert _inside(page, "#fireworks .firework, #hands .card", "#board")
    page.click("#nav-new")
    _watch_lbs(page)
    page.click("#decision-0")
    _idle(page)
    _no_error(page)
    cells = page.locator("#candidates td.num")
    assert cells.count() >= 4
    assert {cells.nth(i).evaluate(LINES_OF) for i in range(cells.count())} == {1}
    assert page.evaluate("document.documentElement.scrollWidth") <= 400


def test_enter_on_a_card_keeps_the_focus_on_it(watched):
    """(6) Selecting a card with Enter (or Space) leaves the keyboard focus on that card."""
    page = watched.page
    _start_play(page, 3)
    page.locator("#card-1-2").focus()
    page.keyboard.press("Enter")
    assert "selected" in page.get_attribute("#card-1-2", "class")
    assert page.evaluate("document.activeElement.id") == "card-1-2"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "card-1-3"
    page.keyboard.press(" ")
    assert "selected" in page.get_attribute("#card-1-3", "class")
    assert page.evaluate("document.activeElement.id") == "card-1-3"


def test_the_page_has_a_favicon_and_loads_without_errors(watched, server_url):
    """(7, 12) The page names its icon and the server has one at /favicon.ico too; a load
    of the form and of each kind of game logs no error (the fixture checks)."""
    page = watched.page
    assert page.locator("link[rel='icon']").count() == 1
    icon = page.locator("link[rel='icon']").get_attribute("href")
    for path in (icon, "/favicon.ico"):
        reply = page.request.get(server_url + path)
        assert reply.status == 200 and reply.headers["content-type"].startswith("image/")
    _start_watch(page, 2)
    _reload(page)
    page.click("#nav-new")
    _start_play(page, 2)
    _reload(page)


def _label_fits(page, select):
    """Whether the selected option's words fit the select box (its arrow included)."""
    return page.evaluate("""(id) => { const s = document.getElementById(id);
        const probe = document.createElement('span'); const st = getComputedStyle(s);
        probe.style.font = st.font; probe.style.position = 'absolute';
        probe.style.whiteSpace = 'pre'; probe.textContent = s.options[s.selectedIndex].text;
        document.body.appendChild(probe); const need = probe.getBoundingClientRect().width;
        probe.remove();
        return need + parseFloat(st.paddingLeft) + parseFloat(st.paddingRight) + 20
               <= s.clientWidth; }""", select)


def test_me_switches_to_play_and_the_mode_box_shows_its_words(watched, phone):
    """(8) "me" can be ticked in watch mode, and switches the mode to play; the Mode box
    shows its whole label, on a wide screen and on a phone."""
    for page in (watched.page, phone.page):
        page.select_option("#mode", "watch")
        assert _label_fits(page, "mode")
        assert page.is_enabled("#seat-1-human")
        page.check("#seat-1-human")
        assert page.input_value("#mode") == "play"
        assert _label_fits(page, "mode")
        assert page.is_disabled("#seat-1-blueprint")
        page.select_option("#mode", "watch")
        assert not page.is_checked("#seat-1-human")


def test_game_ids_have_no_look_alikes(watched):
    """(9) A game's id uses no character that reads as another (I, l, 1, O, 0)."""
    page = watched.page
    ids = page.evaluate("""async () => { const out = [];
        for (let i = 0; i < 12; i++) {
            const r = await fetch('/api/games', {method: 'POST',
                headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({mode: 'watch', seed: i, seats: [
                    {blueprint: 'strong', search: 'blueprint'},
                    {blueprint: 'strong', search: 'blueprint'}]})});
            out.push((await r.json()).id); }
        return out; }""")
    assert len(set(ids)) == 12 and all(len(i) >= 16 for i in ids)
    assert not LOOK_ALIKES & set("".join(ids)), ids


def test_this_browsers_play_games_stay_listed(watched, browser, server_url):
    """(9) A play game in progress is listed under the recent games of the browser that
    started it (a closed tab loses nothing), and only there."""
    page = watched.page
    _start_play(page, 4)
    play_id = page.text_content("#game-id")
    page.locator("#legal-moves button.move").last.click()
    _idle(page)
    played = _played(page)
    page.click("#nav-new")
    page.wait_for_selector(f"#recent-{play_id}")
    page.close()
    tab = watched.tab()                         # the tab closed, a new one opened
    _open(tab, server_url + "/")
    link = tab.locator(f"#recent-{play_id}")
    link.wait_for()
    assert "play" in link.text_content()
    link.click()
    tab.wait_for_url(f"{server_url}/games/{play_id}")
    tab.wait_for_selector("body[data-ready='1']")
    _idle(tab)
    assert tab.get_attribute("#board", "data-mode") == "play" and _played(tab) == played
    assert tab.locator("#hand-0 .card.hidden-card").count() == 5
    other = Watched(browser)                    # another browser: not listed there
    try:
        _open(other.page, server_url + "/")
        _start_watch(other.page, 1)
        watch_id = other.page.text_content("#game-id")
        other.page.click("#nav-new")
        other.page.wait_for_selector(f"#recent-{watch_id}")
        assert other.page.locator(f"#recent-{play_id}").count() == 0
    finally:
        other.close()


def _clue_slots(snap, move):
    """The slots of its target's hand that a clue move of the person touches."""
    me, players = snap["human_seat"], len(snap["seats"])
    target = (me + move["target_offset"]) % players
    cards = [c["card"] for c in snap["seats"][target]["hand"]]
    want = move["color"] if move["kind"] == "reveal_color" else str(move["rank"])
    hit = [i for i, c in enumerate(cards) if (c[0] if move["kind"] == "reveal_color"
                                                 else c[1:]) == want]
    return target, hit


def test_clues_name_their_seat_and_the_cards_they_touch(watched):
    """(10) A clue button names its receiver as the log does ("seat 2"), never by an offset,
    and lists the slots it touches."""
    page = watched.page
    page.select_option("#mode", "play")
    page.fill("#players", "3")
    page.dispatch_event("#players", "input")
    page.fill("#seed", "3")
    page.check("#seat-0-human")
    for seat in (1, 2):
        page.select_option(f"#seat-{seat}-search", "blueprint")
    page.click("#start")
    _idle(page)
    snap = page.evaluate("app.snap")
    clues = [m for m in snap["legal_moves"] if m["kind"].startswith("reveal")]
    assert clues
    for move in clues:
        text = page.text_content(f"#move-{move['id']}")
        assert "+" not in text and "player" not in text, text
        target, slots = _clue_slots(snap, move)
        words = re.fullmatch(r"Reveal seat (\d): \w+, slots? ([\d, and]+)", text)
        assert words, text
        assert int(words.group(1)) == target
        assert [int(s) for s in re.findall(r"\d", words.group(2))] == slots, (text, slots)


def _watch_lbs(page, seed=1):
    page.select_option("#mode", "watch")
    page.fill("#seed", str(seed))
    page.select_option("#seat-0-search", "lbs-16")
    page.fill("#seat-0-rollouts", "8")
    page.select_option("#seat-1-search", "blueprint")
    page.click("#start")
    _idle(page)
    page.click("#btn-forward")
    _idle(page)
    _no_error(page)


def test_an_estimate_above_the_positions_maximum_is_flagged(watched):
    """(11) The search panel states the most the position can still score, and flags a
    candidate whose estimate exceeds it (still listed); candidates name seats absolutely."""
    page = watched.page
    _watch_lbs(page)
    page.click("#decision-0")
    _idle(page)
    assert page.text_content("#decision-most-still-possible") == "25"
    rows = page.locator("#candidates tbody tr")
    count = rows.count()
    assert page.locator("#candidates tr.over-max").count() == 0
    assert "player +" not in page.text_content("#candidates")

    def raise_one(route):
        reply = route.fetch()
        decision = reply.json()
        decision["candidates"][0]["mean"] = decision["max_score"] + 0.75
        route.fulfill(response=reply, json=decision)

    page.route("**/api/games/*/decisions/0", raise_one)
    page.click("#decision-close")
    page.click("#decision-0")
    _idle(page)
    assert rows.count() == count
    flagged = page.locator("#candidates tr.over-max")
    assert flagged.count() == 1
    assert "above the maximum 25" in flagged.text_content()


def _contrast(page, selector):
    """The contrast ratio of an element's text with what lies behind it (the nearest
    opaque background; the opacities on the way blend the text into it)."""
    return page.evaluate("""(sel) => {
        const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
        const e = document.querySelector(sel); let fg = rgb(getComputedStyle(e).color);
        let alpha = fg.length > 3 ? fg[3] : 1; let node = e; let bg = null;
        while (node && node.nodeType === 1) {
            const st = getComputedStyle(node); alpha *= parseFloat(st.opacity);
            const b = rgb(st.backgroundColor);
            if (!bg && (b.length < 4 || b[3] === 1)) { bg = b; }
            const img = st.backgroundImage;
            const stops = img === 'none' ? null : img.match(/rgba?\\([^)]*\\)/g);
            if (!bg && stops) { bg = stops.map(rgb).reduce((a, c) => (lum(c) < lum(a) ? c : a)); }
            node = node.parentElement; }
        function lum(c) { return c.slice(0, 3).map((v) => { v /= 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
            .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0); }
        bg = bg || [255, 255, 255];
        const text = fg.slice(0, 3).map((v, i) => bg[i] + (v - bg[i]) * alpha);
        const [a, b] = [lum(text), lum(bg)].sort((x, y) => y - x);
        return (a + 0.05) / (b + 0.05); }""", selector)


SAMPLES = """() => {
    const add = (parent, html) => { parent.insertAdjacentHTML('beforeend', html); };
    add(document.querySelector('#candidates tbody'),
        '<tr class="pruned" id="t-pruned"><td>Discard 0</td><td class="num">1.00</td>'
        + '<td><span class="badge pruned">pruned</span></td></tr>');
    add(document.querySelector('#hand-0 .cards'),
        '<div class="card c-yellow" id="t-card"><div class="face"><span class="rank">3</span>'
        + '<span class="suit">Y</span></div><div class="pips"><div class="pip-row">'
        + '<span class="pip c-yellow" id="t-pip">Y</span></div></div></div>'
        + '<div class="card hidden-card hinted c-yellow" id="t-hidden"><div class="face">'
        + '<span class="rank">?</span><span class="suit">Y</span></div></div>');
    add(document.querySelector('#discards'), '<span class="mini c-yellow" id="t-mini">Y2</span>');
}"""


FACES = """() => {
    const found = []; const seen = document.querySelectorAll('[data-contrast]').length;
    document.querySelectorAll('#hands .card, #fireworks .firework').forEach((box) => {
        [...box.querySelectorAll('*')].filter((e) => !e.children.length && e.textContent.trim()
                && getComputedStyle(e).display !== 'none'
                && getComputedStyle(e).visibility !== 'hidden').forEach((e) => {
            const st = getComputedStyle(e); const n = seen + found.length;
            e.setAttribute('data-contrast', String(n));
            const own = [...e.classList].find((c) => c.startsWith('c-'));
            found.push({ selector: `[data-contrast="${n}"]`,
                         where: `${box.id} .${[...e.classList].join('.')} "${e.textContent}"`,
                         colour: (own || [...box.classList].find((c) => c.startsWith('c-'))
                                  || 'c-none').slice(2),
                         box: box.matches('.firework') ? 'firework'
                              : box.matches('.hidden-card') ? 'hidden' : 'face up',
                         size: parseFloat(st.fontSize), weight: parseInt(st.fontWeight, 10),
                         faded: e.matches('.pip.no, .pip.counted') || box.matches('.useless') });
        });
    });
    return found; }"""


def _faces_readable(page):
    """Every text element of every card and firework on screen (ranks, colour letters,
    hints, pips, slot numbers, marks) with its contrast and the least WCAG asks of it: 3:1
    for large text (>= 24 px, or >= 18.66 px bold), 4.5:1 otherwise. The faded ones (pips
    ruled out or counted, a useless card's whole face) come back marked, not measured."""
    texts = page.evaluate(FACES)
    for t in texts:
        large = t["size"] >= 24 or (t["size"] >= 18.66 and t["weight"] >= 700)
        t["least"] = 3.0 if large else 4.5
        t["ratio"] = None if t["faded"] else round(_contrast(page, t["selector"]), 2)
    return texts


def test_muted_and_coloured_text_is_readable(watched):
    """(12) Future history lines, pruned candidates and yellow text (cards, fireworks,
    pips, discards, a hinted hidden card) have a contrast of at least 4.5:1; and, through a
    real game, every text element of every card and firework in every colour (face-up
    cards, hidden cards with and without a colour hint, all five fireworks) reaches WCAG's
    least (4.5:1; 3:1 for large text: the big rank). Left out on purpose, faded as a sign:
    the pips a clue rules out or whose every copy is in sight, and useless cards (their
    whole face at reduced opacity)."""
    page = watched.page
    _start_watch(page, 4)
    for _ in range(3):
        page.click("#btn-forward")
        _idle(page)
    page.click("#btn-first")
    _idle(page)
    page.evaluate(SAMPLES)
    page.evaluate("document.getElementById('decision-panel').hidden = false")
    selectors = ["#hist-1.future button", "#t-pruned td", "#t-pruned .badge", "#t-card .rank",
                 "#t-card .suit",
                 "#t-pip", "#t-hidden .suit", "#t-mini", "#firework-Y .rank",
                 "#firework-Y .suit"]
    ratios = {s: round(_contrast(page, s), 2) for s in selectors}
    assert min(ratios.values()) >= 4.5, ratios

    texts = []
    for view in ("spectator", "0"):     # every hand face up; then seat 0's cards hidden
        page.select_option("#view-select", view)
        _idle(page)
        if page.is_enabled("#btn-first"):
            page.click("#btn-first")
            _idle(page)
        for _ in range(8):
            page.click("#btn-forward")
            _idle(page)
            texts += _faces_readable(page)
    _no_error(page)
    measured = [t for t in texts if t["ratio"] is not None]
    colours = {"red", "yellow", "green", "white", "blue"}
    for box in ("face up", "firework"):
        shown = {t["colour"] for t in measured if t["box"] == box and ".suit" in t["where"]}
        assert shown == colours, (box, shown)
    assert {t["colour"] for t in measured if t["box"] == "hidden" and ".suit" in t["where"]} \
        & colours                                                           # a colour hint
    assert any(t["box"] == "hidden" and t["colour"] == "none" for t in measured)
    assert {".rank", ".suit", ".hints", ".pip", ".slot"} <= {
        w for t in measured for w in (".rank", ".suit", ".hints", ".pip", ".slot")
        if w in t["where"]}
    low = sorted({(t["where"], t["box"], t["ratio"], t["least"]) for t in measured
                  if t["ratio"] < t["least"]})
    assert not low, low


def test_an_unknown_address_says_so_without_a_console_error(watched, server_url):
    """(12) The address of a game the server does not hold shows the form and says so; the
    page asks whether the server holds it first, so no load logs a failed request."""
    page = watched.page
    _open(page, server_url + "/games/no-such-game")
    assert page.locator("#error").is_visible()
    assert "no game no-such-game" in page.text_content("#error")
    assert page.locator("#setup").is_visible() and page.url == server_url + "/"


PIPS = """() => [...document.querySelectorAll('#hands .pips')].map((pips) => {
    const card = pips.closest('.card'); const c = card.getBoundingClientRect();
    const slot = card.querySelector('.slot').getBoundingClientRect();
    return [...pips.querySelectorAll('.pip')].map((p) => {
        const r = p.getBoundingClientRect();
        return { selector: `#${pips.id} .pip-row:nth-child(${p.parentElement === pips.firstChild
                     ? 1 : 2}) .pip:nth-child(${[...p.parentElement.children].indexOf(p) + 1})`,
                 size: parseFloat(getComputedStyle(p).fontSize), height: r.height,
                 inside: r.left >= c.left - 0.5 && r.right <= c.right + 0.5 && r.bottom <= slot.top,
                 live: !p.matches('.no, .counted') && !card.matches('.useless') }; });
}).flat()"""


@pytest.mark.parametrize("size", [(400, 800), (1400, 1000)], ids=["phone", "desktop"])
def test_pips_are_readable_and_fit_their_cards(browser, server_url, size):
    """(12) A card's pips are at least 12 px, lie inside it above its slot number, keep
    each hand on one row, and the live ones (not ruled out, not every copy in sight) have a
    contrast of at least 4.5:1 on face-up and hidden cards alike."""
    w = Watched(browser, *size)
    try:
        page = w.page
        _open(page, server_url + "/")
        _start_watch(page, 4)
        for _ in range(6):
            page.click("#btn-forward")
            _idle(page)
        page.select_option("#view-select", "0")     # seat 0's cards hidden, seat 1's face up
        _idle(page)
        _no_error(page)
        pips = page.evaluate(PIPS)
        assert len(pips) == 10 * 10
        assert min(p["size"] for p in pips) >= 12, pips[0]
        assert min(p["height"] for p in pips) >= 12, pips[0]
        assert all(p["inside"] for p in pips), [p["selector"] for p in pips if not p["inside"]]
        for seat in (0, 1):
            tops = page.locator(f"#hand-{seat} .card").evaluate_all(
                "(cs) => cs.map((c) => Math.round(c.getBoundingClientRect().top))")
            assert len(set(tops)) == 1, tops
        assert _inside(page, "#hands .card", "#board")
        assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
        ratios = {p["selector"]: round(_contrast(page, p["selector"]), 2)
                  for p in pips if p["live"]}
        assert len(ratios) >= 40 and min(ratios.values()) >= 4.5, \
            {s: r for s, r in ratios.items() if r < 4.5}
    finally:
        w.close()


def test_the_search_panel_follows_the_board_on_a_phone(phone):
    """At 400 x 800 an open search panel comes right after the board's cards (before the
    long history), within a screen and a half of them."""
    page = phone.page
    _watch_lbs(page)
    page.click("#btn-playout")
    _idle(page)
    page.click("#decision-0")
    _idle(page)
    _no_error(page)
    boxes = page.evaluate("""() => Object.fromEntries(
        ['.table-area', '#decision-panel', '.history-area'].map((s) =>
            [s, document.querySelector(s).getBoundingClientRect().toJSON()]))""")
    board, panel, history = boxes[".table-area"], boxes["#decision-panel"], boxes[".history-area"]
    assert panel["top"] >= board["bottom"]
    assert panel["top"] - board["bottom"] <= 1.5 * 800, boxes
    assert history["top"] >= panel["bottom"], boxes
