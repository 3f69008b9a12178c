"""What the tests share (imported as `helpers.NAME`: pytest puts tests/ on the import path,
through `pythonpath` in pyproject.toml):

- engine: games, hands and strategies for the engine's tests;
- hle_oracle: games played in the Hanabi Learning Environment, recorded step by step;
- isolated: a snippet run in a child process, so that a crash fails a test, not the run;
- cli: `lbs-pz` argument lists run in one child, optionally refusing to play any game;
- waiting: HANG_SECONDS and `wait_for`: a test waits for the event it needs, never a time;
- scripts: a script of benchmarks/ or docs/experiments/ imported by its path;
- fuzz_api, fuzz_files: the fuzz programs test_fuzz.py and test_fuzz_files.py run.
"""
