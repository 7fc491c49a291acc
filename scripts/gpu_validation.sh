#!/usr/bin/env bash
# Validation of the DSpark replica on a GPU host (see docs/validation.md).
#
#   bash scripts/gpu_validation.sh [--dry-run] OUTDIR [WHEEL_DIR]
#
# Runs, with NVLink multicast kept off in every process:
#   1. NCCL validation with one rank per GPU at 4 ranks (and 8 where there are 8 GPUs):
#      asymmetric DSpark config, draft_len 2/3/4, fill gate on and off, PP variant;
#   2. when fewer than 4 GPUs are visible: the MPI matrix and one gloo config with the
#      replica's forward on the GPU, and NCCL with a single rank (code path check).
# Every run sits under a hard timeout. Results: OUTDIR/*.log and OUTDIR/*.json; OUTDIR/summary.tsv has
# one line per run: name, exit status, wall time (measured in bash: the GPU host has no `bc`), command.
#
# --dry-run: records every run the script would make, each replaced by `sleep $DRY_SLEEP` (default 0.2 s), so
# the bookkeeping can be checked on any machine; GPU_COUNT=N pretends N GPUs are visible (either mode).
set -uo pipefail
DRY=0
if [ "${1:-}" = "--dry-run" ]; then
  DRY=1
  shift
fi
OUT=${1:?usage: gpu_validation.sh [--dry-run] OUTDIR [WHEEL_DIR]}
WHEELS=${2:-}
mkdir -p "$OUT"
: > "$OUT/summary.tsv"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PY=${PYTHON:-python3}
if [ -n "$WHEELS" ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHEELS"/*.whl || exit 3
  export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-}

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi -L
  "$PY" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "gpus", torch.cuda.device_count())'
  command -v mpiexec && mpiexec --version | head -1
} > "$OUT/host.txt" 2>&1
GPUS=${GPU_COUNT:-$("$PY" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)}

now_us() {  # wall clock in microseconds, integer arithmetic only
  local t=${EPOCHREALTIME:-}
  if [ -n "$t" ]; then
    t=${t//[.,]/}  # bash >= 5: seconds and microseconds; the separator follows the locale
    echo "$((10#$t))"
  else
    echo "$(($(date +%s%N) / 1000))"
  fi
}

run() {  # name, timeout, command...
  local name=$1 limit=$2 start end code tenths
  shift 2
  echo "\$ $*" > "$OUT/$name.log"
  start=$(now_us)
  if [ "$DRY" = 1 ]; then
    sleep "${DRY_SLEEP:-0.2}"
  else
    timeout -k 10 "$limit" "$@" >> "$OUT/$name.log" 2>&1
  fi
  code=$?
  end=$(now_us)
  tenths=$(((end - start + 50000) / 100000))
  printf '%s\texit=%s\twall=%d.%ds\t%s\n' "$name" "$code" "$((tenths / 10))" "$((tenths % 10))" "$*" \
    >> "$OUT/summary.tsv"
}

if [ "$GPUS" -ge 4 ]; then
  for n in 4 8; do
    [ "$GPUS" -ge "$n" ] || continue
    for k in 2 3 4; do
      for gate in on off; do
        run "nccl-n$n-k$k-gate-$gate" 300 "$PY" -m tensorrt_llm_patch validate --backend nccl --ranks $n \
          --draft-len $k --fill-gate $gate --model torch --out "$OUT/nccl-n$n-k$k-$gate" --json
      done
      run "nccl-n$n-k$k-pp" 300 "$PY" -m tensorrt_llm_patch validate --backend nccl --ranks $n --pp \
        --draft-len $k --model torch --out "$OUT/nccl-n$n-k$k-pp" --json
    done
  done
else
  # The multi-rank NCCL runs need one GPU per rank: record the refusal, then do what one GPU allows.
  run nccl-n4-refused 60 "$PY" -m tensorrt_llm_patch validate --backend nccl --ranks 4 --draft-len 3
  run mpi-matrix-gpu-forward 280 "$PY" -m tensorrt_llm_patch validate --backend mpi --matrix --model torch \
    --out "$OUT/mpi-matrix" --json
  run gloo-n4-k3-off-gpu-forward 90 "$PY" -m tensorrt_llm_patch validate --backend gloo --ranks 4 --draft-len 3 \
    --fill-gate off --model torch --out "$OUT/gloo" --json
  mkdir -p "$OUT/nccl1" "$OUT/ref"
  run nccl-1rank-sanitized 60 "$PY" examples/trtllm_replica/run_gen_server.py --backend nccl --ranks 1 \
    --draft-len 3 --model torch --sanitize --out "$OUT/nccl1"
  run local-reference 60 "$PY" examples/trtllm_replica/run_gen_server.py --backend local --draft-len 3 \
    --model numpy --out "$OUT/ref"
  # Tokens of the single-rank NCCL run against the reference (same requests, same model arithmetic).
  [ "$DRY" = 1 ] || "$PY" - "$OUT" > "$OUT/nccl1-vs-ref.txt" 2>&1 <<'PYEOF'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
def tokens(d):
    merged = {}
    for f in sorted((out / d).glob("rank*.json")):
        merged.update(json.loads(f.read_text()).get("outputs", {}))
    return merged
a, b = tokens("nccl1"), tokens("ref")
print("nccl 1-rank requests:", len(a), "reference requests:", len(b), "identical:", bool(a) and a == b)
PYEOF
fi
cat "$OUT/summary.tsv"
