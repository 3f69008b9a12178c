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
]
