"""`lbs-pz` argument lists run in one child process (the package imported once for all).

With `refuse_play`, the child cannot play a game: the game backends (what `compare` and
`search-games` play on), `eval`'s self-play and `belief-quality`'s games end the case at
once with the status PLAYED. A test that a bad option is refused "before any game" asserts
that outcome instead of how long the refusal took.
"""
from __future__ import annotations

import json
from typing import List, Optional, Sequence

from tests.helpers.isolated import run_child
from tests.helpers.waiting import HANG_SECONDS

PLAYED = "played a game"
"""The status of a case that started a game while `refuse_play` was on."""

_CHILD = """
import contextlib, io, json, os
os.environ.update({env!r})
os.chdir({cwd!r})
from lbs_pz.cli import main

class Played(BaseException):
    "A game started; no handler of the command may take it for its own error."

def refuse(*args, **kwargs):
    raise Played()

def refuse_tasks(tasks, *args, **kwargs):
    for _ in tasks:
        raise Played()
    yield from ()

if {refuse_play!r}:
    import lbs_pz.cli.belief_quality, lbs_pz.cli.eval
    from lbs_pz.eval.backends import BACKENDS
    for name in list(BACKENDS):
        BACKENDS[name] = refuse_tasks
    lbs_pz.cli.eval.evaluate = refuse
    lbs_pz.cli.belief_quality.run_quality = refuse
out = []
for argv in {cases!r}:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
        except Played:
            status = {played!r}
    out.append([status, err.getvalue()])
print(json.dumps(out))
"""


def cli_cases(cases: Sequence[Sequence[str]], cwd, refuse_play: bool = False,
              env: Optional[dict] = None) -> List[list]:
    """Run `lbs_pz.cli.main(argv)` for each argv of `cases` in ONE child whose working
    folder is `cwd` (and `env` added to its environment): [exit status, stderr] per case,
    the status PLAYED for a case that started a game while `refuse_play` was on. A
    traceback (an exception main() lets through), a signal or a hang fails here."""
    code = _CHILD.format(env=dict(env or {}), cwd=str(cwd), refuse_play=refuse_play,
                         cases=[list(argv) for argv in cases], played=PLAYED)
    child = run_child(code, timeout=HANG_SECONDS)
    assert child.returncode == 0, f"exit {child.returncode}\n{child.stderr[-3000:]}"
    return json.loads(child.stdout.strip().splitlines()[-1])
