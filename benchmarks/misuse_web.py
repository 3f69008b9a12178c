"""Misuse cases of the web layer for benchmarks/misuse.py: (name, expectation, exception class
or None, snippet), in the format and with the PRELUDE described there."""

# What the web cases share: a TestClient on a fresh app, a compare --jsonl key, a blueprint
# file with a move that never returns.
WEB = """
import json, os, tempfile, time, warnings
warnings.simplefilter('ignore')
from starlette.testclient import TestClient
from lbs_pz.web.app import create_app
from lbs_pz.web.games import ApiError, GameStore, MAX_BODY_BYTES
from lbs_pz.search.methods import MethodSpec
STRONG = {'blueprint': 'strong'}
JSON = {'content-type': 'application/json'}
def client(**kw):
    kw.setdefault('search', 'none')
    app = create_app(**kw)
    return app, TestClient(app)
def key(**change):
    return json.dumps([dict(MethodSpec('lbs-1', rollouts=4).to_dict(), **change), {}, 0])
SLOW = os.path.join(tempfile.mkdtemp(), 'slow.py')
with open(SLOW, 'w') as f:
    f.write('import time\\nclass Slow:\\n    name = \"slow\"\\n'
            '    def act(self, state, seat=None):\\n        time.sleep(3600)\\n')
"""

# A real uvicorn in a thread, with the page's connection limits: SERVE(max_connections=..,
# read_seconds=..) starts it and gives (host, port).
SERVER = """
import socket, threading, httpx, uvicorn
from lbs_pz.web.app import server_options
def serve(**limits):
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(search='none'), host='127.0.0.1',
                                           port=port, log_level='critical',
                                           **server_options(**limits)))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return '127.0.0.1', port
def closed(sock):
    sock.settimeout(30)
    try:
        while sock.recv(4096):
            pass
    except socket.timeout:
        return False
    except OSError:         # reset
        pass
    return True
"""

