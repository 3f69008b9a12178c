"""Misuse cases of the cli layer for benchmarks/misuse.py: (name, expectation, exception class
or None, snippet), in the format and with the PRELUDE described there."""

# CLI runs: each command must be refused before any game is played, so it returns at once.
CLI = """
import time
from lbs_pz.cli import main
def refused(*argv):
    start = time.perf_counter()
    try:
        status = main(list(argv))
    except SystemExit as exit:
        status = exit.code
    assert status not in (0, None), "the command ran"
    assert time.perf_counter() - start < 20, "refused only after playing"
"""

# A log of 2 tiny games per method, and a copy with one line changed by `tamper`.
LOG = CLI + """
import json, os, tempfile
from lbs_pz.eval.backends import collect
from lbs_pz.search.methods import MethodSpec
TINY = ['--methods', 'blueprint,lbs-inf', '--belief', 'grounded', '--rollouts', '2',
        '--colors', '2', '--hand-size', '3', '--backend', 'inline', '--no-progress',
        '--games', '2']
folder = tempfile.mkdtemp()
good = os.path.join(folder, 'good.jsonl')
assert main(['compare'] + TINY + ['--jsonl', good]) == 0
lines = open(good).read().splitlines()
def tamper(name, change, at=1):
    entry = json.loads(lines[at]); change(entry)
    path = os.path.join(folder, name)
    open(path, 'w').write('\\n'.join(lines[:at] + [json.dumps(entry)] + lines[at + 1:]) + '\\n')
    return path
"""

# Two recorded search games of a small variant (lbs-pz search-games), in a fresh folder.
RECORDED = CLI + """
import os, tempfile
SMALL = ['--players', '2', '--colors', '3', '--ranks', '3', '--hand-size', '3']
RECORD = ['--method', 'sparta', '--blueprint', 'strong', '--rollouts', '4'] + SMALL + \\
    ['--games', '2']
folder = tempfile.mkdtemp()
games = os.path.join(folder, 'games.jsonl')
assert main(['search-games'] + RECORD + ['--out', games]) == 0
"""

# `lbs-pz paper --tiny` in a fresh folder; refused_saying: refused, its last line naming words.
PAPER = CLI + """
import contextlib, io, os, shutil, subprocess, sys, tempfile
from lbs_pz.models import MODELS_DIR, path as model_path
TINY_PAPER = ['paper', '--tiny', '--backend', 'inline', '--no-progress']
folder = tempfile.mkdtemp()
def refused_saying(*argv, words=()):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        refused(*argv)
    last = err.getvalue().strip().splitlines()[-1]
    assert 'Traceback' not in err.getvalue(), err.getvalue()
    assert all(word in last for word in words), (words, last)
"""

# A small value run (train-value) and its --out in a new folder (torch imported first:
# `refused` times the command, not the import).
TRAIN = CLI + """
import os, subprocess, sys, tempfile
import lbs_pz.train.value
folder = tempfile.mkdtemp()
out = os.path.join(folder, 'value.pt')
VALUE = ['train-value', '--blueprint', 'simple', '--games-per-step', '2', '--val-games', '4',
         '--hidden', '16', '--batch-size', '64', '--threads', '1', '--no-progress']
"""

