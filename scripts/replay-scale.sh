#!/usr/bin/env bash
# Issue 26's scale bench: whole `sim run` wall time, time per job and peak memory of
# streamed replays (crates/runner/src/stream.rs) as the trace grows.
#
# * HPC: 1, 4 and 16 million jobs of examples/models/hpc.toml (seed 0, SWF) under EASY
#   (HPC_JOBS overrides the list);
# * GPU: 1 and 4 million jobs of examples/models/gpu.toml with rate_per_hour = 4800,
#   seed 3 (the workload of scripts/kube-scale.sh), native JSON Lines, on 1,250 nodes × 8
#   shared GPUs, under the default kube (GPU_JOBS overrides the list).
#
# The traces are generated first (the 16 M-job SWF file is 1.4 GB; TMPDIR chooses where).
# Needs GNU time.
#
#   scripts/replay-scale.sh          HPC_JOBS="1000000" GPU_JOBS="" scripts/replay-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
hpc_jobs=${HPC_JOBS-1000000 4000000 16000000}
gpu_jobs=${GPU_JOBS-1000000 4000000}
cargo build -q --release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() { # label jobs args...
  local label=$1 jobs=$2
  shift 2
  # The trace just generated is on disk first: its write-back does not share the run's time.
  sync
  /usr/bin/time -o "$tmp/time" -f "%e %M" target/release/sim run --quiet --out "$tmp/out" "$@" >/dev/null
  read -r wall kb < "$tmp/time"
  python3 -c "
j = $jobs; w = $wall; kb = $kb
print(f'$label {j:>10,} jobs: {w:7.2f} s wall, {w / j * 1e6:5.2f} us/job, {kb / 1024:7.1f} MB peak')"
}
for n in $hpc_jobs; do
  target/release/sim gen --model examples/models/hpc.toml --jobs "$n" --seed 0 --out "$tmp/hpc.swf" --quiet
  measure "easy, HPC" "$n" --trace "$tmp/hpc.swf" --policy easy
  rm -rf "$tmp/hpc.swf" "$tmp/out"
done
if [ -n "$gpu_jobs" ]; then
  scripts/kube-scale-inputs.sh "$tmp"
  for n in $gpu_jobs; do
    target/release/sim gen --model "$tmp/model.toml" --jobs "$n" --seed 3 --out "$tmp/gpu.jsonl" --quiet
    measure "kube, GPU" "$n" --trace "$tmp/gpu.jsonl" --cluster "$tmp/cluster.toml" --policy kube
    rm -rf "$tmp/gpu.jsonl" "$tmp/out"
  done
fi
