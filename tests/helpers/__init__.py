"""What the tests share, imported as `tests.helpers.NAME` (tests/ is a package; pytest puts
the repository's root on the import path, as it does for every package of tests):

- paths: the repository's root and the tests' own folders;
- engine: games, hands and strategies for the engine's tests;
- hle_oracle: games played in the Hanabi Learning Environment, recorded step by step;
- isolated: a snippet run in a child process, so that a crash fails a test, not the run;
- cli: `lbs-pz` argument lists run in one child, optionally refusing to play any game;
- waiting: HANG_SECONDS and `wait_for`: a test waits for the event it needs, never a time;
- scripts: a script of benchmarks/ or docs/experiments/ imported by its path;
- fuzz_api, fuzz_files: the fuzz programs tests/core/test_fuzz_api.py and
  tests/core/test_fuzz_files.py run.
"""
