#!/usr/bin/env bash
# Run RESULTS.md sections on a many-core machine (e.g. a lent GPU host) with every
# `lbs-pz compare` on a process pool, then bring the entries home and merge them:
#
#   WORKERS=15 OUT=/tmp/out bash benchmarks/many_core_sections.sh search-distilled search-distilled-cf
#   python benchmarks/run_all.py --merge /tmp/out/results.json --only search-distilled,search-distilled-cf
#
# Environment knobs (defaults in brackets):
#   PYTHON [python3]  the interpreter (torch installed)
#   WORKERS [cores - 1]  compare's worker processes
#   MODE [full]  full or quick (the section sizes)
#   OUT [results/many_core]  where results.json and the logs go
#   WHEELS  a folder of wheels to install the pure-Python dependencies from, offline
#   LBS_PZ_REVISION  the revision to record when the tree is a copy without .git
# Only the sections named run; the machine, load and revision are recorded as usual.
set -uo pipefail
PY=${PYTHON:-python3}
WORKERS=${WORKERS:-$(( $(nproc) - 1 ))}
MODE=${MODE:-full}
OUT=${OUT:-results/many_core}
[ $# -gt 0 ] || { echo "usage: bash benchmarks/many_core_sections.sh SECTION [SECTION ...]"; exit 2; }
mkdir -p "$OUT"
if [ -n "${WHEELS:-}" ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/lbs_pz_site \
        "$WHEELS"/*.whl || exit 1
    export PYTHONPATH="/tmp/lbs_pz_site${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" setup.py build_ext --inplace -j "$(nproc)" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# the sections' commands call `python` and `lbs-pz`: both this interpreter, without an install
BIN=$(mktemp -d)
ln -s "$(command -v "$PY")" "$BIN/python"
printf '#!/bin/sh\nexec "%s" -m lbs_pz.cli "$@"\n' "$(command -v "$PY")" > "$BIN/lbs-pz"
chmod +x "$BIN/lbs-pz"
export PATH="$BIN:$PATH"
rm -f benchmarks/results.json           # only this run's entries go home
status=0
for section in "$@"; do
    python benchmarks/run_all.py "--$MODE" --only "$section" --workers "$WORKERS" \
        2>&1 | tee "$OUT/$section.log" || status=1
    cp benchmarks/results.json "$OUT/results.json"     # after each: a cut-off run keeps the rest
done
exit $status