CASES = [
    # --- caps on a compare --jsonl key (the page's replay form) -------------------------------
    ("web-jsonl-million-rollouts", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(rollouts=10**6), 'game': 1}})"),
    ("web-jsonl-ten-million-verify", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(verify=10**7), 'game': 1}})"),
    ("web-jsonl-huge-batch", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(batch_size=10**8), 'game': 1}})"),
    ("web-jsonl-string-rollouts", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(rollouts='16'), 'game': 1}})"),
    ("web-jsonl-method-5", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(method=5), 'game': 1}})"),
    ("web-jsonl-nan-score", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(), 'game': 1, "
     "'result': {'score': float('nan')}}})"),
    ("web-jsonl-checkpoint-path", "raises", "ApiError",
     WEB + "GameStore().replay({'jsonl_line': {'key': key(belief='learned+cf', "
     "belief_checkpoint='/etc/passwd'), 'game': 1}})"),
    # --- files and code from the page -----------------------------------------------------------
    ("web-lstm-path-from-page", "raises", "ApiError",
     WEB + "GameStore().create({'seats': [{'blueprint': 'lstm:/etc/passwd'}, STRONG]})"),
    ("web-load-error-says-nothing-of-the-file", "ok", None,
     WEB + "app, c = client(allow_files=True)\n"
     "for path in ('/etc/passwd', '/no/such/file'):\n"
     "    r = c.post('/api/games', json={'seats': [{'blueprint': 'lstm:' + path}, STRONG]})\n"
     "    error = r.json()['error'].replace(path, 'PATH')\n"
     "    assert r.status_code == 400 and 'could not be loaded' in error, r.text\n"
     "    assert 'exist' not in error and 'root' not in error, error"),
    # --- requests -----------------------------------------------------------------------------
    ("web-surrogate-player-name", "ok", None,
     WEB + "from lbs_pz.engine.records import to_hanablive\n"
     "app, c = client()\n"
     "record = to_hanablive(HanabiState(cfg, seed=1), ['a\\ud800', 'b'])\n"
     "r = c.post('/api/replays', content=json.dumps({'hanablive': record}), headers=JSON)\n"
     "assert r.status_code == 400 and 'players[0]' in r.json()['error'], r.text\n"
     "assert not app.state.games.games"),
    ("web-body-over-cap", "ok", None,
     WEB + "app, c = client()\n"
     "r = c.post('/api/replays', content=b' ' * (MAX_BODY_BYTES + 1), headers=JSON)\n"
     "assert r.status_code == 413, r.status_code"),
    ("web-empty-body-any-type", "ok", None,
     WEB + "app, c = client()\n"
     "gid = c.post('/api/games', json={'seed': 0, 'seats': [STRONG, STRONG]}).json()['id']\n"
     "for ctype in (None, 'text/plain', 'application/x-www-form-urlencoded'):\n"
     "    r = c.post(f'/api/games/{gid}/advance', content=b'',\n"
     "               headers={'content-type': ctype} if ctype else {})\n"
     "    assert r.status_code == 400, (ctype, r.status_code)\n"
     "assert c.get(f'/api/games/{gid}').json()['moves_played'] == 0"),
    ("web-cross-origin-post", "ok", None,
     WEB + "app, c = client()\n"
     "r = c.post('/api/games', json={'seats': [STRONG, STRONG]},\n"
     "           headers={'origin': 'http://evil.example'})\n"
     "assert r.status_code == 403 and not app.state.games.games, r.status_code"),
    ("web-play-deal-is-secret", "ok", None,
     WEB + "app, c = client()\n"
     "body = {'mode': 'play', 'seats': [{'human': True}, STRONG]}\n"
     "a, b = (c.post('/api/games', json=body).json()['state'] for _ in range(2))\n"
     "assert a['seed'] is None and a['deal'] == 'random', a['seed']\n"
     "decks = [g.states[0].deck for g in app.state.games.games.values()]\n"
     "assert decks[0] != decks[1]"),
    # --- a blueprint that never returns ---------------------------------------------------------
    ("web-blueprint-never-returns", "ok", None,
     WEB + "app, c = client(allow_code=True, request_seconds=1.0, workers=1, queue=0)\n"
     "seats = [{'blueprint': 'py:' + SLOW + ':Slow'}, STRONG]\n"
     "gids = [c.post('/api/games', json={'seats': seats}).json()['id'] for _ in range(2)]\n"
     "start = time.monotonic()\n"
     "assert c.post(f'/api/games/{gids[0]}/advance', json={}).status_code == 503\n"
     "assert c.post(f'/api/games/{gids[1]}/advance', json={}).status_code == 503\n"
     "assert c.post('/api/games', json={'seats': [STRONG, STRONG]}).status_code == 503\n"
     "assert time.monotonic() - start < 5 and c.get('/api/options').status_code == 200"),
    ("web-create-app-nan-move-seconds", "raises", "ValueError",
     WEB + "create_app(search='none', move_seconds=float('nan'))"),
    # --- connections ------------------------------------------------------------------------
    ("web-idle-sockets-capped", "ok", None,
     WEB + SERVER + "host, port = serve(max_connections=4, read_seconds=600)\n"
     "idle = [socket.create_connection((host, port), timeout=10) for _ in range(12)]\n"
     "assert httpx.get(f'http://{host}:{port}/api/options', timeout=30).status_code == 200\n"
     "assert all(closed(sock) for sock in idle[:8])      # the longest idle, by the cap"),
    ("web-slowloris-head-closed", "ok", None,
     WEB + SERVER + "host, port = serve(read_seconds=0.5)\n"
     "sock = socket.create_connection((host, port), timeout=10)\n"
     "sock.sendall(b'GET /api/options HTTP/1.1\\r\\nX-Slow: ')\n"
     "for _ in range(200):                                  # a byte a tenth of a second\n"
     "    try:\n"
     "        sock.send(b'a')\n"
     "    except OSError:\n"
     "        break\n"
     "    time.sleep(0.1)\n"
     "else:\n"
     "    raise AssertionError('a trickling request head kept its connection for 20 s')"),
    ("web-create-app-zero-play-cap", "raises", "ValueError",
     WEB + "create_app(search='none', play_cap=0)"),
    ("web-server-options-zero-connections", "raises", "ValueError",
     WEB + SERVER + "server_options(max_connections=0)"),
    # --- games: budgets and deals -----------------------------------------------------------
    ("web-watch-flood-keeps-play-game", "ok", None,
     WEB + "app, c = client(cap=2)\n"
     "play = c.post('/api/games', json={'mode': 'play', 'seats': [{'human': True}, STRONG]})\n"
     "gid = play.json()['id']\n"
     "for _ in range(64):\n"
     "    assert c.post('/api/games', json={'seats': [STRONG, STRONG]}).status_code == 201\n"
     "move = play.json()['state']['legal_moves'][0]['id']\n"
     "r = c.post(f'/api/games/{gid}/move', json={'move': move, 'turn': 0})\n"
     "assert r.status_code == 200, r.text"),
    ("web-play-seed-128-bits", "ok", None,
     WEB + "app, c = client()\n"
     "body = {'mode': 'play', 'seats': [{'human': True}, STRONG]}\n"
     "snaps = [c.post('/api/games', json=body).json() for _ in range(8)]\n"
     "assert all(s['state']['seed'] is None for s in snaps)\n"
     "seeds = [app.state.games.games[s['id']].seed for s in snaps]\n"
     "assert max(seeds).bit_length() > 64 and max(seeds) < 2**128, seeds"),
]
