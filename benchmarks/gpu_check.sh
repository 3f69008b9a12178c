#!/usr/bin/env bash
# The GPU figures in a few minutes: build the engine, measure its throughput, then run
# each trainer on the GPU (distillation, Q-learning, a learned belief) and evaluate what
# was trained on evaluation deals. Run from the repository root on a CUDA machine:
#
#   bash benchmarks/gpu_check.sh
#   OUT=gpu DISTILL_MIN=3 TRAIN_MIN=1.5 BELIEF_MIN=2 bash benchmarks/gpu_check.sh
#
# Environment knobs (defaults in brackets):
#   PYTHON [python3]  the interpreter that has torch with CUDA
#   OUT [results/gpu_check]  checkpoints and logs go here
#   DISTILL_MIN [2]  TRAIN_MIN [1]  BELIEF_MIN [1.5]  minutes of each trainer
#   DISTILL_LR [1e-3]  distillation's learning rate (decayed linearly to a tenth)
#   DISTILL_RESUME  a distill checkpoint to continue (e.g. a CPU run's) instead of starting afresh
#   BELIEF_FOR [the net distilled here, slimmed]  the lstm checkpoint the belief is trained for
#   EVAL_GAMES [500]  evaluation deals for the trained blueprints
#   WHEELS  a folder of wheels to install the pure-Python dependencies from, offline
#   CPU_THREADS [8]  torch threads for the CPU side (teacher games, self-play)
#   DEVICE [cuda]  cpu runs the same steps without a GPU (to try the script itself)
# Every figure is printed as the trainers log it; a summary of the throughputs ends it.
# A failing step is reported and the others still run; the exit status is then 1.
set -uo pipefail
PY=${PYTHON:-python3}
OUT=${OUT:-results/gpu_check}
DISTILL_MIN=${DISTILL_MIN:-2}
TRAIN_MIN=${TRAIN_MIN:-1}
BELIEF_MIN=${BELIEF_MIN:-1.5}
EVAL_GAMES=${EVAL_GAMES:-500}
CPU_THREADS=${CPU_THREADS:-8}
DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT"
step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; }
FAILED=()
check() { local rc=$?; [ $rc -eq 0 ] || { echo "!! failed (exit $rc): $1"; FAILED+=("$1"); }; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$PY" -c "import torch, sys; print('python', sys.version.split()[0], '| torch', torch.__version__, '| cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" || exit 1
[ "$DEVICE" = cpu ] || "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device: this script measures the GPU path (DEVICE=cpu to try it without one)')" || exit 1

if [ -n "${WHEELS:-}" ]; then
    step "dependencies from $WHEELS (offline)"
    "$PY" -m pip install -q --no-index --find-links "$WHEELS" gymnasium pettingzoo || exit 1
fi

step "build the engine"
"$PY" setup.py build_ext --inplace -j "$(nproc)" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
LBS=("$PY" -m lbs_pz.cli)

step "engine throughput (one core, no HLE)"
"$PY" benchmarks/engine_throughput.py --quick --no-hle-cpp 2>&1 | grep -v -i "hle"

step "distillation of the strong bot on $DEVICE, ${DISTILL_MIN} min ${DISTILL_RESUME:+(continuing $DISTILL_RESUME)}"
RESUME=()
[ -z "${DISTILL_RESUME:-}" ] || { cp "$DISTILL_RESUME" "$OUT/distill_cuda.pt"; RESUME=(--resume "$OUT/distill_cuda.pt"); }
"${LBS[@]}" distill --teacher strong --device "$DEVICE" --minutes "$DISTILL_MIN" "${RESUME[@]}" \
    --lr "${DISTILL_LR:-1e-3}" --threads "$CPU_THREADS" --num-actors 1024 --batch-size 128 \
    --eval-every 500 \
    --out "$OUT/distill_cuda.pt" --no-progress 2>&1 | tee "$OUT/distill.log"
check distill
# the shipped form: weights only, float16 (what a belief is trained for, by file hash)
"$PY" -c "from lbs_pz.models.checkpoint import slim_copy; slim_copy('$OUT/distill_cuda.pt', '$OUT/distilled_slim.pt')"
check slim-copy

step "Q-learning (R2D2 + VDN) on $DEVICE, ${TRAIN_MIN} min"
INIT=()
if "${LBS[@]}" train-blueprint --help | grep -q -- "--init "; then
    INIT=(--init "$OUT/distill_cuda.pt")
fi
"${LBS[@]}" train-blueprint --device "$DEVICE" --minutes "$TRAIN_MIN" --threads "$CPU_THREADS" \
    --num-actors 256 "${INIT[@]}" --out "$OUT/train_cuda.pt" --no-progress 2>&1 | tee "$OUT/train.log"
check train-blueprint

BELIEF_FOR=${BELIEF_FOR:-$OUT/distilled_slim.pt}
step "a learned belief for lstm:$BELIEF_FOR on $DEVICE, ${BELIEF_MIN} min"
"${LBS[@]}" train-belief --blueprint "lstm:$BELIEF_FOR" --device "$DEVICE" --minutes "$BELIEF_MIN" \
    --threads "$CPU_THREADS" --games-per-step 128 --half --out "$OUT/belief_cuda.pt" --no-progress \
    2>&1 | tee "$OUT/belief.log"
check train-belief

step "evaluation of the trained blueprints ($EVAL_GAMES evaluation deals)"
for ck in distilled_slim train_cuda; do
    echo "lstm:$OUT/$ck.pt"
    "${LBS[@]}" eval --blueprint "lstm:$OUT/$ck.pt" --games "$EVAL_GAMES" --no-progress 2>&1 | tail -4
    check "eval $ck"
done

step "summary"
grep -h -E "^this run|^done" "$OUT"/distill.log "$OUT"/train.log "$OUT"/belief.log
[ ${#FAILED[@]} -eq 0 ] || { echo "failed steps: ${FAILED[*]}"; exit 1; }