CASES = [
    ("cli-compare-unwritable-json", "ok", None,
     CLI + "refused('compare', '--methods', 'blueprint,lbs-16', '--games', '200', "
     "'--json', '/proc/no/such/folder/out.json')"),
    ("cli-compare-plot-is-a-folder", "ok", None,
     CLI + "import tempfile\nrefused('compare', '--games', '200', '--plot', tempfile.mkdtemp())"),
    ("cli-eval-unwritable-json", "ok", None,
     CLI + "refused('eval', '--games', '2000', '--json', '/proc/no/such/folder/out.json')"),
    ("cli-compare-jsonl-missing-folder", "ok", None,
     CLI + "refused('compare', '--games', '200', '--jsonl', '/tmp/no/such/folder/log.jsonl')"),
    ("cli-compare-duplicate-methods", "ok", None,
     CLI + "refused('compare', '--methods', 'blueprint,blueprint', '--games', '200')\n"
     "refused('compare', '--methods', 'lbs-inf,LBS-INF', '--games', '200')"),
    ("cli-compare-report-only-no-log", "ok", None,
     CLI + "refused('compare', '--report-only', '--jsonl', '/tmp/no-such-log.jsonl')"),
    ("cli-compare-jsonl-dev-zero", "ok", None,
     CLI + "refused('compare', '--games', '200', '--jsonl', '/dev/zero')\n"
     "refused('compare', '--games', '200', '--jsonl', '/dev/urandom')\n"
     "refused('compare', '--games', '200', '--report-only', '--jsonl', '/dev/zero')"),
    ("cli-compare-json-dev-full", "ok", None,
     CLI + "refused('compare', '--games', '200', '--json', '/dev/full')\n"
     "refused('eval', '--games', '2000', '--json', '/dev/full')"),
    ("cli-outputs-fifo", "ok", None,
     CLI + "import os, tempfile\nfifo = os.path.join(tempfile.mkdtemp(), 'pipe'); os.mkfifo(fifo)\n"
     "refused('compare', '--games', '200', '--json', fifo)\n"
     "refused('compare', '--games', '200', '--plot', fifo)\n"
     "refused('compare', '--games', '200', '--jsonl', fifo)\n"
     "refused('compare', '--games', '200', '--report-only', '--jsonl', fifo)\n"
     "refused('eval', '--games', '2000', '--json', fifo)\n"
     "refused('search-games', '--method', 'sparta', '--games', '200', '--out', fifo)\n"
     "refused('belief-quality', '--games', '200', '--beliefs', 'grounded', '--plot', fifo)"),
    ("cli-games-beyond-the-maximum", "ok", None,
     CLI + "for command in ('compare', 'eval', 'belief-quality', 'demo'):\n"
     "    refused(command, '--games', str(2**32 + 1))\n"
     "refused('eval', '--games', '2e9')\n"
     "refused('search-games', '--games', str(2**32 + 1), '--out', 'unused.jsonl')\n"
     "refused('compare', '--games', '5', '--first-game', str(2**32 - 1))"),
    ("cli-compare-log-impossible-score", "ok", None,
     LOG + "bad = tamper('score999.jsonl', lambda e: e['result'].update(score=999))\n"
     "refused('compare', *TINY, '--jsonl', bad)\n"
     "refused('compare', *TINY, '--jsonl', bad, '--report-only')"),
    ("cli-compare-log-wrong-types", "ok", None,
     LOG + "for i, change in enumerate([dict(score='7'), dict(moves=10**6), dict(score=True),\n"
     "                                dict(decisions=10**6), dict(seconds=float('nan'))]):\n"
     "    bad = tamper(f'bad{i}.jsonl', lambda e: e['result'].update(change))\n"
     "    refused('compare', *TINY, '--jsonl', bad, '--report-only')"),
    ("cli-compare-log-endless-line", "ok", None,
     LOG + "from lbs_pz.files import MAX_LINE_BYTES\n"
     "bad = os.path.join(folder, 'long.jsonl')\n"
     "with open(bad, 'w') as f:\n"
     "    f.write(lines[0] + '\\n' + 'x' * (4 * MAX_LINE_BYTES))\n"
     "refused('compare', *TINY, '--jsonl', bad)\n"
     "refused('compare', *TINY, '--jsonl', bad, '--report-only')"),
    ("cli-compare-log-locked-by-another-run", "ok", None,
     LOG + "import fcntl\n"
     "with open(good, 'a') as holder:\n"
     "    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
     "    refused('compare', *TINY, '--games', '4', '--jsonl', good)\n"
     "assert main(['compare'] + TINY + ['--games', '3', '--jsonl', good]) == 0"),
    ("cli-paper-cut-curves-cache", "ok", None,
     PAPER + "from lbs_pz.eval.paper import belief_curves\n"
     "cache = os.path.join(folder, 'belief_curves.json')\n"
     "belief_curves('tiny', progress=False, cache=cache)\n"
     "whole = open(cache, 'rb').read()\n"
     "open(cache, 'wb').write(whole[:len(whole) // 2])\n"
     "open(os.path.join(folder, 'games.jsonl'), 'w').close()\n"
     "refused_saying(*TINY_PAPER, '--out', folder, words=(cache, 'delete it'))\n"
     "refused_saying(*TINY_PAPER, '--report-only', '--out', folder, words=(cache, 'delete it'))\n"
     "assert os.path.getsize(os.path.join(folder, 'games.jsonl')) == 0, 'games were played'"),
    ("cli-paper-out-is-a-file", "ok", None,
     PAPER + "path = os.path.join(folder, 'a_file')\n"
     "open(path, 'w').write('kept')\n"
     "refused_saying(*TINY_PAPER, '--out', path, words=(path, 'not a folder'))\n"
     "refused_saying(*TINY_PAPER, '--report-only', '--out', path, words=(path, 'not a folder'))\n"
     "assert open(path).read() == 'kept'"),
    ("cli-paper-stale-belief-of-another-run", "ok", None,
     PAPER + "from lbs_pz.eval.paper import retrained_made_for\n"
     "from lbs_pz.models.checkpoint import read, write\n"
     "shutil.copy(model_path('belief_strong_2p'), os.path.join(folder, 'belief_on_lbs.pt'))\n"
     "refused_saying(*TINY_PAPER, '--out', folder,\n"
     "               words=('belief_on_lbs.pt', 'not 2p 3-card 3x3', 'another --out'))\n"
     "quick = tempfile.mkdtemp()           # a --quick run's belief left for a --full run\n"
     "ckpt = read(model_path('belief_strong_2p'))\n"
     "ckpt['info']['paper'] = retrained_made_for('quick', 0)\n"
     "write(os.path.join(quick, 'belief_on_lbs.pt'), ckpt)\n"
     "refused_saying('paper', '--full', '--no-progress', '--out', quick,\n"
     "               words=('retrained by a --quick run', 'this is a --full run'))"),
    ("cli-models-deleted-model", "ok", None,
     PAPER + "package = os.path.join(folder, 'lbs_pz')   # a copy of the package, one model gone\n"
     "os.makedirs(os.path.join(package, 'models'))\n"
     "source = os.path.dirname(MODELS_DIR)\n"
     "for entry in os.listdir(source):\n"
     "    if entry not in ('models', '__pycache__'):\n"
     "        os.symlink(os.path.join(source, entry), os.path.join(package, entry))\n"
     "for entry in os.listdir(MODELS_DIR):\n"
     "    if entry not in ('value_weak_2p.pt', '__pycache__'):\n"
     "        os.symlink(os.path.join(MODELS_DIR, entry), os.path.join(package, 'models', entry))\n"
     "env = dict(os.environ, PYTHONPATH=folder)\n"
     "for argv in (['models'], ['compare', '--methods', 'lbs-1', '--blueprint', 'weak',\n"
     "                          '--games', '1', '--backend', 'inline', '--no-progress']):\n"
     "    run = subprocess.run([sys.executable, '-m', 'lbs_pz.cli'] + argv, cwd=folder, env=env,\n"
     "                         capture_output=True, text=True, timeout=100)\n"
     "    err = run.stderr.strip().splitlines()\n"
     "    assert run.returncode == 2 and len(err) == 1, run.stderr\n"
     "    assert 'value_weak_2p' in err[0] and 'missing' in err[0] and 'reinstall' in err[0], err\n"
     "    assert argv != ['models'] or '** file missing **' in run.stdout, run.stdout\n"
     "assert os.path.isfile(model_path('value_weak_2p')), 'the checkout lost its model'"),
    ("cli-search-games-cut-last-line-resumes", "ok", None,
     RECORDED + "whole = open(games, 'rb').read()\n"
     "open(games, 'wb').write(whole[:-30])\n"
     "assert main(['search-games'] + RECORD + ['--out', games]) == 0\n"
     "assert open(games, 'rb').read() == whole, 'the cut game was not played again'"),
    ("cli-train-belief-search-games-other-variant", "ok", None,
     RECORDED + "train = ['train-belief', '--search-games', games, '--steps', '1',\n"
     "         '--minutes', '0', '--no-progress', '--curve', 'none', '--out',\n"
     "         os.path.join(folder, 'b.pt')] + SMALL\n"
     "refused(*train, '--blueprint', 'strong', '--max-information-tokens', '9')\n"
     "refused(*train, '--blueprint', 'simple')\n"
     "assert not os.path.exists(os.path.join(folder, 'b.pt'))"),
    ("cli-log-write-past-file-size-limit", "ok", None,
     RECORDED + "import signal, subprocess, sys\n"
     "LIMITED = ('import resource, signal, sys\\n'\n"
     "           'signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\\n'\n"
     "           'n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))\\n'\n"
     "           'from lbs_pz.cli import main\\nsys.exit(main(sys.argv[2:]))')\n"
     "log = os.path.join(folder, 'log.jsonl')\n"
     "compare = ['compare', '--methods', 'blueprint', '--backend', 'inline', '--no-progress',\n"
     "           '--jsonl', log] + SMALL\n"
     "assert main(compare + ['--games', '1']) == 0\n"
     "for argv, path in ((compare + ['--games', '5'], log),\n"
     "                   (['search-games'] + RECORD[:-2] + ['--games', '4', '--out', games],\n"
     "                    games)):\n"
     "    limit = os.path.getsize(path) + 100\n"
     "    run = subprocess.run([sys.executable, '-c', LIMITED, str(limit)] + argv,\n"
     "                         capture_output=True, text=True, timeout=120)\n"
     "    err = run.stderr.strip().splitlines()\n"
     "    assert run.returncode == 2 and len(err) == 1 and 'File too large' in err[0], run.stderr\n"
     "    assert open(path, 'rb').read().endswith(b'\\n'), 'a cut line was left'"),
    ("cli-ray-address-unreachable", "ok", None,
     TRAIN + "from lbs_pz.optional import ray_available\n"
     "if ray_available():\n"
     "    import ray  # noqa: F401 (imported before `refused` times the command)\n"
     "os.environ['LBS_PZ_RAY_TIMEOUT'] = '2'\n"
     "refused('compare', '--methods', 'blueprint', '--games', '200', '--backend', 'ray',\n"
     "        '--address', '127.0.0.1:1', '--no-progress')\n"
     "refused(*VALUE, '--minutes', '1', '--backend', 'ray', '--address', '127.0.0.1:1',\n"
     "        '--out', out)\n"
     "assert not os.path.exists(out), 'a checkpoint was written'"),
    ("cli-trainers-one-out", "ok", None,
     TRAIN + "first = subprocess.Popen([sys.executable, '-m', 'lbs_pz.cli'] + VALUE +\n"
     "                         ['--minutes', '5', '--out', out], stdout=subprocess.DEVNULL,\n"
     "                         stderr=subprocess.DEVNULL)\n"
     "try:\n"
     "    deadline = time.time() + 100\n"
     "    while not os.path.exists(out + '.lock'):\n"
     "        assert first.poll() is None and time.time() < deadline, 'the first run ended'\n"
     "        time.sleep(0.05)\n"
     "    refused(*VALUE, '--minutes', '5', '--out', out)\n"
     "    assert first.poll() is None, 'the first run stopped'\n"
     "finally:\n"
     "    first.kill()\n"
     "    first.wait()"),
    ("cli-checkpoint-write-past-file-size-limit", "ok", None,
     TRAIN + "import resource, signal\n"
     "big = VALUE + ['--hidden', '256', '--curve', 'none']\n"
     "assert main(big + ['--minutes', '0', '--steps', '1', '--out', out]) == 0\n"
     "before = open(out, 'rb').read()\n"
     "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
     "resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))\n"
     "refused(*big, '--minutes', '0', '--steps', '2', '--resume', out, '--out', out)\n"
     "assert open(out, 'rb').read() == before, 'the last checkpoint changed'"),
]
