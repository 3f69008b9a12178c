// lbs_pz local page: set up, watch, replay and play Hanabi games against the server's JSON API.
// Plain ES2017, no build step, no external resources.
"use strict";

const COLOR_CHARS = "RYGWB";
const COLOR_NAMES = { R: "red", Y: "yellow", G: "green", W: "white", B: "blue" };

const app = {
  options: null,   // GET /api/options
  game: null,      // {id, mode}
  snap: null,      // the SNAPSHOT on screen
  view: "spectator",
  busy: false,
  decisionK: null, // move whose search panel is open
  selected: null,  // play mode: {seat, slot} of the clicked card
  slotOrder: "oldest", // "oldest": slot #0 the oldest card, on the left; "hanablive": newest
                       // on the left, slots numbered from 1 (`loadSlotOrder`)
};

// ---------------------------------------------------------------- helpers

function $(id) { return document.getElementById(id); }

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key === "onclick") node.addEventListener("click", value);
      else if (key === "style") node.setAttribute("style", value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of [].concat(children || [])) {
    if (child === null || child === undefined) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}

function clearError() {
  const box = $("error");
  box.textContent = "";
  box.hidden = true;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new Error(`cannot reach the server (${err.message})`);
  }
  let data = null;
  const text = await response.text();
  if (text) {
    try { data = JSON.parse(text); } catch (err) { data = { error: text }; }
  }
  if (!response.ok) {
    const message = data && data.error ? data.error : `HTTP ${response.status}`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

async function guarded(fn) {
  if (app.busy) return;
  app.busy = true;
  document.body.classList.add("busy");
  try {
    clearError();
    await fn();
  } catch (err) {
    showError(err.message || String(err));
  } finally {
    app.busy = false;
    document.body.classList.remove("busy");
    document.body.dataset.idle = "1";
  }
}

function colorChars(snap) {
  if (snap && Array.isArray(snap.colors) && snap.colors.length) return snap.colors.join("");
  const n = snap && snap.variant && snap.variant.colors ? snap.variant.colors : 5;
  return COLOR_CHARS.slice(0, n);
}

function colorClass(ch) {
  return "c-" + (COLOR_NAMES[ch] || "unknown");
}

function fmt(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "-";
  return Number(x).toFixed(digits === undefined ? 2 : digits);
}

// ---------------------------------------------------------------- slot order

// The order of the cards in a hand, a setting this browser remembers: "oldest" (the
// engine's: slot #0 the oldest card, on the left, new cards drawn on the right) or
// "hanablive" (hanab.live's: new cards drawn on the left, slots numbered from 1 there).
// Every move text on the page names slots as the hands show them: the server names the
// engine's slots, and `slotText` renames them.
const SLOT_ORDER = "lbs_pz.slot_order";

function loadSlotOrder() {
  let order = null;
  try { order = localStorage.getItem(SLOT_ORDER); } catch (err) { order = null; }
  app.slotOrder = order === "hanablive" ? "hanablive" : "oldest";
  $("slot-order").checked = app.slotOrder === "hanablive";
}

function setSlotOrder(newestLeft) {
  app.slotOrder = newestLeft ? "hanablive" : "oldest";
  try { localStorage.setItem(SLOT_ORDER, app.slotOrder); } catch (err) { /* the tab keeps it */ }
  if (app.snap && app.game) render(app.snap);
}

function newestLeft() {
  return app.slotOrder === "hanablive";
}

// The name on screen of the engine's slot `i` of a hand of `n` cards.
function slotName(i, n) {
  return newestLeft() ? n - i : i;
}

// The engine's slot of the slot named `shown` on screen (-1: none of a hand of `n`).
function engineSlot(shown, n) {
  const i = newestLeft() ? n - shown : shown;
  return i >= 0 && i < n ? i : -1;
}

// A move's text as the server writes it (engine slots), its slots renamed as shown. sizes:
// every hand's length when the move was (or is) made; mover: the seat making it. The hand
// it names: a clue's receiver ("seat T:"), otherwise the mover's.
function slotText(text, sizes, mover) {
  if (!newestLeft() || !text || !sizes) return text;
  const target = /(?:Reveal|->) seat (\d+):/.exec(text);
  const n = sizes[target ? Number(target[1]) : mover];
  if (!n) return text;
  const name = (i) => slotName(Number(i), n);
  return text
    .replace(/^(Play|Discard) (\d+)$/, (m, verb, i) => `${verb} ${name(i)}`)
    .replace(/from slot (\d+)/, (m, i) => `from slot ${name(i)}`)
    .replace(/: (.*), (slots?) ((?:\d+, )*\d+(?: and \d+)?)$/, (m, what, word, list) => {
      const slots = list.split(/, | and /).map(name).sort((a, b) => a - b);
      const last = slots.pop();
      return `: ${what}, ${word} ${slots.length ? `${slots.join(", ")} and ` : ""}${last}`;
    });
}

// A history entry's text with its slots as shown.
function historyText(h) {
  return slotText(h.text, h.hand_sizes, h.seat);
}

// A move text of the position on screen (its legal moves, a search's candidates).
function moveText(snap, text, mover) {
  return slotText(text, snap.seats.map((seat) => seat.hand.length), mover);
}

// ---------------------------------------------------------------- sections

// This browser's play games (their ids, newest first), kept in localStorage: the server
// lists a play game in progress to no one (its id is the address that moves for its
// person), so a closed tab would lose it.
const OWN_GAMES = "lbs_pz.play_games";
const OWN_KEPT = 20;

function ownGames() {
  try {
    const ids = JSON.parse(localStorage.getItem(OWN_GAMES) || "[]");
    return Array.isArray(ids) ? ids.filter((id) => typeof id === "string" && id) : [];
  } catch (err) {
    return [];
  }
}

function keepOwnGames(ids) {
  try {
    localStorage.setItem(OWN_GAMES, JSON.stringify(ids.slice(0, OWN_KEPT)));
  } catch (err) { /* no storage (a private window): the list lasts as long as the tab */ }
}

function rememberGame(id) {
  keepOwnGames([id, ...ownGames().filter((other) => other !== id)]);
}

// This browser's play games the server still holds (the others are forgotten here).
async function loadOwnGames() {
  const own = ownGames();
  if (!own.length) return [];
  const { games } = await api("GET", `/api/games?ids=${own.map(encodeURIComponent).join(",")}`);
  const held = new Set(games.map((g) => g.id));
  keepOwnGames(own.filter((id) => held.has(id)));
  return games.map((g) => Object.assign({ own: true }, g));
}

// This browser's play games, then the newest games of the server (a play game once over),
// each a link to its address.
async function loadRecent() {
  const [own, { games }] = await Promise.all([loadOwnGames(), api("GET", "/api/games")]);
  const shown = own.concat(games.filter((g) => !own.some((o) => o.id === g.id)));
  const list = $("recent-list");
  list.textContent = "";
  for (const g of shown) {
    const status = g.over ? `game over, score ${g.score}` : `${g.moves_played} moves, score ${g.score}`;
    const whose = g.own ? (g.over ? ", yours" : ", yours, in progress") : "";
    list.appendChild(el("li", {}, [el("a", { href: `/games/${encodeURIComponent(g.id)}`,
      id: `recent-${g.id}`, text: `${g.mode}: ${g.seats.join(" / ")}` }),
      el("span", { class: "muted", text: ` (${g.players} players, ${status}${whose})` })]));
  }
  $("recent").hidden = shown.length === 0;
}

function showSection(name) {
  clearError();                 // an error belongs to the section it came from
  if (name === "setup") loadRecent().catch(() => { $("recent").hidden = true; });
  for (const s of ["setup", "replay", "board"]) {
    $(s).hidden = s !== name;
  }
  $("nav-new").classList.toggle("active", name === "setup");
  $("nav-replay").classList.toggle("active", name === "replay");
  $("nav-board").classList.toggle("active", name === "board");
}

// ---------------------------------------------------------------- set-up form

function seatRow(i) {
  const blueprints = app.options ? app.options.blueprints || [] : [];
  const searches = app.options ? app.options.searches || ["blueprint"] : ["blueprint"];
  const defaultBlueprint = app.options && app.options.server_blueprint
    ? app.options.server_blueprint : (blueprints[0] || "");
  const defaultSearch = app.options && app.options.server_search ? app.options.server_search : "blueprint";
  const search = el("select", { id: `seat-${i}-search`, "aria-label": `Seat ${i} search` },
    searches.map((s) => el("option", { value: s, text: s, selected: s === defaultSearch })));
  const row = el("div", { class: "seat-row", id: `seat-${i}` }, [
    el("span", { class: "seat-label", text: `Seat ${i}` }),
    el("label", { class: "inline", for: `seat-${i}-human` }, [
      el("input", { type: "checkbox", id: `seat-${i}-human`, class: "seat-human" }), " me"]),
    el("label", { class: "inline", for: `seat-${i}-blueprint` }, ["Blueprint ",
      el("input", { id: `seat-${i}-blueprint`, list: "blueprint-list", value: defaultBlueprint,
        size: 18 })]),
    el("label", { class: "inline", for: `seat-${i}-search` }, ["Search ", search]),
    el("label", { class: "inline", for: `seat-${i}-rollouts` }, ["Rollouts ",
      el("input", { id: `seat-${i}-rollouts`, type: "number", min: 1, placeholder: "default",
        max: app.options && app.options.limits ? app.options.limits.search.rollouts : null,
        size: 6 })]),
  ]);
  const human = row.querySelector(".seat-human");
  human.addEventListener("change", () => {
    if (human.checked) {
      for (const other of document.querySelectorAll(".seat-human")) {
        if (other !== human) other.checked = false;
      }
      $("mode").value = "play";
    }
    syncSeatRows();
  });
  return row;
}

function syncSeatRows() {
  const play = $("mode").value === "play";
  document.querySelectorAll(".seat-row").forEach((row, i) => {
    const human = $(`seat-${i}-human`);
    if (!play) human.checked = false;
    const isHuman = play && human.checked;
    for (const field of ["blueprint", "search", "rollouts"]) {
      $(`seat-${i}-${field}`).disabled = isHuman;
    }
    row.classList.toggle("is-human", isHuman);
  });
}

function buildSeats() {
  const box = $("seats");
  const n = Math.max(2, Math.min(5, parseInt($("players").value, 10) || 2));
  const old = box.querySelectorAll(".seat-row").length;
  if (old === n) return;
  const keep = [];
  for (let i = 0; i < Math.min(old, n); i++) keep.push($(`seat-${i}`));
  box.textContent = "";
  for (let i = 0; i < n; i++) box.appendChild(keep[i] || seatRow(i));
  syncSeatRows();
}

function readSetup() {
  const variant = {};
  for (const key of ["players", "colors", "ranks", "hand_size", "max_information_tokens",
                     "max_life_tokens"]) {
    const v = parseInt($(key).value, 10);
    if (!Number.isNaN(v)) variant[key] = v;
  }
  const mode = $("mode").value;
  const seats = [];
  const n = document.querySelectorAll(".seat-row").length;
  for (let i = 0; i < n; i++) {
    if (mode === "play" && $(`seat-${i}-human`).checked) {
      seats.push({ human: true });
      continue;
    }
    const seat = {
      blueprint: $(`seat-${i}-blueprint`).value.trim(),
      search: $(`seat-${i}-search`).value,
    };
    const rollouts = parseInt($(`seat-${i}-rollouts`).value, 10);
    if (!Number.isNaN(rollouts)) seat.rollouts = rollouts;
    seats.push(seat);
  }
  if (mode === "play" && !seats.some((s) => s.human)) {
    throw new Error('play mode: tick "me" on the seat you want to play');
  }
  const body = { variant, seats, mode };
  // An empty box asks for a random deal (chosen on the server; a play game keeps its
  // number secret until it is over); a number asks for that deal of the evaluation stream.
  const text = $("seed").value.trim();
  if (text !== "") {
    const seed = Number(text);
    if (!Number.isInteger(seed) || seed < 0) throw new Error("deal number: a whole number >= 0, or empty for a random deal");
    body.seed = seed;
  }
  return body;
}

async function loadOptions() {
  try {
    app.options = await api("GET", "/api/options");
  } catch (err) {
    showError(`could not load the server's options: ${err.message}`);
    app.options = null;
  }
  const list = $("blueprint-list");
  list.textContent = "";
  for (const spec of (app.options && app.options.blueprints) || []) {
    list.appendChild(el("option", { value: spec }));
  }
  const dv = app.options && app.options.default_variant;
  if (dv) {
    for (const key of Object.keys(dv)) {
      // The hand size stays empty: the engine's default depends on the player count
      // (5 cards, 4 with 4-5 players), which the 2-player default would hide.
      if (key === "hand_size") continue;
      if ($(key) && dv[key] !== null && dv[key] !== undefined) $(key).value = dv[key];
    }
  }
  $("seats").textContent = "";
  buildSeats();
}

// ---------------------------------------------------------------- game life cycle

function startGame(data) {
  app.game = { id: data.id, mode: data.state.mode || data.mode || "watch" };
  // The game's own address: a reload or a new tab shows it again (its id is a random
  // token, so the address is also what lets one open a play game).
  const address = `/games/${encodeURIComponent(data.id)}`;
  if (location.pathname !== address) history.pushState({ id: data.id }, "", address);
  app.view = app.game.mode === "play" ? data.state.view : "spectator";
  if (app.game.mode === "play") rememberGame(data.id);
  app.decisionK = null;
  $("decision-panel").hidden = true;
  $("continue-panel").hidden = true;
  $("nav-board").disabled = false;
  $("conventions-panel").hidden = true;
  $("conventions-panel").open = false;
  app.summaryKey = null;
  showSection("board");
  render(data.state);
  loadConventions().catch((err) => showError(`conventions: ${err.message}`));
}

async function createGame(event) {
  event.preventDefault();
  await guarded(async () => {
    const body = readSetup();
    const data = await api("POST", "/api/games", body);
    startGame(data);
    await autoAdvance();
  });
}

function gameUrl(suffix) {
  return `/api/games/${encodeURIComponent(app.game.id)}${suffix || ""}`;
}

async function fetchAt(k) {
  const params = new URLSearchParams();
  if (k !== null && k !== undefined) params.set("at", String(k));
  params.set("view", String(app.view));
  const snap = await api("GET", gameUrl(`?${params}`));
  render(snap);
  await followDecision(snap);
}

// Moves per /advance request, and the most seconds one may take, while the page advances a
// game by itself: the board shows each position reached as it comes.
const STEP_MOVES = 8;
const STEP_SECONDS = 0.5;

// Ask the server to advance until `done(snapshot)`, a few moves (or STEP_SECONDS) per
// request, and show each position reached (with `progress`, its words in #progress).
// `moves`: a number of moves wanted in all (-1: all), or a function of the snapshot giving it.
async function advanceUntil(moves, done, progress) {
  let snap = app.snap;
  for (let i = 0; i < 1000 && !done(snap); i++) {
    const before = snap.moves_played;
    const wanted = typeof moves === "function" ? moves(snap) : moves;
    const n = wanted < 0 ? STEP_MOVES : Math.min(wanted, STEP_MOVES);
    snap = await api("POST", gameUrl("/advance"), { moves: n, seconds: STEP_SECONDS });
    if (String(snap.view) === String(app.view)) render(snap);
    if (progress) showProgress(progress(snap));
    if (snap.moves_played === before) break;
  }
  showProgress(null);
  return snap;
}

function showProgress(text) {
  const box = $("progress");
  box.textContent = text || "";
  box.hidden = !text;
}

// In play mode, let the agents move until it is the person's turn (the server stops there).
async function autoAdvance() {
  const snap = app.snap;
  if (!snap || app.game.mode !== "play" || snap.terminal || snap.over) return;
  const partnersTurn = (s) => {
    const seat = s.seats[s.current_player];
    return !s.terminal && !s.over && seat && !seat.human;
  };
  if (!partnersTurn(snap)) return;
  // one move a request: each partner's move shows as it comes
  render(await advanceUntil(1, (s) => !partnersTurn(s)));
}

async function forward() {
  const snap = app.snap;
  if (snap.at < snap.moves_played) {
    await fetchAt(snap.at + 1);
  } else if (!snap.terminal && !snap.over && !inPlay(snap)) {
    await api("POST", gameUrl("/advance"), { moves: 1 });
    await fetchAt(null);
  }
}

// The last position the controls can reach: a replay's record is known up front.
function lastMove(snap) {
  return snap.record_moves ?? snap.moves_played;
}

async function toEnd() {
  await jumpTo(lastMove(app.snap));
}

async function back() {
  if (app.snap.at > 0) await fetchAt(app.snap.at - 1);
}

async function playOut() {
  const ended = app.snap.terminal || app.snap.over || inPlay(app.snap);
  if (!ended || app.snap.at < app.snap.moves_played) {
    if (!ended) {
      await advanceUntil(-1, (s) => s.terminal || s.over,
        (s) => `playing out: move ${s.moves_played}${s.record_moves ? ` of ${s.record_moves}` : ""}`);
    }
    await fetchAt(null);
  }
}

async function jumpTo(k) {
  if (Number.isNaN(k) || k < 0) throw new Error("jump: give a move number >= 0");
  let snap = app.snap;
  if (k > snap.moves_played && !snap.terminal && !snap.over && !inPlay(snap)) {
    snap = await advanceUntil((s) => k - s.moves_played,
      (s) => s.moves_played >= k || s.terminal || s.over);
  }
  await fetchAt(Math.min(k, snap.moves_played));
}

async function sendMove(moveId) {
  const snap = app.snap;
  // The person's move shows at once; the partners' replies come after (autoAdvance).
  const data = await api("POST", gameUrl("/move"),
    { move: moveId, turn: snap.moves_played, reply: false });
  render(data);
  await autoAdvance();
}

async function exportGame() {
  const record = await api("GET", gameUrl("/export"));
  const blob = new Blob([JSON.stringify(record, null, 1)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: `lbs_pz-game-${app.game.id}.json`, id: "export-link" });
  document.body.appendChild(link);
  link.click();
  setTimeout(() => { URL.revokeObjectURL(url); link.remove(); }, 1000);
}

// ---------------------------------------------------------------- replay

function replayBody(text, index) {
  const trimmed = text.trim();
  if (!trimmed) throw new Error("replay: choose a file or paste a record first");
  const lines = trimmed.split(/\r?\n/).filter((line) => line.trim());
  if (lines.length > 1) {
    let whole = null;
    try { whole = JSON.parse(trimmed); } catch (err) { whole = null; }
    if (whole === null) return { jsonl_text: trimmed, index };
  }
  let record;
  try {
    record = JSON.parse(trimmed);
  } catch (err) {
    throw new Error(`replay: not JSON (${err.message})`);
  }
  if (record && typeof record === "object" && !Array.isArray(record) &&
      "actions" in record && "deck" in record) {
    return { hanablive: record };
  }
  return { jsonl_line: record };
}

async function loadReplay() {
  await guarded(async () => {
    const file = $("replay-file").files[0];
    const text = file ? await file.text() : $("replay-text").value;
    const index = parseInt($("replay-index").value, 10) || 0;
    const data = await api("POST", "/api/replays", replayBody(text, index));
    startGame(data);
  });
}

// ---------------------------------------------------------------- rendering

function cardFace(name) {
  // "R3" -> ["R", "3"]
  return [name.slice(0, 1), name.slice(1)];
}

// Card counting: copies of each card not yet seen by a card's holder, from what the page
// shows (fireworks, discards, every other hand whose cards are face up on screen; never
// the holder's own). A hidden card's pips then cross out what no unseen copy can be.
function copiesOf(rank, ranks) {
  return rank === 1 ? 3 : rank === ranks ? 1 : 2;
}

function unseenCounts(snap, holder) {
  const chars = [...colorChars(snap)];
  const ranks = snap.variant.ranks;
  const left = {};
  chars.forEach((c, ci) => {
    for (let r = 1; r <= ranks; r++) left[`${c}${r}`] = copiesOf(r, ranks) - (r <= snap.fireworks[ci] ? 1 : 0);
  });
  const seen = snap.discards.slice();
  snap.seats.forEach((seat, p) => {
    if (p !== holder) for (const card of seat.hand) if (card.card) seen.push(card.card);
  });
  for (const name of seen) if (name in left) left[name] -= 1;
  return left;
}

// What a card's holder knows it is from the clues (its one colour and one rank), or null.
function knownIdentity(card) {
  const colors = card.colors || [];
  const ranks = card.ranks || [];
  return colors.length === 1 && ranks.length === 1 ? `${colors[0]}${ranks[0]}` : null;
}

// The unseen counts for the card in `slot` of `holder`'s hand: `left` (unseenCounts) less
// the holder's other cards it knows from the clues (a known Y5 leaves no Y5 for the others).
function unseenFor(snap, holder, slot, left) {
  const own = Object.assign({}, left);
  snap.seats[holder].hand.forEach((card, i) => {
    const name = i === slot ? null : knownIdentity(card);
    if (name && name in own) own[name] -= 1;
  });
  return own;
}

// A card no other copy of which is left to play: discarding it loses points for good.
function isCritical(name, snap) {
  const [c, r] = cardFace(name);
  const ci = colorChars(snap).indexOf(c);
  if (ci < 0 || Number(r) <= snap.fireworks[ci]) return false;
  const discarded = snap.discards.filter((d) => d === name).length;
  return discarded === copiesOf(Number(r), snap.variant.ranks) - 1;
}

// A card that can never be played: its rank is already on its firework, or every copy of a
// lower card of its colour is discarded.
function isUseless(name, snap) {
  const [c, r] = cardFace(name);
  const ci = colorChars(snap).indexOf(c);
  if (ci < 0) return false;
  if (Number(r) <= snap.fireworks[ci]) return true;
  for (let lower = snap.fireworks[ci] + 1; lower < Number(r); lower++) {
    const gone = snap.discards.filter((d) => d === `${c}${lower}`).length;
    if (gone >= copiesOf(lower, snap.variant.ranks)) return true;
  }
  return false;
}

// A card its holder's knowledge (its clues, negative ones included) proves useless: every
// identity it could still be is useless. Never its face, so a hidden card is judged alike.
function knownUseless(card, snap) {
  const colors = card.colors || [...colorChars(snap)];
  const ranks = card.ranks || [];
  return colors.length > 0 && ranks.length > 0 &&
    colors.every((c) => ranks.every((r) => isUseless(`${c}${r}`, snap)));
}

// Pips: every colour and rank of the variant; "no" where the clues rule it out (negative
// information included), "counted" where every copy it could be is already in sight.
function renderPips(card, seatIndex, snap, left) {
  const chars = [...colorChars(snap)];
  const possible = new Set(card.colors || chars);
  const ranks = new Set((card.ranks || []).map(Number));
  const alive = (c, r) => possible.has(c) && ranks.has(r) && left[`${c}${r}`] > 0;
  const colorPips = chars.map((c) => {
    const ok = [...ranks].some((r) => alive(c, r));
    return el("span", { class: `pip ${colorClass(c)}${possible.has(c) ? (ok ? "" : " counted") : " no"}`,
      title: `${COLOR_NAMES[c] || c}: ${possible.has(c) ? (ok ? "possible" : "every copy in sight") : "ruled out by the clues"}`,
      text: c });
  });
  const rankPips = [];
  for (let r = 1; r <= snap.variant.ranks; r++) {
    const ok = [...possible].some((c) => alive(c, r));
    rankPips.push(el("span", { class: `pip rank-pip${ranks.has(r) ? (ok ? "" : " counted") : " no"}`,
      title: `${r}: ${ranks.has(r) ? (ok ? "possible" : "every copy in sight") : "ruled out by the clues"}`,
      text: String(r) }));
  }
  return el("div", { class: "pips", id: `pips-${seatIndex}-${card.slotIndex}` }, [
    el("div", { class: "pip-row" }, colorPips), el("div", { class: "pip-row" }, rankPips)]);
}

// "red", "red or blue", "red, green or blue".
function orWords(words) {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

// What a card's holder knows of it, in words: "could be red or blue, 1 or 2", "known: red 3".
function knowledgeWords(card, snap) {
  const chars = [...colorChars(snap)];
  const colors = card.colors || chars;
  const ranks = (card.ranks || []).map(Number);
  const name = (c) => COLOR_NAMES[c] || c;
  if (colors.length === 1 && ranks.length === 1) return `known: ${name(colors[0])} ${ranks[0]}`;
  const colorText = colors.length === chars.length ? "any colour" : orWords(colors.map(name));
  const rankText = ranks.length === snap.variant.ranks ? "any rank" : orWords(ranks.map(String));
  return `could be ${colorText}, ${rankText}`;
}

// A card's screen-reader label, in words: whose card, its slot as shown, its face when
// the view sees it, what its holder knows, its clues and marks.
function cardLabel(card, slot, seatIndex, snap, marks) {
  const yours = String(snap.view) === String(seatIndex);
  const where = `${yours ? "your card" : `seat ${seatIndex}'s card`}, slot ${slotName(slot, snap.seats[seatIndex].hand.length)}`;
  const parts = [where];
  if (card.card) {
    const [c, r] = cardFace(card.card);
    parts.push(`${COLOR_NAMES[c] || c} ${r}`);
  }
  const clued = [card.color_hint ? COLOR_NAMES[card.color_hint] || card.color_hint : null,
    card.rank_hint ? String(card.rank_hint) : null].filter(Boolean);
  if (clued.length) parts.push(`clued ${clued.join(" and ")}`);
  parts.push(card.card ? `its holder knows it ${knowledgeWords(card, snap)}` : knowledgeWords(card, snap));
  return parts.concat(marks).join(", ");
}

// left: unseenFor(...) of this card.
function renderCard(card, slot, seatIndex, snap, left) {
  card = Object.assign({ slotIndex: slot }, card);
  const known = card.card !== null && card.card !== undefined;
  const hint = [];
  if (card.color_hint !== null && card.color_hint !== undefined && card.color_hint !== "") {
    hint.push(String(card.color_hint));
  }
  if (card.rank_hint !== null && card.rank_hint !== undefined && card.rank_hint !== "") {
    hint.push(String(card.rank_hint));
  }
  let cls = "card";
  let face;
  if (known) {
    const [c, r] = cardFace(card.card);
    cls += " " + colorClass(c);
    face = [el("span", { class: "rank", text: r }), el("span", { class: "suit", text: c })];
  } else {
    cls += " hidden-card";
    const ch = card.color_hint ? String(card.color_hint).slice(0, 1) : null;
    if (ch && COLOR_NAMES[ch]) cls += " hinted " + colorClass(ch);
    face = [el("span", { class: "rank", text: card.rank_hint ? String(card.rank_hint) : "?" }),
      el("span", { class: "suit", text: ch || "" })];
  }
  const critical = known && isCritical(card.card, snap);
  // the view's own hidden cards: useless when their clues prove it
  const useless = known ? isUseless(card.card, snap) : knownUseless(card, snap);
  const marks = [];
  if (critical) {
    cls += " critical";
    marks.push("critical: the last copy");
  }
  if (useless) {
    cls += " useless";
    marks.push("useless: it can never be played");
  }
  const label = cardLabel(card, slot, seatIndex, snap, marks);
  const selectable = app.game && inPlay(snap) && !inPast(snap) && !snap.terminal &&
    snap.seats[snap.current_player] && snap.seats[snap.current_player].human;
  if (selectable) cls += " selectable";
  if (app.selected && app.selected.seat === seatIndex && app.selected.slot === slot) cls += " selected";
  return el("div", { class: cls, id: `card-${seatIndex}-${slot}`, title: label, "aria-label": label,
    role: selectable ? "button" : "img", tabindex: selectable ? 0 : null,
    onclick: selectable ? () => selectCard(seatIndex, slot) : null }, [
    el("div", { class: "face" }, face),
    el("div", { class: "hints", text: hint.length ? `hint ${hint.join(" ")}` : "" }),
    renderPips(card, seatIndex, snap, left),
    critical ? el("span", { class: "critical-mark", title: "critical: the last copy", text: "!" }) : null,
    useless ? el("span", { class: "useless-mark", title: "useless: it can never be played", text: "\u00d7" }) : null,
    el("div", { class: "slot", text: `#${slotName(slot, snap.seats[seatIndex].hand.length)}` }),
  ]);
}

// ---------------------------------------------------------------- pace and efficiency

// hanab.live's: the most the game can still score (per colour, the ranks up to the first
// whose every copy is discarded).
function maxScore(snap) {
  let most = 0;
  [...colorChars(snap)].forEach((c) => {
    for (let r = 1; r <= snap.variant.ranks; r++) {
      if (snap.discards.filter((d) => d === `${c}${r}`).length >= copiesOf(r, snap.variant.ranks)) break;
      most += 1;
    }
  });
  return most;
}

// hanab.live's pace: score + cards in the deck + players - the most still possible (the
// discards that can still be made with the most possible in reach); none once the deck is
// empty or the game is over.
function pace(snap) {
  if (snap.deck_size <= 0 || snap.terminal) return null;
  const played = snap.fireworks.reduce((a, b) => a + b, 0);
  return played + snap.deck_size + snap.seats.length - maxScore(snap);
}

// hanab.live's efficiency: cards "gotten" (played, or clued in a hand and not surely
// useless by its clues) per clue "lost" (a clue given, a misplay, a last-rank card played
// with every clue token in hand); null before any.
function efficiency(snap) {
  const most = snap.variant.max_information_tokens;
  let lost = 0;
  let tokens = most;
  for (const h of snap.history.filter((x) => x.k < snap.at)) {
    if (h.kind === "reveal_color" || h.kind === "reveal_rank") {
      lost += 1;
      tokens -= 1;
    } else if (h.kind === "discard") {
      tokens = Math.min(most, tokens + 1);
    } else if (!h.scored) {
      lost += 1;
    } else if (h.card && Number(h.card.slice(1)) === snap.variant.ranks) {
      if (tokens === most) lost += 1;
      else tokens += 1;
    }
  }
  if (!lost) return null;
  let gotten = snap.fireworks.reduce((a, b) => a + b, 0);
  for (const seat of snap.seats) {
    for (const card of seat.hand) {
      const clued = card.color_hint || card.rank_hint;
      if (clued && !knownUseless(card, snap)) gotten += 1;
    }
  }
  return gotten / lost;
}

// The move that led to the position on screen, in words, and the cards it touched.
function renderLastMove(snap) {
  const last = snap.history.find((h) => h.k === snap.at - 1);
  const box = $("last-move");
  box.textContent = last ? `Last move: ${historyText(last)}` : "";
  box.className = last && last.kind === "play" && !last.scored ? "last-move misplay" : "last-move";
  box.hidden = !last;
  document.querySelectorAll(".card.touched").forEach((c) => c.classList.remove("touched"));
  for (const slot of (last && last.touched) || []) {
    const card = $(`card-${last.target}-${slot}`);
    if (card) card.classList.add("touched");
  }
  // The card just played lights up its firework; one discarded or misplayed, its discard.
  document.querySelectorAll(".just-moved").forEach((c) => c.classList.remove("just-moved"));
  if (last && last.card) {
    const target = last.kind === "play" && last.scored ? $(`firework-${last.card[0]}`)
      : document.querySelector(`#discards .mini[title="${last.card}"]`);
    if (target) target.classList.add("just-moved", ...(last.kind === "play" && !last.scored ? ["misplayed"] : []));
  }
}

// A running play game at its latest position: every move since the person's last one
// (the partners' replies), not only the last.
function renderSinceTurn(snap) {
  const box = $("since-turn");
  box.textContent = "";
  let moves = [];
  if (inPlay(snap) && snap.at === snap.moves_played) {
    const mine = snap.history.filter((h) => h.seat === snap.human_seat && h.k < snap.at);
    const from = mine.length ? mine[mine.length - 1].k + 1 : 0;
    moves = snap.history.filter((h) => h.k >= from && h.k < snap.at);
  }
  box.hidden = !moves.length;
  if (!moves.length) return;
  box.appendChild(el("span", { class: "since-title", text: "Since your last move:" }));
  box.appendChild(el("ol", { start: moves[0].k },
    moves.map((h) => el("li", { value: h.k, id: `since-${h.k}`, text: historyText(h) }))));
}

// The engine's slots of a hand of n cards in the order shown, left to right.
function handOrder(n) {
  const slots = [...Array(n).keys()];
  return newestLeft() ? slots.reverse() : slots;
}

function renderHands(snap) {
  const box = $("hands");
  box.textContent = "";
  snap.seats.forEach((seat, i) => {
    const left = unseenCounts(snap, i);
    const isTurn = !snap.terminal && i === snap.current_player;
    const title = [`Seat ${i}`, seat.name ? `: ${seat.name}` : "",
      seat.human && !/\byou\b/i.test(seat.name || "") ? " (you)" : "",
      String(snap.view) === String(i) ? " (viewing)" : ""].join("");
    box.appendChild(el("div", { class: `seat${isTurn ? " to-move" : ""}`, id: `hand-${i}` }, [
      el("div", { class: "seat-name" }, [title, isTurn ? el("span", { class: "badge turn", text: "to move" }) : null]),
      (seat.notes || []).length ? el("ul", { class: "seat-notes", id: `seat-notes-${i}` },
        seat.notes.map((note) => el("li", { text: note }))) : null,
      el("div", { class: "cards" }, handOrder(seat.hand.length).map((slot) =>
        renderCard(seat.hand[slot], slot, i, snap, unseenFor(snap, i, slot, left)))),
    ]));
  });
}

function renderFireworks(snap) {
  const box = $("fireworks");
  box.textContent = "";
  const chars = colorChars(snap);
  snap.fireworks.forEach((height, ci) => {
    const ch = chars[ci] || "?";
    box.appendChild(el("div", { class: `firework ${colorClass(ch)}`, id: `firework-${ch}`,
      "aria-label": `${COLOR_NAMES[ch] || ch} firework at ${height}` }, [
      el("span", { class: "rank", text: String(height) }), el("span", { class: "suit", text: ch }),
    ]));
  });
}

function renderDiscards(snap) {
  const box = $("discards");
  box.textContent = "";
  const sorted = snap.discards.slice().sort();
  if (!sorted.length) box.appendChild(el("span", { class: "muted", text: "none yet" }));
  for (const name of sorted) {
    const [c, r] = cardFace(name);
    box.appendChild(el("span", { class: `mini ${colorClass(c)}`, title: name, text: `${c}${r}` }));
  }
}

function renderHistory(snap) {
  const box = $("history");
  box.textContent = "";
  for (const entry of snap.history) {
    const k = entry.k;
    const done = k < snap.at;
    const item = el("li", { class: `hist${done ? "" : " future"}${k === snap.at - 1 ? " current" : ""}`,
      id: `hist-${k}`, value: k }, [
      el("button", { type: "button", class: "link", id: `goto-${k}`,
        title: `Position after move ${k}`, text: `${k}. ${historyText(entry)}`,
        onclick: () => guarded(() => fetchAt(k + 1)) }),
      entry.deviated && entry.blueprint_text ? el("span", { class: "bp-move", id: `bp-move-${k}`,
        text: `blueprint: ${slotText(entry.blueprint_text, entry.hand_sizes, entry.seat)}`,
        title: "What the blueprint would have played here" }) : null,
      entry.searched ? el("button", { type: "button", class: `chip${entry.deviated ? " deviated" : ""}`,
        id: `decision-${k}`, disabled: searchLocked(snap),
        title: searchLocked(snap) ? "The searches open once the game is over"
          : "Open the search panel of this move",
        text: entry.deviated ? "search: deviated" : "search",
        onclick: () => guarded(() => openDecision(k)) }) : null,
    ]);
    box.appendChild(item);
  }
  scrollWithin(box, box.querySelector(".current"));
}

// Scroll the list `box` (not the page) so that its item `item` is in view.
function scrollWithin(box, item) {
  if (!item) return;
  const outer = box.getBoundingClientRect();
  const inner = item.getBoundingClientRect();
  if (inner.top < outer.top) box.scrollTop -= outer.top - inner.top;
  else if (inner.bottom > outer.bottom) box.scrollTop += inner.bottom - outer.bottom;
}

// In play mode a search's estimates depend on rollouts through the human's real hand:
// the server shows them once the game is over, so the page offers them only then.
function searchLocked(snap) {
  return app.game.mode === "play" && !snap.over;
}

// While a play game runs its one view is the person's; once it is over, any view.
function renderViewSelect(snap) {
  const select = $("view-select");
  const locked = inPlay(snap);
  select.textContent = "";
  if (!locked) select.appendChild(el("option", { value: "spectator", text: "Spectator (all cards)" }));
  snap.seats.forEach((seat, i) => {
    if (locked && !seat.human) return;
    select.appendChild(el("option", { value: String(i), text: `Seat ${i}'s view` }));
  });
  select.value = String(app.view);
  select.disabled = locked;
}

// A play game still running: the person's view, moves offered at its latest position.
function inPlay(snap) {
  return app.game.mode === "play" && !snap.over;
}

// A play game running, shown at an earlier position (from the history or the controls).
function inPast(snap) {
  return inPlay(snap) && snap.at < snap.moves_played;
}

// Play mode: clicking a card offers the legal moves about it (play/discard your own card, or
// the clues that touch a partner's card).
function movesForCard(snap, seatIndex, slot) {
  const me = snap.human_seat !== undefined && snap.human_seat !== null ? snap.human_seat
    : snap.seats.findIndex((seat) => seat.human);
  const legal = snap.legal_moves || [];
  if (seatIndex === me) {
    return legal.filter((m) => (m.kind === "play" || m.kind === "discard") && m.slot === slot);
  }
  const card = snap.seats[seatIndex].hand[slot].card;
  if (!card) return [];
  const [c, r] = cardFace(card);
  const offset = (seatIndex - me + snap.seats.length) % snap.seats.length;
  return legal.filter((m) => m.target_offset === offset &&
    ((m.kind === "reveal_color" && m.color === c) || (m.kind === "reveal_rank" && String(m.rank) === r)));
}

function selectCard(seatIndex, slot) {
  const same = app.selected && app.selected.seat === seatIndex && app.selected.slot === slot;
  app.selected = same ? null : { seat: seatIndex, slot };
  const focused = document.activeElement ? document.activeElement.id : "";
  renderHands(app.snap);          // the cards are drawn anew: the focus goes back to its card
  if (focused.startsWith("card-") && $(focused)) $(focused).focus();
  renderLastMove(app.snap);
  renderLegalMoves(app.snap);
}

// Keyboard play on the person's turn: a digit (top row or number pad) selects the slot of
// one's own hand it names on screen, Shift + digit that slot of the next seat's (click or
// Tab + Enter selects any card; Escape lets go of it); then p
// plays and d discards one's own selected card, c and r give the colour or rank clue that
// touches a partner's selected card.
const PLAY_KEYS = { p: "play", d: "discard", c: "reveal_color", r: "reveal_rank" };

function playKey(e) {
  const snap = app.snap;
  const me = snap.human_seat;
  const seat = snap.seats[snap.current_player];
  if (snap.over || inPast(snap) || !seat || !seat.human) return false;
  const digit = /^(?:Digit|Numpad)([0-9])$/.exec(e.code || "");
  if (digit) {                    // a digit: one's own card; Shift + digit: the next seat's
    const owner = e.shiftKey ? (me + 1) % snap.seats.length : me;
    const slot = engineSlot(Number(digit[1]), snap.seats[owner].hand.length);
    if (slot < 0) return false;
    selectCard(owner, slot);
    return true;
  }
  const kind = PLAY_KEYS[e.key.toLowerCase()];
  if (!kind || !app.selected) return false;
  const move = movesForCard(snap, app.selected.seat, app.selected.slot).find((m) => m.kind === kind);
  if (move) guarded(() => sendMove(move.id));
  return true;
}

function moveTitle(snap, move) {
  if (move.target_offset === undefined || move.target_offset === null) return move.name;
  const me = snap.human_seat !== undefined && snap.human_seat !== null ? snap.human_seat : snap.current_player;
  const target = (me + move.target_offset) % snap.seats.length;
  const what = move.kind === "reveal_color" ? `their ${COLOR_NAMES[move.color] || move.color} cards`
    : `their ${move.rank}s`;
  return `Clue seat ${target} about ${what}`;
}

function moveGroup(move) {
  const kind = String(move.kind || move.name || "").toLowerCase();
  if (kind.startsWith("play")) return "Play";
  if (kind.startsWith("discard")) return "Discard";
  return "Clue";
}

function renderLegalMoves(snap) {
  const playing = app.game.mode === "play";
  $("play-area").hidden = !playing;
  if (!playing) return;
  const over = $("game-over");
  over.hidden = !snap.over;
  over.textContent = snap.over ? `Game over: score ${snap.record ? snap.record.score
    : app.finalScore ?? snap.score}. Review it with the controls and the history.` : "";
  if (snap.over && snap.at >= snap.moves_played) app.finalScore = snap.score;
  const box = $("legal-moves");
  box.textContent = "";
  if (inPast(snap)) {
    box.dataset.turn = "past";
    box.appendChild(el("p", { class: "muted", text: `This is move ${snap.at} of ${snap.moves_played}: ` +
      "the game goes on at its latest position." }));
    box.appendChild(el("button", { type: "button", id: "back-to-game", class: "primary",
      text: "Back to the game", onclick: () => guarded(() => fetchAt(null)) }));
    return;
  }
  const seat = snap.seats[snap.current_player];
  const myTurn = !snap.terminal && !snap.over && seat && seat.human;
  box.dataset.turn = myTurn ? "me" : "other";
  if (!myTurn) {
    if (!snap.over) box.appendChild(el("span", { class: "muted", text: "waiting for the partners" }));
    return;
  }
  if (app.selected) {
    const moves = movesForCard(snap, app.selected.seat, app.selected.slot);
    const me = snap.current_player;
    const shown = slotName(app.selected.slot, snap.seats[app.selected.seat].hand.length);
    box.appendChild(el("div", { class: "move-group selected-moves", id: "selected-moves" }, [
      el("span", { class: "group-name", text: app.selected.seat === snap.human_seat
        ? `Your slot ${shown}` : `Seat ${app.selected.seat}, slot ${shown}` }),
      ...(moves.length ? moves.map((move) => el("button", { type: "button", class: "move-selected primary",
        id: `sel-move-${move.id}`, "data-move": move.id, text: moveText(snap, move.text || move.name, me),
        onclick: () => guarded(() => sendMove(move.id)) }))
        : [el("span", { class: "muted", text: "no legal move about this card" })]),
    ]));
  }
  const groups = {};
  for (const move of snap.legal_moves || []) {
    const g = moveGroup(move);
    (groups[g] = groups[g] || []).push(move);
  }
  for (const g of ["Play", "Discard", "Clue"]) {
    if (!groups[g]) continue;
    box.appendChild(el("div", { class: "move-group" }, [
      el("span", { class: "group-name", text: g }),
      ...groups[g].map((move) => el("button", { type: "button", class: `move move-${g.toLowerCase()}`,
        id: `move-${move.id}`, "data-move": move.id, title: moveTitle(snap, move),
        text: moveText(snap, move.text || move.name, snap.current_player),
        onclick: () => guarded(() => sendMove(move.id)) })),
    ]));
  }
}

// The deal in words: "deal #N, chosen" for a number asked for, "deal #N, random" for a random
// one, "random deal (seed 0x...)" for a play game's private deal (a string; hidden until the
// game is over), "recorded deal" for a replay.
function dealText(snap) {
  const known = snap.seed !== null && snap.seed !== undefined;
  if (snap.deal === "chosen") return `deal #${snap.seed}, chosen`;
  if (snap.deal === "random" && typeof snap.seed === "string") return `random deal (seed ${snap.seed})`;
  if (snap.deal === "random") return known ? `deal #${snap.seed}, random` : "random deal";
  if (snap.deal === "record") return known ? `recorded deal (#${snap.seed})` : "recorded deal";
  return known ? `deal #${snap.seed}` : "";
}

function render(snap) {
  if (!app.snap || app.snap.moves_played !== snap.moves_played || app.snap.at !== snap.at) {
    app.selected = null;
  }
  app.snap = snap;
  if (snap.view !== undefined && snap.view !== null) app.view = snap.view;
  $("game-id").textContent = snap.id || app.game.id;
  $("game-mode").textContent = snap.mode || app.game.mode;
  $("score").textContent = snap.score;
  $("info-tokens").textContent = snap.information_tokens;
  $("life-tokens").textContent = snap.life_tokens;
  $("deck-size").textContent = snap.deck_size;
  const p = pace(snap);
  $("pace").textContent = p === null ? "-" : String(p);
  $("efficiency").textContent = fmt(efficiency(snap), 2);
  $("slot-convention").textContent = newestLeft()
    ? "Hanab.live's order: slot #1 is each hand's newest card, on the left; a new card is " +
      "drawn on the left and pushes the others right. Every move names slots this way."
    : "Slot #0 is each hand's oldest card. A played or discarded card leaves a gap that the " +
      "cards after it close by moving left; the new card is drawn into the last slot, on the " +
      "right. Every move names slots this way.";
  $("position").textContent = snap.at;
  // A replay's length is its record's, before its moves are replayed here.
  $("moves-played").textContent = snap.record_moves ?? snap.moves_played;
  let turn = snap.terminal ? "game over" : `seat ${snap.current_player} to move`;
  if (snap.record) {
    const parts = [`replay of a ${snap.record.kind || "recorded"} game`];
    if (snap.record.score !== undefined && snap.record.score !== null) parts.push(`final score ${snap.record.score}`);
    if (snap.over && snap.at >= snap.moves_played) parts.push("end of the record");
    turn += ` (${parts.join(", ")})`;
  }
  $("turn-label").textContent = turn;
  $("deal-label").textContent = dealText(snap) + (snap.continued_from
    ? ` (continued from game ${snap.continued_from.id} at move ${snap.continued_from.at})` : "");
  $("jump-input").max = lastMove(snap);
  if (document.activeElement !== $("jump-input")) $("jump-input").value = snap.at;
  const board = $("board");
  board.dataset.at = snap.at;
  board.dataset.movesPlayed = snap.moves_played;
  board.dataset.terminal = snap.terminal ? "1" : "0";
  board.dataset.mode = app.game.mode;
  board.dataset.deal = snap.deal || "";
  renderControls(snap);
  $("btn-export").disabled = app.game.mode === "play" && !snap.over;
  $("btn-continue").disabled = inPlay(snap);
  const last = snap.history.find((h) => h.k === snap.at - 1);
  $("btn-decision").disabled = !(last && last.searched) || searchLocked(snap);
  renderFireworks(snap);
  renderHands(snap);
  renderDiscards(snap);
  renderLastMove(snap);
  renderSinceTurn(snap);
  renderHistory(snap);
  renderViewSelect(snap);
  renderLegalMoves(snap);
  refreshSummary(snap).catch((err) => showError(`search summary: ${err.message}`));
}

// The controls step through any game; in a running play game only through the moves made
// (the agents move by themselves, and the person's turn is at the latest position).
function renderControls(snap) {
  const timeline = $("timeline");
  timeline.max = lastMove(snap);
  timeline.value = snap.at;
  $("btn-first").disabled = $("btn-back").disabled = snap.at <= 0;
  const ended = (snap.terminal || snap.over || inPlay(snap)) && snap.at >= snap.moves_played;
  $("btn-forward").disabled = $("btn-playout").disabled = ended;
  $("btn-playout").textContent = inPlay(snap) ? "Latest \u00bb" : "Play out \u00bb";
  const ks = deviations(snap);
  $("btn-prev-dev").disabled = !ks.some((k) => k < snap.at);
  $("btn-next-dev").disabled = !ks.some((k) => k > snap.at);
}

// Review: the moves where a search left the blueprint's move (once its records are shown).
function deviations(snap) {
  if (searchLocked(snap)) return [];
  return snap.history.filter((h) => h.deviated).map((h) => h.k);
}

// The previous (step -1) or next (+1) deviation from the position on screen, with its panel.
async function toDeviation(step) {
  const ks = deviations(app.snap);
  const at = app.snap.at;
  const k = step > 0 ? ks.find((x) => x > at) : ks.filter((x) => x < at).pop();
  if (k !== undefined) await openDecision(k);
}

// ---------------------------------------------------------------- search summary, conventions

// The game's searches in short (decisions, deviations with their gains, fallbacks), fetched
// again when moves were added; hidden while a play game runs or without a search.
async function refreshSummary(snap) {
  const box = $("search-summary");
  if (searchLocked(snap) || !snap.history.some((h) => h.searched)) {
    box.hidden = true;
    app.summaryKey = null;
    return;
  }
  const key = `${app.game.id}:${snap.moves_played}`;
  if (app.summaryKey === key) return;
  app.summaryKey = key;
  const summary = await api("GET", gameUrl("/decisions"));
  if (app.summaryKey === key) renderSummary(summary, snap);
}

function signed(x) {
  return x === null || x === undefined ? "-" : `${x >= 0 ? "+" : ""}${fmt(x, 3)}`;
}

function renderSummary(sum, snap) {
  const box = $("search-summary");
  box.hidden = false;
  box.dataset.decisions = sum.decisions;
  $("summary-counts").textContent = `${sum.decisions} search decisions${snap.over ? "" : " so far"}: ` +
    `${sum.deviations.length} deviations, ${sum.fallbacks.length} fallbacks`;
  const list = $("summary-list");
  list.textContent = "";
  const open = (k) => () => guarded(() => openDecision(k));
  for (const d of sum.deviations) {
    const at = snap.history[d.k];
    const named = (text) => (at ? slotText(text, at.hand_sizes, d.seat) : text);
    list.appendChild(el("li", { class: "summary-deviation" }, el("button", {
      type: "button", class: "link", id: `summary-dev-${d.k}`, onclick: open(d.k),
      text: `move ${d.k}, seat ${d.seat}: deviated to ${named(d.move)} ` +
        `(blueprint: ${named(d.blueprint_move)}), ` +
        `gain ${signed(d.gain)} over the bar ${fmt(d.bar, 3)}` })));
  }
  for (const f of sum.fallbacks) {
    list.appendChild(el("li", { class: "summary-fallback" }, el("button", {
      type: "button", class: "link", id: `summary-fallback-${f.k}`, onclick: open(f.k),
      text: `move ${f.k}, seat ${f.seat}: fell back to the blueprint (${f.reason})` })));
  }
}

// The rule-bot blueprints' conventions, one block per blueprint (collapsed by default).
async function loadConventions() {
  const data = await api("GET", gameUrl("/conventions"));
  const byBot = new Map();
  for (const seat of data.seats) {
    if (!seat.conventions) continue;
    if (!byBot.has(seat.blueprint)) byBot.set(seat.blueprint, { text: seat.conventions, seats: [] });
    byBot.get(seat.blueprint).seats.push(seat.seat);
  }
  const box = $("conventions");
  box.textContent = "";
  for (const [bot, { text, seats }] of byBot) {
    box.appendChild(el("h4", { text: `${bot} (seat${seats.length > 1 ? "s" : ""} ${seats.join(", ")})` }));
    box.appendChild(el("pre", { class: "conventions-text", text }));
  }
  $("conventions-panel").hidden = !byBot.size;
}

// ---------------------------------------------------------------- continue with bots

// A replay or a game over (any game but a play game in progress): a new watch game from the
// position on screen, the server replaying this game's moves on its deal, these seats on.
function openContinue() {
  const snap = app.snap;
  const blueprints = app.options ? app.options.blueprints || [] : [];
  const searches = app.options ? app.options.searches || ["blueprint"] : ["blueprint"];
  const box = $("continue-seats");
  box.textContent = "";
  snap.seats.forEach((seat, i) => {
    const spec = seat.blueprint || (app.options && app.options.server_blueprint) || blueprints[0] || "strong";
    box.appendChild(el("div", { class: "seat-row", id: `continue-seat-${i}` }, [
      el("span", { class: "seat-label", text: `Seat ${i}` }),
      el("label", { class: "inline", for: `continue-${i}-blueprint` }, ["Blueprint ",
        el("input", { id: `continue-${i}-blueprint`, list: "blueprint-list", value: spec, size: 18 })]),
      el("label", { class: "inline", for: `continue-${i}-search` }, ["Search ",
        el("select", { id: `continue-${i}-search` },
          searches.map((x) => el("option", { value: x, text: x, selected: x === "blueprint" })))]),
    ]));
  });
  $("continue-at").textContent = snap.at;
  const panel = $("continue-panel");
  panel.hidden = false;
  panel.dataset.at = snap.at;
  $("continue-0-blueprint").focus();
}

async function startContinued() {
  const seats = app.snap.seats.map((seat, i) => ({
    blueprint: $(`continue-${i}-blueprint`).value.trim(), search: $(`continue-${i}-search`).value }));
  const data = await api("POST", gameUrl("/continue"), { at: app.snap.at, seats });
  startGame(data);
}

// Escape lets go of a selected card, else closes the panel open (continue, then search).
function escapeKey() {
  if (app.selected) {
    selectCard(app.selected.seat, app.selected.slot);
    return true;
  }
  for (const id of ["continue-panel", "decision-panel"]) {
    if (!$(id).hidden) {
      $(id).hidden = true;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- search panel

function heat(p) {
  const a = Math.max(0, Math.min(1, p));
  return `background-color: rgba(30, 90, 200, ${(0.08 + 0.92 * a).toFixed(3)}); color: ${a > 0.45 ? "#fff" : "#111"}`;
}

// trueHand (once the game is over): the searching seat's real cards, outlined in the map.
function renderBelief(belief, trueHand) {
  const box = $("belief");
  box.textContent = "";
  if (!belief || !belief.slots || !belief.slots.length) {
    box.appendChild(el("p", { class: "muted", text: "no belief recorded for this decision" }));
    return;
  }
  const colors = belief.colors || COLOR_CHARS.split("");
  const ranks = belief.ranks || [1, 2, 3, 4, 5];
  belief.slots.forEach((table, slot) => {
    const rows = table.map((perRank, ci) => el("tr", null, [
      el("th", { scope: "row", class: colorClass(String(colors[ci]).slice(0, 1)), text: String(colors[ci]) }),
      ...perRank.map((p, ri) => {
        const isTrue = trueHand && trueHand[slot] === `${colors[ci]}${ranks[ri]}`;
        return el("td", { style: heat(p), class: isTrue ? "true-card" : null,
          title: `slot ${slot}: ${colors[ci]}${ranks[ri]} p=${fmt(p, 3)}${isTrue ? " (the true card)" : ""}`,
          text: p >= 0.005 ? fmt(p * 100, 0) : "" });
      }),
    ]));
    box.appendChild(el("table", { class: "heat", id: `belief-slot-${slot}`,
      "aria-label": `Belief over slot ${slot}` }, [
      el("caption", { text: `slot ${slot} (%)` }),
      el("thead", null, el("tr", null, [el("th", { text: "" }),
        ...ranks.map((r) => el("th", { scope: "col", text: String(r) }))])),
      el("tbody", null, rows),
    ]));
  });
}

function renderDecision(d) {
  const moveNames = {};
  const named = (text) => moveText(app.snap, text, d.seat);   // the board is at move d.k
  if (d.move_name) moveNames[d.move] = named(d.move_name);
  if (d.blueprint_move_name) moveNames[d.blueprint_move] = named(d.blueprint_move_name);
  for (const c of d.candidates || []) moveNames[c.id] = named(c.text || c.name);
  const nameOf = (id) => (moveNames[id] !== undefined ? `${moveNames[id]} (#${id})` : `#${id}`);
  $("decision-title").textContent = `Search decision: move ${d.k}, seat ${d.seat} (${d.search})`;
  const summary = $("decision-summary");
  summary.textContent = "";
  const items = [
    ["Chosen move", nameOf(d.move)],
    ["Blueprint's move", nameOf(d.blueprint_move)],
    ["Deviated", d.deviated ? "yes" : "no"],
    ["Fallback to blueprint", d.fallback ? (d.fallback_reason ? `yes: ${d.fallback_reason}` : "yes") : "no"],
    ...testItems(d, nameOf),
    ["Most still possible", d.max_score],
    ["Worlds", d.worlds],
    ["Rollouts", d.rollouts],
    ["Seconds", fmt(d.seconds, 3)],
  ];
  for (const [k, v, id] of items) {
    summary.appendChild(el("dt", { text: k }));
    summary.appendChild(el("dd", { text: v === undefined || v === null ? "-" : String(v),
      id: `decision-${id || k.toLowerCase().replace(/[^a-z]+/g, "-")}` }));
  }
  $("decision-why").textContent = renameMoves(d.why || "", [d.move_text, d.blueprint_move_text,
    d.tested_move_text, d.blueprint_move_name], named);
  renderCandidates(d);
  renderBelief(d.belief, d.true_hand);
  const panel = $("decision-panel");
  panel.hidden = false;
  panel.dataset.k = d.k;
  if (panel.scrollIntoView) panel.scrollIntoView({ block: "nearest" });
}

// `line` with each of the move texts `texts` in it renamed by `named` (its slots as shown),
// in one pass: a renamed text is never renamed again.
function renameMoves(line, texts, named) {
  const distinct = [...new Set(texts.filter(Boolean))].sort((a, b) => b.length - a.length);
  if (!distinct.length || !newestLeft()) return line;
  const pattern = new RegExp(distinct.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  return line.replace(pattern, (t) => named(t));
}

// The deviation test as the search ran it (the record's numbers; the page computes none):
// [label, value, id] rows of the summary.
function testItems(d, nameOf) {
  if (d.delta === undefined) return [];
  const counted = d.tested_worlds === null || d.tested_worlds === undefined ? "-"
    : fmt(d.tested_worlds, Number.isInteger(d.tested_worlds) ? 0 : 1);
  const cap = d.margin_worlds > 0 ? `capped at ${d.margin_worlds} worlds` : "no cap";
  const verified = d.verify_gain === null || d.verify_gain === undefined ? "no verification"
    : `${signed(d.verify_gain)} \u00b1 ${fmt(d.verify_sem, 3)} on fresh worlds`;
  const depth = d.depth === undefined ? "-" : d.depth < 0 ? "to the end of the game"
    : `${d.depth} blueprint moves, then the value`;
  return [
    ["Rollout depth", depth, "depth"],
    ["Threshold (delta)", fmt(d.delta, 3), "delta"],
    ["Margin", `${fmt(d.margin, 3)} (${fmt(d.confidence, 1)} s.e. of the tested gain; ` +
      `${counted} worlds counted, ${cap})`, "margin"],
    ["Bar (larger of the two)", fmt(d.bar, 3), "bar"],
    ["Tested move", d.tested_move === null ? "-" : nameOf(d.tested_move), "tested-move"],
    ["Tested gain", signed(d.tested_gain), "tested-gain"],
    ["Verification's gain", verified, "verify-gain"],
  ];
}

// An estimate above the most the position can still score (`max_score`) is flagged, not
// hidden: the belief or the bootstrap value overshot.
function overMax(d, c) {
  return d.max_score !== null && d.max_score !== undefined && c.mean !== null &&
    c.mean !== undefined && c.mean > d.max_score + 1e-9;
}

function renderCandidates(d) {
  const body = $("candidates").querySelector("tbody");
  body.textContent = "";
  const cands = (d.candidates || []).slice().sort((a, b) => {
    if (a.pruned !== b.pruned) return a.pruned ? 1 : -1;
    return (b.mean === null ? -Infinity : b.mean) - (a.mean === null ? -Infinity : a.mean);
  });
  for (const c of cands) {
    const notes = [];
    const over = overMax(d, c);
    if (c.id === d.move) notes.push(el("span", { class: "badge chosen", text: "chosen" }));
    if (c.id === d.blueprint_move) notes.push(el("span", { class: "badge blueprint", text: "blueprint" }));
    if (c.pruned) notes.push(el("span", { class: "badge pruned", text: "pruned" }));
    if (over) notes.push(el("span", { class: "badge over-max", text: `above the maximum ${d.max_score}`,
      title: "The estimate exceeds the most this position can still score" }));
    body.appendChild(el("tr", { class: `${c.pruned ? "pruned" : ""}${c.id === d.move ? " chosen" : ""}${over ? " over-max" : ""}`,
      id: `cand-${c.id}` }, [
      el("td", { text: moveText(app.snap, c.text || c.name, d.seat) }),
      el("td", { class: "num", text: `${fmt(c.mean)} \u00b1 ${fmt(c.sem)}` }),
      el("td", { class: "num", text: c.count === undefined ? "-" : String(c.count) }),
      el("td", { class: "num", text: c.gain === undefined || c.gain === null ? "-"
        : `${c.gain >= 0 ? "+" : ""}${fmt(c.gain)} \u00b1 ${fmt(c.gain_sem)}` }),
      el("td", { class: `bar-mark${c.clears ? " clears" : ""}`,
        title: c.margin === undefined ? null : `delta ${fmt(d.delta, 3)}, its margin ${fmt(c.margin, 3)}`,
        text: c.clears === undefined ? "-" : `${c.clears ? "clears" : "does not"}` +
          (c.margin === null || c.margin === undefined ? "" : ` (margin ${fmt(c.margin, 3)})`) }),
      el("td", null, notes),
    ]));
  }
}

async function openDecision(k) {
  const d = await api("GET", gameUrl(`/decisions/${k}`));
  app.decisionK = k;
  if (app.snap.at !== k) await fetchAt(k);   // the board shows the position it was made in
  renderDecision(d);
}

// The search panel follows the board: on another position it shows the search of the move
// made there, or closes if that move was not searched.
async function followDecision(snap) {
  if ($("decision-panel").hidden || app.decisionK === snap.at) return;
  const next = snap.history.find((h) => h.k === snap.at);
  if (next && next.searched && !searchLocked(snap)) await openDecision(snap.at);
  else $("decision-panel").hidden = true;
}

// ---------------------------------------------------------------- wiring

function init() {
  $("nav-new").addEventListener("click", () => showSection("setup"));
  $("nav-replay").addEventListener("click", () => showSection("replay"));
  $("nav-board").addEventListener("click", () => { if (app.game) showSection("board"); });
  $("players").addEventListener("change", buildSeats);
  $("players").addEventListener("input", buildSeats);
  $("mode").addEventListener("change", syncSeatRows);
  $("setup-form").addEventListener("submit", createGame);
  $("replay-load").addEventListener("click", loadReplay);
  $("btn-first").addEventListener("click", () => guarded(() => fetchAt(0)));
  $("btn-back").addEventListener("click", () => guarded(back));
  $("btn-forward").addEventListener("click", () => guarded(forward));
  $("btn-playout").addEventListener("click", () => guarded(playOut));
  $("btn-jump").addEventListener("click", () => guarded(() => jumpTo(parseInt($("jump-input").value, 10))));
  $("timeline").addEventListener("change", () => guarded(() => jumpTo(parseInt($("timeline").value, 10))));
  $("jump-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); $("btn-jump").click(); }
  });
  $("view-select").addEventListener("change", () => guarded(async () => {
    app.view = $("view-select").value;
    await fetchAt(app.snap.at);
  }));
  $("btn-decision").addEventListener("click", () => guarded(() => openDecision(app.snap.at - 1)));
  $("btn-export").addEventListener("click", () => guarded(exportGame));
  $("decision-close").addEventListener("click", () => { $("decision-panel").hidden = true; });
  $("btn-continue").addEventListener("click", openContinue);
  $("continue-close").addEventListener("click", () => { $("continue-panel").hidden = true; });
  $("continue-start").addEventListener("click", () => guarded(startContinued));
  $("slot-order").addEventListener("change", () => setSlotOrder($("slot-order").checked));
  loadSlotOrder();
  $("btn-prev-dev").addEventListener("click", () => guarded(() => toDeviation(-1)));
  $("btn-next-dev").addEventListener("click", () => guarded(() => toDeviation(1)));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && app.game && !$("board").hidden && escapeKey()) {
      e.preventDefault();
      return;
    }
    if ((e.key === "Enter" || e.key === " ") && e.target && e.target.classList &&
        e.target.classList.contains("selectable")) {
      e.preventDefault();
      e.target.click();
      return;
    }
    if (!app.game || $("board").hidden || !app.snap) return;
    if (e.target && ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName)) return;
    if (inPlay(app.snap) && !e.ctrlKey && !e.altKey && !e.metaKey && !app.busy && playKey(e)) {
      e.preventDefault();
      return;
    }
    if (e.key === "ArrowLeft") guarded(back);
    if (e.key === "ArrowRight") guarded(forward);
    if (e.key === "Home") { e.preventDefault(); guarded(() => fetchAt(0)); }
    if (e.key === "End") { e.preventDefault(); guarded(toEnd); }
    if (e.key === "[") guarded(() => toDeviation(-1));
    if (e.key === "]") guarded(() => toDeviation(1));
  });
  window.addEventListener("popstate", () => guarded(openAddress));
  buildSeats();
  loadOptions().then(() => guarded(openAddress))
    .finally(() => { document.body.dataset.ready = "1"; });
}

// The game named by the address (/games/ID), as the viewer it was (a play game: its
// person's seat); the set-up form for any other address.
async function openAddress() {
  const m = location.pathname.match(/^\/games\/([^/]+)$/);
  if (!m) {
    showSection("setup");
    return;
  }
  const id = decodeURIComponent(m[1]);
  if (app.game && app.game.id === id && app.snap) return;
  // Whether the server holds it first: an unknown address is no failed request.
  const { games, gone } = await api("GET", `/api/games?ids=${encodeURIComponent(id)}`);
  if (!games.some((g) => g.id === id)) {
    history.replaceState(null, "", "/");
    showSection("setup");
    const why = gone && gone[id] ? `it is gone from the server: ${gone[id]}`
      : "unknown to this server: its games live in memory and end when it stops";
    throw new Error(`no game ${id} (${why})`);
  }
  startGame({ id, state: await api("GET", `/api/games/${encodeURIComponent(id)}`) });
}

document.addEventListener("DOMContentLoaded", init);
